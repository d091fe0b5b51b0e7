//! Rate, open-loop load: per server and endpoint, a short closed-loop probe for the capacity,
//! then levels at fixed request rates (fractions of that capacity, or given), each request on
//! a fixed schedule and its latency counted from its intended send time.

mod charts;
mod flags;
mod plan;
mod run;
mod section;
mod table;

use anyhow::Result;
use serde::Serialize;

use crate::harness::Harness;
use crate::plan::{Metric, Placement, Target};
use crate::report::points::Point;
use crate::report::scorecard::{Entry, Row};
use crate::report::table::Table;
use crate::report::{self, csv, svg};
use crate::results::RateRun;
use crate::stats::distinct;

pub(crate) use flags::Flags;
pub use plan::*;
pub use section::*;

use super::{Book, Scenario};

/// The rate scenario.
#[derive(Debug)]
pub(crate) struct Rate;

impl Scenario for Rate {
    const NAME: &'static str = "rate";
    const AGAIN: bool = true;
    const TITLE: &'static str = "Rate (open loop: latency at a fixed request rate)";
    const INTERLEAVED: bool = false;
    const KEEP_ALIVE: bool = false;
    type Plan = Plan;
    type Section = Section;

    fn defaults(quick: bool) -> Plan {
        Plan::defaults(quick)
    }

    fn binaries(plan: &Plan) -> Vec<String> {
        plan.servers.clone()
    }

    fn set_servers(plan: &mut Plan, servers: &[String]) {
        plan.servers = servers.to_vec();
    }

    fn set_repeats(plan: &mut Plan, n: usize) {
        plan.repeats = n;
    }

    fn targets(plan: &Plan) -> &[Target] {
        &plan.foreign.targets
    }

    fn place(plan: &Plan) -> Placement {
        plan.place
    }

    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        run::run(harness, plan, book).await
    }

    fn compare(section: &mut Section) {
        section.comparisons = run::comparisons(&section.servers);
    }
}

impl report::Section for Section {
    fn tables(&self) -> Vec<Table> {
        table::tables(self)
    }

    fn charts(&self) -> Vec<(String, String)> {
        charts::charts(self)
            .into_iter()
            .map(|(file, chart)| (file, svg::render_lines(&chart)))
            .collect()
    }

    fn csv(&self) -> Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        let rows = self.servers.iter().flat_map(|s| {
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
        let seconds: Vec<_> = self
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

    fn points(&self) -> Vec<Point> {
        let mut out = Vec::new();
        for s in &self.servers {
            for level in s.levels.iter().filter(|l| l.refused.is_none()) {
                let runs = |f: fn(&RateRun) -> f64| level.runs.iter().map(f).collect::<Vec<_>>();
                let figures = [
                    // Valid answers a second, as everywhere else.
                    (
                        Metric::Throughput,
                        runs(|r| r.achieved_rps * r.success_rate / 100.0),
                    ),
                    (Metric::P50, runs(|r| r.latency_ms.p50)),
                    (Metric::P99, runs(|r| r.latency_ms.p99)),
                    (Metric::P999, runs(|r| r.latency_ms.p999)),
                    (Metric::Success, runs(|r| r.success_rate)),
                    (Metric::CpuPerRequest, level.server_us_each()),
                ];
                out.extend(Point::each(&s.server, (&s.endpoint, &level.label), figures));
            }
        }
        out
    }

    fn scorecard(&self) -> Vec<Row> {
        let mut out = Vec::new();
        let keys = distinct(self.servers.iter().flat_map(|s| {
            s.levels
                .iter()
                .filter(|l| l.refused.is_none())
                .map(move |l| (s.endpoint.as_str(), l.label.as_str()))
        }));
        for (endpoint, label) in keys {
            let levels: Vec<(&str, &RateLevel)> = self
                .servers
                .iter()
                .filter(|s| s.endpoint == endpoint)
                .filter_map(|s| {
                    let l = s
                        .levels
                        .iter()
                        .find(|l| l.label == label && l.refused.is_none())?;
                    Some((s.server.as_str(), l))
                })
                .collect();
            // A fraction is of each server's own capacity: not one rate for all.
            let at = if label.ends_with('%') {
                format!("{label} of its capacity")
            } else {
                label.to_owned()
            };
            out.push(Row::new(
                format!("{endpoint} at {at}: CPU per request"),
                Metric::CpuPerRequest,
                levels
                    .iter()
                    .map(|(s, l)| Entry::new(s, l.server_us_each()))
                    .collect(),
            ));
            out.push(Row::new(
                format!("{endpoint} at {at}: p99"),
                Metric::P99,
                levels
                    .iter()
                    .map(|(s, l)| {
                        // A latency is of valid answers: a run without one has none.
                        let answered = l.runs.iter().all(|r| r.success_rate > 0.0);
                        let p99 = l.runs.iter().map(|r| r.latency_ms.p99);
                        Entry {
                            cpu_us: l.server_us_per_request(),
                            ..Entry::new(s, if answered { p99.collect() } else { Vec::new() })
                        }
                    })
                    .collect(),
            ));
        }
        out
    }
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
