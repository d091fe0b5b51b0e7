//! The TechEmpower section: each server's throughput on each of their tests and store, its
//! share of the best of the servers, and the servers against each other.

use serde::{Deserialize, Serialize};

use crate::stats::mann_whitney::Comparison;
use crate::stats::Summary;

use crate::results::{Header, Run, StoreNode, Transport};

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
    pub header: Header,
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
    /// Its median over the best server's median on the same test and store, 0–1.
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
    pub runs: Vec<Run>,
}
