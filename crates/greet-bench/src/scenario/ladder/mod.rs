//! The ladder, the original experiment: each server in turn verified, started, loaded at
//! each concurrency level (one request per fresh connection) while sampled, and stopped;
//! with `--repeats`, again, each repeat a block of every server.

mod flags;
mod report;
mod run;
mod table;

use greet_model::plan::{Base, Based, Containers, ServerSettings, Takes, DELAY_MS};

pub(crate) use flags::Flags;
pub use report::{LadderServer, Level, Section};

use super::kit::{About, Scenario};

/// The ladder.
#[derive(Debug)]
pub(crate) struct Ladder;

impl Scenario for Ladder {
    const ABOUT: About = About {
        name: "ladder",
        block: "a repeat of the whole ladder, each server started afresh",
        title: "Ladder (the original experiment)",
        summary: "The original experiment (the default): fresh connections at 100 to 2700 at once",
        detail: "Each server in turn, started, verified, loaded at each concurrency level (one \
                 request per fresh connection), sampled, stopped; with --repeats, the whole \
                 ladder again, each repeat a block",
        examples: &[
            "greet-bench --quick                           a smoke-sized ladder, seconds once built",
            "greet-bench --repeats 5 --concurrency 900     medians of 5 runs, and verdicts",
            "greet-bench --servers axum,axum:/greetings/blocking   async against a thread pool",
        ],
        keep_alive: false,
        ..About::DEFAULT
    };
    type Plan = Plan;
    type Flags = Flags;
    type Section = Section;

    fn containers(plan: &Plan) -> Option<&Containers> {
        plan.containers.as_ref()
    }
}

/// The ladder: each server in turn, one request per fresh connection at each level.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario's plan holds (its servers may name an endpoint of their own).
    pub base: Base,
    /// Concurrency levels; each sends as many requests as its concurrency.
    pub levels: Vec<usize>,
    /// Path and query loaded on every server without an endpoint of its own.
    pub endpoint: String,
    /// Run the servers as containers of their images (`--docker`).
    pub containers: Option<Containers>,
}

impl Plan {
    /// The original's levels.
    pub const LEVELS: [usize; 4] = [100, 300, 900, 2700];
    /// `--quick` levels.
    pub const QUICK_LEVELS: [usize; 2] = [10, 50];
    /// `--quick` delay, milliseconds (the default is the original's).
    pub const QUICK_DELAY_MS: u64 = 50;
}

impl Based for Plan {
    const TAKES: Takes = Takes {
        endpoint_each: true,
        ..Takes::ANYWHERE
    };
    const REPEATS_HELP: &'static str =
        "Runs of the whole ladder, each on every server started afresh, the servers \
         in a balanced order; with more than one, figures are medians and the servers are \
         compared block by block on total time and start-up";

    fn defaults(quick: bool) -> Self {
        let delay_ms = if quick {
            Self::QUICK_DELAY_MS
        } else {
            DELAY_MS
        };
        Self {
            base: Base::new(ServerSettings::delayed(delay_ms), 1),
            levels: if quick {
                Self::QUICK_LEVELS.to_vec()
            } else {
                Self::LEVELS.to_vec()
            },
            endpoint: greet_core::paths::GREETINGS.to_owned(),
            containers: None,
        }
    }
}
