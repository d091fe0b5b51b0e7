//! Rate, open-loop load: per server and endpoint, a short closed-loop probe for the capacity,
//! then levels at fixed request rates (fractions of that capacity, or given), each request on
//! a fixed schedule and its latency counted from its intended send time, so that a stall
//! shows however few requests were in flight during it (no coordinated omission).

use anyhow::{Context, Result};
use greet_load::Window;
use greet_load::{PacedTally, Schedule, Work, LATE, SPECTRUM};

use crate::harness::{Ask, Harness, Start, Subject};
use crate::open_loop::{beyond_the_client, paced_run, probe, Probed, CLIENT_BOUND_PCT};
use crate::results::{Frame, RateRun, RateWindow, Sampled, Spectrum};
use crate::scenario::kit::Book;
use crate::stats::paired::{self, Comparison, Figure};
use crate::stats::{distinct, median};

use super::{Plan, Rate, RateLevel, RateServer, Rates, Section};

/// A level whose achieved rate is under this fraction of its target is over capacity.
pub(crate) const OVER_CAPACITY_BELOW: f64 = 0.95;
/// Runs rate: every endpoint of every server in turn.
pub(super) async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Rate>) -> Result<()> {
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
    for subject in Subject::all(&plan.base) {
        let name = subject.name();
        book.once(&name, async |book| {
            run_subject(harness, plan, &subject, &name, &args, book).await
        })
        .await?;
    }
    Ok(())
}

async fn run_subject(
    harness: &Harness,
    plan: &Plan,
    subject: &Subject,
    name: &str,
    args: &[String],
    book: &mut Book<'_, Rate>,
) -> Result<()> {
    let first = plan.endpoints.first().map_or("/greetings", String::as_str);
    let start = Start::new(subject, args, &plan.base.foreign, first);
    let mut up = harness.bring_up(plan.base.place, &start).await?;
    let load_cpus = harness.load_cpu_count();
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
            (plan.paced.probe, plan.paced.connections, harness.common.streams),
        )
        .await?;
        let mut record = RateServer {
            server: name.to_owned(),
            endpoint: endpoint.clone(),
            capacity_rps: capacity,
            probe_client_cpu_pct: client_share * 100.0,
            client_max_rps: client_max,
            levels: Vec::new(),
            node: up.node(),
        };
        let streams = harness.common.streams;
        let constant =
            |rate| Schedule::constant(rate, plan.duration, plan.paced.connections).with_streams(streams);
        let schedules: Vec<(String, Schedule)> = match &plan.rates {
            Rates::OfCapacity(fractions) => fractions
                .iter()
                .map(|f| (format!("{:.0}%", f * 100.0), constant(f * capacity)))
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
        };
        for (label, schedule) in schedules {
            // The level's rate, and the highest the client must send.
            let (target, peak) = (schedule.mean_rate(), schedule.peak_rate());
            if target < 1.0 {
                record.levels.push(RateLevel {
                    label,
                    target_rps: target,
                    refused: Some("a rate under 1/s".into()),
                    ..RateLevel::default()
                });
                continue;
            }
            let here = Harness::loads_here(plan.base.place);
            if let Some(why) = beyond_the_client(peak, client_max, load_cpus, here) {
                harness.say(name, &format!("{endpoint} {label}: refused: {why}"));
                record.levels.push(RateLevel {
                    label,
                    target_rps: target,
                    refused: Some(why),
                    ..RateLevel::default()
                });
                continue;
            }
            let ask = Ask::new(
                endpoint,
                &plan.base.foreign.expect,
                Work::Paced(schedule.clone()),
            );
            let mut merged = PacedTally::default();
            let mut runs = Vec::new();
            for repeat in 1..=plan.base.repeats {
                let (tally, run) = paced_run(
                    harness,
                    (&up, plan.base.place),
                    &ask,
                    format!("{name} {endpoint} {label} #{repeat}"),
                )
                .await
                .with_context(|| format!("{endpoint} {label}"))?;
                harness.say(
                    name,
                    &format!(
                        "{endpoint} {label} ({target:.0}/s): achieved {:.0}/s, p99 {:.3} ms, late {}",
                        run.achieved_rps, run.latency_ms.p99, run.late
                    ),
                );
                if schedule.constant_rate().is_none() {
                    for (second, w) in tally.seconds().iter().enumerate() {
                        harness.say(name, &format!("{endpoint} {label} {second}s: {}", said(w)));
                    }
                }
                merged.merge(&tally);
                runs.push(run);
                up.ensure_alive()?;
                crate::scenario::kit::settle(crate::scenario::kit::Leftover::KeepAlive).await;
            }
            let ramped = schedule.constant_rate().is_none();
            record
                .levels
                .push(level_of(label, (target, ramped), &merged, runs));
        }
        book.section().servers.push(record);
        book.save()?;
    }
    harness.release(up).await
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
pub(super) fn comparisons(servers: &[RateServer]) -> Vec<Comparison> {
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
        out.extend(paired::pairwise(
            Figure::P99Ms,
            &runs(|r| r.latency_ms.p99),
        ));
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
