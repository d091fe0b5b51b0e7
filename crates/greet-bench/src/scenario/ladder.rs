//! The ladder, the original experiment: each server in turn verified (on a process of its
//! own), started, loaded at each concurrency level (one request per fresh connection) while
//! sampled, stopped.

use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::{bail, Context, Result};

use crate::agents::{self, Shard};
use crate::compare::{self, Comparison, Figure};
use crate::harness::{server_args, Bound, Harness, Watch};
use crate::load::{self, Expect, Level as LoadLevel};
use crate::plan::{self, is_peer, package, Contract};
use crate::results::{self, AgentRun, LadderServer, Level, Mode, Results, Run};
use crate::sample::{self, mib};
use crate::server::{self, Program, Server};

/// Where a server comes from.
#[derive(Debug, Clone)]
enum Source {
    /// A program the harness starts (or why it cannot: a JVM peer without a JDK).
    Spawn(Result<Program, String>),
    /// An image the harness runs as a container.
    Container(String),
    /// An image the harness deploys as a swarm stack.
    Swarm(String),
    /// A server already running at this base URL.
    Target(String),
}

#[derive(Debug, Clone)]
struct Entry {
    name: String,
    endpoint: String,
    source: Source,
    /// How it is verified before load.
    contract: Contract,
    /// What a valid answer is.
    expect: Expect,
}

/// The entries to run, binaries located.
fn entries(harness: &Harness, plan: &plan::Ladder) -> Result<Vec<Entry>> {
    if plan.servers.is_empty() && plan.foreign.targets.is_empty() {
        bail!("nothing to benchmark: --servers is empty and no --target was given");
    }
    if plan.docker {
        let mut images: Vec<String> = plan
            .servers
            .iter()
            .map(|s| server::image(&s.short))
            .collect();
        images.dedup();
        server::check_docker(&images, plan.docker_network.as_deref())?;
    }
    if plan.swarm {
        let shorts: Vec<&str> = plan.servers.iter().map(|s| s.short.as_str()).collect();
        server::swarm::preflight(&shorts, !plan.foreign.targets.is_empty())?;
    }
    let mut entries = Vec::new();
    for spec in &plan.servers {
        let source = if plan.swarm {
            Source::Swarm(server::image(&spec.short))
        } else if plan.docker {
            Source::Container(server::image(&spec.short))
        } else if is_peer(&spec.short) {
            // A peer that cannot run is skipped, with the reason: the run goes on.
            Source::Spawn(
                harness
                    .binaries
                    .locate(&spec.short)
                    .map_err(|e| format!("{e:#}")),
            )
        } else {
            Source::Spawn(Ok(harness.binaries.locate(&spec.short)?))
        };
        let contract = Contract::for_server(&spec.short);
        let (name, endpoint) = match &spec.endpoint {
            Some(endpoint) => (
                format!("{}:{endpoint}", package(&spec.short)),
                endpoint.clone(),
            ),
            None => (package(&spec.short), plan.endpoint.clone()),
        };
        entries.push(Entry {
            expect: Expect::for_target(&endpoint, &plan.foreign.expect),
            name,
            endpoint,
            source,
            contract,
        });
    }
    for target in &plan.foreign.targets {
        entries.push(Entry {
            name: target.name.clone(),
            endpoint: plan.endpoint.clone(),
            source: Source::Target(target.url.clone()),
            expect: Expect::for_target(&plan.endpoint, &plan.foreign.expect),
            contract: plan.foreign.contract,
        });
    }
    Ok(entries)
}

/// Runs the ladder into `results.ladder`; false when a server failed.
pub async fn run(harness: &Harness, plan: &plan::Ladder, results: &mut Results) -> Result<bool> {
    let entries = entries(harness, plan)?;
    let workers = harness.workers(plan.workers);
    results.ladder = Some(results::Ladder {
        transport: harness.transport(),
        mode: if plan.swarm {
            Mode::Swarm
        } else if plan.docker {
            Mode::Docker
        } else {
            Mode::Process
        },
        delay_ms: plan.delay_ms,
        workers,
        blocking_threads: plan.blocking_threads,
        concurrency: plan.levels.clone(),
        repeats: plan.repeats,
        timeout_s: harness.timeout().as_secs_f64(),
        servers: Vec::new(),
        comparisons: Vec::new(),
        failures: Vec::new(),
    });
    let args = server_args(plan.delay_ms, workers, plan.blocking_threads);
    let mut all_ok = true;
    for entry in entries {
        let ladder = section(results);
        ladder.servers.push(LadderServer {
            name: entry.name.clone(),
            endpoint: entry.endpoint.clone(),
            ..LadderServer::default()
        });
        if let Err(err) = run_entry(harness, plan, &args, &entry, results).await {
            let failed = super::failure("ladder", entry.name.clone(), &err);
            section(results).failures.push(failed);
            all_ok = false;
        }
        let ladder = section(results);
        ladder.comparisons = comparisons(&ladder.servers, &plan.levels);
        harness.save(results)?;
    }
    Ok(all_ok)
}

