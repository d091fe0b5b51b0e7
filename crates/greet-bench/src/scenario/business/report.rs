//! business's report: its section of results.json, and what is drawn from it: tables, charts,
//! CSV files, its figures as points and its scorecard rows.

use crate::scenario::kit::Compared;
use anyhow::Result;
use greet_model::plan::Metric;
use greet_model::results::{Frame, Gain, Sampled, StoreNode, Transport, Trial};
use greet_report::charts::{series, slug, whiskers};
use greet_report::points::load_figures;
use greet_report::points::Point;
use greet_report::scorecard::{self, Row};
use greet_report::svg::Chart;
use greet_report::table::{
    comparison_notes, failure_notes, gain_cells, grouped, opt, undecided, Table,
};
use greet_report::{csv, Charts, Render, Tables};
use greet_stats::distinct;
use greet_stats::paired::Comparison;
use greet_stats::Summary;
use serde::{Deserialize, Serialize};

/// The business scenario: each server's store-bound endpoints (`/db`, `/queries`,
/// `/business`) against its own ceiling (`/health`) on the same server, on each store, over
/// grids of `--workers` and `--db-pool`; a fresh server per setting and repeat, every endpoint
/// loaded on it in turn.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// The protocol its requests went over.
    #[serde(flatten)]
    pub transport: Transport,
    /// Keep-alive connections of each load.
    pub concurrency: usize,
    /// Measured part of each load, seconds.
    pub duration_s: f64,
    /// Unmeasured load before it, seconds.
    pub warmup_s: f64,
    /// The stores, by name (`sqlite`, `postgres+redis`).
    pub stores: Vec<String>,
    /// The `--workers` grid.
    pub workers: Vec<usize>,
    /// The `--db-pool` grid.
    pub db_pools: Vec<usize>,
    /// The setting every other figure is taken at.
    pub default: PoolSetting,
    /// How the database and cache servers were run, per store.
    pub store_notes: Vec<String>,
    /// On a swarm: the node each store ran on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub store_nodes: Vec<StoreNode>,
    /// One entry per server, store, endpoint and setting.
    pub cells: Vec<BusinessCell>,
    /// Per server, store and store-bound endpoint at the default setting: its throughput as a
    /// fraction of `/health`'s on the same servers.
    pub fractions: Vec<CeilingFraction>,
    /// Per server, store and store-bound endpoint: the best `--db-pool` against the default.
    pub best_pools: Vec<PoolBest>,
    /// Every pair of servers on each store and endpoint, at the default setting.
    pub comparisons: Vec<Comparison>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub frame: Frame,
}

/// A server's thread and pool settings in the business scenario.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, PartialOrd, Ord)]
pub struct PoolSetting {
    /// `--workers`.
    pub workers: usize,
    /// `--db-pool`.
    pub db_pool: usize,
}

impl PoolSetting {
    /// As server flags.
    pub fn label(&self) -> String {
        format!("--workers {} --db-pool {}", self.workers, self.db_pool)
    }
}

/// One server, store, endpoint and setting of the business scenario.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct BusinessCell {
    /// The server.
    pub server: String,
    /// The store.
    pub store: String,
    /// The path loaded.
    pub endpoint: String,
    /// The thread and pool settings.
    pub setting: PoolSetting,
    /// On a swarm: the node the server's task ran on (its last repeat's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Throughput over the runs, valid responses per second.
    pub requests_per_s: Summary,
    /// Valid responses, percent, over all runs.
    pub success_rate: f64,
    /// Mean CPU use of the server, percent of one CPU (median over the runs).
    pub cpu_avg_pct: Option<f64>,
    /// The database and cache servers over the runs (PostgreSQL's postmaster and backends,
    /// and Redis, summed; resident memory counts pages shared between PostgreSQL's
    /// processes once per process), when the harness started them.
    pub store_processes: Option<Sampled>,
    /// Each run, in order.
    pub runs: Vec<Trial>,
    /// What the store processes did in each run, in order.
    pub store_runs: Vec<Sampled>,
}

/// A store-bound endpoint's throughput against the same server's ceiling.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CeilingFraction {
    /// The server.
    pub server: String,
    /// The store.
    pub store: String,
    /// The store-bound path.
    pub endpoint: String,
    /// Its median throughput.
    pub requests_per_s: f64,
    /// `/health`'s median throughput on the same servers.
    pub ceiling_requests_per_s: f64,
    /// The one over the other.
    pub fraction: f64,
}

/// The best `--db-pool` of one server, store and endpoint, against the default.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PoolBest {
    /// The server.
    pub server: String,
    /// The store.
    pub store: String,
    /// The path loaded.
    pub endpoint: String,
    /// The setting with the highest median throughput.
    pub setting: PoolSetting,
    /// Its throughput against the default's.
    #[serde(flatten)]
    pub gain: Gain,
}

