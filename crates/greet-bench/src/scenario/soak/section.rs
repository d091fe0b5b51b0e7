//! The soak section: each server's cells of concurrency and endpoint, threads counted.

use serde::{Deserialize, Serialize};

use crate::stats::mann_whitney::Comparison;
use crate::stats::Summary;

use crate::results::{Header, Run, Transport};

/// The soak scenario: duration- or count-bounded load at each concurrency, on the async and
/// the blocking endpoint, counting the server's threads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// The protocol its requests went over.
    #[serde(flatten)]
    pub transport: Transport,
    /// Each load's duration, seconds (when bounded by time).
    pub duration_s: Option<f64>,
    /// Each load's request count (when bounded by count).
    pub requests: Option<usize>,
    /// `--delay-ms` given to the servers.
    pub delay_ms: u64,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// `--blocking-threads` given to the servers.
    pub blocking_threads: usize,
    /// One entry per server, endpoint and concurrency, in run order.
    pub cells: Vec<SoakCell>,
    /// Every pair of servers at each endpoint and concurrency, on per-run throughput.
    pub comparisons: Vec<Comparison>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub header: Header,
}

/// One server, endpoint and concurrency of the soak scenario.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct SoakCell {
    /// The server.
    pub server: String,
    /// The path loaded.
    pub endpoint: String,
    /// Connections (siege's `-c`).
    pub concurrency: usize,
    /// Valid responses, over all runs.
    pub hits: u64,
    /// Valid responses, percent of the requests.
    pub success_rate: f64,
    /// Throughput over the runs, valid responses per second.
    pub requests_per_s: Summary,
    /// Mean latency, seconds (median over the runs).
    pub average_s: f64,
    /// Mean answer size as it came over the wire (compressed, when it was), bytes (median
    /// over the runs); none in results from before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_answer: Option<f64>,
    /// Live threads when the server had started, before any load (none for a target).
    pub threads_at_start: Option<u64>,
    /// On a swarm: the node the server's task ran on (its last repeat's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Live threads at the end of this cell.
    pub threads_live: Option<u64>,
    /// Most live threads during this cell.
    pub threads_peak: Option<u64>,
    /// Thread ids seen since the server started, this cell included (threads started).
    pub threads_total: Option<u64>,
    /// Mean CPU use over the cell, percent of one CPU (median over the runs).
    pub cpu_avg_pct: Option<f64>,
    /// Highest CPU use over any 200 ms window, percent of one CPU.
    pub cpu_max_pct: Option<f64>,
    /// Highest resident memory, MiB.
    pub rss_max_mib: Option<f64>,
    /// Each run, in order.
    pub runs: Vec<Run>,
}