fn section(results: &mut Results) -> &mut results::Ladder {
    results.ladder.as_mut().expect("set when the ladder starts")
}

/// The entry being run: the last one.
fn current(results: &mut Results) -> &mut LadderServer {
    section(results)
        .servers
        .last_mut()
        .expect("pushed before it runs")
}

/// Starts the server `source` names (not a target), pinned, and waits until it answers.
async fn start(
    harness: &Harness,
    plan: &plan::Ladder,
    args: &[String],
    source: &Source,
) -> Result<Server> {
    let source = source.clone();
    let args = args.to_vec();
    let cpus = harness.server_cpus.clone();
    let network = plan.docker_network.clone();
    tokio::task::spawn_blocking(move || match source {
        Source::Container(image) => {
            Server::start_container(&image, &args, &cpus, network.as_deref())
        }
        Source::Swarm(image) => {
            Server::start_swarm(&image, &args, &server::swarm::Nodes::read()?, None)
        }
        Source::Spawn(Ok(program)) => Server::start(&program, &args, &cpus),
        Source::Spawn(Err(why)) => Err(anyhow::Error::msg(why)),
        Source::Target(_) => unreachable!("targets are not started"),
    })
    .await
    .context("start-up task failed")?
}

async fn run_entry(
    harness: &Harness,
    plan: &plan::Ladder,
    args: &[String],
    entry: &Entry,
    results: &mut Results,
) -> Result<()> {
    let say = |line: String| harness.say(&entry.name, &line);
    let (addr, mut server) = match &entry.source {
        Source::Spawn(_) | Source::Container(_) | Source::Swarm(_) => {
            // Verified on a process of its own, stopped before the measured one starts: the
            // contract's cases open the stores, start blocking-pool threads and walk the
            // parsers' error paths, which the measured process would otherwise carry into its
            // memory and thread figures.
            let checked = start(harness, plan, args, &entry.source).await?;
            let at = (checked.addr(), checked.base_url());
            harness
                .verify(
                    &entry.name,
                    entry.contract,
                    (at.0, at.1.as_str(), false),
                    &entry.endpoint,
                    &entry.expect,
                )
                .await?;
            harness.stop(checked).await?;
            let measured = Harness::measured_args(args, &harness.wire);
            let server = start(harness, plan, &measured, &entry.source).await?;
            let startup = server.startup();
            let idle = if server.visible() {
                sample::read(server.pid()).map(|r| r.rss_kib)
            } else {
                server.engine().and_then(|e| e.latest()).map(|r| r.mem_kib)
            };
            let record = current(results);
            record.node = server.node().map(str::to_owned);
            record.startup_s = Some(startup.as_secs_f64());
            record.idle_rss_mib = idle.map(mib);
            record.addr = Some(server.addr().to_string());
            say(format!(
                "started in {:.1} ms (pid {})",
                startup.as_secs_f64() * 1000.0,
                server.pid()
            ));
            harness
                .check_protocol(
                    &entry.name,
                    (server.addr(), &harness.wire),
                    &entry.endpoint,
                    &entry.expect,
                )
                .await?;
            (server.addr(), Some(server))
        }
        Source::Target(url) => {
            let addr = greet_conformance::resolve(url)
                .await
                .map_err(anyhow::Error::msg)?;
            current(results).addr = Some(addr.to_string());
            harness
                .verify(
                    &entry.name,
                    entry.contract,
                    (addr, url.as_str(), true),
                    &entry.endpoint,
                    &entry.expect,
                )
                .await?;
            (addr, None)
        }
    };

    for &concurrency in &plan.levels {
        let mut runs = Vec::new();
        for _ in 0..plan.repeats {
            let run = measure(harness, entry, addr, concurrency, server.as_ref(), plan)
                .await
                .with_context(|| format!("concurrency {concurrency}"))?;
            say(format!(
                "c={concurrency}: {:.2}% ok, total {:.4} s, average {:.4} s{}",
                run.load.success_rate,
                run.load.total_s,
                run.load.average_s,
                agents_line(&run.agents)
            ));
            runs.push(run);
            let died = server.as_mut().and_then(Server::exited);
            if let Some(exit) = died {
                let tail = server.as_ref().map(Server::stderr_tail).unwrap_or_default();
                record_level(results, concurrency, runs);
                bail!(
                    "server exited mid-run at concurrency {concurrency} ({}); stderr: {tail}",
                    exit.text
                );
            }
        }
        record_level(results, concurrency, runs);
        harness.save(results)?;
        super::settle(super::Leftover::Fresh).await;
    }

    if let Some(server) = server {
        harness.stop(server).await?;
    }
    Ok(())
}

