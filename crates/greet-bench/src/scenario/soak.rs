//! Soak, the siege / ab experiment: at each concurrency, keep-alive load for a duration (or a
//! request count) on the async and on the blocking endpoint, zero delay, each endpoint on a
//! freshly started server whose threads are counted throughout: live, peak, and every thread
//! id seen since start (threads started).
//!
//! Repeats are the outer loop, then servers, then endpoints: each repeat starts every server
//! afresh for each endpoint and runs every concurrency on it, so a slow spell of the machine
//! hits every server alike, where one server's runs back to back would hand the drift to the
//! comparison between servers.
use std::collections::BTreeSet;

use anyhow::Result;

use crate::agents::{self, Spread};
use crate::compare::{self, Comparison, Figure};
use crate::harness::{server_args, Harness, Subject};
use crate::load::{Expect, Sessions, Stop};
use crate::plan::{self, SoakBound};
use crate::results::{throughputs, Repeated, Results, Soak, SoakCell};
use crate::sample;
use crate::server;
use crate::stats::{distinct, max_of};

/// Runs soak into `results.soak`; false when a server failed.
pub async fn run(harness: &Harness, plan: &plan::Soak, results: &mut Results) -> Result<bool> {
    let workers = harness.workers(plan.workers);
    results.soak = Some(Soak {
        transport: harness.transport(),
        duration_s: match plan.bound {
            SoakBound::Duration(d) => Some(d.as_secs_f64()),
            SoakBound::Requests(_) => None,
        },
        requests: match plan.bound {
            SoakBound::Requests(n) => Some(n),
            SoakBound::Duration(_) => None,
        },
        delay_ms: plan.delay_ms,
        workers,
        blocking_threads: plan.blocking_threads,
        repeats: plan.repeats,
        ..Soak::default()
    });
    let args = server_args(plan.delay_ms, workers, plan.blocking_threads);
    let subjects = Subject::all(&plan.servers, &plan.foreign);
    if plan.swarm {
        let shorts: Vec<&str> = plan.servers.iter().map(String::as_str).collect();
        server::swarm::preflight(&shorts, !plan.foreign.targets.is_empty())?;
    }
    let mut failed: Vec<String> = Vec::new();
    for repeat in 1..=plan.repeats {
        for subject in &subjects {
            let name = subject.name();
            for (i, endpoint) in plan.endpoints.iter().enumerate() {
                let who = format!("{name} {endpoint}");
                if failed.contains(&who) {
                    continue;
                }
                let one = Endpoint {
                    subject,
                    name: &name,
                    endpoint,
                    check: i == 0 && repeat == 1,
                    repeat,
                };
                if let Err(err) = run_endpoint(harness, plan, &one, &args, results).await {
                    let failure = super::failure("soak", who.clone(), &err);
                    section(results).failures.push(failure);
                    failed.push(who);
                }
                let soak = section(results);
                soak.comparisons = comparisons(&soak.cells);
                harness.save(results)?;
            }
        }
    }
    Ok(failed.is_empty())
}

fn section(results: &mut Results) -> &mut Soak {
    results.soak.as_mut().expect("set when soak starts")
}

struct Endpoint<'a> {
    subject: &'a Subject,
    name: &'a str,
    endpoint: &'a str,
    check: bool,
    repeat: usize,
}

