//! The soak plan: the siege / ab experiment's concurrencies and bound.

use std::time::Duration;

use crate::plan::{Foreign, Placement, Served, ServerSettings, SERVERS};

/// How long each soak level runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoakBound {
    /// For a duration (siege's `-t`).
    Duration(Duration),
    /// For a request count (ab's `-n`).
    Requests(usize),
}

/// Soak: load for a duration (or a count) at each concurrency, on each endpoint, counting
/// threads.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// Servers already running, and what a valid answer is.
    pub foreign: Foreign,
    /// Connections, one level after another on one server process.
    pub levels: Vec<usize>,
    /// Paths loaded, each on a freshly started server.
    pub endpoints: Vec<String>,
    /// How long each level runs.
    pub bound: SoakBound,
    /// Runs of each level.
    pub repeats: usize,
    /// The flags the servers are started with.
    pub server: ServerSettings,
    /// Where the load runs.
    pub place: Placement,
}

impl Plan {
    /// The original's connection counts.
    pub const LEVELS: [usize; 3] = [50, 100, 200];
    /// `--quick` connection counts.
    pub const QUICK_LEVELS: [usize; 2] = [10, 20];
    /// Each level's length unless told otherwise.
    pub const DURATION: Duration = Duration::from_secs(10);
    /// `--quick` length.
    pub const QUICK_DURATION: Duration = Duration::from_millis(300);
    /// The async endpoint and the thread-per-request one.
    pub const ENDPOINTS: [&'static str; 2] = [
        greet_core::paths::GREETINGS,
        greet_core::paths::GREETINGS_BLOCKING,
    ];

    /// The defaults, or the `--quick` sizes.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            foreign: Foreign::default(),
            levels: if quick {
                Self::QUICK_LEVELS.to_vec()
            } else {
                Self::LEVELS.to_vec()
            },
            endpoints: Self::ENDPOINTS.map(String::from).to_vec(),
            bound: SoakBound::Duration(if quick {
                Self::QUICK_DURATION
            } else {
                Self::DURATION
            }),
            repeats: 1,
            server: Self::server_settings(quick),
            place: Placement::Harness,
        }
    }
}

impl Served for Plan {
    const DELAY_MS: u64 = 0;
    const QUICK_DELAY_MS: u64 = 0;
}