/// The business tables: every cell; each store-bound endpoint as a fraction of the ceiling,
/// with the servers compared; the best `--db-pool`.
impl Tables for Section {
    fn tables(&self) -> Vec<Table> {
        let rows = self
            .cells
            .iter()
            .map(|cell| {
                let stores = cell.store_processes.as_ref();
                vec![
                    cell.server.clone(),
                    cell.store.clone(),
                    cell.endpoint.clone(),
                    cell.setting.workers.to_string(),
                    cell.setting.db_pool.to_string(),
                    format!("{:.1}", cell.requests_per_s.median),
                    format!(
                        "{:.1}-{:.1}",
                        cell.requests_per_s.min, cell.requests_per_s.max
                    ),
                    format!("{:.2}", cell.success_rate),
                    opt(cell.cpu_avg_pct, 1),
                    opt(stores.and_then(|s| s.cpu_avg_pct), 1),
                    opt(stores.and_then(|s| s.rss_max_mib), 1),
                ]
            })
            .collect();
        let mut cells = Table::new(
            format!(
                "Business: zero delay, {} keep-alive connections, {:.2} s measured after {:.2} s \
                 warm-up, {} run(s) per setting on a fresh server; default {}",
                self.concurrency,
                self.duration_s,
                self.warmup_s,
                self.frame.repeats,
                self.default.label(),
            ),
            &[
                "Application",
                "Store",
                "Endpoint",
                "Workers",
                "DB pool",
                "Requests/sec",
                "min-max",
                "Success(%)",
                "CPU avg(%)",
                "Store CPU avg(%)",
                "Store RSS max(MiB)",
            ],
            grouped(rows, 2),
        );
        cells.notes.extend(self.store_notes.iter().cloned());
        let rows = self
            .fractions
            .iter()
            .map(|f| {
                vec![
                    f.server.clone(),
                    f.store.clone(),
                    f.endpoint.clone(),
                    format!("{:.1}", f.requests_per_s),
                    format!("{:.1}", f.ceiling_requests_per_s),
                    format!("{:.3}", f.fraction),
                ]
            })
            .collect();
        let mut fractions = Table::new(
            format!(
                "Business: each store-bound endpoint as a fraction of the same server's /health, {}",
                self.default.label()
            ),
            &[
                "Application",
                "Store",
                "Endpoint",
                "Requests/sec",
                "/health req/s",
                "Fraction",
            ],
            grouped(rows, 2),
        );
        fractions.notes = comparison_notes(&self.comparisons);
        let rows = self
            .best_pools
            .iter()
            .map(|b| {
                vec![b.server.clone(), b.store.clone(), b.endpoint.clone()]
                    .into_iter()
                    .chain(gain_cells(
                        &b.setting.label(),
                        &b.gain,
                        b.setting == self.default,
                    ))
                    .collect()
            })
            .collect();
        let mut best = Table::new(
            "Business: the best --db-pool (and --workers) per server, store and endpoint",
            &[
                "Application",
                "Store",
                "Endpoint",
                "Best setting",
                "Requests/sec",
                "Default req/s",
                "Gain",
                "Gain over the blocks [interval]",
                "Verdict",
            ],
            grouped(rows, 2),
        );
        best.notes.extend(undecided(
            self.best_pools
                .iter()
                .map(|b| &b.gain.comparison)
                .chain(&self.comparisons),
        ));
        best.notes.extend(failure_notes(&self.frame.failures));
        vec![cells, fractions, best]
    }
}

/// Per store: each endpoint's throughput at the default setting, a bar per server, so the
/// store-bound endpoints stand beside the ceiling they are a fraction of.
impl Charts for Section {
    type Chart = Chart;

    fn charts(&self) -> Vec<(String, Chart)> {
        self.stores
            .iter()
            .map(|store| {
                let cells: Vec<_> = self
                    .cells
                    .iter()
                    .filter(|c| {
                        &c.store == store && c.setting == self.default && !c.runs.is_empty()
                    })
                    .collect();
                let endpoints = distinct(cells.iter().map(|c| c.endpoint.clone()));
                let names = distinct(cells.iter().map(|c| c.server.clone()));
                let find = |name: &str, endpoint: &String| {
                    cells
                        .iter()
                        .find(|c| c.server == name && &c.endpoint == endpoint)
                        .map(|c| c.requests_per_s.clone())
                };
                let chart = Chart {
                    title: format!(
                        "Business on {store}: each endpoint against the ceiling (/health), {}",
                        self.default.label()
                    ),
                    unit: "requests/sec (median, whiskers min-max)".into(),
                    groups: endpoints.clone(),
                    series: series(&names, &endpoints, find, |s| s.median),
                    whiskers: whiskers(&names, &endpoints, find),
                };
                (format!("business-{}.svg", slug(store)), chart)
            })
            .collect()
    }
}

impl Render for Section {
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
                let cell = format!("{} {}", c.store, c.setting.label());
                Point::each(&c.server, (&c.endpoint, &cell), load_figures(&c.runs))
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

impl Compared for Section {
    /// Every comparison it makes: one family, judged together.
    fn comparisons(&mut self) -> Vec<&mut greet_stats::paired::Comparison> {
        self.comparisons
            .iter_mut()
            .chain(self.best_pools.iter_mut().map(|b| &mut b.gain.comparison))
            .collect()
    }
}
