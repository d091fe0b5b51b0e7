//! The loops plan: the JMeter experiment's shapes of users × loops.

use crate::plan::{Foreign, Served, ServerSettings, SERVERS};

/// Loops: T users each sending L requests back to back over keep-alive, repeated.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// Servers already running, and what a valid answer is.
    pub foreign: Foreign,
    /// `(users, loops)` shapes.
    pub shapes: Vec<(usize, usize)>,
    /// Runs of each shape per server.
    pub repeats: usize,
    /// The flags the servers are started with.
    pub server: ServerSettings,
}

impl Plan {
    /// The original's shapes: 100 threads × 1000 loops, 1000 threads × 100 loops.
    pub const SHAPES: [(usize, usize); 2] = [(100, 1000), (1000, 100)];
    /// `--quick` shapes.
    pub const QUICK_SHAPES: [(usize, usize); 2] = [(10, 100), (50, 20)];
    /// Runs of each shape: the original averaged three.
    pub const REPEATS: usize = 3;

    /// The defaults, or the `--quick` sizes.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            foreign: Foreign::default(),
            shapes: if quick {
                Self::QUICK_SHAPES.to_vec()
            } else {
                Self::SHAPES.to_vec()
            },
            repeats: Self::REPEATS,
            server: Self::server_settings(quick),
        }
    }
}

impl Served for Plan {
    const DELAY_MS: u64 = 0;
    const QUICK_DELAY_MS: u64 = 0;
}
