//! What a run measured, as written to `results.json` for other tools to read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The whole of `results.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Results {
    /// Where, when and how the run was made.
    pub meta: Meta,
    /// One entry per server (and endpoint), in run order.
    pub servers: Vec<ServerResult>,
}

/// Where, when and how the run was made.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Meta {
    /// Host name.
    pub machine: String,
    /// CPUs and how they were split.
    pub cpus: Cpus,
    /// Kernel release.
    pub kernel: String,
    /// Versions of the server crates, from Cargo.lock.
    pub crate_versions: BTreeMap<String, String>,
    /// The settings every server ran with.
    pub flags: Flags,
    /// UTC start time, RFC 3339.
    pub started_at: String,
    /// `process` (servers started by the harness or given with `--target`).
    pub mode: String,
}

/// CPUs of the machine and the split between server and load generator.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cpus {
    /// CPUs the harness could use.
    pub count: usize,
    /// Processor model, from /proc/cpuinfo.
    pub model: String,
    /// CPUs each server was pinned to (empty: not pinned).
    pub server: Vec<usize>,
    /// CPUs the load generator was pinned to (empty: not pinned).
    pub load: Vec<usize>,
}

/// The settings every server and level ran with.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Flags {
    /// `--delay-ms` given to the servers.
    pub delay_ms: u64,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// `--blocking-threads` given to the servers.
    pub blocking_threads: usize,
    /// The concurrency levels, in order.
    pub concurrency: Vec<usize>,
    /// Runs of each level (the figures are medians when more than one).
    pub repeats: usize,
    /// Per-request timeout, seconds.
    pub timeout_s: f64,
}

/// One server (and endpoint): start-up, resources and a run per level.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ServerResult {
    /// The name in the tables, e.g. `greet-axum`.
    pub name: String,
    /// The path loaded, e.g. `/greetings`.
    pub endpoint: String,
    /// Spawn → first 200 on `/health`, seconds (none for `--target`).
    pub startup_s: Option<f64>,
    /// Resident memory after start-up, before any load, MiB.
    pub idle_rss_mib: Option<f64>,
    /// Highest CPU use over all levels, percent of one CPU.
    pub max_cpu_pct: Option<f64>,
    /// Highest resident memory over all levels, MiB.
    pub max_rss_mib: Option<f64>,
    /// Most threads over all levels.
    pub max_threads: Option<u64>,
    /// One entry per concurrency level.
    pub runs: Vec<Run>,
    /// Why this server failed (start-up, contract check, died mid-run), if it did.
    pub error: Option<String>,
}

/// One concurrency level against one server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Run {
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Requests sent (each on a fresh connection).
    pub requests: usize,
    /// Valid responses (200 and a well-formed greeting), percent.
    pub success_rate: f64,
    /// First connect to last response, seconds.
    pub total_s: f64,
    /// Slowest valid request, seconds (clock started before connect).
    pub slowest_s: f64,
    /// Fastest valid request, seconds.
    pub fastest_s: f64,
    /// Mean of the valid requests, seconds.
    pub average_s: f64,
    /// Requests sent / total time.
    pub requests_per_s: f64,
    /// Latency percentiles of the valid requests.
    pub latency_ms: Latency,
    /// Time to an established connection.
    pub connect_ms: Connect,
    /// Failed requests by kind: connect, timeout, io, status, body.
    pub errors: BTreeMap<String, u64>,
    /// Highest CPU use during the level, percent of one CPU.
    pub max_cpu_pct: Option<f64>,
    /// Highest resident memory during the level, MiB.
    pub max_rss_mib: Option<f64>,
    /// Most threads during the level.
    pub max_threads: Option<u64>,
    /// With `--repeats` > 1: how many runs the medians above come from, and their spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Spread>,
}

/// Latency percentiles, milliseconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Slowest.
    pub max: f64,
}

/// Connect times, milliseconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Connect {
    /// Mean.
    pub avg: f64,
    /// Slowest.
    pub max: f64,
}

/// The spread of repeated runs of one level.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Spread {
    /// Number of runs.
    pub n: usize,
    /// `[min, max]` of the total time.
    pub total_s: [f64; 2],
    /// `[min, max]` of the average.
    pub average_s: [f64; 2],
    /// `[min, max]` of the throughput.
    pub requests_per_s: [f64; 2],
}

impl ServerResult {
    /// Folds the per-level resource maxima into the server's.
    pub fn fold_maxima(&mut self) {
        let max_f = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.max_cpu_pct = self.runs.iter().fold(None, |m, r| max_f(m, r.max_cpu_pct));
        self.max_rss_mib = self.runs.iter().fold(None, |m, r| max_f(m, r.max_rss_mib));
        self.max_threads = self.runs.iter().filter_map(|r| r.max_threads).max();
    }
}
