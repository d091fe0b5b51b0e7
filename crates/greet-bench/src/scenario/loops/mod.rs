//! Loops, the JMeter experiment: T users each sending L requests back to back over
//! keep-alive, zero delay, repeated; throughput per run, medians, and whether servers differ.

mod charts;
mod flags;
mod plan;
mod run;
mod section;
mod table;

use anyhow::Result;
use serde::Serialize;

use crate::harness::Harness;
use crate::plan::Metric;
use crate::plan::Target;
use crate::report::points::load_figures;
use crate::report::points::Point;
use crate::report::scorecard::{Entry, Row};
use crate::report::table::Table;
use crate::report::{self, csv, svg};

pub(crate) use flags::Flags;
pub use plan::*;
pub use section::*;

use super::{Book, Scenario};

#[doc = "The loops scenario."]
#[derive(Debug)]
pub(crate) struct Loops;

impl Scenario for Loops {
    const NAME: &'static str = "loops";
    const TITLE: &'static str = "Loops (the JMeter experiment)";
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

    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        run::run(harness, plan, book).await
    }

    fn compare(section: &mut Section) {
        run::compare(section);
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
        let rows = self.shapes.iter().flat_map(|shape| {
            shape.servers.iter().flat_map(move |s| {
                s.runs.iter().enumerate().map(move |(i, r)| {
                    let key = LoopKey {
                        users: shape.users,
                        loops: shape.loops,
                        server: &s.name,
                        repeat: i + 1,
                    };
                    (key, csv::RunColumns::of(r))
                })
            })
        });
        Ok(vec![("loops.csv".to_owned(), csv::write(rows)?)])
    }

    fn points(&self) -> Vec<Point> {
        self.shapes
            .iter()
            .flat_map(|shape| {
                let place = format!("{}x{}", shape.users, shape.loops);
                shape
                    .servers
                    .iter()
                    .flat_map(move |s| Point::each(&s.name, ("", &place), load_figures(&s.runs)))
            })
            .collect()
    }

    fn scorecard(&self) -> Vec<Row> {
        self.shapes
            .iter()
            .map(|shape| {
                Row::new(
                    format!("{}x{} throughput", shape.users, shape.loops),
                    Metric::Throughput,
                    shape
                        .servers
                        .iter()
                        .map(|s| Entry::throughput(&s.name, &s.runs))
                        .collect(),
                )
            })
            .collect()
    }
}

/// The key of a `loops.csv` row.
#[derive(Serialize)]
struct LoopKey<'a> {
    users: usize,
    loops: usize,
    server: &'a str,
    repeat: usize,
}
