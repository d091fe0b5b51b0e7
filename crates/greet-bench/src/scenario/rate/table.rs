//! The rate tables: as text (a table of capacities, one of levels per endpoint, one of
//! agents) and as CSV files (`rate.csv`, and `rate-ramp.csv` on a ramp).

use super::{RateServer, Section};
use anyhow::Result;
use greet_stats::distinct;
use greet_stats::paired::Comparison;
use serde::Serialize;

use greet_model::results::Machine;
use greet_report::csv;
use greet_report::table::{failure_notes, opt, steal, Table};
use greet_report::Tables;

/// The latency budget the rate tables rank levels by: a p99 of 1 ms is what a service
/// answering from memory on loopback keeps until it saturates, so the rate where it breaks is
/// the knee.
pub(super) const P99_BUDGET_MS: f64 = 1.0;

/// The highest achieved rate of `record` with a p99 within [`P99_BUDGET_MS`], not over
/// capacity.
pub(super) fn within_budget(record: &RateServer) -> Option<f64> {
    record
        .levels
        .iter()
        .filter(|l| l.refused.is_none() && !l.over_capacity && l.latency_ms.p99 <= P99_BUDGET_MS)
        .map(|l| l.achieved_rps)
        .reduce(f64::max)
}

/// The rate tables: each server's capacity, then per endpoint every level's latencies.
impl Tables for Section {
    fn tables(&self) -> Vec<Table> {
        let rows = self
            .servers
            .iter()
            .map(|r| {
                vec![
                    r.server.clone(),
                    r.endpoint.clone(),
                    format!("{:.0}", r.capacity_rps),
                    format!("{:.0}", r.probe_client_cpu_pct),
                    if r.client_max_rps > 0.0 {
                        format!("{:.0}", r.client_max_rps)
                    } else {
                        "-".to_owned()
                    },
                    within_budget(r).map_or("-".to_owned(), |v| format!("{v:.0}")),
                ]
            })
            .collect();
        let mut out = vec![Table::new(
            format!(
                "Rate: capacity by a {:.1} s closed-loop probe on {} connections, delay {} ms, --workers {}",
                self.probe_s, self.connections, self.delay_ms, self.workers
            ),
            &[
                "Application",
                "Endpoint",
                "Capacity(req/s)",
                "Client CPU in probe(%)",
                "Client max(req/s)",
                &format!("Highest rate, p99 <= {P99_BUDGET_MS} ms"),
            ],
            vec![rows],
        )];
        for endpoint in distinct(self.servers.iter().map(|s| s.endpoint.as_str())) {
            let groups = self
                .servers
                .iter()
                .filter(|s| s.endpoint == endpoint)
                .map(|s| {
                    s.levels
                        .iter()
                        .map(|l| {
                            let state = match (&l.refused, l.over_capacity, l.client_bound) {
                                (Some(_), _, _) => "refused",
                                (None, true, true) => "over, client",
                                (None, true, false) => "over",
                                (None, false, true) => "held, client",
                                (None, false, false) => "held",
                            };
                            let ms = |v: f64| {
                                if l.refused.is_some() {
                                    "-".to_owned()
                                } else {
                                    format!("{v:.3}")
                                }
                            };
                            vec![
                                s.server.clone(),
                                l.label.clone(),
                                format!("{:.0}", l.target_rps),
                                format!("{:.0}", l.achieved_rps),
                                state.to_owned(),
                                ms(l.latency_ms.p50),
                                ms(l.latency_ms.p90),
                                ms(l.latency_ms.p99),
                                ms(l.latency_ms.p999),
                                ms(l.latency_ms.p9999),
                                ms(l.latency_ms.max),
                                ms(l.service_ms.p99),
                                l.late.to_string(),
                                l.busy_max.to_string(),
                                format!("{:.0}", l.client_cpu_pct),
                                opt(l.server.cpu_avg_pct, 0),
                                opt(l.server_us_per_request(), 1),
                                steal(l.machine()),
                            ]
                        })
                        .collect()
                })
                .collect();
            let mut table = Table::new(
                format!(
                    "Rate: {endpoint}, {:.1} s a level, latency in ms from each request's intended send",
                    self.duration_s
                ),
                &[
                    "Application",
                    "Level",
                    "Target/s",
                    "Achieved/s",
                    "Capacity",
                    "p50",
                    "p90",
                    "p99",
                    "p99.9",
                    "p99.99",
                    "max",
                    "Service p99",
                    "Late",
                    "Busy conns",
                    "Client CPU(%)",
                    "Server CPU(%)",
                    "Server µs/req",
                    "Steal(%)",
                ],
                groups,
            );
            table.notes = self
                .servers
                .iter()
                .filter(|s| s.endpoint == endpoint)
                .flat_map(|s| {
                    s.levels.iter().filter_map(move |l| {
                        l.refused
                            .as_ref()
                            .map(|why| format!("{} {}: refused: {why}", s.server, l.label))
                    })
                })
                .collect();
            table.notes.extend(
                self.comparisons
                    .iter()
                    .filter(|c| c.a.contains(&format!(" {endpoint} ")))
                    .map(Comparison::line),
            );
            out.push(table);
        }
        if let Some(last) = out.last_mut() {
            last.notes.push(format!(
                "Capacity: held (achieved >= {:.0}% of the target), over, or refused (more than the \
                 load generator can send); client: the load generator used {:.0}% of its CPU or \
                 more; late: sent {} ms or more after the intended time",
                self.over_capacity_below * 100.0,
                self.client_bound_pct,
                self.late_ms
            ));
            last.notes.push(format!(
                "Server µs/req: the server's CPU (user and system) per request, the figure a fixed \
                 rate holds steadiest; steal: CPU time the hypervisor took, * from {:.0}% (a \
                 disturbed level)",
                Machine::HEAVY_STEAL_PCT
            ));
            if self.frame.repeats < 4 {
                last.notes.push(format!(
                    "{} block(s) per level: no verdicts (--repeats 6 or more can decide them)",
                    self.frame.repeats
                ));
            }
            last.notes.extend(failure_notes(&self.frame.failures));
        }
        let groups: Vec<Vec<Vec<String>>> = self
            .servers
            .iter()
            .map(|s| {
                let runs = s
                    .levels
                    .iter()
                    .flat_map(|l| l.runs.iter().map(move |r| (l, r)));
                runs.flat_map(|(l, r)| {
                    r.agents.iter().map(move |a| {
                        vec![
                            format!("{} {}", s.server, s.endpoint),
                            l.label.clone(),
                            format!("{} of {}", a.index, r.agents.len()),
                            a.requests.to_string(),
                            format!("{:.2}", a.success_rate),
                            format!("{:.1}", a.requests_per_s),
                            format!("{:.1}", a.start_skew_ms),
                            format!("{:.2}", a.cpu_s),
                            a.node.clone().unwrap_or_else(|| "this host".to_owned()),
                        ]
                    })
                })
                .collect()
            })
            .collect();
        if groups.iter().any(|g| !g.is_empty()) {
            let mut agents = Table::new(
                "Rate agents: each one's share of a level's schedule (the level's figures merge \
                 their tallies)",
                &[
                    "Application",
                    "Level",
                    "Agent",
                    "Requests",
                    "Success rate(%)",
                    "Achieved/s",
                    "Start skew(ms)",
                    "CPU(s)",
                    "Node",
                ],
                groups,
            );
            agents.notes = self
                .servers
                .iter()
                .filter_map(|s| {
                    let node = s.node.as_ref()?;
                    Some(format!(
                        "{} {} ran on swarm node {node}",
                        s.server, s.endpoint
                    ))
                })
                .collect();
            out.push(agents);
        }
        out
    }
}

