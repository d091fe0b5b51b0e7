//! Protocols: keep-alive throughput at zero delay over HTTP/1.1, h2c, HTTP/1.1 over TLS and
//! HTTP/2 over TLS, each a fraction of the same server's HTTP/1.1.

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
use crate::report::scorecard::{Entry, Row};
use crate::report::table::Table;
use crate::report::{self, csv, svg};
use crate::stats::distinct;

pub(crate) use flags::Flags;
pub use plan::*;
pub use section::*;

use super::{Book, Scenario};

#[doc = "The protocols scenario."]
#[derive(Debug)]
pub(crate) struct Protocols;

impl Scenario for Protocols {
    const NAME: &'static str = "protocols";
    const TITLE: &'static str = "Protocols (HTTP/1.1, h2c, HTTPS and HTTP/2 over TLS)";
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

    const OWN_PROTOCOLS: bool = true;
    const STREAMS_LIST: bool = true;

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
            csv::CellKey::rows(&c.server, greet_core::paths::GREETINGS, c.case(), &c.runs)
        });
        Ok(vec![("protocols.csv".to_owned(), csv::write(rows)?)])
    }

    fn points(&self) -> Vec<Point> {
        self.cells
            .iter()
            .flat_map(|c| {
                let place = c.protocol.to_string();
                let at = (greet_core::paths::GREETINGS, place.as_str());
                Point::each(&c.server, at, load_figures(&c.runs))
            })
            .collect()
    }

    fn scorecard(&self) -> Vec<Row> {
        distinct(self.cells.iter().map(|c| (c.protocol, c.streams)))
            .into_iter()
            .map(|(protocol, streams)| {
                let over = if streams > 1 {
                    format!("{protocol}, {streams} streams")
                } else {
                    protocol.to_string()
                };
                Row::new(
                    format!("{over} throughput"),
                    Metric::Throughput,
                    self.cells
                        .iter()
                        .filter(|c| c.protocol == protocol && c.streams == streams)
                        .map(|c| Entry::throughput(&c.server, &c.runs))
                        .collect(),
                )
            })
            .collect()
    }
}
