//! The sweep plan: the tuning experiment's grids of workers and blocking threads.

use std::time::Duration;

use super::{BLOCKING_THREADS, SERVERS};

/// Sweep: zero-delay load on the ceiling and the greeting endpoints over thread-count grids.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// Paths loaded; the blocking endpoint is also swept over `blocking_threads`.
    pub endpoints: Vec<String>,
    /// The `--workers` grid (the default setting is always added).
    pub workers: Vec<usize>,
    /// The `--blocking-threads` grid (the default is always added).
    pub blocking_threads: Vec<usize>,
    /// Keep-alive connections of each load.
    pub concurrency: usize,
    /// Measured part of each run.
    pub duration: Duration,
    /// Unmeasured load before it.
    pub warmup: Duration,
    /// Runs of each setting, each on a fresh server.
    pub repeats: usize,
}

impl Sweep {
    /// The ceiling (no work), the async greeting and the blocking one.
    pub const ENDPOINTS: [&'static str; 3] = [
        greet_core::paths::HEALTH,
        greet_core::paths::GREETINGS,
        greet_core::paths::GREETINGS_BLOCKING,
    ];
    /// The `--workers` grid.
    pub const WORKERS: [usize; 3] = [1, 2, 4];
    /// `--quick` `--workers` grid.
    pub const QUICK_WORKERS: [usize; 2] = [1, 2];
    /// The `--blocking-threads` grid.
    pub const BLOCKING_THREADS: [usize; 2] = [2, BLOCKING_THREADS];
    /// `--quick` `--blocking-threads` grid.
    pub const QUICK_BLOCKING_THREADS: [usize; 1] = [BLOCKING_THREADS];
    /// Connections: the original's 100.
    pub const CONCURRENCY: usize = 100;
    /// `--quick` connections.
    pub const QUICK_CONCURRENCY: usize = 20;
    /// Measured part of each run.
    pub const DURATION: Duration = Duration::from_millis(500);
    /// `--quick` measured part.
    pub const QUICK_DURATION: Duration = Duration::from_millis(100);
    /// Warm-up before each run.
    pub const WARMUP: Duration = Duration::from_millis(200);
    /// Runs per setting: 4 a side is the fewest a rank test can separate at 0.05.
    pub const REPEATS: usize = 4;
    /// `--quick` runs per setting.
    pub const QUICK_REPEATS: usize = 2;

    /// The defaults, or the `--quick` sizes.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            endpoints: Self::ENDPOINTS.map(String::from).to_vec(),
            workers: if quick {
                Self::QUICK_WORKERS.to_vec()
            } else {
                Self::WORKERS.to_vec()
            },
            blocking_threads: if quick {
                Self::QUICK_BLOCKING_THREADS.to_vec()
            } else {
                Self::BLOCKING_THREADS.to_vec()
            },
            concurrency: if quick {
                Self::QUICK_CONCURRENCY
            } else {
                Self::CONCURRENCY
            },
            duration: if quick {
                Self::QUICK_DURATION
            } else {
                Self::DURATION
            },
            warmup: if quick { Duration::ZERO } else { Self::WARMUP },
            repeats: if quick {
                Self::QUICK_REPEATS
            } else {
                Self::REPEATS
            },
        }
    }
}
