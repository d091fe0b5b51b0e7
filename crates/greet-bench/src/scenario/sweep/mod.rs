//! Sweep, the tuning experiment: zero-delay load on the ceiling and the greeting endpoints
//! over grids of `--workers` and `--blocking-threads`; the best setting per server and its
//! gain over the default.

mod charts;
mod flags;
mod plan;
mod run;
mod section;
mod table;

use anyhow::Result;

use crate::harness::Harness;
use crate::plan::Metric;
use crate::report::points::load_figures;
use crate::report::points::Point;
use crate::report::scorecard::{self, Row};
use crate::report::table::Table;
use crate::report::{self, csv, svg};
use crate::stats::distinct;

pub(crate) use flags::Flags;
pub use plan::*;
pub use section::*;

use super::{Book, Scenario};

#[doc = "The sweep scenario."]
#[derive(Debug)]
pub(crate) struct Sweep;

impl Scenario for Sweep {
    const NAME: &'static str = "sweep";
    const TITLE: &'static str = "Sweep (the tuning experiment)";
    const INTERLEAVED: bool = false;
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
        let rows = self
            .cells
            .iter()
            .flat_map(|c| csv::CellKey::rows(&c.server, &c.endpoint, c.setting.label(), &c.runs));
        Ok(vec![("sweep.csv".to_owned(), csv::write(rows)?)])
    }

    fn points(&self) -> Vec<Point> {
        self.cells
            .iter()
            .flat_map(|c| {
                let place = c.setting.label();
                Point::each(&c.server, (&c.endpoint, &place), load_figures(&c.runs))
            })
            .collect()
    }

    fn scorecard(&self) -> Vec<Row> {
        distinct(self.cells.iter().map(|c| c.endpoint.as_str()))
            .into_iter()
            .map(|endpoint| {
                let cells: Vec<_> = self
                    .cells
                    .iter()
                    .filter(|c| c.endpoint == endpoint)
                    .collect();
                Row::new(
                    format!("{endpoint} throughput, best setting"),
                    Metric::Throughput,
                    scorecard::best_each(&cells, |c| &c.server, |c| &c.runs),
                )
            })
            .collect()
    }
}
