//! Soak, the siege / ab experiment: at each number of keep-alive connections, load for a
//! duration (or a request count) on the async and on the blocking endpoint, zero delay,
//! counting the server's threads.

mod flags;
mod report;
mod run;

use std::time::Duration;

use greet_model::plan::{Base, Based, ServerSettings, Takes};

pub(crate) use flags::Flags;
pub use report::*;

use super::kit::{About, Scenario};

/// The soak scenario.
#[derive(Debug)]
pub(crate) struct Soak;

impl Scenario for Soak {
    const ABOUT: About = About {
        name: "soak",
        block: "a repeat: each server started afresh on each endpoint, every concurrency on it",
        title: "Soak (the siege / ab experiment)",
        summary: "The siege / ab experiment: keep-alive load for a time, counting threads",
        detail: "Load for a duration (or a count) at each number of connections on the async \
                 and the blocking endpoint, zero delay, counting the server's threads",
        examples: &[
            "greet-bench soak --duration 10s --connections 200",
            "greet-bench soak --header 'accept-encoding: gzip' --endpoints /fortunes",
        ],
        references: true,
        ..About::DEFAULT
    };
    type Plan = Plan;
    type Flags = Flags;
    type Section = Section;
}

/// How long each soak level runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoakBound {
    /// For a duration (siege's `-t`).
    Duration(Duration),
    /// For a request count (ab's `-n`).
    Requests(usize),
}

/// Soak: load for a duration (or a count) at each number of connections, on each endpoint,
/// counting threads.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario's plan holds.
    pub base: Base,
    /// Keep-alive connections, one level after another on one server process.
    pub levels: Vec<usize>,
    /// Paths loaded, each on a freshly started server.
    pub endpoints: Vec<String>,
    /// How long each level runs.
    pub bound: SoakBound,
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
}

impl Based for Plan {
    const TAKES: Takes = Takes::ANYWHERE;
    const REPEATS_HELP: &'static str = "Runs of each level";

    fn defaults(quick: bool) -> Self {
        Self {
            base: Base::new(ServerSettings::delayed(0), 1),
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
        }
    }
}
