//! Rate, open-loop load: per server and endpoint, a short closed-loop probe for the capacity,
//! then levels at fixed request rates (fractions of that capacity, or given), each request on
//! a fixed schedule and its latency counted from its intended send time, so that a stall
//! shows however few requests were in flight during it (no coordinated omission).

use anyhow::{Context, Result};
use greet_load::Window;
use greet_load::{PacedTally, Schedule, Stop, Work, LATE, SPECTRUM};

use crate::harness::{Ask, Harness, Start, Subject, Up};
use crate::plan::{self, Placement, Rates};
use crate::results::{
    Rate, RateLevel, RateRun, RateServer, RateWindow, Results, Sampled, Spectrum,
};
use crate::stats::mann_whitney::{self, Comparison, Figure};
use crate::stats::{distinct, median};

/// A level whose achieved rate is under this fraction of its target is over capacity.
pub(crate) const OVER_CAPACITY_BELOW: f64 = 0.95;
/// The load generator is trusted up to this fraction of the rate its CPU would allow at the
/// probe's cost per request, over cleartext HTTP/1.1: there pacing costs about 0.85 of the
/// probe's closed loop a request (hyper's `/health` at its capacity, one core each: 8.0–8.3 µs
/// of client CPU paced against 9.1–10.2 µs closed-loop), and the margin keeps a level off the
/// last tenth of the client's CPU, where its schedule slips.
const CLIENT_HEADROOM: f64 = 0.9;
/// [`CLIENT_HEADROOM`] over HTTPS, where pacing costs about what the probe does a request
/// (hyper's `/health` at 60k/s, one core each: 13.5 µs of client CPU paced against 14.3 µs
/// closed-loop), not 0.85 of it as in cleartext: each request's TLS records cost the client
/// as much as the server.
const CLIENT_HEADROOM_HTTPS: f64 = CLIENT_HEADROOM * 0.85 / 0.95;
/// [`CLIENT_HEADROOM`] over HTTP/2 (h2c and h2), where the event loop paces for half the
/// probe's cost a request or less from 130k/s up (60k/s over TLS), less the faster it goes
/// (hyper's `/health`, 10 streams a connection: the h2c probe 9.3–9.7 µs, paced 5.4 at
/// 130k/s and 2.5 at 200k/s using 49% of its core; the h2 probe 15.6 µs, paced 6.2 at
/// 60k/s), while the probe's h2 tasks are the first to run out of CPU.
const CLIENT_HEADROOM_HTTP2: f64 = CLIENT_HEADROOM / 0.5;
/// A probe that used less of the client's CPUs than this is read as having used this much:
/// extrapolating a near-idle probe a thousandfold says nothing, and an unbounded estimate
/// would let a level schedule more requests than it could send in hours.
const MIN_PROBE_SHARE: f64 = 0.001;
/// A level that used this much of the load generator's CPU measured the client as much as the
/// server.
pub(crate) const CLIENT_BOUND_PCT: f64 = 90.0;

/// Runs the rate scenario into `results.rate`; false when a server failed.
pub(crate) async fn run(
    harness: &Harness,
    plan: &plan::Rate,
    results: &mut Results,
) -> Result<bool> {
    let (args, workers) = harness.server_args(&plan.server);
    results.rate = Some(Rate {
        transport: harness.transport(),
        delay_ms: plan.server.delay_ms,
        workers,
        duration_s: match &plan.rates {
            Rates::Ramp(ramp) => ramp.duration(),
            _ => plan.duration,
        }
        .as_secs_f64(),
        probe_s: plan.probe.as_secs_f64(),
        connections: plan.connections,
        repeats: plan.repeats,
        late_ms: LATE.as_secs_f64() * 1000.0,
        over_capacity_below: OVER_CAPACITY_BELOW,
        client_bound_pct: CLIENT_BOUND_PCT,
        ..Rate::default()
    });
    let shorts: Vec<&str> = plan.servers.iter().map(String::as_str).collect();
    let targets = !plan.foreign.targets.is_empty();
    harness.preflight(plan.place, &shorts, targets, None)?;
    let mut all_ok = true;
    for subject in Subject::all(&plan.servers, &plan.foreign) {
        let name = subject.name();
        if let Err(err) = run_subject(harness, plan, &subject, &name, &args, results).await {
            section(results)
                .failures
                .push(super::failure("rate", name.clone(), &err));
            all_ok = false;
        }
        let rate = section(results);
        rate.comparisons = comparisons(&rate.servers);
        harness.save(results)?;
    }
    Ok(all_ok)
}

fn section(results: &mut Results) -> &mut Rate {
    results.rate.as_mut().expect("set when rate starts")
}