/// The rate CSV files: `rate.csv`, a row per server, endpoint and level, and on a ramp
/// `rate-ramp.csv`, a row per second of it.
pub(super) fn csv_files(rate: &Section) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let rows = rate.servers.iter().flat_map(|s| {
        s.levels.iter().map(move |l| RateRow {
            server: &s.server,
            endpoint: &s.endpoint,
            level: &l.label,
            target_rps: l.target_rps,
            achieved_rps: l.achieved_rps,
            over_capacity: l.over_capacity,
            refused: l.refused.as_deref(),
            requests: l.requests,
            success_rate: l.success_rate,
            p50_ms: l.latency_ms.p50,
            p90_ms: l.latency_ms.p90,
            p99_ms: l.latency_ms.p99,
            p999_ms: l.latency_ms.p999,
            p9999_ms: l.latency_ms.p9999,
            max_ms: l.latency_ms.max,
            service_p50_ms: l.service_ms.p50,
            service_p99_ms: l.service_ms.p99,
            late: l.late,
            busy_max: l.busy_max,
            client_cpu_pct: l.client_cpu_pct,
            server_cpu_avg_pct: l.server.cpu_avg_pct,
            server_us_per_request: l.server_us_per_request(),
            steal_pct: l.machine().map(|m| m.steal_pct),
        })
    });
    out.push(("rate.csv".to_owned(), csv::write(rows)?));
    let seconds: Vec<_> = rate
        .servers
        .iter()
        .flat_map(|s| {
            s.levels.iter().flat_map(move |l| {
                l.windows.iter().map(move |w| RampRow {
                    server: &s.server,
                    endpoint: &s.endpoint,
                    level: &l.label,
                    at_s: w.at_s,
                    offered_rps: w.offered_rps,
                    achieved_rps: w.achieved_rps,
                    late: w.late,
                    success_rate: w.success_rate,
                    p50_ms: w.latency_ms.p50,
                    p99_ms: w.latency_ms.p99,
                    p999_ms: w.latency_ms.p999,
                    max_ms: w.latency_ms.max,
                })
            })
        })
        .collect();
    if !seconds.is_empty() {
        out.push(("rate-ramp.csv".to_owned(), csv::write(seconds)?));
    }
    Ok(out)
}

/// A row of `rate.csv`.
#[derive(Serialize)]
struct RateRow<'a> {
    server: &'a str,
    endpoint: &'a str,
    level: &'a str,
    target_rps: f64,
    achieved_rps: f64,
    over_capacity: bool,
    refused: Option<&'a str>,
    requests: u64,
    success_rate: f64,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
    p999_ms: f64,
    p9999_ms: f64,
    max_ms: f64,
    service_p50_ms: f64,
    service_p99_ms: f64,
    late: u64,
    busy_max: usize,
    client_cpu_pct: f64,
    server_cpu_avg_pct: Option<f64>,
    server_us_per_request: Option<f64>,
    steal_pct: Option<f64>,
}

/// A row of `rate-ramp.csv`: one second of a ramp.
#[derive(Serialize)]
struct RampRow<'a> {
    server: &'a str,
    endpoint: &'a str,
    level: &'a str,
    at_s: u64,
    offered_rps: f64,
    achieved_rps: f64,
    late: u64,
    success_rate: f64,
    p50_ms: f64,
    p99_ms: f64,
    p999_ms: f64,
    max_ms: f64,
}
