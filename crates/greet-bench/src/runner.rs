//! One ladder run from start to finish: plan, build, pin, then for each server start it,
//! verify it, load it level by level while sampling it, stop it; results written after
//! every level.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::LadderArgs;
use crate::load::{self, Level};
use crate::report;
use crate::results::{Cpus, Flags, Meta, Results, ServerResult};
use crate::sample::{self, Sampler};
use crate::server::{self, ServerProcess};
use crate::stats;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every server was verified and measured at every level.
    AllMeasured,
    /// At least one server failed (start-up, contract check, died, unclean exit).
    SomeFailed,
    /// Ctrl-C: results so far are on disk.
    Interrupted,
}

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

/// Everything a run needs besides the entries.
struct RunContext {
    args: LadderArgs,
    server_cpus: Vec<usize>,
    workers: usize,
    out: PathBuf,
}

/// Runs the ladder as `args` say.
pub fn ladder(args: LadderArgs) -> Result<Verdict> {
    if cfg!(debug_assertions) && !args.quiet {
        eprintln!("greet-bench: warning: built without --release, the load generator may be the bottleneck");
    }
    let entries = plan(&args)?;
    let cpus = server::allowed_cpus();
    let (server_cpus, load_cpus) = if args.no_pin {
        (Vec::new(), Vec::new())
    } else {
        server::split_cpus(&cpus)
    };
    if !load_cpus.is_empty() {
        // Before the runtime exists: its threads inherit the main thread's CPUs.
        server::pin_current_thread(&load_cpus)?;
    }
    // Unpinned, servers and load generator each see every CPU.
    let cpus_of = |share: &[usize]| {
        if share.is_empty() {
            cpus.len()
        } else {
            share.len()
        }
    };
    let workers = args
        .workers
        .map_or_else(|| cpus_of(&server_cpus), |w| w.get());
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(timestamp_dir()));
    let results = Results {
        meta: meta(&args, &cpus, &server_cpus, &load_cpus, workers),
        servers: Vec::new(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cpus_of(&load_cpus).max(1))
        .enable_all()
        .build()?;
    let ctx = RunContext {
        args,
        server_cpus,
        workers,
        out,
    };
    runtime.block_on(async {
        tokio::select! {
            verdict = run(&ctx, entries, results) => verdict,
            _ = tokio::signal::ctrl_c() => {
                eprintln!("\ngreet-bench: interrupted; results so far are in {}", ctx.out.display());
                Ok(Verdict::Interrupted)
            }
        }
    })
}

