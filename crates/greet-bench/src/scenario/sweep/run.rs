//! Sweep, the tuning experiment: zero-delay keep-alive load on the ceiling (`/health`, no
//! work) and the greeting endpoints over a grid of `--workers`, and on the blocking endpoint of
//! `--blocking-threads` too. Every run starts a fresh server with its setting, warms it up,
//! then measures; repeats are interleaved across settings so a slow spell of the machine hits
//! them all alike. Per server and endpoint: the best setting and its gain over the default.

use anyhow::Result;
use greet_load::{Expect, Stop, Work};

use crate::harness::{server_args, Ask, Harness, Start, Subject};
use crate::scenario::kit::{Book, Run};
use greet_model::plan::{self, package, Measure, Placement, BLOCKING_THREADS};
use greet_model::results::{Frame, Gain, Repeated};

use super::{Plan, Section, Setting, Sweep, SweepBest, SweepCell};

impl Run for Sweep {
    /// Runs the sweep: every endpoint of every server over its grid.
    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        let default = Setting {
            workers: harness.workers(None),
            blocking_threads: Some(BLOCKING_THREADS),
        };
        let workers = crate::scenario::kit::grid_with(&plan.workers, default.workers);
        let blocking = crate::scenario::kit::grid_with(&plan.blocking_threads, BLOCKING_THREADS);
        let Measure {
            connections: concurrency,
            duration,
            warmup,
        } = plan.measure;
        let repeats = plan.base.repeats;
        book.open(Section {
            transport: harness.transport(),
            frame: Frame::new(repeats),
            concurrency,
            duration_s: duration.as_secs_f64(),
            warmup_s: warmup.as_secs_f64(),
            workers: workers.clone(),
            blocking_threads: blocking.clone(),
            default,
            ..Section::default()
        });
        for short in &plan.base.shorts() {
            let name = package(short);
            let mut checked = false;
            for endpoint in &plan.endpoints {
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
                let one = Endpoint {
                    short,
                    name: &name,
                    endpoint,
                    settings: &settings,
                    measure: plan.measure,
                    repeats,
                };
                let who = format!("{name} {endpoint}");
                book.once(&who, async |book| {
                    run_endpoint(harness, &one, &mut checked, book).await?;
                    let sweep = book.section();
                    if let Some(best) = best(&sweep.cells, &name, endpoint, default) {
                        harness.say(
                            &name,
                            &format!(
                                "{endpoint}: best {} at {:.0} req/s, {:.3}x the default",
                                best.setting.label(),
                                best.gain.requests_per_s,
                                best.gain.gain
                            ),
                        );
                        sweep.best.push(best);
                    }
                    Ok(())
                })
                .await?;
            }
        }
        Ok(())
    }
}

struct Endpoint<'a> {
    short: &'a str,
    name: &'a str,
    endpoint: &'a str,
    settings: &'a [Setting],
    measure: Measure,
    repeats: usize,
}

async fn run_endpoint(
    harness: &Harness,
    plan: &Endpoint<'_>,
    checked: &mut bool,
    book: &mut Book<'_, Sweep>,
) -> Result<()> {
    let first = book.section().cells.len();
    for setting in plan.settings {
        book.section().cells.push(SweepCell {
            server: plan.name.to_owned(),
            endpoint: plan.endpoint.to_owned(),
            setting: *setting,
            ..SweepCell::default()
        });
    }
    for repeat in 1..=plan.repeats {
        for (i, setting) in plan.settings.iter().enumerate() {
            let blocking = setting.blocking_threads.unwrap_or(BLOCKING_THREADS);
            let subject = Subject::Server(plan.short.to_owned());
            let args = server_args(0, setting.workers, blocking);
            let foreign = plan::Foreign::default();
            let start = Start {
                checked: *checked,
                ..Start::new(&subject, &args, &foreign, plan.endpoint)
            };
            let mut up = harness.bring_up(Placement::Harness, &start).await?;
            *checked = true;
            let ask = |stop| {
                let work = Work::Sessions {
                    users: plan.measure.connections,
                    stop,
                    streams: harness.common.streams,
                    pipeline: harness.common.pipeline,
                    requests_per_connection: harness.common.requests_per_connection,
                };
                Ask::new(plan.endpoint, &Expect::Greeting, work)
            };
            let label = format!(
                "{} {} w={} b={blocking} #{repeat}",
                plan.name, plan.endpoint, setting.workers
            );
            if !plan.measure.warmup.is_zero() {
                let warm = ask(Stop::After(plan.measure.warmup));
                let label = format!("{label} warm-up");
                harness.load(Placement::Harness, &up, &warm, label).await?;
            }
            let measured = ask(Stop::After(plan.measure.duration));
            let run = harness
                .measure(Placement::Harness, &up, &measured, label)
                .await?
                .run();
            up.ensure_alive()?;
            harness.release(up).await?;
            let cell = &mut book.section().cells[first + i];
            cell.runs.push(run);
            let r = Repeated::of(&cell.runs);
            cell.requests_per_s = r.requests_per_s;
            cell.success_rate = r.success_rate;
            cell.cpu_avg_pct = r.cpu_avg_pct;
        }
        book.save()?;
    }
    Ok(())
}

/// The best setting of `server` on `endpoint` by median throughput, against the default.
pub(crate) fn best(
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
        gain: Gain::of(
            (&top.setting.label(), &top.runs),
            (&base.setting.label(), &base.runs),
        ),
    })
}
