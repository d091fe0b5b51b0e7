//! Business, the tuning experiment's business endpoint: each server's store-bound
//! endpoints against its own ceiling (`/health`), on each store, over grids of `--workers`
//! and `--db-pool`.

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
use crate::report::scorecard::{self, Row};
use crate::report::table::Table;
use crate::report::{self, csv, svg};
use crate::stats::distinct;

pub(crate) use flags::Flags;
pub use plan::*;
pub use section::*;

use super::{Book, Scenario};

#[doc = "The business scenario."]
#[derive(Debug)]
pub(crate) struct Business;

impl Scenario for Business {
    const NAME: &'static str = "business";
    const TITLE: &'static str = "Business (a database and a cache against the ceiling)";
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
            let setting = format!("{} {}", c.store, c.setting.label());
            csv::CellKey::rows(&c.server, &c.endpoint, setting, &c.runs)
        });
        Ok(vec![("business.csv".to_owned(), csv::write(rows)?)])
    }

    fn points(&self) -> Vec<Point> {
        self.cells
            .iter()
            .flat_map(|c| {
                let place = format!("{} {}", c.store, c.setting.label());
                Point::each(&c.server, (&c.endpoint, &place), load_figures(&c.runs))
            })
            .collect()
    }

    fn scorecard(&self) -> Vec<Row> {
        distinct(
            self.cells
                .iter()
                .map(|c| (c.store.as_str(), c.endpoint.as_str())),
        )
        .into_iter()
        .map(|(store, endpoint)| {
            let cells: Vec<_> = self
                .cells
                .iter()
                .filter(|c| c.store == store && c.endpoint == endpoint)
                .collect();
            Row::new(
                format!("{store} {endpoint} throughput, best setting"),
                Metric::Throughput,
                scorecard::best_each(&cells, |c| &c.server, |c| &c.runs),
            )
        })
        .collect()
    }
}
