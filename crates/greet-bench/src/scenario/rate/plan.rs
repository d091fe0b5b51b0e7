//! The rate plan: open-loop levels, as fractions of capacity or fixed rates.

use std::time::Duration;

use greet_load::schedule::Ramp;

use crate::open_loop;
use crate::plan::{Foreign, Placement, Served, ServerSettings, SERVERS};

/// The target rates of an open-loop run.
#[derive(Debug, Clone, PartialEq)]
pub enum Rates {
    /// Fractions of each server's capacity, as its closed-loop probe measured it.
    OfCapacity(Vec<f64>),
    /// Requests a second, the same for every server.
    Fixed(Vec<f64>),
    /// One level on a ramp, the same for every server: the target rate over time.
    Ramp(Ramp),
}

/// Rate: open-loop load, each request on a fixed schedule, latency counted from its intended
/// send time.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// Servers already running, and what a valid answer is.
    pub foreign: Foreign,
    /// Paths loaded, one after another on each server.
    pub endpoints: Vec<String>,
    /// The levels.
    pub rates: Rates,
    /// How long each level runs (a ramp's own stages say how long it runs).
    pub duration: Duration,
    /// How long the closed-loop probe for the capacity runs.
    pub probe: Duration,
    /// Keep-alive connections, for the probe and each level.
    pub connections: usize,
    /// Runs of each level.
    pub repeats: usize,
    /// The flags the servers are started with.
    pub server: ServerSettings,
    /// Where the levels are paced (the probe runs from the harness).
    pub place: Placement,
}

impl Plan {
    /// Fractions of the capacity: from idle to just past saturation.
    pub const FRACTIONS: [f64; 7] = [0.10, 0.25, 0.50, 0.75, 0.90, 1.00, 1.10];
    /// `--quick` fractions.
    pub const QUICK_FRACTIONS: [f64; 3] = [0.25, 0.75, 1.10];
    /// Each level's length.
    pub const DURATION: Duration = Duration::from_secs(5);
    /// `--quick` length.
    pub const QUICK_DURATION: Duration = Duration::from_millis(500);
    /// The defaults, or the `--quick` sizes.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            foreign: Foreign::default(),
            endpoints: vec![greet_core::paths::GREETINGS.to_owned()],
            rates: Rates::OfCapacity(if quick {
                Self::QUICK_FRACTIONS.to_vec()
            } else {
                Self::FRACTIONS.to_vec()
            }),
            duration: if quick {
                Self::QUICK_DURATION
            } else {
                Self::DURATION
            },
            probe: if quick {
                open_loop::QUICK_PROBE
            } else {
                open_loop::PROBE
            },
            connections: if quick {
                open_loop::QUICK_CONNECTIONS
            } else {
                open_loop::CONNECTIONS
            },
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
