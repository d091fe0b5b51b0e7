//! The ladder, the original experiment: each server in turn started, verified, loaded at
//! each concurrency level (one request per fresh connection) while sampled, stopped.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::cli::LadderArgs;
use crate::load::{self, Level};
use crate::results::{Results, ServerResult};
use crate::runner::{mib, server_args, Bench};
use crate::sample::{self, Sampler};
use crate::server::{self, ServerProcess};
use crate::stats;

/// Where a server comes from.
#[derive(Debug, Clone)]
enum Source {
    /// A binary the harness starts.
    Spawn(PathBuf),
    /// An image the harness runs as a container.
    Container(String),
    /// A server already running at this base URL.
    Target(String),
}

#[derive(Debug, Clone)]
struct Entry {
    name: String,
    endpoint: String,
    source: Source,
}

/// The entries to run, binaries located.
fn plan(bench: &Bench, args: &LadderArgs) -> Result<Vec<Entry>> {
    let default_servers = if args.targets.is_empty() {
        server::KNOWN
            .iter()
            .map(|s| crate::cli::ServerSpec {
                short: (*s).to_owned(),
                endpoint: None,
            })
            .collect()
    } else {
        Vec::new()
    };
    let servers = args.servers.clone().unwrap_or(default_servers);
    if servers.is_empty() && args.targets.is_empty() {
        bail!("nothing to benchmark: --servers is empty and no --target was given");
    }
    let mut shorts: Vec<&str> = servers.iter().map(|s| s.short.as_str()).collect();
    shorts.sort_unstable();
    shorts.dedup();
    if args.docker {
        let images: Vec<String> = shorts.iter().map(|s| image(s)).collect();
        server::check_docker(&images)?;
    }
    let mut entries = Vec::new();
    for spec in &servers {
        let source = if args.docker {
            Source::Container(image(&spec.short))
        } else {
            Source::Spawn(server::locate(&bench.bin_dir, &spec.short)?)
        };
        let package = server::package(&spec.short);
        let (name, endpoint) = match &spec.endpoint {
            Some(endpoint) => (format!("{package}:{endpoint}"), endpoint.clone()),
            None => (package, args.endpoint.clone()),
        };
        entries.push(Entry {
            name,
            endpoint,
            source,
        });
    }
    for target in &args.targets {
        entries.push(Entry {
            name: target.name.clone(),
            endpoint: args.endpoint.clone(),
            source: Source::Target(target.url.clone()),
        });
    }
    Ok(entries)
}

/// The image of server `short`, as docker/build-offline.sh and compose.yaml name it.
fn image(short: &str) -> String {
    format!("{}:latest", server::package(short))
}

/// Runs the ladder into `results.servers`; false when a server failed.
pub async fn run(bench: &Bench, args: &LadderArgs, results: &mut Results) -> Result<bool> {
    let entries = plan(bench, args)?;
    let workers = args
        .workers
        .map_or_else(|| bench.default_workers(), |w| w.get());
    let server_args = server_args(args.delay(), workers, args.blocking_threads.get());
    let mut all_ok = true;
    for entry in entries {
        results.servers.push(ServerResult {
            name: entry.name.clone(),
            endpoint: entry.endpoint.clone(),
            ..ServerResult::default()
        });
        let index = results.servers.len() - 1;
        if let Err(err) = run_entry(bench, args, &server_args, &entry, results, index).await {
            let message = format!("{err:#}");
            eprintln!("greet-bench: {}: {message}", entry.name);
            results.servers[index].error = Some(message);
            all_ok = false;
        }
        results.ladder_comparisons = comparisons(&results.servers, &args.levels());
        bench.save(results)?;
    }
    Ok(all_ok)
}

