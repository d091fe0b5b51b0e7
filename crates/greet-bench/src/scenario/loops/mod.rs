//! Loops, the JMeter experiment: T users each sending L requests back to back over
//! keep-alive, zero delay, repeated; throughput per run, medians, and whether servers differ.

mod flags;
mod report;
mod run;

use greet_model::plan::{Base, Based, ServerSettings, Takes};

pub(crate) use flags::Flags;
pub use report::*;

use super::kit::{About, Scenario};

/// The loops scenario.
#[derive(Debug)]
pub(crate) struct Loops;

impl Scenario for Loops {
    const ABOUT: About = About {
        name: "loops",
        block: "a repeat: each server started afresh, every shape on it",
        title: "Loops (the JMeter experiment)",
        summary: "The JMeter experiment: keep-alive users in loops, zero delay",
        detail: "T users each sending L requests back to back over keep-alive, zero delay, \
                 repeated; throughput per run, medians, and whether servers differ",
        examples: &[
            "greet-bench loops --quick                     three runs of each shape",
            "greet-bench loops --shapes 100x1000 --repeats 8",
        ],
        measures_again: true,
        ..About::DEFAULT
    };
    type Plan = Plan;
    type Flags = Flags;
    type Section = Section;
}

/// Loops: T users each sending L requests back to back over keep-alive, repeated.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario's plan holds.
    pub base: Base,
    /// `(users, loops)` shapes.
    pub shapes: Vec<(usize, usize)>,
}

impl Plan {
    /// The original's shapes: 100 threads × 1000 loops, 1000 threads × 100 loops.
    pub const SHAPES: [(usize, usize); 2] = [(100, 1000), (1000, 100)];
    /// `--quick` shapes.
    pub const QUICK_SHAPES: [(usize, usize); 2] = [(10, 100), (50, 20)];
    /// Runs of each shape: the original averaged three.
    pub const REPEATS: usize = 3;
}

impl Based for Plan {
    const TAKES: Takes = Takes::SERVED;
    const REPEATS_HELP: &'static str =
        "Blocks of each shape (each server once a block); 6 or more can decide a verdict";

    fn defaults(quick: bool) -> Self {
        Self {
            base: Base::new(ServerSettings::delayed(0), Self::REPEATS),
            shapes: if quick {
                Self::QUICK_SHAPES.to_vec()
            } else {
                Self::SHAPES.to_vec()
            },
        }
    }
}
