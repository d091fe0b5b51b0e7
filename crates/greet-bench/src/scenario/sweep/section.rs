//! The sweep section: each server's cells over the settings grid, and its best setting.

use serde::{Deserialize, Serialize};

use crate::stats::Summary;

use crate::results::{Gain, Header, Run, Transport};

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
    pub header: Header,
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
    pub runs: Vec<Run>,
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
