//! Capacity: per server and endpoint, the highest open-loop rate it holds within a latency
//! objective, found by a closed-loop probe, an open-loop ramp and searches around its knee.

mod charts;
mod flags;
mod judge;
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
use crate::stats::{distinct, median};

pub(crate) use flags::Flags;
pub use plan::*;
pub use section::*;

use super::{Book, Scenario};

/// The capacity scenario.
#[derive(Debug)]
pub(crate) struct Capacity;

impl Scenario for Capacity {
    const NAME: &'static str = "capacity";
    const REFERENCES: bool = true;
    const AGAIN: bool = true;
    const TITLE: &'static str =
        "Capacity (open loop: the highest rate held within a latency objective)";
    const INTERLEAVED: bool = true;
    const STREAMS_LIST: bool = true;
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
        let rows = self.servers.iter().map(|s| CapacityRow {
            server: &s.server,
            endpoint: &s.endpoint,
            streams: s.streams,
            slo: &self.slo,
            capacity_rps: s.capacity_rps,
            at_top: s.at_top,
            searches: s
                .searches
                .iter()
                .map(|v| format!("{v:.0}"))
                .collect::<Vec<_>>()
                .join(" "),
            spread: table::spread(s.spread()),
            paces_us: (s.paces_us.iter())
                .map(|v| format!("{v:.0}"))
                .collect::<Vec<_>>()
                .join(" "),
            probe_rps: s.probe_rps,
            top_rps: s.top_rps,
            ceiling_rps: s.ceiling_rps,
            ramp_knee_rps: s.ramp_knee_rps,
            p50_ms_at_half: s.at_half.as_ref().map(|l| l.p50),
            p99_ms_at_half: s.at_half.as_ref().map(|l| l.p99),
            p50_ms_at_ninety: s.at_ninety.as_ref().map(|l| l.p50),
            p99_ms_at_ninety: s.at_ninety.as_ref().map(|l| l.p99),
            server_us_per_request: s.server_us_per_request,
            client_us_per_request: s.client_us_per_request,
        });
        Ok(vec![("capacity.csv".to_owned(), csv::write(rows)?)])
    }

    fn points(&self) -> Vec<Point> {
        self.servers
            .iter()
            .flat_map(|s| {
                // Each search's capacity: the rate its staircase settled on, a second.
                let place = match s.streams {
                    1 => "capacity".to_owned(),
                    n => format!("capacity, {n} streams"),
                };
                let figures = [
                    (Metric::Throughput, s.searches.clone()),
                    (Metric::CpuPerRequest, s.server_us_each()),
                ];
                Point::each(&s.server, (&s.endpoint, &place), figures)
            })
            .collect()
    }

    fn scorecard(&self) -> Vec<Row> {
        let mut out = Vec::new();
        for case in distinct(self.servers.iter().map(CapacityServer::case)) {
            let of = || self.servers.iter().filter(|s| s.case() == case);
            out.push(Row::new(
                format!("{case} capacity at {}", self.slo),
                Metric::Throughput,
                of().map(|s| {
                    let cpu = s.server_us_each();
                    Entry {
                        capped: s.at_top,
                        cpu_us: (!cpu.is_empty()).then(|| median(&cpu)),
                        resolution: s.resolution(),
                        ..Entry::new(&s.server, s.searches.clone())
                    }
                })
                .collect(),
            ));
            out.push(Row::new(
                format!("{case} CPU per request at the capacity"),
                Metric::CpuPerRequest,
                of().map(|s| Entry::new(&s.server, s.server_us_each()))
                    .collect(),
            ));
        }
        out
    }
}

/// A row of `capacity.csv`.
#[derive(Serialize)]
struct CapacityRow<'a> {
    server: &'a str,
    endpoint: &'a str,
    streams: usize,
    slo: &'a str,
    capacity_rps: f64,
    at_top: bool,
    searches: String,
    spread: String,
    paces_us: String,
    probe_rps: f64,
    top_rps: f64,
    ceiling_rps: f64,
    ramp_knee_rps: Option<f64>,
    p50_ms_at_half: Option<f64>,
    p99_ms_at_half: Option<f64>,
    p50_ms_at_ninety: Option<f64>,
    p99_ms_at_ninety: Option<f64>,
    server_us_per_request: Option<f64>,
    client_us_per_request: Option<f64>,
}