fn record_level(results: &mut Results, concurrency: usize, runs: Vec<Run>) {
    let record = current(results);
    record.levels.push(Level {
        concurrency,
        run: Run::median_of(&runs),
        runs: if runs.len() > 1 { runs } else { Vec::new() },
    });
    record.fold_maxima();
}

/// `, over N agents: …` for a level the agents ran: each one's requests and start skew.
fn agents_line(agents: &[AgentRun]) -> String {
    if agents.is_empty() {
        return String::new();
    }
    let each: Vec<String> = agents
        .iter()
        .map(|a| format!("{} req, +{:.1} ms", a.requests, a.start_skew_ms))
        .collect();
    format!(", over {} agents ({})", agents.len(), each.join("; "))
}

/// One run of one level, with the server sampled throughout when the harness started it;
/// from `--agents` processes, or a swarm job's, when there are any, which fail the level if
/// one of them fails.
async fn measure(
    harness: &Harness,
    entry: &Entry,
    addr: SocketAddr,
    concurrency: usize,
    server: Option<&Server>,
    plan: &plan::Ladder,
) -> Result<Run> {
    let agents = plan.agents;
    let level = LoadLevel {
        addr,
        target: entry.endpoint.clone(),
        expect: entry.expect.clone(),
        concurrency,
        requests: concurrency,
        timeout: harness.timeout(),
        wire: harness.wire.clone(),
    };
    let (tally, agents, watched) = if agents > 0 {
        let url = agents::url_for(plan.swarm, addr, &entry.endpoint, harness.wire.protocol);
        let start = agents::start_instant(plan.swarm);
        let shard = Shard {
            url,
            expect: plan.foreign.expect.clone(),
            protocol: harness.wire.protocol,
            timeout: harness.timeout(),
            work: agents::Work::Fresh {
                concurrency,
                requests: concurrency,
            },
            index: 0,
            agents,
            start_at_ms: agents::unix_ms(start),
        };
        let watch = Watch::start(server, start);
        let ran = agents::run(&shard, agents, plan.swarm).await;
        let watched = watch.stop().await;
        let (tally, agents) = ran?.merged();
        (tally, agents, watched)
    } else {
        let watch = Watch::start(server, SystemTime::now());
        let done = Arc::new(AtomicUsize::new(0));
        let bar = harness.progress(
            format!("{} c={}", entry.name, level.concurrency),
            Bound::Requests(level.requests as u64),
            Arc::clone(&done),
        );
        let tally = load::fresh(&level, done).await;
        bar.finish();
        (tally, Vec::new(), watch.stop().await)
    };
    Ok(watched.run(tally.figures(), agents))
}

/// Every pair of servers at each level, on per-run total time, when levels were repeated.
fn comparisons(servers: &[LadderServer], levels: &[usize]) -> Vec<Comparison> {
    levels
        .iter()
        .flat_map(|&level| {
            let samples: Vec<(String, Vec<f64>)> = servers
                .iter()
                .filter_map(|s| {
                    let l = s.levels.iter().find(|l| l.concurrency == level)?;
                    (!l.runs.is_empty()).then(|| {
                        let totals = l.runs.iter().map(|r| r.load.total_s).collect();
                        (format!("{} c={level}", s.name), totals)
                    })
                })
                .collect();
            compare::pairwise(Figure::TotalS, &samples)
        })
        .collect()
}
