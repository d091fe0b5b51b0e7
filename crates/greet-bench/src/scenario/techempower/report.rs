//! techempower's report: its section of results.json, and what is drawn from it: tables, charts,
//! CSV files, its figures as points and its scorecard rows.

use crate::scenario::kit::Compared;
use anyhow::Result;
use greet_model::plan::Metric;
use greet_model::results::{Frame, StoreNode, Transport, Trial};
use greet_report::charts::series;
use greet_report::points::load_figures;
use greet_report::points::Point;
use greet_report::scorecard::{Entry, Row};
use greet_report::svg::Chart;
use greet_report::table::{comparison_notes, failure_notes, grouped, opt, undecided, Table};
use greet_report::{csv, Charts, Render, Tables};
use greet_stats::distinct;
use greet_stats::paired::Comparison;
use greet_stats::Summary;
use serde::{Deserialize, Serialize};

/// The store of the tests that use none (json, plaintext).
pub const NO_STORE: &str = "none";

/// TechEmpower's tests: keep-alive load per test on a fresh server per repeat and store,
/// repeats outermost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// The protocol its requests went over.
    #[serde(flatten)]
    pub transport: Transport,
    /// Keep-alive connections of each load.
    pub concurrency: usize,
    /// Requests each plaintext connection had in flight (the other tests: one).
    pub plaintext_pipeline: usize,
    /// Rows per request of queries, updates and cached queries.
    pub rows: usize,
    /// Measured part of each load, seconds.
    pub duration_s: f64,
    /// Unmeasured load before it, seconds.
    pub warmup_s: f64,
    /// The stores the database tests ran on, by name.
    pub stores: Vec<String>,
    /// How the database servers were run, per store, or why a store was skipped.
    pub store_notes: Vec<String>,
    /// On a swarm: the node each store ran on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub store_nodes: Vec<StoreNode>,
    /// One entry per server, store and test (json and plaintext under store `none`).
    pub cells: Vec<TechEmpowerCell>,
    /// Per store and test, every pair of servers on their runs' throughput.
    pub comparisons: Vec<Comparison>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub frame: Frame,
}

/// One server on one test and store.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct TechEmpowerCell {
    /// The server.
    pub server: String,
    /// The store (`sqlite`, `postgres+redis`), or [`NO_STORE`] for json and plaintext.
    pub store: String,
    /// The test, by TechEmpower's name.
    pub test: String,
    /// The path and query loaded.
    pub target: String,
    /// Throughput over the runs, valid responses per second.
    pub requests_per_s: Summary,
    /// Its median over the best server's median on the same test and store, 0–1: the best of
    /// its league (the crates at their defaults, or those with knobs).
    pub share_of_best: f64,
    /// Valid responses, percent, over all runs.
    pub success_rate: f64,
    /// Median of the runs' p50 latency, milliseconds.
    pub p50_ms: f64,
    /// Median of the runs' p99 latency, milliseconds.
    pub p99_ms: f64,
    /// Median of the runs' mean server CPU, percent of one CPU.
    pub cpu_avg_pct: Option<f64>,
    /// Each run, in order.
    pub runs: Vec<Trial>,
}

/// One row per test, store and server, in the order the tests ran.
impl Tables for Section {
    fn tables(&self) -> Vec<Table> {
        let mut cells: Vec<_> = self.cells.iter().collect();
        // Stable: tests in the order they ran, then stores, servers in the order given.
        let order = greet_stats::distinct(cells.iter().map(|c| (c.test.clone(), c.store.clone())));
        cells.sort_by_key(|c| order.iter().position(|k| k.0 == c.test && k.1 == c.store));
        let rows = cells
            .iter()
            .map(|c| {
                vec![
                    c.test.clone(),
                    c.store.clone(),
                    c.server.clone(),
                    format!("{:.1}", c.requests_per_s.median),
                    format!("{:.1}-{:.1}", c.requests_per_s.min, c.requests_per_s.max),
                    format!("{:.1}", c.share_of_best * 100.0),
                    format!("{:.2}", c.p50_ms),
                    format!("{:.2}", c.p99_ms),
                    format!("{:.2}", c.success_rate),
                    opt(c.cpu_avg_pct, 1),
                ]
            })
            .collect();
        let mut table = Table::new(
            format!(
                "TechEmpower: {} keep-alive connections (plaintext {} requests deep each), {} rows \
                 per queries/updates/cached-queries request, {:.2} s measured after {:.2} s \
                 warm-up, {} run(s) per test on a fresh server",
                self.concurrency,
                self.plaintext_pipeline,
                self.rows,
                self.duration_s,
                self.warmup_s,
                self.frame.repeats,
            ),
            &[
                "Test",
                "Store",
                "Application",
                "Requests/sec",
                "min-max",
                "% of best",
                "p50(ms)",
                "p99(ms)",
                "Success(%)",
                "CPU avg(%)",
            ],
            grouped(rows, 2),
        );
        table.notes = comparison_notes(&self.comparisons);
        table.notes.extend(self.store_notes.iter().cloned());
        table.notes.extend(undecided(&self.comparisons));
        table.notes.extend(failure_notes(&self.frame.failures));
        vec![table]
    }
}

/// Each server's share of the best per test and store (groups), as TechEmpower's tables
/// rank them: throughputs that differ a hundredfold between tests, on one scale.
impl Charts for Section {
    type Chart = Chart;

    fn charts(&self) -> Vec<(String, Chart)> {
        let names = distinct(self.cells.iter().map(|c| c.server.clone()));
        let keys = distinct(self.cells.iter().map(|c| (c.test.clone(), c.store.clone())));
        // A bar group is a few characters wide: short names, the store on a line of its own.
        let groups: Vec<String> = keys
            .iter()
            .map(|(test, store)| {
                let test = test.strip_suffix("-queries").unwrap_or(test);
                match store.as_str() {
                    NO_STORE => test.to_owned(),
                    store => format!("{test} {}", store.split('+').next().unwrap_or(store)),
                }
            })
            .collect();
        let find = |name: &str, group: &String| {
            let i = groups.iter().position(|g| g == group)?;
            let (test, store) = &keys[i];
            self.cells
                .iter()
                .find(|c| c.server == name && &c.test == test && &c.store == store)
                .map(|c| c.share_of_best * 100.0)
        };
        let chart = Chart {
            title: "TechEmpower: each server's throughput as a share of the best".into(),
            unit: "% of the best server's requests/sec in its league (medians)".into(),
            series: series(&names, &groups, find, |v| *v),
            whiskers: Vec::new(),
            groups,
        };
        vec![("techempower.svg".into(), chart)]
    }
}

impl Render for Section {
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

    fn knobs(&self) -> Vec<greet_report::gains::KnobFigure> {
        // Labels are `server test store`: json and plaintext run on no store.
        greet_report::gains::paired(&self.comparisons, |what, figure| {
            let what = what.strip_suffix(&format!(" {NO_STORE}")).unwrap_or(what);
            format!("{what}: {figure}, timed")
        })
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

impl Compared for Section {
    /// Every comparison it makes: one family, judged together.
    fn comparisons(&mut self) -> Vec<&mut greet_stats::paired::Comparison> {
        self.comparisons.iter_mut().collect()
    }
}