async fn run_endpoint(
    harness: &Harness,
    plan: &plan::Soak,
    one: &Endpoint<'_>,
    args: &[String],
    results: &mut Results,
) -> Result<()> {
    // The endpoint after the first is checked on a server of the workspace by the contract
    // already passed; a target, which is not restarted, is checked once.
    let mut up = if plan.swarm {
        harness
            .bring_up_swarm((one.subject, None), args, &plan.foreign, one.endpoint)
            .await?
    } else {
        harness
            .bring_up(one.subject, args, &plan.foreign, one.endpoint, !one.check)
            .await?
    };
    let pid = up.pid();
    let threads_at_start = pid.and_then(sample::read).map(|r| r.threads);
    let mut seen: BTreeSet<u32> = pid
        .map(greet_probe::procfs::tasks)
        .unwrap_or_default()
        .into_iter()
        .collect();
    let stop = match plan.bound {
        SoakBound::Duration(d) => Stop::After(d),
        SoakBound::Requests(n) => Stop::Total(n),
    };
    for &concurrency in &plan.levels {
        let sessions = Sessions {
            addr: up.addr,
            target: one.endpoint.to_owned(),
            expect: Expect::for_target(one.endpoint, &plan.foreign.expect),
            users: concurrency,
            stop,
            timeout: harness.timeout(),
            wire: harness.wire.clone(),
            streams: harness.common.streams,
        };
        let repeat = one.repeat;
        let label = format!("{} {} c={concurrency}", one.name, one.endpoint);
        let (run, maxima) = if plan.agents > 0 {
            let protocol = harness.wire.protocol;
            let url = agents::url_for(plan.swarm, up.addr, one.endpoint, protocol);
            let spread = Spread {
                agents: plan.agents,
                swarm: plan.swarm,
            };
            let how = (&sessions, url, &plan.foreign.expect);
            let start = agents::start_instant(plan.swarm);
            harness
                .keep_alive_spread(&up, how, (spread, start), label)
                .await?
        } else {
            harness.keep_alive(&up, &sessions, label).await
        };
        harness.say(
            one.name,
            &format!(
                "{} c={concurrency} run {repeat}: {:.1} req/s, {:.2}% ok, {} threads",
                one.endpoint,
                run.load.requests_per_s,
                run.load.success_rate,
                maxima
                    .threads_last
                    .map_or("-".to_owned(), |t| t.to_string())
            ),
        );
        let cells = &mut section(results).cells;
        let at = cells
            .iter()
            .position(|c| {
                c.server == one.name && c.endpoint == one.endpoint && c.concurrency == concurrency
            })
            .unwrap_or_else(|| {
                cells.push(SoakCell {
                    server: one.name.to_owned(),
                    endpoint: one.endpoint.to_owned(),
                    concurrency,
                    threads_at_start,
                    ..SoakCell::default()
                });
                cells.len() - 1
            });
        let cell = &mut cells[at];
        cell.node = up.server.as_ref().and_then(|s| s.node()).map(str::to_owned);
        if pid.is_some() {
            // Each repeat is a fresh process: its own thread ids, the most of any repeat kept.
            seen.extend(&maxima.thread_ids);
            cell.threads_live = maxima.threads_last;
            cell.threads_peak = cell.threads_peak.max(maxima.threads);
            cell.threads_total = cell.threads_total.max(Some(seen.len() as u64));
        }
        cell.cpu_max_pct = max_of(cell.cpu_max_pct, run.server.cpu_max_pct);
        cell.rss_max_mib = max_of(cell.rss_max_mib, run.server.rss_max_mib);
        cell.runs.push(run);
        let r = Repeated::of(&cell.runs);
        cell.hits = r.hits;
        cell.success_rate = r.success_rate;
        cell.requests_per_s = r.requests_per_s;
        cell.average_s = r.average_s;
        cell.cpu_avg_pct = r.cpu_avg_pct;
        harness.save(results)?;
        up.ensure_alive()?;
        super::settle(super::Leftover::KeepAlive).await;
    }
    harness.release(up).await
}

/// Every pair of servers at each endpoint and concurrency.
fn comparisons(cells: &[SoakCell]) -> Vec<Comparison> {
    distinct(cells.iter().map(|c| (c.endpoint.as_str(), c.concurrency)))
        .into_iter()
        .flat_map(|(endpoint, concurrency)| {
            let samples: Vec<(String, Vec<f64>)> = cells
                .iter()
                .filter(|c| c.endpoint == endpoint && c.concurrency == concurrency)
                .map(|c| {
                    (
                        format!("{} {endpoint} c={concurrency}", c.server),
                        throughputs(&c.runs),
                    )
                })
                .collect();
            compare::pairwise(Figure::RequestsPerS, &samples)
        })
        .collect()
}