/// The entries to run, binaries located (and built unless told not to).
fn plan(args: &LadderArgs) -> Result<Vec<Entry>> {
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
    let bin_dir = match &args.bin_dir {
        _ if args.docker => PathBuf::new(),
        Some(dir) => dir.clone(),
        None => {
            if !args.no_build && !shorts.is_empty() {
                if !args.quiet {
                    eprintln!(
                        "greet-bench: building the release servers ({})",
                        shorts.join(", ")
                    );
                }
                server::build(&shorts, args.quiet)?;
            }
            server::default_bin_dir()?
        }
    };
    let mut entries = Vec::new();
    for spec in &servers {
        let source = if args.docker {
            Source::Container(image(&spec.short))
        } else {
            Source::Spawn(server::locate(&bin_dir, &spec.short)?)
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

async fn run(ctx: &RunContext, entries: Vec<Entry>, mut results: Results) -> Result<Verdict> {
    report::write_all(&ctx.out, &results)?;
    let mut verdict = Verdict::AllMeasured;
    for entry in entries {
        results.servers.push(ServerResult {
            name: entry.name.clone(),
            endpoint: entry.endpoint.clone(),
            ..ServerResult::default()
        });
        let index = results.servers.len() - 1;
        if let Err(err) = run_entry(ctx, &entry, &mut results, index).await {
            let message = format!("{err:#}");
            eprintln!("greet-bench: {}: {message}", entry.name);
            results.servers[index].error = Some(message);
            verdict = Verdict::SomeFailed;
        }
        report::write_all(&ctx.out, &results)?;
    }
    print!("{}", report::text(&results));
    if !ctx.args.quiet {
        eprintln!(
            "greet-bench: results, charts and report.html in {}",
            ctx.out.display()
        );
    }
    Ok(verdict)
}

async fn run_entry(
    ctx: &RunContext,
    entry: &Entry,
    results: &mut Results,
    index: usize,
) -> Result<()> {
    let say = |line: String| {
        if !ctx.args.quiet {
            eprintln!("greet-bench: {}: {line}", entry.name);
        }
    };
    let (addr, base_url, mut process) = match &entry.source {
        Source::Spawn(_) | Source::Container(_) => {
            let source = entry.source.clone();
            let args = server_args(ctx);
            let cpus = ctx.server_cpus.clone();
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

    for &concurrency in &ctx.args.concurrency {
        let mut repeats = Vec::new();
        for _ in 0..ctx.args.repeats.get() {
            let run = measure(ctx, entry, addr, concurrency, process.as_ref()).await;
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
        report::write_all(&ctx.out, results)?;
        // Let the last level's connections close before the next one.
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    if let Some(process) = process {
        let grace = Duration::from_secs(12);
        let exit = tokio::task::spawn_blocking(move || process.stop(grace))
            .await
            .context("stop task failed")??;
        if !exit.success {
            bail!("did not exit cleanly on SIGTERM ({})", exit.text);
        }
    }
    Ok(())
}

/// One run of one level, with the server sampled throughout when the harness started it.
async fn measure(
    ctx: &RunContext,
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
        timeout: Duration::from_secs(ctx.args.timeout_secs),
    };
    let pid = process.map(ServerProcess::pid);
    if let Some(pid) = pid {
        sample::reset_peak_rss(pid);
    }
    let sampler = pid.map(Sampler::start);
    let done = Arc::new(AtomicUsize::new(0));
    let bar = progress_bar(ctx, &entry.name, &level, Arc::clone(&done));
    let (outcomes, total) = load::run(&level, done).await;
    if let Some((bar, ticker)) = bar {
        ticker.abort();
        bar.finish_and_clear();
    }
    let mut run = stats::summarize(concurrency, &outcomes, total);
    if let Some(maxima) = sampler.map(Sampler::stop) {
        run.max_cpu_pct = maxima.cpu_pct;
        run.max_rss_mib = maxima.rss_kib.map(mib);
        run.max_threads = maxima.threads;
    }
    run
}

/// A progress bar on stderr fed from `done`, unless quiet (indicatif draws nothing when
/// stderr is not a terminal).
fn progress_bar(
    ctx: &RunContext,
    name: &str,
    level: &Level,
    done: Arc<AtomicUsize>,
) -> Option<(ProgressBar, tokio::task::JoinHandle<()>)> {
    if ctx.args.quiet {
        return None;
    }
    let bar = ProgressBar::new(level.requests as u64);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>24} {bar:40} {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(format!("{name} c={}", level.concurrency));
    let feed = bar.clone();
    let ticker = tokio::spawn(async move {
        loop {
            feed.set_position(done.load(Ordering::Relaxed) as u64);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    Some((bar, ticker))
}

fn server_args(ctx: &RunContext) -> Vec<String> {
    vec![
        "--delay-ms".into(),
        ctx.args.delay_ms.to_string(),
        "--workers".into(),
        ctx.workers.to_string(),
        "--blocking-threads".into(),
        ctx.args.blocking_threads.to_string(),
    ]
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn meta(
    args: &LadderArgs,
    cpus: &[usize],
    server_cpus: &[usize],
    load_cpus: &[usize],
    workers: usize,
) -> Meta {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    };
    let model = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_default();
    let crate_versions: BTreeMap<String, String> = env!("GREET_CRATE_VERSIONS")
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    Meta {
        machine: read("/proc/sys/kernel/hostname"),
        cpus: Cpus {
            count: cpus.len(),
            model,
            server: server_cpus.to_vec(),
            load: load_cpus.to_vec(),
        },
        kernel: read("/proc/sys/kernel/osrelease"),
        crate_versions,
        flags: Flags {
            delay_ms: args.delay_ms,
            workers,
            blocking_threads: args.blocking_threads.get(),
            concurrency: args.concurrency.clone(),
            repeats: args.repeats.get(),
            timeout_s: args.timeout_secs as f64,
        },
        started_at: rfc3339(SystemTime::now()),
        mode: if args.docker { "docker" } else { "process" }.to_owned(),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` for `t`.
pub fn rfc3339(t: SystemTime) -> String {
    let (date, secs) = civil(t);
    format!(
        "{date}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// `YYYYMMDDTHHMMSSZ` for now: the default results directory.
fn timestamp_dir() -> String {
    let (date, secs) = civil(SystemTime::now());
    format!(
        "{}T{:02}{:02}{:02}Z",
        date.replace('-', ""),
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The UTC date `YYYY-MM-DD` and seconds into that day (Howard Hinnant's civil-from-days).
fn civil(t: SystemTime) -> (String, u64) {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (format!("{year:04}-{month:02}-{day:02}"), secs % 86_400)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_times() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_796_003_633);
        assert_eq!(rfc3339(t), "2026-11-30T01:53:53Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00Z");
    }
}
