//! Rate, open-loop load: every server started and probed for its capacity (a short closed
//! loop) at each endpoint, then levels at the same request rates for all (fractions of the
//! lowest capacity, or given), run in blocks (each server once a block, in a Williams order).
//! Each request goes on a fixed schedule and its latency counted from its intended send time, so that a stall
//! shows however few requests were in flight during it (no coordinated omission).

use anyhow::{Context, Result};
use greet_load::Window;
use greet_load::{PacedTally, Schedule, Work, LATE, SPECTRUM};

use crate::harness::{Ask, Harness, Start, Subject, Up};
use crate::open_loop::{beyond_the_client, paced_run, probe, Probed, CLIENT_BOUND_PCT};
use crate::scenario::kit::{Book, Run};
use greet_model::results::{Frame, RateRun, RateWindow, Sampled, Spectrum};
use greet_stats::paired::{self, Comparison, Figure};
use greet_stats::{distinct, median};

use super::{Plan, Rate, RateLevel, RateServer, Rates, Section};

/// A level whose achieved rate is under this fraction of its target is over capacity.
pub(crate) const OVER_CAPACITY_BELOW: f64 = 0.95;
impl Run for Rate {
    /// Runs rate: every endpoint of every server in turn.
    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        let (args, workers) = harness.server_args(&plan.base.server);
        book.open(Section {
            transport: harness.transport(),
            frame: Frame::new(plan.base.repeats),
            delay_ms: plan.base.server.delay_ms,
            workers,
            duration_s: match &plan.rates {
                Rates::Ramp(ramp) => ramp.duration(),
                _ => plan.duration,
            }
            .as_secs_f64(),
            probe_s: plan.paced.probe.as_secs_f64(),
            connections: plan.paced.connections,
            late_ms: LATE.as_secs_f64() * 1000.0,
            over_capacity_below: OVER_CAPACITY_BELOW,
            client_bound_pct: CLIENT_BOUND_PCT,
            ..Section::default()
        });
        // Every server started and probed first, so that the levels can be the same rates for
        // all of them.
        let subjects = Subject::all(&plan.base);
        let mut ups = Vec::new();
        for subject in &subjects {
            let name = subject.name();
            let mut slot = None;
            book.once(&name, async |book| {
                let up = probe_subject(harness, plan, subject, &name, &args, book).await?;
                slot = Some(up);
                Ok(())
            })
            .await?;
            ups.push(slot);
        }
        let load_cpus = harness.load_cpu_count();
        for endpoint in &plan.endpoints {
            let streams = harness.common.streams;
            let schedules = schedules(plan, &book.section().servers, endpoint, streams);
            for (label, schedule) in schedules {
                let (target, peak) = (schedule.mean_rate(), schedule.peak_rate());
                let ramped = schedule.constant_rate().is_none();
                let ask = Ask::new(
                    endpoint,
                    &plan.base.foreign.expect,
                    Work::Paced(schedule.clone()),
                );
                // Each server's level, refused where it cannot be sent; the rest run in blocks.
                let mut runs: Vec<Option<(PacedTally, Vec<RateRun>)>> = Vec::new();
                for (s, subject) in subjects.iter().enumerate() {
                    let name = subject.name();
                    let Some(record) = record_of(book.section(), &name, endpoint) else {
                        runs.push(None);
                        continue;
                    };
                    let refusal = if target < 1.0 {
                        Some("a rate under 1/s".to_owned())
                    } else {
                        let here = Harness::loads_here(plan.base.place);
                        beyond_the_client(peak, record.client_max_rps, load_cpus, here)
                    };
                    match refusal {
                        Some(why) if ups[s].is_some() => {
                            harness.say(&name, &format!("{endpoint} {label}: refused: {why}"));
                            record.levels.push(RateLevel {
                                label: label.clone(),
                                target_rps: target,
                                refused: Some(why),
                                ..RateLevel::default()
                            });
                            runs.push(None);
                        }
                        _ => runs.push(ups[s].is_some().then(Default::default)),
                    }
                }
                for block in 0..plan.base.repeats {
                    for s in greet_stats::order::williams(subjects.len(), block) {
                        let name = subjects[s].name();
                        let (Some(up), Some((merged, level_runs))) =
                            (ups[s].as_mut(), runs[s].as_mut())
                        else {
                            continue;
                        };
                        book.step(&name, async |_| {
                            let (tally, run) = paced_run(
                                harness,
                                (up, plan.base.place),
                                &ask,
                                format!("{name} {endpoint} {label} #{}", block + 1),
                            )
                            .await
                            .with_context(|| format!("{endpoint} {label}"))?;
                            harness.say(
                                &name,
                                &format!(
                                    "{endpoint} {label} ({target:.0}/s) block {}: achieved {:.0}/s, \
                                     p99 {:.3} ms, late {}",
                                    block + 1,
                                    run.achieved_rps,
                                    run.latency_ms.p99,
                                    run.late
                                ),
                            );
                            if ramped {
                                for (second, w) in tally.seconds().iter().enumerate() {
                                    harness.say(
                                        &name,
                                        &format!("{endpoint} {label} {second}s: {}", said(w)),
                                    );
                                }
                            }
                            merged.merge(&tally);
                            level_runs.push(run);
                            up.ensure_alive()?;
                            crate::scenario::kit::settle(crate::scenario::kit::Leftover::KeepAlive)
                                .await;
                            Ok(())
                        })
                        .await?;
                        if book.has_failed(&name) {
                            ups[s] = None;
                        }
                    }
                }
                for (s, subject) in subjects.iter().enumerate() {
                    let Some((merged, level_runs)) = runs[s].take() else {
                        continue;
                    };
                    if level_runs.is_empty() {
                        continue;
                    }
                    let level = level_of(label.clone(), (target, ramped), &merged, level_runs);
                    if let Some(record) = record_of(book.section(), &subject.name(), endpoint) {
                        record.levels.push(level);
                    }
                }
                Rate::compare(book.section());
                book.save()?;
            }
        }
        for (s, up) in ups.into_iter().enumerate() {
            if let Some(up) = up {
                book.step(&subjects[s].name(), async |_| harness.release(up).await)
                    .await?;
            }
        }
        Ok(())
    }

    fn compare(section: &mut Section) {
        section.comparisons = comparisons(&section.servers);
    }
}

