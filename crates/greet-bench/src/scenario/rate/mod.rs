//! Rate, open-loop load: every server probed for its capacity at each endpoint, then levels
//! at the same request rates for all (fractions of the lowest capacity, or given), in blocks,
//! each request on a fixed schedule and its latency counted from its intended send time.

mod flags;
mod report;
mod run;
mod table;

use std::time::Duration;

use greet_load::schedule::Ramp;

use greet_model::plan::{Base, Based, Paced, ServerSettings, Takes};

pub(crate) use flags::Flags;
pub use report::*;

use super::kit::{About, Scenario};

/// The rate scenario.
#[derive(Debug)]
pub(crate) struct Rate;

impl Scenario for Rate {
    const ABOUT: About = About {
        name: "rate",
        title: "Rate (open loop: latency at a fixed request rate)",
        summary: "Open loop: latency and CPU per request at fixed request rates",
        detail: "After a closed-loop probe for each server's capacity, levels at the same \
                 request rates for every server (fractions of the lowest capacity, or --rates), \
                 in blocks (each server once a block), each request on a schedule and \
                 its latency counted from its intended send time (no coordinated omission); the \
                 server's CPU per request at each rate",
        examples: &[
            "greet-bench rate --rates 10k,50k --repeats 4  latency and CPU per request at fixed rates",
            "greet-bench rate --ramp 1k:10s,50k:30s        a ramping rate, second by second",
        ],
        block: "a level of each server, the servers started once",
        keep_alive: false,
        ..About::DEFAULT
    };
    type Plan = Plan;
    type Flags = Flags;
    type Section = Section;
}

/// The target rates of an open-loop run.
#[derive(Debug, Clone, PartialEq)]
pub enum Rates {
    /// Fractions of the lowest capacity among the servers, as their closed-loop probes
    /// measured it: the same rates for every server.
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
    /// What every scenario's plan holds (the levels are paced where its placement says; the
    /// probe runs from the harness).
    pub base: Base,
    /// Paths loaded, one after another on each server.
    pub endpoints: Vec<String>,
    /// The levels.
    pub rates: Rates,
    /// How long each level runs (a ramp's own stages say how long it runs).
    pub duration: Duration,
    /// The probe, and the connections of the probe and each level.
    pub paced: Paced,
}

impl Plan {
    /// Fractions of the capacity: from idle to just past saturation.
    pub const FRACTIONS: [f64; 7] = [0.10, 0.25, 0.50, 0.75, 0.90, 1.00, 1.10];
    /// `--quick` fractions.
    pub const QUICK_FRACTIONS: [f64; 3] = [0.25, 0.75, 1.10];
    /// Each level's length, a block: 10 blocks of 1 s.
    pub const DURATION: Duration = Duration::from_secs(1);
    /// Blocks of each level: 10, as the grid's, so that a family of a dozen comparisons can
    /// decide (`greet_model::plan::Measured::REPEATS` says why).
    pub const REPEATS: usize = 10;
    /// `--quick` length.
    pub const QUICK_DURATION: Duration = Duration::from_millis(500);
}

impl Based for Plan {
    const TAKES: Takes = Takes::ANYWHERE;
    const REPEATS_HELP: &'static str =
        "Blocks of each level (each server once a block); 6 are the fewest that can decide";

    fn defaults(quick: bool) -> Self {
        Self {
            base: Base::new(
                ServerSettings::delayed(0),
                if quick { 1 } else { Self::REPEATS },
            ),
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
            paced: Paced::defaults(quick),
        }
    }
}
