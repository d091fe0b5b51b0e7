//! What a run measured, as written to `results.json` for other tools to read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::compare::Comparison;

/// The whole of `results.json`: the ladder's figures under `servers`, each other scenario
/// under its own key when it ran.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Results {
    /// Where, when and how the run was made.
    pub meta: Meta,
    /// The ladder: one entry per server (and endpoint), in run order.
    pub servers: Vec<ServerResult>,
    /// With `--repeats` > 1: every pair of ladder servers at each level, on per-run total
    /// time (a ratio below 1 means the first is faster).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ladder_comparisons: Vec<Comparison>,
    /// Fixed-count keep-alive loops (the JMeter experiment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<Loops>,
    /// Duration-bounded load on the async and the blocking endpoint, counting threads (the
    /// siege / ab experiment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<Soak>,
    /// Zero-delay load over a grid of thread counts (the tuning experiment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,
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
    /// The scenarios run, in order: `ladder`, `loops`, `soak`, `sweep`.
    pub scenarios: Vec<String>,
    /// The settings every server ran the ladder with (none when the ladder did not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<Flags>,
    /// How servers are told apart in every comparison ([`crate::compare::METHOD`]).
    pub comparison_method: String,
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
    /// The total time of each run, in order (what servers are compared on).
    #[serde(default)]
    pub total_s_runs: Vec<f64>,
}

/// Throughput and latency of one keep-alive load, the unit of the loops, soak and sweep
/// scenarios.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LoadRun {
    /// Requests sent.
    pub requests: u64,
    /// Valid responses, percent.
    pub success_rate: f64,
    /// First request to last response, seconds.
    pub elapsed_s: f64,
    /// Valid responses per second.
    pub requests_per_s: f64,
    /// Mean latency of the valid responses, milliseconds (write to last byte).
    pub average_ms: f64,
    /// 99th percentile latency, milliseconds.
    pub p99_ms: f64,
    /// Connections opened.
    pub connects: u64,
    /// Failed requests by kind.
    pub errors: BTreeMap<String, u64>,
    /// Mean CPU use of the server over the load, percent of one CPU.
    pub cpu_avg_pct: Option<f64>,
}

impl LoadRun {
    /// Valid responses.
    pub fn ok(&self) -> u64 {
        self.requests - self.errors.values().sum::<u64>()
    }
}

/// The median of a figure over runs, with its range.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Summary {
    /// Median.
    pub median: f64,
    /// Mean (the original experiments' "average").
    pub mean: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Summary {
    /// The summary of `values` (all zero when empty).
    pub fn of(values: &[f64]) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        Self {
            median: crate::stats::median(values),
            mean: values.iter().sum::<f64>() / values.len() as f64,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// A server that failed in a scenario, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Failure {
    /// The server.
    pub server: String,
    /// What went wrong.
    pub error: String,
}

/// The loops scenario: T users × L requests each, over keep-alive, repeated.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Loops {
    /// `--delay-ms` given to the servers.
    pub delay_ms: u64,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// Runs of each shape per server.
    pub repeats: usize,
    /// One entry per shape, in order.
    pub shapes: Vec<LoopShape>,
    /// Servers that failed.
    pub failures: Vec<Failure>,
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
    pub runs: Vec<LoadRun>,
    /// Throughput over the runs.
    pub requests_per_s: Summary,
}

/// The soak scenario: duration- or count-bounded load at each concurrency, on the async and
/// the blocking endpoint, counting the server's threads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Soak {
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
    /// Runs of each cell.
    pub repeats: usize,
    /// One entry per server, endpoint and concurrency, in run order.
    pub cells: Vec<SoakCell>,
    /// Every pair of servers at each endpoint and concurrency, on per-run throughput.
    pub comparisons: Vec<Comparison>,
    /// Servers that failed.
    pub failures: Vec<Failure>,
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
    /// Live threads when the server had started, before any load.
    pub threads_at_start: u64,
    /// Live threads at the end of this cell.
    pub threads_live: u64,
    /// Most live threads during this cell.
    pub threads_peak: u64,
    /// Thread ids seen since the server started, this cell included (threads started).
    pub threads_total: u64,
    /// Mean CPU use over the cell, percent of one CPU (median over the runs).
    pub cpu_avg_pct: Option<f64>,
    /// Highest CPU use over any 200 ms window, percent of one CPU.
    pub cpu_max_pct: Option<f64>,
    /// Highest resident memory, MiB.
    pub max_rss_mib: Option<f64>,
    /// Each run, in order.
    pub runs: Vec<LoadRun>,
}

/// The sweep scenario: zero-delay load over a grid of `--workers`, and of
/// `--blocking-threads` on the blocking endpoint, a fresh server per run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Sweep {
    /// Connections of each load.
    pub concurrency: usize,
    /// Measured part of each run, seconds.
    pub duration_s: f64,
    /// Unmeasured load before it, seconds.
    pub warmup_s: f64,
    /// Runs of each setting, each on a freshly started server.
    pub repeats: usize,
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
    /// Servers that failed.
    pub failures: Vec<Failure>,
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
    pub runs: Vec<LoadRun>,
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
    /// Its median throughput.
    pub requests_per_s: f64,
    /// The default setting's median throughput.
    pub default_requests_per_s: f64,
    /// Best / default.
    pub gain: f64,
    /// Best against default, on per-run throughput.
    pub comparison: Comparison,
}

impl ServerResult {
    /// Folds the per-level resource maxima into the server's.
    pub fn fold_maxima(&mut self) {
        use crate::stats::max_of;
        self.max_cpu_pct = self.runs.iter().fold(None, |m, r| max_of(m, r.max_cpu_pct));
        self.max_rss_mib = self.runs.iter().fold(None, |m, r| max_of(m, r.max_rss_mib));
        self.max_threads = self.runs.iter().filter_map(|r| r.max_threads).max();
    }
}
