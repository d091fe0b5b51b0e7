//! Rate, open-loop load: per server and endpoint, a short closed-loop probe for the capacity,
//! then levels at fixed request rates (fractions of that capacity, or given), each request on
//! a fixed schedule and its latency counted from its intended send time, so that a stall
//! shows however few requests were in flight during it (no coordinated omission).

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use anyhow::{Context, Result};

use crate::agents::{self, Schedule, Shard, Work};
use crate::compare::{self, Comparison, Figure};
use crate::harness::{server_args, Bound, Harness, Subject, Up, Watch};
use crate::load::{self, Expect, Paced, PacedTally, Sessions, Stop, Tally, LATE, SPECTRUM};
use crate::plan::{self, Rates, BLOCKING_THREADS};
use crate::results::{Rate, RateLevel, RateRun, RateServer, Results, Sampled, Spectrum};
use crate::server;
use crate::stats::{distinct, median};

/// A level whose achieved rate is under this fraction of its target is over capacity.
pub const OVER_CAPACITY_BELOW: f64 = 0.95;
/// The load generator is trusted up to this fraction of the rate its CPU would allow at the
/// probe's cost per request: pacing costs about a quarter more a request than the probe's
/// closed loop (hyper here: the probe 126k/s at 84% of the client's core, open loop 90k/s at
/// 94%).
const CLIENT_HEADROOM: f64 = 0.7;
/// A probe that used less of the client's CPUs than this is read as having used this much:
/// extrapolating a near-idle probe a thousandfold says nothing, and an unbounded estimate
/// would let a level schedule more requests than it could send in hours.
const MIN_PROBE_SHARE: f64 = 0.001;
/// A level that used this much of the load generator's CPU measured the client as much as the
/// server.
pub const CLIENT_BOUND_PCT: f64 = 90.0;

