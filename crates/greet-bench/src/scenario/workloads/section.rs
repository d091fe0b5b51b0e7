//! The workloads section: each server's figures on each profile, its share of the best
//! server's throughput there, and the servers against each other per profile.

use serde::{Deserialize, Serialize};

use crate::results::{Header, Run};
use crate::stats::mann_whitney::Comparison;
use crate::stats::Summary;

use super::Profile;

/// The workloads scenario: every profile on every server, a fresh server per run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// `--workers` given to the servers.
    pub workers: usize,
    /// Users (keep-alive connections, or WebSockets) of each load.
    pub concurrency: usize,
    /// Measured part of each run, seconds.
    pub duration_s: f64,
    /// Unmeasured load before it, seconds.
    pub warmup_s: f64,
    /// Each upload's size, bytes.
    pub upload_bytes: u64,
    /// One entry per server and profile.
    pub cells: Vec<WorkloadCell>,
    /// Per profile, every pair of servers on their runs' throughputs.
    pub comparisons: Vec<ProfileComparisons>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub header: Header,
}

/// One server on one profile.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkloadCell {
    /// The server.
    pub server: String,
    /// The profile.
    pub profile: Profile,
    /// Each run, in order.
    pub runs: Vec<Run>,
    /// The load generator's CPU per request in each run, microseconds.
    pub client_cpu_us_each: Vec<f64>,
    /// Throughput over the runs.
    pub requests_per_s: Summary,
    /// Its median throughput over the best server's on this profile.
    pub share_of_best: Option<f64>,
    /// Valid answers, percent of all runs' requests.
    pub success_rate: f64,
    /// Median of the runs' median latency, milliseconds.
    pub p50_ms: f64,
    /// Median of the runs' 99th percentile latency, milliseconds.
    pub p99_ms: f64,
    /// Median of the runs' bytes per answer, as they came (compressed where they were).
    pub bytes_per_answer: Option<f64>,
    /// Median of the runs' server CPU per request (user and system time over the load, over
    /// its requests), microseconds.
    pub server_cpu_us: Option<f64>,
    /// Median of the runs' load generator CPU per request, microseconds.
    pub client_cpu_us: Option<f64>,
    /// Highest resident memory of the server in any run, MiB.
    pub rss_max_mib: Option<f64>,
}

impl WorkloadCell {
    /// An empty cell of `server` on `profile`.
    pub fn new(server: String, profile: Profile) -> Self {
        Self {
            server,
            profile,
            runs: Vec::new(),
            client_cpu_us_each: Vec::new(),
            requests_per_s: Summary::default(),
            share_of_best: None,
            success_rate: 0.0,
            p50_ms: 0.0,
            p99_ms: 0.0,
            bytes_per_answer: None,
            server_cpu_us: None,
            client_cpu_us: None,
            rss_max_mib: None,
        }
    }
}

/// The servers compared on one profile.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProfileComparisons {
    /// The profile.
    pub profile: Profile,
    /// Every pair of servers.
    pub comparisons: Vec<Comparison>,
}
