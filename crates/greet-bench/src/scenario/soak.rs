//! Soak, the siege / ab experiment: at each concurrency, keep-alive load for a duration (or a
//! request count) on the async and on the blocking endpoint, zero delay, each endpoint on a
//! freshly started server whose threads are counted throughout: live, peak, and every thread
//! id seen since start (threads started).

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::Result;

use crate::cli::SoakArgs;
use crate::compare::{self, Comparison};
use crate::load::{Sessions, Stop};
use crate::results::{Results, Soak, SoakCell};
use crate::runner::{mib, server_args, Bench};
use crate::sample;
use crate::server;
use crate::stats;

/// The original's connection counts.
pub const LEVELS: [usize; 3] = [50, 100, 200];
/// `--quick` connection counts.
pub const QUICK_LEVELS: [usize; 2] = [10, 20];
/// Each level's length unless told otherwise.
pub const DURATION: Duration = Duration::from_secs(10);
/// `--quick` length.
pub const QUICK_DURATION: Duration = Duration::from_millis(300);

/// Runs soak into `results.soak`; false when a server failed.
pub async fn run(bench: &Bench, args: &SoakArgs, results: &mut Results) -> Result<bool> {
    let levels = args.concurrency.clone().unwrap_or_else(|| {
        if args.quick {
            QUICK_LEVELS.to_vec()
        } else {
            LEVELS.to_vec()
        }
    });
    let stop = match (args.requests, args.duration) {
        (Some(n), _) => Stop::Total(n.get()),
        (None, Some(d)) => Stop::After(d),
        (None, None) if args.quick => Stop::After(QUICK_DURATION),
        (None, None) => Stop::After(DURATION),
    };
    let workers = args
        .workers
        .map_or_else(|| bench.default_workers(), |w| w.get());
    results.soak = Some(Soak {
        duration_s: match stop {
            Stop::After(d) => Some(d.as_secs_f64()),
            _ => None,
        },
        requests: match stop {
            Stop::Total(n) => Some(n),
            _ => None,
        },
        delay_ms: args.delay_ms,
        workers,
        blocking_threads: args.blocking_threads.get(),
        repeats: args.repeats.get(),
        ..Soak::default()
    });
    let settings = server_args(args.delay_ms, workers, args.blocking_threads.get());
    let mut all_ok = true;
    for short in super::servers(&args.servers) {
        let name = server::package(&short);
        for (i, endpoint) in args.endpoints.iter().enumerate() {
            let plan = Plan {
                short: &short,
                name: &name,
                endpoint,
                levels: &levels,
                stop,
                repeats: args.repeats.get(),
                check: i == 0,
            };
            if let Err(err) = run_endpoint(bench, &plan, &settings, results).await {
                let failed = super::failure("soak", format!("{name} {endpoint}"), &err);
                let soak = results.soak.as_mut().expect("set above");
                soak.failures.push(failed);
                all_ok = false;
            }
            let soak = results.soak.as_mut().expect("set above");
            soak.comparisons = comparisons(&soak.cells);
            bench.save(results)?;
        }
    }
    Ok(all_ok)
}

struct Plan<'a> {
    short: &'a str,
    name: &'a str,
    endpoint: &'a str,
    levels: &'a [usize],
    stop: Stop,
    repeats: usize,
    check: bool,
}

async fn run_endpoint(
    bench: &Bench,
    plan: &Plan<'_>,
    settings: &[String],
    results: &mut Results,
) -> Result<()> {
    let mut process = bench.start(plan.short, settings.to_vec()).await?;
    let pid = process.pid();
    let threads_at_start = sample::read(pid).map_or(0, |r| r.threads);
    let mut seen: BTreeSet<u32> = sample::task_ids(pid).into_iter().collect();
    if plan.check {
        super::check(&process).await?;
        bench.say(plan.name, "contract check passed");
    }
    for &concurrency in plan.levels {
        let sessions = Sessions {
            addr: process.addr(),
            path: plan.endpoint.to_owned(),
            users: concurrency,
            stop: plan.stop,
            timeout: bench.timeout(),
        };
        sample::reset_peak_rss(pid);
        let mut cell = SoakCell {
            server: plan.name.to_owned(),
            endpoint: plan.endpoint.to_owned(),
            concurrency,
            threads_at_start,
            ..SoakCell::default()
        };
        for repeat in 1..=plan.repeats {
            let label = format!("{} {} c={concurrency}", plan.name, plan.endpoint);
            let (run, maxima) = super::keep_alive(bench, &process, &sessions, label).await;
            bench.say(
                plan.name,
                &format!(
                    "{} c={concurrency} run {repeat}: {:.1} req/s, {:.2}% ok, {} threads",
                    plan.endpoint,
                    run.requests_per_s,
                    run.success_rate,
                    maxima.threads_last.unwrap_or(0)
                ),
            );
            seen.extend(&maxima.thread_ids);
            cell.threads_live = maxima.threads_last.unwrap_or(0);
            cell.threads_peak = cell.threads_peak.max(maxima.threads.unwrap_or(0));
            cell.threads_total = seen.len() as u64;
            cell.cpu_max_pct = stats::max_of(cell.cpu_max_pct, maxima.cpu_pct);
            cell.max_rss_mib = stats::max_of(cell.max_rss_mib, maxima.rss_kib.map(mib));
            cell.runs.push(run);
            summarize(&mut cell);
            bench.ensure_alive(&mut process)?;
            super::settle().await;
        }
        results.soak.as_mut().expect("set").cells.push(cell);
        bench.save(results)?;
    }
    bench.stop(process).await
}

/// The cell's figures from its runs so far.
fn summarize(cell: &mut SoakCell) {
    let r = stats::repeated(&cell.runs);
    cell.hits = r.hits;
    cell.success_rate = r.success_rate;
    cell.requests_per_s = r.requests_per_s;
    cell.average_s = r.average_ms / 1000.0;
    cell.cpu_avg_pct = r.cpu_avg_pct;
}

/// Every pair of servers at each endpoint and concurrency.
fn comparisons(cells: &[SoakCell]) -> Vec<Comparison> {
    let mut keys: Vec<(&str, usize)> = Vec::new();
    for cell in cells {
        if !keys.contains(&(cell.endpoint.as_str(), cell.concurrency)) {
            keys.push((cell.endpoint.as_str(), cell.concurrency));
        }
    }
    keys.into_iter()
        .flat_map(|(endpoint, concurrency)| {
            let samples: Vec<(String, Vec<f64>)> = cells
                .iter()
                .filter(|c| c.endpoint == endpoint && c.concurrency == concurrency)
                .map(|c| {
                    (
                        format!("{} {endpoint} c={concurrency}", c.server),
                        stats::throughputs(&c.runs),
                    )
                })
                .collect();
            compare::pairwise(&samples)
        })
        .collect()
}