/// Runs the rate scenario into `results.rate`; false when a server failed.
pub async fn run(harness: &Harness, plan: &plan::Rate, results: &mut Results) -> Result<bool> {
    let workers = harness.workers(plan.workers);
    results.rate = Some(Rate {
        transport: harness.transport(),
        delay_ms: plan.delay_ms,
        workers,
        duration_s: plan.duration.as_secs_f64(),
        probe_s: plan.probe.as_secs_f64(),
        connections: plan.connections,
        repeats: plan.repeats,
        late_ms: LATE.as_secs_f64() * 1000.0,
        over_capacity_below: OVER_CAPACITY_BELOW,
        client_bound_pct: CLIENT_BOUND_PCT,
        ..Rate::default()
    });
    if plan.swarm {
        let shorts: Vec<&str> = plan.servers.iter().map(String::as_str).collect();
        server::swarm::preflight(&shorts, !plan.foreign.targets.is_empty())?;
    }
    let args = server_args(plan.delay_ms, workers, BLOCKING_THREADS);
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

/// This process's CPU time, seconds. The kernel's own clock, to the nanosecond: /proc's
/// 10 ms ticks read a short, light probe as zero.
fn own_cpu() -> f64 {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID)
        .map_or(0.0, |t| t.tv_sec() as f64 + t.tv_nsec() as f64 / 1e9)
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
    let mut up = if plan.swarm {
        harness
            .bring_up_swarm((subject, None), args, &plan.foreign, first)
            .await?
    } else {
        harness
            .bring_up(subject, args, &plan.foreign, first, false)
            .await?
    };
    let load_cpus = harness.load_cpu_count() as f64;
    for endpoint in &plan.endpoints {
        let expect = Expect::for_target(endpoint, &plan.foreign.expect);
        let probe = Sessions {
            addr: up.addr,
            target: endpoint.clone(),
            expect: expect.clone(),
            users: plan.connections,
            stop: Stop::After(plan.probe),
            timeout: harness.timeout(),
            wire: harness.wire.clone(),
            streams: harness.common.streams,
        };
        let (cpu, at) = (own_cpu(), Instant::now());
        let (run, _) = harness
            .keep_alive(&up, &probe, format!("{name} {endpoint} probe"))
            .await;
        let client_share = (own_cpu() - cpu) / (at.elapsed().as_secs_f64() * load_cpus);
        let capacity = run.load.requests_per_s;
        // The rate the client could send with all of its CPUs, as fast as it sent in the probe.
        let client_max = capacity / client_share.max(MIN_PROBE_SHARE) * CLIENT_HEADROOM;
        harness.say(
            name,
            &format!(
                "{endpoint}: capacity {capacity:.0}/s closed-loop, {:.0}% of the load generator's CPU",
                client_share * 100.0
            ),
        );
        let mut record = RateServer {
            server: name.to_owned(),
            endpoint: endpoint.clone(),
            capacity_rps: capacity,
            probe_client_cpu_pct: client_share * 100.0,
            client_max_rps: client_max,
            levels: Vec::new(),
            node: up.server.as_ref().and_then(|s| s.node()).map(str::to_owned),
        };
        let targets: Vec<(String, f64)> = match &plan.rates {
            Rates::OfCapacity(fractions) => fractions
                .iter()
                .map(|f| (format!("{:.0}%", f * 100.0), f * capacity))
                .collect(),
            Rates::Fixed(rates) => rates.iter().map(|r| (format!("{r:.0}/s"), *r)).collect(),
        };
        for (label, target) in targets {
            if target < 1.0 {
                record.levels.push(RateLevel {
                    label,
                    target_rps: target,
                    refused: Some("a rate under 1/s".into()),
                    ..RateLevel::default()
                });
                continue;
            }
            if let Some(why) = beyond_the_client(target, client_max, load_cpus, plan.swarm) {
                harness.say(name, &format!("{endpoint} {label}: refused: {why}"));
                record.levels.push(RateLevel {
                    label,
                    target_rps: target,
                    refused: Some(why),
                    ..RateLevel::default()
                });
                continue;
            }
            let level = Paced {
                addr: up.addr,
                target: endpoint.clone(),
                expect: expect.clone(),
                rate: target,
                duration: plan.duration,
                connections: plan.connections,
                timeout: harness.timeout(),
                wire: harness.wire.clone(),
            };
            let mut merged = PacedTally::default();
            let mut runs = Vec::new();
            for repeat in 1..=plan.repeats {
                let (tally, run) = paced_run(
                    harness,
                    (&up, plan),
                    &level,
                    load_cpus,
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
                merged.merge(&tally);
                runs.push(run);
                up.ensure_alive()?;
                super::settle(super::Leftover::KeepAlive).await;
            }
            record.levels.push(level_of(label, target, &merged, runs));
        }
        section(results).servers.push(record);
        harness.save(results)?;
    }
    harness.release(up).await
}

/// Why a level of `target` requests a second is refused: more than the load generator can
/// send on its `load_cpus` CPUs (`client_max`, from the probe). Agents on this machine share
/// those CPUs; a swarm's run on their own nodes, which the harness's CPU says nothing of: no
/// refusal, and a level they could not pace shows as late requests and a rate short of its
/// target.
fn beyond_the_client(target: f64, client_max: f64, load_cpus: f64, swarm: bool) -> Option<String> {
    (target > client_max && !swarm).then(|| {
        format!(
            "{target:.0}/s is more than the load generator can send on its {load_cpus} CPU(s): \
             about {client_max:.0}/s, from the probe"
        )
    })
}

/// One run of one level, the server sampled and the load generator's CPU measured: paced by
/// the harness, or by `plan`'s agents (local processes, or a swarm job), whose failure fails
/// the level.
async fn paced_run(
    harness: &Harness,
    (up, plan): (&Up, &plan::Rate),
    level: &Paced,
    load_cpus: f64,
    label: String,
) -> Result<(PacedTally, RateRun)> {
    let (tally, client, agents, watched) = if plan.agents > 0 {
        let url = agents::url_for(plan.swarm, level.addr, &level.target, level.wire.protocol);
        let start = agents::start_instant(plan.swarm);
        let shard = Shard {
            url,
            expect: plan.foreign.expect.clone(),
            protocol: level.wire.protocol,
            timeout: level.timeout,
            work: Work::Paced(Schedule {
                rate: level.rate,
                duration: level.duration,
                connections: level.connections,
            }),
            index: 0,
            agents: plan.agents,
            start_at_ms: agents::unix_ms(start),
        };
        harness.say(
            &label,
            &format!(
                "{} agents, {:.0}/s each",
                plan.agents,
                level.rate / plan.agents as f64
            ),
        );
        let watch = Watch::start(up.server.as_ref(), start);
        let ran = agents::run(&shard, plan.agents, plan.swarm).await;
        let watched = watch.stop().await;
        let ran = ran?;
        let (tally, runs) = ran.merged_paced();
        // The agents' CPU against the load generator's CPUs over the schedule's span.
        let cpu: f64 = ran.reports.iter().map(|r| r.cpu_s).sum();
        let client = cpu / (tally.span.as_secs_f64().max(1e-9) * load_cpus) * 100.0;
        (tally, client, runs, watched)
    } else {
        let watch = Watch::start(up.server.as_ref(), SystemTime::now());
        let done = Arc::new(AtomicUsize::new(0));
        let bar = harness.progress(label, Bound::Duration(level.duration), Arc::clone(&done));
        let (cpu, at) = (own_cpu(), Instant::now());
        let tally = load::paced(level, done).await;
        let client = (own_cpu() - cpu) / (at.elapsed().as_secs_f64() * load_cpus) * 100.0;
        bar.finish();
        (tally, client, Vec::new(), watch.stop().await)
    };
    let server = watched.server();
    let run = RateRun {
        achieved_rps: tally.achieved_rate(),
        late: tally.late,
        latency_ms: spectrum(&tally.corrected),
        service_ms: spectrum(&tally.service),
        success_rate: tally.corrected.figures().success_rate,
        client_cpu_pct: client,
        server,
        agents,
    };
    Ok((tally, run))
}

/// The percentiles of a tally's valid responses.
fn spectrum(tally: &Tally) -> Spectrum {
    let values = tally.spectrum_ms();
    let at = |q: f64| {
        SPECTRUM
            .iter()
            .position(|&s| s == q)
            .and_then(|i| values.get(i))
            .copied()
            .unwrap_or(0.0)
    };
    Spectrum {
        p50: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        p999: at(0.999),
        p9999: at(0.9999),
        max: values.last().copied().unwrap_or(0.0),
    }
}

/// A level from its runs, merged exactly.
fn level_of(label: String, target: f64, merged: &PacedTally, runs: Vec<RateRun>) -> RateLevel {
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
        latency_ms: spectrum(&merged.corrected),
        service_ms: spectrum(&merged.service),
        lag_ms: spectrum(&merged.lag),
        distribution,
        errors: figures.errors,
        client_cpu_pct: median(&runs.iter().map(|r| r.client_cpu_pct).collect::<Vec<_>>()),
        server,
        runs,
    }
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
        out.extend(compare::pairwise(
            Figure::P99Ms,
            &runs(|r| r.latency_ms.p99),
        ));
        out.extend(compare::pairwise(
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
        let why = beyond_the_client(90_000.0, 80_000.0, 1.0, false).expect("refused");
        assert!(why.contains("about 80000/s"), "{why}");
        assert_eq!(beyond_the_client(70_000.0, 80_000.0, 1.0, false), None);
        assert_eq!(
            beyond_the_client(90_000.0, 80_000.0, 1.0, true),
            None,
            "a swarm's agents pace on their own nodes"
        );
    }
}
