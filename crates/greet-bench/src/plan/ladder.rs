//! The ladder's plan: the original experiment's levels, delay and requests.

use super::{Foreign, ServerSpec, BLOCKING_THREADS, DELAY_MS, SERVERS};

/// The ladder: each server in turn, one request per fresh connection at each level.
#[derive(Debug, Clone, PartialEq)]
pub struct Ladder {
    /// Servers to start, in order.
    pub servers: Vec<ServerSpec>,
    /// Servers already running, and what a valid answer is.
    pub foreign: Foreign,
    /// Concurrency levels; each sends as many requests as its concurrency.
    pub levels: Vec<usize>,
    /// Path and query loaded on every server without an endpoint of its own.
    pub endpoint: String,
    /// `--delay-ms` for the servers.
    pub delay_ms: u64,
    /// `--workers` for the servers (`None`: the CPUs each server is pinned to).
    pub workers: Option<usize>,
    /// `--blocking-threads` for the servers.
    pub blocking_threads: usize,
    /// Runs of each level.
    pub repeats: usize,
    /// Run the servers as containers of their images.
    pub docker: bool,
    /// Run the containers on this Docker network and load them at their address there
    /// (`None`: on the host's network, at 127.0.0.1).
    pub docker_network: Option<String>,
    /// Split each level over this many `greet-bench agent` processes starting together, their
    /// tallies merged (0: the load runs in the harness's own process).
    pub agents: usize,
    /// Run the servers as a Docker Swarm stack and the agents as a swarm job (`--swarm`).
    pub swarm: bool,
}

impl Ladder {
    /// The original's levels.
    pub const LEVELS: [usize; 4] = [100, 300, 900, 2700];
    /// `--quick` levels.
    pub const QUICK_LEVELS: [usize; 2] = [10, 50];
    /// `--quick` delay, milliseconds.
    pub const QUICK_DELAY_MS: u64 = 50;

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
            delay_ms: if quick {
                Self::QUICK_DELAY_MS
            } else {
                DELAY_MS
            },
            workers: None,
            blocking_threads: BLOCKING_THREADS,
            repeats: 1,
            docker: false,
            docker_network: None,
            agents: 0,
            swarm: false,
        }
    }
}