/// The record of `server` at `endpoint`, once probed.
fn record_of<'a>(
    section: &'a mut Section,
    server: &str,
    endpoint: &str,
) -> Option<&'a mut RateServer> {
    section
        .servers
        .iter_mut()
        .find(|r| r.server == server && r.endpoint == endpoint)
}

/// Starts `subject` and probes each endpoint's capacity: a record per endpoint, no level yet.
async fn probe_subject(
    harness: &Harness,
    plan: &Plan,
    subject: &Subject,
    name: &str,
    args: &[String],
    book: &mut Book<'_, Rate>,
) -> Result<Up> {
    let first = plan.endpoints.first().map_or("/greetings", String::as_str);
    let start = Start::new(subject, args, &plan.base.foreign, first);
    let up = harness.bring_up(plan.base.place, &start).await?;
    for endpoint in &plan.endpoints {
        let Probed {
            capacity,
            client_share,
            client_max,
        } = probe(
            harness,
            &up,
            (name, endpoint),
            &plan.base.foreign,
            (
                plan.paced.probe,
                plan.paced.connections,
                harness.common.streams,
            ),
        )
        .await?;
        book.section().servers.push(RateServer {
            server: name.to_owned(),
            endpoint: endpoint.clone(),
            capacity_rps: capacity,
            probe_client_cpu_pct: client_share * 100.0,
            client_max_rps: client_max,
            levels: Vec::new(),
            node: up.node(),
        });
    }
    Ok(up)
}

/// The levels at `endpoint`, the same for every server: fractions of the lowest capacity
/// probed there, the rates given, or the ramp. Each labelled with its rate.
fn schedules(
    plan: &Plan,
    servers: &[RateServer],
    endpoint: &str,
    streams: usize,
) -> Vec<(String, Schedule)> {
    let constant = |rate| {
        Schedule::constant(rate, plan.duration, plan.paced.connections).with_streams(streams)
    };
    let lowest = lowest_capacity(servers, endpoint).map_or(0.0, |(_, c)| c);
    match &plan.rates {
        Rates::OfCapacity(fractions) => fractions
            .iter()
            .map(|f| {
                let rate = f * lowest;
                (format!("{:.0}% ({rate:.0}/s)", f * 100.0), constant(rate))
            })
            .collect(),
        Rates::Fixed(rates) => rates
            .iter()
            .map(|r| (format!("{r:.0}/s"), constant(*r)))
            .collect(),
        Rates::Ramp(ramp) => {
            let ramp = Schedule::ramp(ramp.start, &ramp.stages, plan.paced.connections)
                .with_streams(streams);
            vec![(format!("ramp to {:.0}/s", ramp.peak_rate()), ramp)]
        }
    }
}

