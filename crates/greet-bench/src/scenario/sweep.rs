//! Sweep, the tuning experiment: zero-delay keep-alive load on the ceiling (`/health`, no
//! work) and the greeting endpoints over a grid of `--workers`, and on the blocking endpoint of
//! `--blocking-threads` too. Every run starts a fresh server with its setting, warms it up,
//! then measures; repeats are interleaved across settings so a slow spell of the machine hits
//! them all alike. Per server and endpoint: the best setting and its gain over the default.

use std::time::Duration;

use anyhow::Result;

use crate::cli::SweepArgs;
use crate::compare::Comparison;
use crate::load::{Sessions, Stop};
use crate::results::{Results, Setting, Sweep, SweepBest, SweepCell};
use crate::runner::{server_args, Bench};
use crate::server;
use crate::stats;

/// `--workers` grid unless told otherwise.
pub const WORKERS: [usize; 3] = [1, 2, 4];
/// `--blocking-threads` grid unless told otherwise.
pub const BLOCKING_THREADS: [usize; 2] = [2, 200];
/// The servers' default `--blocking-threads`.
pub const DEFAULT_BLOCKING_THREADS: usize = 200;

/// Runs the sweep into `results.sweep`; false when a server failed.
pub async fn run(bench: &Bench, args: &SweepArgs, results: &mut Results) -> Result<bool> {
    let quick = args.quick;
    let pick = |given: Option<Duration>, normal: u64, fast: u64| {
        given.unwrap_or(Duration::from_millis(if quick { fast } else { normal }))
    };
    let duration = pick(args.duration, 500, 100);
    let warmup = pick(args.warmup, 200, 0);
    let concurrency = args.concurrency.unwrap_or(if quick { 20 } else { 100 });
    let repeats = args.repeats.map_or(if quick { 2 } else { 4 }, |r| r.get());
    let default = Setting {
        workers: bench.default_workers(),
        blocking_threads: Some(DEFAULT_BLOCKING_THREADS),
    };
    let grid = |given: &Option<Vec<usize>>, normal: &[usize], fast: &[usize], always: usize| {
        let mut grid = given
            .clone()
            .unwrap_or_else(|| if quick { fast } else { normal }.to_vec());
        grid.push(always);
        grid.sort_unstable();
        grid.dedup();
        grid
    };
    let workers = grid(&args.workers, &WORKERS, &[1, 2], default.workers);
    let blocking = grid(
        &args.blocking_threads,
        &BLOCKING_THREADS,
        &[DEFAULT_BLOCKING_THREADS],
        DEFAULT_BLOCKING_THREADS,
    );
    results.sweep = Some(Sweep {
        concurrency,
        duration_s: duration.as_secs_f64(),
        warmup_s: warmup.as_secs_f64(),
        repeats,
        workers: workers.clone(),
        blocking_threads: blocking.clone(),
        default,
        ..Sweep::default()
    });
    let mut all_ok = true;
    for short in super::servers(&args.servers) {
        let name = server::package(&short);
        let mut checked = false;
        for endpoint in &args.endpoints {
            let settings: Vec<Setting> = if endpoint == greet_core::paths::GREETINGS_BLOCKING {
                workers
                    .iter()
                    .flat_map(|&w| {
                        blocking.iter().map(move |&b| Setting {
                            workers: w,
                            blocking_threads: Some(b),
                        })
                    })
                    .collect()
            } else {
                workers
                    .iter()
                    .map(|&w| Setting {
                        workers: w,
                        blocking_threads: None,
                    })
                    .collect()
            };
            let plan = Plan {
                short: &short,
                name: &name,
                endpoint,
                settings: &settings,
                concurrency,
                duration,
                warmup,
                repeats,
            };
            if let Err(err) = run_endpoint(bench, &plan, &mut checked, results).await {
                let failed = super::failure("sweep", format!("{name} {endpoint}"), &err);
                let sweep = results.sweep.as_mut().expect("set above");
                sweep.failures.push(failed);
                all_ok = false;
                continue;
            }
            let sweep = results.sweep.as_mut().expect("set above");
            if let Some(best) = best(&sweep.cells, &name, endpoint, default) {
                bench.say(
                    &name,
                    &format!(
                        "{endpoint}: best {} at {:.0} req/s, {:.3}x the default",
                        best.setting.label(),
                        best.requests_per_s,
                        best.gain
                    ),
                );
                sweep.best.push(best);
            }
            bench.save(results)?;
        }
    }
    Ok(all_ok)
}

