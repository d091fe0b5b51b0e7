//! The scenarios, one module each. Each `run` takes its plan (every default applied), writes
//! its own section of [`crate::results::Results`] (saving after every step) and returns false
//! when a server failed: a failed server is recorded in the section's failures, and the
//! scenario goes on with the next one.

pub(crate) mod business;
pub(crate) mod capacity;
pub(crate) mod ladder;
pub(crate) mod loops;
pub(crate) mod protocols;
pub(crate) mod rate;
pub(crate) mod soak;
pub(crate) mod sweep;
pub(crate) mod techempower;

use crate::results::Failure;

/// Says on stderr that `who` failed in `scenario`, and the record of it for `results.json`.
pub(crate) fn failure(scenario: &str, who: String, err: &anyhow::Error) -> Failure {
    let error = format!("{err:#}");
    eprintln!("greet-bench: {scenario}: {who}: {error}");
    Failure { server: who, error }
}

/// The connections a load leaves behind when it ends.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Leftover {
    /// A keep-alive load's: one per user.
    KeepAlive,
    /// A ladder level's: up to its concurrency in fresh connections, closing at once.
    Fresh,
}

/// Lets the last load's connections close before the next one starts.
pub(crate) async fn settle(leftover: Leftover) {
    let wait = match leftover {
        Leftover::KeepAlive => std::time::Duration::from_millis(100),
        Leftover::Fresh => std::time::Duration::from_millis(250),
    };
    tokio::time::sleep(wait).await;
}

/// `grid` with `always` in it, sorted, each value once: a grid always holds the default.
pub(crate) fn grid_with(grid: &[usize], always: usize) -> Vec<usize> {
    let mut grid = grid.to_vec();
    grid.push(always);
    grid.sort_unstable();
    grid.dedup();
    grid
}