/// The server with the lowest capacity probed at `endpoint`, and that capacity: what the
/// default levels are fractions of.
pub(crate) fn lowest_capacity<'a>(
    servers: &'a [RateServer],
    endpoint: &str,
) -> Option<(&'a str, f64)> {
    servers
        .iter()
        .filter(|s| s.endpoint == endpoint && s.capacity_rps > 0.0)
        .map(|s| (s.server.as_str(), s.capacity_rps))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// A level from its runs, merged exactly; a ramp's with its seconds.
fn level_of(
    label: String,
    (target, ramped): (f64, bool),
    merged: &PacedTally,
    runs: Vec<RateRun>,
) -> RateLevel {
    let figures = merged.corrected.figures();
    let achieved = merged.achieved_rate();
    let distribution: Vec<[f64; 2]> = SPECTRUM
        .iter()
        .map(|q| q * 100.0)
        .chain([100.0])
        .zip(merged.corrected.spectrum_ms())
        .map(|(p, ms)| [p, ms])
        .collect();
    let server = Sampled::over(&runs.iter().map(|r| &r.server).collect::<Vec<_>>());
    let repeats = runs.len().max(1) as f64;
    let windows = if ramped {
        merged
            .seconds()
            .iter()
            .enumerate()
            .map(|(at, w)| RateWindow::of(at, w, repeats))
            .collect()
    } else {
        Vec::new()
    };
    RateLevel {
        label,
        target_rps: target,
        refused: None,
        achieved_rps: achieved,
        over_capacity: achieved < OVER_CAPACITY_BELOW * target,
        client_bound: median(&runs.iter().map(|r| r.client_cpu_pct).collect::<Vec<_>>())
            >= CLIENT_BOUND_PCT,
        requests: figures.requests,
        success_rate: figures.success_rate,
        late: merged.late,
        busy_max: merged.busy_max,
        latency_ms: Spectrum::of(&merged.corrected),
        service_ms: Spectrum::of(&merged.service),
        lag_ms: Spectrum::of(&merged.lag),
        distribution,
        errors: figures.errors,
        client_cpu_pct: median(&runs.iter().map(|r| r.client_cpu_pct).collect::<Vec<_>>()),
        server,
        runs,
        windows,
    }
}

/// One second of a ramp as the progress lines show it.
fn said(w: &Window) -> String {
    let latency = Spectrum::of(&w.corrected);
    format!(
        "offered {}/s, achieved {}/s, p50 {:.3} ms, p99 {:.3} ms, late {}",
        w.corrected.requests(),
        w.completed,
        latency.p50,
        latency.p99,
        w.late
    )
}

/// Every pair of servers at each endpoint and level, on per-run p99 and achieved rate.
fn comparisons(servers: &[RateServer]) -> Vec<Comparison> {
    let keys = distinct(servers.iter().flat_map(|s| {
        s.levels
            .iter()
            .filter(|l| l.refused.is_none())
            .map(move |l| (s.endpoint.clone(), l.label.clone()))
    }));
    let mut out = Vec::new();
    for (endpoint, label) in keys {
        let runs = |f: fn(&RateRun) -> f64| -> Vec<(String, Vec<f64>)> {
            servers
                .iter()
                .filter(|s| s.endpoint == endpoint)
                .filter_map(|s| {
                    let level = s.levels.iter().find(|l| l.label == label)?;
                    (!level.runs.is_empty()).then(|| {
                        (
                            format!("{} {endpoint} {label}", s.server),
                            level.runs.iter().map(f).collect(),
                        )
                    })
                })
                .collect()
        };
        out.extend(paired::pairwise(Figure::P99Ms, &runs(|r| r.latency_ms.p99)));
        out.extend(paired::pairwise(
            Figure::AchievedRps,
            &runs(|r| r.achieved_rps),
        ));
        // Each server whose every run has the figure (a --target's server is not sampled).
        let cpu: Vec<(String, Vec<f64>)> = runs(|r| r.server_us_per_request().unwrap_or(f64::NAN))
            .into_iter()
            .filter(|(_, each)| each.iter().all(|v| v.is_finite()))
            .collect();
        out.extend(paired::pairwise(Figure::ServerUsPerRequest, &cpu));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_levels_are_the_same_rates_for_every_server() {
        use greet_model::plan::Based;
        let record = |server: &str, capacity_rps| RateServer {
            server: server.to_owned(),
            endpoint: "/greetings".to_owned(),
            capacity_rps,
            ..RateServer::default()
        };
        let servers = [
            record("fast", 2000.0),
            record("slow", 1000.0),
            record("none", 0.0),
        ];
        assert_eq!(
            lowest_capacity(&servers, "/greetings"),
            Some(("slow", 1000.0))
        );
        assert_eq!(lowest_capacity(&servers, "/health"), None);
        let plan = Plan::defaults(false);
        let levels = schedules(&plan, &servers, "/greetings", 1);
        assert_eq!(levels.len(), Plan::FRACTIONS.len());
        assert_eq!(levels[2].0, "50% (500/s)");
        assert!(
            (levels[2].1.mean_rate() - 500.0).abs() < 1.0,
            "{:?}",
            levels[2].1.mean_rate()
        );
    }

    #[test]
    fn only_the_load_generators_own_cpus_refuse_a_level() {
        let why = beyond_the_client(90_000.0, 80_000.0, 1, true).expect("refused");
        assert!(why.contains("about 80000/s"), "{why}");
        assert_eq!(beyond_the_client(70_000.0, 80_000.0, 1, true), None);
        assert_eq!(
            beyond_the_client(90_000.0, 80_000.0, 1, false),
            None,
            "pacers on nodes of their own are not bounded here"
        );
    }
}
