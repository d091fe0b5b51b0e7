//! Sweep, the tuning experiment: zero-delay load on the ceiling and the greeting endpoints
//! over a grid of `--workers` and, on the blocking endpoint, `--blocking-threads`; the best
//! setting per server and its gain over the default.

mod flags;
mod report;
mod run;

use std::time::Duration;

use greet_model::plan::{Base, Based, Measure, Measured, Takes, BLOCKING_THREADS, GRID_REPEATS};

pub(crate) use flags::Flags;
pub use report::*;

use super::kit::{About, Scenario};

/// The sweep scenario.
#[derive(Debug)]
pub(crate) struct Sweep;

impl Scenario for Sweep {
    const ABOUT: About = About {
        name: "sweep",
        block: "a repeat: each server on each endpoint at every setting (settings in a Williams \
                order too), a fresh process each",
        title: "Sweep (the tuning experiment)",
        summary: "The tuning experiment: --workers and --blocking-threads grids",
        detail: "Zero-delay load on the ceiling (/health) and greeting endpoints over a grid of \
                 --workers and, on the blocking endpoint, --blocking-threads; the best setting \
                 per server and its gain over the default",
        examples: &[
            "greet-bench sweep --quick",
            "greet-bench sweep --workers 1,2 --blocking-threads 2,200",
        ],
        measures_again: true,
        ..About::DEFAULT
    };
    type Plan = Plan;
    type Flags = Flags;
    type Section = Section;
}

/// Sweep: zero-delay load on the ceiling and the greeting endpoints over thread-count grids.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario's plan holds.
    pub base: Base,
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
}

impl Based for Plan {
    const TAKES: Takes = Takes::SERVERS_ONLY;
    const REPEATS_HELP: &'static str = GRID_REPEATS;

    fn defaults(quick: bool) -> Self {
        Self {
            base: Self::grid(quick),
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
        connections: 100,
        duration: Duration::from_millis(500),
        warmup: Duration::from_millis(200),
    };
    const QUICK_MEASURE: Measure = Measure {
        connections: 20,
        duration: Duration::from_millis(100),
        warmup: Duration::ZERO,
    };
}
