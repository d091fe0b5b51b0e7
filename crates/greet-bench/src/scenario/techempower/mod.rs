//! TechEmpower's seven tests (json, plaintext pipelined, db, queries, fortunes, updates,
//! cached queries) on every server, the database ones on each store.

mod charts;
mod flags;
mod plan;
mod run;
mod section;
mod table;

use anyhow::Result;

use crate::harness::Harness;
use crate::plan::Metric;
use crate::plan::Placement;
use crate::report::points::load_figures;
use crate::report::points::Point;
use crate::report::scorecard::{Entry, Row};
use crate::report::table::Table;
use crate::report::{self, csv, svg};
use crate::stats::distinct;

pub(crate) use flags::Flags;
pub use plan::*;
pub use section::*;

use super::{Book, Scenario};

#[doc = "The techempower scenario."]
#[derive(Debug)]
pub(crate) struct TechEmpower;

impl Scenario for TechEmpower {
    const NAME: &'static str = "techempower";
    const REFERENCES: bool = true;
    const TITLE: &'static str = "TechEmpower (their seven tests: json, plaintext, db, queries, fortunes, updates, cached queries)";
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

    fn place(plan: &Plan) -> Placement {
        plan.place
    }

    fn preflight(harness: &Harness, plan: &Plan) -> Result<()> {
        let shorts: Vec<&str> = plan.servers.iter().map(String::as_str).collect();
        harness.preflight(plan.place, &shorts, false, None)?;
        crate::server::provision::preflight(&plan.stores, plan.place)
    }

    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        run::run(harness, plan, book).await
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
            let setting = format!("{} {}", c.test, c.store);
            csv::CellKey::rows(&c.server, &c.target, setting, &c.runs)
        });
        Ok(vec![("techempower.csv".to_owned(), csv::write(rows)?)])
    }

    fn points(&self) -> Vec<Point> {
        self.cells
            .iter()
            .flat_map(|c| Point::each(&c.server, (&c.target, &c.store), load_figures(&c.runs)))
            .collect()
    }

    fn scorecard(&self) -> Vec<Row> {
        distinct(
            self.cells
                .iter()
                .map(|c| (c.test.as_str(), c.store.as_str())),
        )
        .into_iter()
        .map(|(test, store)| {
            let on = if store.is_empty() || store == NO_STORE {
                String::new()
            } else {
                format!(" {store}")
            };
            Row::new(
                format!("{test}{on} throughput"),
                Metric::Throughput,
                self.cells
                    .iter()
                    .filter(|c| c.test == test && c.store == store)
                    .map(|c| Entry::throughput(&c.server, &c.runs))
                    .collect(),
            )
        })
        .collect()
    }
}
