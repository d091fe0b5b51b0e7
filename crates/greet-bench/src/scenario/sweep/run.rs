//! Sweep, the tuning experiment: zero-delay keep-alive load on the ceiling (`/health`, no
//! work) and the greeting endpoints over a grid of `--workers`, and on the blocking endpoint of
//! `--blocking-threads` too. Every run starts a fresh server with its setting, warms it up,
//! then measures. Repeats are the outer loop, then servers, then endpoints, then settings,
//! servers and settings each in a Williams order ([`in_order`]): a repeat is a block of every
//! server and setting, so a slow spell of the machine hits them all alike. Per server and
//! endpoint: the best setting and its gain over the default.

use anyhow::Result;
use greet_load::{Expect, Stop};

use crate::harness::{server_args, Ask, Harness, Start, Subject};
use crate::scenario::kit::{in_order, Book, Run};
use greet_model::plan::{self, Measure, Placement, BLOCKING_THREADS};
use greet_model::results::{Frame, Gain, Repeated};
use greet_stats::distinct;

use super::{Plan, Section, Setting, Sweep, SweepBest, SweepCell};

impl Run for Sweep {
    /// Runs the sweep: every endpoint of every server over its grid, a repeat at a time.
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
        book.open(Section {
            transport: harness.transport(),
            frame: Frame::new(plan.base.repeats),
            concurrency,
            duration_s: duration.as_secs_f64(),
            warmup_s: warmup.as_secs_f64(),
            workers: workers.clone(),
            blocking_threads: blocking.clone(),
            default,
            ..Section::default()
        });
        let settings = |endpoint: &str| -> Vec<Setting> {
            if endpoint == greet_core::paths::GREETINGS_BLOCKING {
                (workers.iter())
                    .flat_map(|&w| {
                        blocking.iter().map(move |&b| Setting {
                            workers: w,
                            blocking_threads: Some(b),
                        })
                    })
                    .collect()
            } else {
                (workers.iter())
                    .map(|&w| Setting {
                        workers: w,
                        blocking_threads: None,
                    })
                    .collect()
            }
        };
        let subjects = Subject::all(&plan.base);
        for repeat in 0..plan.base.repeats.max(1) {
            for subject in in_order(&subjects, repeat) {
                let name = &subject.name();
                for (e, endpoint) in plan.endpoints.iter().enumerate() {
                    let one = Endpoint {
                        subject,
                        name,
                        endpoint,
                        settings: &settings(endpoint),
                        measure: plan.measure,
                        repeat,
                        checked: repeat > 0 || e > 0,
                    };
                    let who = format!("{name} {endpoint}");
                    book.step(&who, async |book| run_endpoint(harness, &one, book).await)
                        .await?;
                }
            }
        }
        for best in &book.section().best {
            harness.say(
                &best.server,
                &format!(
                    "{}: best {} at {:.0} req/s, {:.3}x the default",
                    best.endpoint,
                    best.setting.label(),
                    best.gain.requests_per_s,
                    best.gain.gain
                ),
            );
        }
        Ok(())
    }

    /// Each server's best setting on each endpoint, against the default.
    fn compare(section: &mut Section) {
        let pairs = distinct(
            section
                .cells
                .iter()
                .map(|c| (c.server.as_str(), c.endpoint.as_str())),
        );
        let bests = (pairs.into_iter())
            .filter_map(|(server, endpoint)| {
                best(&section.cells, server, endpoint, section.default)
            })
            .collect();
        section.best = bests;
    }
}

/// One repeat of one server on one endpoint: every setting once.
struct Endpoint<'a> {
    subject: &'a Subject,
    name: &'a str,
    endpoint: &'a str,
    settings: &'a [Setting],
    measure: Measure,
    /// From 0.
    repeat: usize,
    /// Its server passed the contract on an earlier start.
    checked: bool,
}

async fn run_endpoint(
    harness: &Harness,
    plan: &Endpoint<'_>,
    book: &mut Book<'_, Sweep>,
) -> Result<()> {
    let mut checked = plan.checked;
    for setting in in_order(plan.settings, plan.repeat) {
        let blocking = setting.blocking_threads.unwrap_or(BLOCKING_THREADS);
        let args = server_args(0, setting.workers, blocking);
        let foreign = plan::Foreign::default();
        let start = Start {
            checked,
            ..Start::new(plan.subject, &args, &foreign, plan.endpoint)
        };
        let mut up = harness.bring_up(Placement::Harness, &start).await?;
        checked = true;
        let ask = |stop| {
            let work = harness.sessions(plan.measure.connections, stop);
            Ask::new(plan.endpoint, &Expect::Greeting, work)
        };
        let label = format!(
            "{} {} w={} b={blocking} #{}",
            plan.name,
            plan.endpoint,
            setting.workers,
            plan.repeat + 1
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
        let cells = &mut book.section().cells;
        let at = (cells.iter())
            .position(|c| {
                c.server == plan.name && c.endpoint == plan.endpoint && c.setting == *setting
            })
            .unwrap_or_else(|| {
                cells.push(SweepCell {
                    server: plan.name.to_owned(),
                    endpoint: plan.endpoint.to_owned(),
                    setting: *setting,
                    ..SweepCell::default()
                });
                cells.len() - 1
            });
        let cell = &mut cells[at];
        cell.runs.push(run);
        let r = Repeated::of(&cell.runs);
        cell.requests_per_s = r.requests_per_s;
        cell.success_rate = r.success_rate;
        cell.cpu_avg_pct = r.cpu_avg_pct;
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
