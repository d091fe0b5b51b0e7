//! The capacity plan: per server and endpoint, the highest open-loop rate held within a
//! service-level objective, found by a ramp and searches around its knee.

use std::fmt;
use std::time::Duration;

use crate::open_loop;
use crate::plan::{Foreign, Placement, Served, ServerSettings, SERVERS};

/// A latency objective: a percentile of the latency from each request's intended send, under
/// a bound (`p99<5ms`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slo {
    /// The percentile: 50, 90, 99 or 99.9.
    pub percentile: f64,
    /// Its bound, milliseconds.
    pub ms: f64,
}

impl Slo {
    /// `p99<5ms`: five times the p99 a one-core server keeps on loopback until it saturates
    /// (0.5–1 ms here), and above the 2–4 ms this machine's own noise puts at p99.9, so that
    /// what breaks it is a queue building in the server, not a stray stall; and a bound a web
    /// service behind a proxy would still call fast.
    pub const DEFAULT: Slo = Slo {
        percentile: 99.0,
        ms: 5.0,
    };

    /// The percentiles an objective may name.
    pub const PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

    /// Percentile `p` as an objective names it: `p50`, `p99`, `p999`.
    pub fn percentile_name(p: f64) -> String {
        format!("p{}", format!("{p}").replace('.', ""))
    }

    /// The percentile an objective names (`p99`; `p99.9` as well as `p999`), if it may.
    pub fn percentile_named(name: &str) -> Option<f64> {
        Self::PERCENTILES
            .into_iter()
            .find(|&p| name == Self::percentile_name(p) || name == format!("p{p}"))
    }
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = Self::percentile_name(self.percentile);
        write!(f, "{p}<{}ms", self.ms)
    }
}

/// Capacity: per server and endpoint, a closed-loop probe, an open-loop ramp to past the
/// probe's rate (where the objective first breaks is the knee), then `repeats` searches
/// around the knee, each ending in a staircase of `steps` levels; the median of the rates
/// they settle on is the capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// Servers already running, and what a valid answer is.
    pub foreign: Foreign,
    /// Paths loaded, one after another on each server.
    pub endpoints: Vec<String>,
    /// What a level must hold, beside every answer valid and at most 1% sent late.
    pub slo: Slo,
    /// How long the ramp runs.
    pub ramp: Duration,
    /// How long each level of a search runs.
    pub duration: Duration,
    /// Levels of each search's staircase.
    pub steps: usize,
    /// Searches: their capacities are what servers are compared on.
    pub repeats: usize,
    /// How long the closed-loop probe runs.
    pub probe: Duration,
    /// Keep-alive connections.
    pub connections: usize,
    /// The flags the servers are started with.
    pub server: ServerSettings,
    /// Where the load is paced.
    pub place: Placement,
}

impl Plan {
    /// The ramp's length.
    pub const RAMP: Duration = Duration::from_secs(10);
    /// `--quick` ramp.
    pub const QUICK_RAMP: Duration = Duration::from_secs(1);
    /// A search level's length.
    pub const DURATION: Duration = Duration::from_secs(2);
    /// `--quick` level.
    pub const QUICK_DURATION: Duration = Duration::from_millis(300);
    /// Levels of each search's staircase: five 4% steps from the halved bracket, the rates
    /// of which (and of the next) average to the search's capacity.
    pub const STEPS: usize = 5;
    /// `--quick` steps.
    pub const QUICK_STEPS: usize = 2;
    /// Searches: 4 a side is the fewest Mann-Whitney can tell apart at 0.05.
    pub const REPEATS: usize = 4;
    /// `--quick` searches.
    pub const QUICK_REPEATS: usize = 1;

    /// The defaults, or the `--quick` sizes.
    pub fn defaults(quick: bool) -> Self {
        let (ramp, duration, steps, repeats, probe, connections) = if quick {
            let (probe, connections) = (open_loop::QUICK_PROBE, open_loop::QUICK_CONNECTIONS);
            let sizes = (Self::QUICK_RAMP, Self::QUICK_DURATION, Self::QUICK_STEPS);
            (
                sizes.0,
                sizes.1,
                sizes.2,
                Self::QUICK_REPEATS,
                probe,
                connections,
            )
        } else {
            let sizes = (Self::RAMP, Self::DURATION, Self::STEPS);
            (
                sizes.0,
                sizes.1,
                sizes.2,
                Self::REPEATS,
                open_loop::PROBE,
                open_loop::CONNECTIONS,
            )
        };
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            foreign: Foreign::default(),
            endpoints: vec![greet_core::paths::GREETINGS.to_owned()],
            slo: Slo::DEFAULT,
            ramp,
            duration,
            steps,
            repeats,
            probe,
            connections,
            server: Self::server_settings(quick),
            place: Placement::Harness,
        }
    }
}

impl Served for Plan {
    const DELAY_MS: u64 = 0;
    const QUICK_DELAY_MS: u64 = 0;
}
