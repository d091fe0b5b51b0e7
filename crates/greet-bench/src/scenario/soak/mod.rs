//! Soak, the siege / ab experiment: at each concurrency, keep-alive load for a duration (or a
//! request count) on the async and on the blocking endpoint, zero delay, counting the
//! server's threads.

mod charts;
mod flags;
mod plan;
mod run;
mod section;
mod table;

use anyhow::Result;

use crate::harness::Harness;
use crate::plan::Metric;
use crate::plan::{Placement, Target};
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

#[doc = "The soak scenario."]
#[derive(Debug)]
pub(crate) struct Soak;

impl Scenario for Soak {
    const NAME: &'static str = "soak";
    const REFERENCES: bool = true;
    const TITLE: &'static str = "Soak (the siege / ab experiment)";
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
        section.comparisons = run::comparisons(&section.cells);
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
            csv::CellKey::rows(&c.server, &c.endpoint, c.concurrency.to_string(), &c.runs)
        });
        Ok(vec![("soak.csv".to_owned(), csv::write(rows)?)])
    }

    fn points(&self) -> Vec<Point> {
        self.cells
            .iter()
            .flat_map(|c| {
                let place = format!("c={}", c.concurrency);
                Point::each(&c.server, (&c.endpoint, &place), load_figures(&c.runs))
            })
            .collect()
    }

    fn scorecard(&self) -> Vec<Row> {
        // The highest concurrency of each endpoint: where the servers differ most.
        distinct(self.cells.iter().map(|c| c.endpoint.as_str()))
            .into_iter()
            .filter_map(|endpoint| {
                let top = self
                    .cells
                    .iter()
                    .filter(|c| c.endpoint == endpoint)
                    .map(|c| c.concurrency)
                    .max()?;
                let entries = self
                    .cells
                    .iter()
                    .filter(|c| c.endpoint == endpoint && c.concurrency == top)
                    .map(|c| Entry::throughput(&c.server, &c.runs))
                    .collect();
                Some(Row::new(
                    format!("{endpoint} c={top} throughput"),
                    Metric::Throughput,
                    entries,
                ))
            })
            .collect()
    }
}
