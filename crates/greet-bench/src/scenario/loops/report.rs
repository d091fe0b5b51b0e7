//! loops's report: its section of results.json, and what is drawn from it: tables, charts,
//! CSV files, its figures as points and its scorecard rows.

use crate::scenario::kit::Compared;
use anyhow::Result;
use greet_model::plan::Metric;
use greet_model::results::{Frame, Transport, Trial};
use greet_report::charts::{series, whiskers};
use greet_report::points::load_figures;
use greet_report::points::Point;
use greet_report::scorecard::{Entry, Row};
use greet_report::svg::Chart;
use greet_report::table::{comparison_notes, failure_notes, Table};
use greet_report::{csv, Charts, Render, Tables};
use greet_stats::distinct;
use greet_stats::paired::Comparison;
use greet_stats::Summary;
use serde::{Deserialize, Serialize};

/// The loops scenario: T users × L requests each, over keep-alive, repeated.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// The protocol its requests went over.
    #[serde(flatten)]
    pub transport: Transport,
    /// `--delay-ms` given to the servers.
    pub delay_ms: u64,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// One entry per shape, in order.
    pub shapes: Vec<LoopShape>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub frame: Frame,
}

/// One shape of the loops scenario against every server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LoopShape {
    /// Virtual users (JMeter threads).
    pub users: usize,
    /// Requests per user, back to back.
    pub loops: usize,
    /// One entry per server.
    pub servers: Vec<LoopServer>,
    /// Every pair of servers, on per-run throughput.
    pub comparisons: Vec<Comparison>,
}

/// One server's runs of one loops shape.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LoopServer {
    /// The server.
    pub name: String,
    /// Each run, in order.
    pub runs: Vec<Trial>,
    /// Throughput over the runs.
    pub requests_per_s: Summary,
}

/// The loops tables: per shape, throughput of each run, the average, median and min–max.
impl Tables for Section {
    fn tables(&self) -> Vec<Table> {
        let mut out: Vec<Table> = self
            .shapes
            .iter()
            .map(|shape| {
                let runs = shape.servers.iter().map(|s| s.runs.len()).max().unwrap_or(0);
                let mut headers: Vec<String> = vec!["Application".into()];
                headers.extend((0..runs).map(run_label));
                headers.extend(["average", "median", "min-max", "Success rate(%)"].map(String::from));
                let rows = shape
                    .servers
                    .iter()
                    .map(|s| {
                        let mut row = vec![s.name.clone()];
                        row.extend((0..runs).map(|i| {
                            s.runs
                                .get(i)
                                .map_or("-".to_owned(), |r| format!("{:.1}", r.load.requests_per_s))
                        }));
                        let success = greet_model::results::Repeated::of(&s.runs).success_rate;
                        row.extend([
                            format!("{:.1}", s.requests_per_s.mean),
                            format!("{:.1}", s.requests_per_s.median),
                            format!("{:.1}-{:.1}", s.requests_per_s.min, s.requests_per_s.max),
                            format!("{success:.2}"),
                        ]);
                        row
                    })
                    .collect();
                let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
                let mut table = Table::new(
                    format!(
                        "Loops: {} users x {} requests each, keep-alive, delay {} ms, --workers {}: requests/sec",
                        shape.users, shape.loops, self.delay_ms, self.workers
                    ),
                    &headers,
                    vec![rows],
                );
                table.notes = comparison_notes(&shape.comparisons);
                table
            })
            .collect();
        if let Some(last) = out.last_mut() {
            last.notes.extend(failure_notes(&self.frame.failures));
        }
        out
    }
}

/// The original's names for the first three runs.
fn run_label(i: usize) -> String {
    match i {
        0 => "first".to_owned(),
        1 => "second".to_owned(),
        2 => "third".to_owned(),
        _ => format!("run {}", i + 1),
    }
}

/// `loops.svg`.
impl Charts for Section {
    type Chart = Chart;

    fn charts(&self) -> Vec<(String, Chart)> {
        vec![("loops.svg".into(), chart(self))]
    }
}

fn chart(loops: &Section) -> Chart {
    let names = distinct(
        loops
            .shapes
            .iter()
            .flat_map(|shape| shape.servers.iter().map(|s| s.name.clone())),
    );
    let find = |name: &str, shape: &LoopShape| {
        shape
            .servers
            .iter()
            .find(|s| s.name == name && !s.runs.is_empty())
            .map(|s| s.requests_per_s.clone())
    };
    Chart {
        title: "Loops: throughput per shape (median, whiskers min-max)".into(),
        unit: "requests/sec".into(),
        groups: loops
            .shapes
            .iter()
            .map(|s| format!("{} users x {}", s.users, s.loops))
            .collect(),
        series: series(&names, &loops.shapes, find, |s| s.median),
        whiskers: whiskers(&names, &loops.shapes, find),
    }
}

impl Render for Section {
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
                let cell = format!("{}x{}", shape.users, shape.loops);
                shape
                    .servers
                    .iter()
                    .flat_map(move |s| Point::each(&s.name, ("", &cell), load_figures(&s.runs)))
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

impl Compared for Section {
    /// Every comparison it makes: one family, judged together.
    fn comparisons(&mut self) -> Vec<&mut greet_stats::paired::Comparison> {
        self.shapes
            .iter_mut()
            .flat_map(|s| &mut s.comparisons)
            .collect()
    }
}
