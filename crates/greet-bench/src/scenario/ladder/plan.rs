//! The ladder's plan: the original experiment's levels, delay and requests.

use crate::plan::{
    Containers, Foreign, Placement, Served, ServerSettings, ServerSpec, DELAY_MS, SERVERS,
};

/// The ladder: each server in turn, one request per fresh connection at each level.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Servers to start, in order.
    pub servers: Vec<ServerSpec>,
    /// Servers already running, and what a valid answer is.
    pub foreign: Foreign,
    /// Concurrency levels; each sends as many requests as its concurrency.
    pub levels: Vec<usize>,
    /// Path and query loaded on every server without an endpoint of its own.
    pub endpoint: String,
    /// The flags the servers are started with.
    pub server: ServerSettings,
    /// Runs of each level.
    pub repeats: usize,
    /// Run the servers as containers of their images (`--docker`).
    pub containers: Option<Containers>,
    /// Where the load runs.
    pub place: Placement,
}

impl Plan {
    /// The original's levels.
    pub const LEVELS: [usize; 4] = [100, 300, 900, 2700];
    /// `--quick` levels.
    pub const QUICK_LEVELS: [usize; 2] = [10, 50];

    /// The defaults, or the `--quick` sizes.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.iter().map(|s| ServerSpec::new(s)).collect(),
            foreign: Foreign::default(),
            levels: if quick {
                Self::QUICK_LEVELS.to_vec()
            } else {
                Self::LEVELS.to_vec()
            },
            endpoint: greet_core::paths::GREETINGS.to_owned(),
            server: Self::server_settings(quick),
            repeats: 1,
            containers: None,
            place: Placement::Harness,
        }
    }
}

impl Served for Plan {
    const DELAY_MS: u64 = DELAY_MS;
    const QUICK_DELAY_MS: u64 = 50;
}
