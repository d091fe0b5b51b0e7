//! The business section: store-bound endpoints against the ceiling, per store and pool.

use serde::{Deserialize, Serialize};

use crate::stats::mann_whitney::Comparison;
use crate::stats::Summary;

use crate::results::{Gain, Header, Run, Sampled, StoreNode, Transport};

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
    pub header: Header,
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
    pub runs: Vec<Run>,
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