async fn run_entry(
    bench: &Bench,
    args: &LadderArgs,
    server_args: &[String],
    entry: &Entry,
    results: &mut Results,
    index: usize,
) -> Result<()> {
    let say = |line: String| bench.say(&entry.name, &line);
    let (addr, base_url, mut process) = match &entry.source {
        Source::Spawn(_) | Source::Container(_) => {
            let source = entry.source.clone();
            let args = server_args.to_vec();
            let cpus = bench.server_cpus.clone();
            let process = tokio::task::spawn_blocking(move || match source {
                Source::Container(image) => ServerProcess::start_container(&image, &args, &cpus),
                Source::Spawn(bin) => ServerProcess::start(&bin, &args, &cpus),
                Source::Target(_) => unreachable!("matched above"),
            })
            .await
            .context("start-up task failed")??;
            let startup = process.startup();
            let server = &mut results.servers[index];
            server.startup_s = Some(startup.as_secs_f64());
            server.idle_rss_mib = sample::read(process.pid()).map(|r| mib(r.rss_kib));
            say(format!(
                "started in {:.1} ms (pid {})",
                startup.as_secs_f64() * 1000.0,
                process.pid()
            ));
            (
                process.addr(),
                format!("http://{}", process.addr()),
                Some(process),
            )
        }
        Source::Target(url) => {
            let addr = greet_conformance::resolve(url)
                .await
                .map_err(anyhow::Error::msg)?;
            (addr, url.clone(), None)
        }
    };

    greet_conformance::check(&base_url)
        .await
        .context("contract check failed")?;
    say("contract check passed".to_owned());

    for concurrency in args.levels() {
        let mut repeats = Vec::new();
        for _ in 0..args.repeats.get() {
            let run = measure(bench, entry, addr, concurrency, process.as_ref()).await;
            let died = process.as_mut().and_then(ServerProcess::exited);
            say(format!(
                "c={concurrency}: {:.2}% ok, total {:.4} s, average {:.4} s",
                run.success_rate, run.total_s, run.average_s
            ));
            repeats.push(run);
            if let Some(exit) = died {
                let tail = process
                    .as_ref()
                    .map(ServerProcess::stderr_tail)
                    .unwrap_or_default();
                let server = &mut results.servers[index];
                server.runs.push(stats::combine(&repeats));
                server.fold_maxima();
                bail!(
                    "server exited mid-run at concurrency {concurrency} ({}); stderr: {tail}",
                    exit.text
                );
            }
        }
        let server = &mut results.servers[index];
        server.runs.push(stats::combine(&repeats));
        server.fold_maxima();
        bench.save(results)?;
        // Let the last level's connections close before the next one.
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    if let Some(process) = process {
        bench.stop(process).await?;
    }
    Ok(())
}

/// One run of one level, with the server sampled throughout when the harness started it.
async fn measure(
    bench: &Bench,
    entry: &Entry,
    addr: SocketAddr,
    concurrency: usize,
    process: Option<&ServerProcess>,
) -> crate::results::Run {
    let level = Level {
        addr,
        path: entry.endpoint.clone(),
        concurrency,
        requests: concurrency,
        timeout: bench.timeout(),
    };
    let pid = process.map(ServerProcess::pid);
    if let Some(pid) = pid {
        sample::reset_peak_rss(pid);
    }
    let sampler = pid.map(Sampler::start);
    let done = Arc::new(AtomicUsize::new(0));
    let bar = bench.progress(
        format!("{} c={}", entry.name, level.concurrency),
        level.requests as u64,
        Arc::clone(&done),
    );
    let (outcomes, total) = load::run(&level, done).await;
    bar.finish();
    let mut run = stats::summarize(concurrency, &outcomes, total);
    if let Some(maxima) = sampler.map(Sampler::stop) {
        run.max_cpu_pct = maxima.cpu_pct;
        run.max_rss_mib = maxima.rss_kib.map(mib);
        run.max_threads = maxima.threads;
    }
    run
}

/// Every pair of servers at each level, on per-run total time, when levels were repeated.
fn comparisons(servers: &[ServerResult], levels: &[usize]) -> Vec<crate::compare::Comparison> {
    levels
        .iter()
        .flat_map(|&level| {
            let samples: Vec<(String, Vec<f64>)> = servers
                .iter()
                .filter_map(|s| {
                    let run = s.runs.iter().find(|r| r.concurrency == level)?;
                    let spread = run.repeats.as_ref()?;
                    Some((format!("{} c={level}", s.name), spread.total_s_runs.clone()))
                })
                .collect();
            crate::compare::pairwise(&samples)
        })
        .collect()
}
