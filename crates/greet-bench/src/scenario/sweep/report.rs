//! sweep's report: its section of results.json, and what is drawn from it: tables, charts,
//! CSV files, its figures as points and its scorecard rows.

use crate::scenario::kit::Compared;
use anyhow::Result;
use greet_model::plan::Metric;
use greet_model::results::{Frame, Gain, Transport, Trial};
use greet_report::charts::{series, slug, whiskers};
use greet_report::points::load_figures;
use greet_report::points::Point;
use greet_report::scorecard::{self, Row};
use greet_report::svg::Chart;
use greet_report::table::{failure_notes, gain_cells, grouped, opt, undecided, Table};
use greet_report::{csv, Charts, Render, Tables};
use greet_stats::distinct;
use greet_stats::Summary;
use serde::{Deserialize, Serialize};

/// The sweep scenario: zero-delay load over a grid of `--workers`, and of
/// `--blocking-threads` on the blocking endpoint, a fresh server per run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// The protocol its requests went over.
    #[serde(flatten)]
    pub transport: Transport,
    /// Connections of each load.
    pub concurrency: usize,
    /// Measured part of each run, seconds.
    pub duration_s: f64,
    /// Unmeasured load before it, seconds.
    pub warmup_s: f64,
    /// The `--workers` grid.
    pub workers: Vec<usize>,
    /// The `--blocking-threads` grid (blocking endpoint only).
    pub blocking_threads: Vec<usize>,
    /// The settings the other scenarios use.
    pub default: Setting,
    /// One entry per server, endpoint and setting.
    pub cells: Vec<SweepCell>,
    /// Per server and endpoint: the best setting against the default.
    pub best: Vec<SweepBest>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub frame: Frame,
}

/// Server thread settings.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct Setting {
    /// `--workers`.
    pub workers: usize,
    /// `--blocking-threads` (none: not swept for this endpoint).
    pub blocking_threads: Option<usize>,
}

impl Setting {
    /// As server flags: `--workers 2 --blocking-threads 16`.
    pub fn label(&self) -> String {
        match self.blocking_threads {
            Some(b) => format!("--workers {} --blocking-threads {b}", self.workers),
            None => format!("--workers {}", self.workers),
        }
    }

    /// Whether this is `default` (a setting without a blocking-thread count is, when its
    /// workers are the default's: the count does not apply to its endpoint).
    pub fn is_default(&self, default: &Setting) -> bool {
        self.workers == default.workers
            && self
                .blocking_threads
                .is_none_or(|b| Some(b) == default.blocking_threads)
    }
}

/// One server, endpoint and setting of the sweep.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct SweepCell {
    /// The server.
    pub server: String,
    /// The path loaded.
    pub endpoint: String,
    /// The thread settings.
    pub setting: Setting,
    /// Throughput over the runs, valid responses per second.
    pub requests_per_s: Summary,
    /// Valid responses, percent, over all runs.
    pub success_rate: f64,
    /// Mean CPU use, percent of one CPU (median over the runs).
    pub cpu_avg_pct: Option<f64>,
    /// Each run, in order.
    pub runs: Vec<Trial>,
}

/// The best setting of one server and endpoint, against the default.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepBest {
    /// The server.
    pub server: String,
    /// The path loaded.
    pub endpoint: String,
    /// The setting with the highest median throughput.
    pub setting: Setting,
    /// Its throughput against the default's.
    #[serde(flatten)]
    pub gain: Gain,
}