async fn run_subject(
    harness: &Harness,
    plan: &plan::Rate,
    subject: &Subject,
    name: &str,
    args: &[String],
    results: &mut Results,
) -> Result<()> {
    let first = plan.endpoints.first().map_or("/greetings", String::as_str);
    let start = Start::new(subject, args, &plan.foreign, first);
    let mut up = harness.bring_up(plan.place, &start).await?;
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
            &plan.foreign,
            (plan.probe, plan.connections, harness.common.streams),
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
            |rate| Schedule::constant(rate, plan.duration, plan.connections).with_streams(streams);
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
                let ramp = Schedule::ramp(ramp.start, &ramp.stages, plan.connections)
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
            let here = Harness::loads_here(plan.place);
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
                &plan.foreign.expect,
                Work::Paced(schedule.clone()),
            );
            let mut merged = PacedTally::default();
            let mut runs = Vec::new();
            for repeat in 1..=plan.repeats {
                let (tally, run) = paced_run(
                    harness,
                    (&up, plan.place),
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
                    for (second, w) in tally.windows.iter().enumerate() {
                        harness.say(name, &format!("{endpoint} {label} {second}s: {}", said(w)));
                    }
                }
                merged.merge(&tally);
                runs.push(run);
                up.ensure_alive()?;
                super::settle(super::Leftover::KeepAlive).await;
            }
            let ramped = schedule.constant_rate().is_none();
            record
                .levels
                .push(level_of(label, (target, ramped), &merged, runs));
        }
        section(results).servers.push(record);
        harness.save(results)?;
    }
    harness.release(up).await
}

/// What a closed-loop probe found of a server, and of the client beside it.
pub(super) struct Probed {
    /// Valid responses a second: the server's capacity, closed-loop.
    pub(super) capacity: f64,
    /// The load generator's CPU in the probe, a fraction of its CPUs.
    pub(super) client_share: f64,
    /// The rate the client could pace with all of its CPUs, as fast as it sent in the probe,
    /// less the headroom pacing needs.
    pub(super) client_max: f64,
}

/// A closed-loop probe of `name`'s `endpoint` for `duration` on `connections`, always from
/// the harness.
pub(super) async fn probe(
    harness: &Harness,
    up: &Up,
    (name, endpoint): (&str, &str),
    foreign: &plan::Foreign,
    (duration, connections, streams): (std::time::Duration, usize, usize),
) -> Result<Probed> {
    let work = Work::Sessions {
        users: connections,
        stop: Stop::After(duration),
        streams,
        pipeline: 1,
    };
    let probe = Ask::new(endpoint, &foreign.expect, work);
    let label = format!("{name} {endpoint} probe");
    let probed = harness.load(Placement::Harness, up, &probe, label).await?;
    let client_share = probed.client_cpu_pct(harness.load_cpu_count()) / 100.0;
    let capacity = probed.run().load.requests_per_s;
    let protocol = harness.transport().protocol;
    let headroom = match protocol {
        _ if protocol.http2() => CLIENT_HEADROOM_HTTP2,
        plan::Protocol::Https => CLIENT_HEADROOM_HTTPS,
        _ => CLIENT_HEADROOM,
    };
    let client_max = capacity / client_share.max(MIN_PROBE_SHARE) * headroom;
    harness.say(
        name,
        &format!(
            "{endpoint}: capacity {capacity:.0}/s closed-loop, {:.0}% of the load generator's CPU",
            client_share * 100.0
        ),
    );
    Ok(Probed {
        capacity,
        client_share,
        client_max,
    })
}

/// Why a level of `target` requests a second is refused: more than the load generator can
/// send on its `load_cpus` CPUs (`client_max`, from the probe), when it paces `here`, on this
/// machine's load CPUs. Pacers on nodes of their own are not bounded by the harness's CPU: a
/// level they could not pace shows as late requests and a rate short of its target.
pub(super) fn beyond_the_client(
    target: f64,
    client_max: f64,
    load_cpus: usize,
    here: bool,
) -> Option<String> {
    (target > client_max && here).then(|| {
        format!(
            "{target:.0}/s is more than the load generator can send on its {load_cpus} CPU(s): \
             about {client_max:.0}/s, from the probe"
        )
    })
}

/// One run of one level where `place` paces it, the server sampled and the load generator's
/// CPU measured; a failure of its pacers fails the level.
pub(super) async fn paced_run(
    harness: &Harness,
    (up, place): (&Up, Placement),
    ask: &Ask<'_>,
    label: String,
) -> Result<(PacedTally, RateRun)> {
    let loaded = harness.load(place, up, ask, label).await?;
    loaded.paced(harness.load_cpu_count())
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
            .windows
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
        out.extend(mann_whitney::pairwise(
            Figure::P99Ms,
            &runs(|r| r.latency_ms.p99),
        ));
        out.extend(mann_whitney::pairwise(
            Figure::AchievedRps,
            &runs(|r| r.achieved_rps),
        ));
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
