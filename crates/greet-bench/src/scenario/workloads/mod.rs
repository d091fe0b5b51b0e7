//! Workloads: what HttpArena scores besides a hello, on every server: a keep-alive baseline,
//! short-lived connections, a JSON POST, compressed answers, a 20 MB upload, a static file,
//! JSON over TLS and WebSocket echo ([`Profile`]). Each profile's figures are throughput,
//! latency, bytes per answer, the server's CPU per request and the load generator's, and
//! peak memory; each server's throughput is a share of the profile's best.

mod charts;
mod flags;
mod plan;
mod run;
mod section;
mod table;

use anyhow::Result;

use crate::harness::Harness;
use crate::plan::Metric;
use crate::report::points::{load_figures, Point};
use crate::report::scorecard::{Entry, Row};
use crate::report::table::Table;
use crate::report::{self, csv, svg};
use crate::stats::distinct;

pub(crate) use flags::Flags;
pub use plan::*;
pub use section::*;

use super::{Book, Scenario};

#[doc = "The workloads scenario."]
#[derive(Debug)]
pub(crate) struct Workloads;

impl Scenario for Workloads {
    const NAME: &'static str = "workloads";
    const TITLE: &'static str =
        "Workloads (baseline, short-lived, POST JSON, compression, upload, static, TLS, WebSocket)";
    // Each profile sets its own protocol, connections, header fields and body.
    const OWN_PROTOCOLS: bool = true;
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
        plan.measure.repeats = n;
    }

    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        run::run(harness, plan, book).await
    }

    fn compare(section: &mut Section) {
        run::fold(section);
    }
}

impl report::Section for Section {
    fn tables(&self) -> Vec<Table> {
        table::tables(self)
    }

    fn charts(&self) -> Vec<(String, String)> {
        charts::charts(self)
            .into_iter()
            .map(|(file, chart)| (file, svg::render(&chart)))
            .collect()
    }

    fn csv(&self) -> Result<Vec<(String, String)>> {
        let rows = self.cells.iter().flat_map(|c| {
            csv::CellKey::rows(
                &c.server,
                c.profile.target(),
                c.profile.to_string(),
                &c.runs,
            )
        });
        Ok(vec![("workloads.csv".to_owned(), csv::write(rows)?)])
    }

    fn points(&self) -> Vec<Point> {
        self.cells
            .iter()
            .flat_map(|c| {
                let at = (c.profile.target(), c.profile.name());
                Point::each(&c.server, at, load_figures(&c.runs))
            })
            .collect()
    }

    fn scorecard(&self) -> Vec<Row> {
        distinct(self.cells.iter().map(|c| c.profile))
            .into_iter()
            .map(|profile| {
                Row::new(
                    format!("{} throughput", profile.name()),
                    Metric::Throughput,
                    self.cells
                        .iter()
                        .filter(|c| c.profile == profile)
                        .map(|c| Entry::throughput(&c.server, &c.runs))
                        .collect(),
                )
            })
            .collect()
    }
}
