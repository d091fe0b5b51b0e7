//! Sampling what the harness measures while a load runs, one module per source:
//! - [`proc`]: a process from /proc every 20 ms (the harness's own servers and stores);
//! - [`engine`]: a container from outside it, about once a second: the Docker engine's stats,
//!   or the log of a watch task beside it on its node;
//! - [`machine`]: the whole machine over a load, from two readings of /proc/stat: its steal,
//!   and what else ran;
//! - [`pulse`]: the machine's pace, a fixed piece of kernel work timed on each CPU.
//! - [`count`]: what a server process costs, counted under valgrind, perf or /proc, and
//!   [`tools`]: the versions of what counted.

pub mod count;
pub mod engine;
pub mod proc;
pub mod pulse;
pub mod tools;

pub use engine::EngineStats;
pub use proc::{read, Maxima, Sampler};

use std::time::{Instant, SystemTime};

use greet_probe::procfs::MachineTicks;

use greet_model::results::Machine;

/// `at` on the monotonic clock the samplers use: now, for a time already past.
pub fn instant_at(at: SystemTime) -> Instant {
    let ahead = at.duration_since(SystemTime::now()).unwrap_or_default();
    Instant::now() + ahead
}

/// Resident memory in MiB from KiB.
pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// What the machine did between two readings of its CPU time (none when either is missing or
/// no time passed).
pub fn machine(from: Option<MachineTicks>, to: Option<MachineTicks>) -> Option<Machine> {
    let (from, to) = (from?, to?);
    let total = to.total().checked_sub(from.total()).filter(|&t| t > 0)? as f64;
    let share = |a: u64, b: u64| 100.0 * b.saturating_sub(a) as f64 / total;
    Some(Machine {
        cpus: to.cpus,
        steal_pct: share(from.steal, to.steal),
        busy_pct: share(from.busy, to.busy),
        others_pct: None,
        pace_us: None,
    })
}
