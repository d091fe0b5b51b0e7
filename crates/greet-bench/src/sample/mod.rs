//! Sampling what the harness measures while a load runs, one module per source:
//! - [`proc`]: a process from /proc every 20 ms (the harness's own servers and stores);
//! - [`engine`]: a container from outside it, about once a second: the Docker engine's stats,
//!   or the log of a watch task beside it on its node.

pub(crate) mod engine;
pub(crate) mod proc;

pub(crate) use engine::EngineStats;
pub(crate) use proc::{read, Maxima, Sampler};

use std::time::{Instant, SystemTime};

/// `at` on the monotonic clock the samplers use: now, for a time already past.
pub(crate) fn instant_at(at: SystemTime) -> Instant {
    let ahead = at.duration_since(SystemTime::now()).unwrap_or_default();
    Instant::now() + ahead
}

/// Resident memory in MiB from KiB.
pub(crate) fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}