/// The sweep tables: every setting, then the best per server and endpoint.
impl Tables for Section {
    fn tables(&self) -> Vec<Table> {
        let rows = self
            .cells
            .iter()
            .map(|cell| {
                let base = self
                    .best
                    .iter()
                    .find(|b| b.server == cell.server && b.endpoint == cell.endpoint);
                vec![
                    cell.server.clone(),
                    cell.endpoint.clone(),
                    cell.setting.workers.to_string(),
                    cell.setting
                        .blocking_threads
                        .map_or("-".to_owned(), |b| b.to_string()),
                    format!("{:.1}", cell.requests_per_s.median),
                    format!(
                        "{:.1}-{:.1}",
                        cell.requests_per_s.min, cell.requests_per_s.max
                    ),
                    opt(cell.cpu_avg_pct, 1),
                    base.filter(|b| b.gain.default_requests_per_s > 0.0).map_or(
                        "-".to_owned(),
                        |b| {
                            format!(
                                "{:.3}",
                                cell.requests_per_s.median / b.gain.default_requests_per_s
                            )
                        },
                    ),
                ]
            })
            .collect();
        let settings = Table::new(
            format!(
                "Sweep: zero delay, {} keep-alive connections, {:.2} s measured after {:.2} s warm-up, \
                 {} run(s) per setting on a fresh server; default --workers {} --blocking-threads {}",
                self.concurrency,
                self.duration_s,
                self.warmup_s,
                self.frame.repeats,
                self.default.workers,
                self.default.blocking_threads.unwrap_or(0),
            ),
            &[
                "Application",
                "Endpoint",
                "Workers",
                "Blocking threads",
                "Requests/sec",
                "min-max",
                "CPU avg(%)",
                "vs default",
            ],
            grouped(rows, 2),
        );
        let rows = self
            .best
            .iter()
            .map(|b| {
                vec![b.server.clone(), b.endpoint.clone()]
                    .into_iter()
                    .chain(gain_cells(
                        &b.setting.label(),
                        &b.gain,
                        b.setting.is_default(&self.default),
                    ))
                    .collect()
            })
            .collect();
        let mut best = Table::new(
            "Sweep: the best setting per server and endpoint",
            &[
                "Application",
                "Endpoint",
                "Best setting",
                "Requests/sec",
                "Default req/s",
                "Gain",
                "Gain over the blocks [interval]",
                "Verdict",
            ],
            vec![rows],
        );
        best.notes
            .extend(undecided(self.best.iter().map(|b| &b.gain.comparison)));
        best.notes.extend(failure_notes(&self.frame.failures));
        vec![settings, best]
    }
}

/// One chart per endpoint swept, settings along the axis.
impl Charts for Section {
    type Chart = Chart;

    fn charts(&self) -> Vec<(String, Chart)> {
        distinct(self.cells.iter().map(|c| c.endpoint.as_str()))
            .into_iter()
            .map(|endpoint| {
                let cells: Vec<_> = self
                    .cells
                    .iter()
                    .filter(|c| c.endpoint == endpoint)
                    .collect();
                let settings = distinct(cells.iter().map(|c| c.setting));
                let names = distinct(cells.iter().map(|c| c.server.clone()));
                let find = |name: &str, setting: &super::Setting| {
                    cells
                        .iter()
                        .find(|c| c.server == name && c.setting == *setting && !c.runs.is_empty())
                        .map(|c| c.requests_per_s.clone())
                };
                let blocking = settings.iter().any(|s| s.blocking_threads.is_some());
                let chart = Chart {
                    title: format!(
                        "Sweep: {endpoint} by --workers{}",
                        if blocking {
                            " and --blocking-threads"
                        } else {
                            ""
                        }
                    ),
                    unit: "requests/sec (median, whiskers min-max)".into(),
                    groups: settings
                        .iter()
                        .map(|s| match s.blocking_threads {
                            Some(b) => format!("w{} b{b}", s.workers),
                            None => format!("w{}", s.workers),
                        })
                        .collect(),
                    series: series(&names, &settings, find, |s| s.median),
                    whiskers: whiskers(&names, &settings, find),
                };
                (format!("sweep-{}.svg", slug(endpoint)), chart)
            })
            .collect()
    }
}

impl Render for Section {
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
                let cell = c.setting.label();
                Point::each(&c.server, (&c.endpoint, &cell), load_figures(&c.runs))
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

impl Compared for Section {
    /// Every comparison it makes: one family, judged together.
    fn comparisons(&mut self) -> Vec<&mut greet_stats::paired::Comparison> {
        self.best
            .iter_mut()
            .map(|b| &mut b.gain.comparison)
            .collect()
    }
}
