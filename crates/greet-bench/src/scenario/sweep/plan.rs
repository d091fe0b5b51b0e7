//! The sweep plan: the tuning experiment's grids of workers and blocking threads.

use std::time::Duration;

use crate::plan::{Measure, Measured, BLOCKING_THREADS, SERVERS};

/// Sweep: zero-delay load on the ceiling and the greeting endpoints over thread-count grids.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// Paths loaded; the blocking endpoint is also swept over `blocking_threads`.
    pub endpoints: Vec<String>,
    /// The `--workers` grid (the default setting is always added).
    pub workers: Vec<usize>,
    /// The `--blocking-threads` grid (the default is always added).
    pub blocking_threads: Vec<usize>,
    /// How each setting is measured.
    pub measure: Measure,
}

impl Plan {
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
            measure: Self::measure(quick),
        }
    }
}

impl Measured for Plan {
    /// The original's 100 connections.
    const MEASURE: Measure = Measure {
        concurrency: 100,
        duration: Duration::from_millis(500),
        warmup: Duration::from_millis(200),
        repeats: 4,
    };
    const QUICK_MEASURE: Measure = Measure {
        concurrency: 20,
        duration: Duration::from_millis(100),
        warmup: Duration::ZERO,
        repeats: 2,
    };
}