struct Plan<'a> {
    short: &'a str,
    name: &'a str,
    endpoint: &'a str,
    settings: &'a [Setting],
    concurrency: usize,
    duration: Duration,
    warmup: Duration,
    repeats: usize,
}

async fn run_endpoint(
    bench: &Bench,
    plan: &Plan<'_>,
    checked: &mut bool,
    results: &mut Results,
) -> Result<()> {
    let first = results.sweep.as_ref().map_or(0, |s| s.cells.len());
    for setting in plan.settings {
        results.sweep.as_mut().expect("set").cells.push(SweepCell {
            server: plan.name.to_owned(),
            endpoint: plan.endpoint.to_owned(),
            setting: *setting,
            ..SweepCell::default()
        });
    }
    for repeat in 1..=plan.repeats {
        for (i, setting) in plan.settings.iter().enumerate() {
            let blocking = setting.blocking_threads.unwrap_or(DEFAULT_BLOCKING_THREADS);
            let mut process = bench
                .start(plan.short, server_args(0, setting.workers, blocking))
                .await?;
            if !*checked {
                super::check(&process).await?;
                bench.say(plan.name, "contract check passed");
                *checked = true;
            }
            let sessions = |stop| Sessions {
                addr: process.addr(),
                path: plan.endpoint.to_owned(),
                users: plan.concurrency,
                stop,
                timeout: bench.timeout(),
            };
            let label = format!(
                "{} {} w={} b={blocking} #{repeat}",
                plan.name, plan.endpoint, setting.workers
            );
            if !plan.warmup.is_zero() {
                let warm = sessions(Stop::After(plan.warmup));
                super::keep_alive(bench, &process, &warm, format!("{label} warm-up")).await;
            }
            let (run, _) = super::keep_alive(
                bench,
                &process,
                &sessions(Stop::After(plan.duration)),
                label,
            )
            .await;
            bench.ensure_alive(&mut process)?;
            bench.stop(process).await?;
            let cell = &mut results.sweep.as_mut().expect("set").cells[first + i];
            cell.runs.push(run);
            let r = stats::repeated(&cell.runs);
            cell.requests_per_s = r.requests_per_s;
            cell.success_rate = r.success_rate;
            cell.cpu_avg_pct = r.cpu_avg_pct;
        }
        bench.save(results)?;
    }
    Ok(())
}

/// The best setting of `server` on `endpoint` by median throughput, against the default.
pub fn best(
    cells: &[SweepCell],
    server: &str,
    endpoint: &str,
    default: Setting,
) -> Option<SweepBest> {
    let cells: Vec<&SweepCell> = cells
        .iter()
        .filter(|c| c.server == server && c.endpoint == endpoint && !c.runs.is_empty())
        .collect();
    let base = cells.iter().find(|c| c.setting.is_default(&default))?;
    let top = cells
        .iter()
        .max_by(|a, b| a.requests_per_s.median.total_cmp(&b.requests_per_s.median))?;
    Some(SweepBest {
        server: server.to_owned(),
        endpoint: endpoint.to_owned(),
        setting: top.setting,
        requests_per_s: top.requests_per_s.median,
        default_requests_per_s: base.requests_per_s.median,
        gain: if base.requests_per_s.median == 0.0 {
            0.0
        } else {
            top.requests_per_s.median / base.requests_per_s.median
        },
        comparison: Comparison::new(
            &top.setting.label(),
            &stats::throughputs(&top.runs),
            &base.setting.label(),
            &stats::throughputs(&base.runs),
        ),
    })
}
