//! Capacity: per server and endpoint, the highest open-loop rate it holds within a latency
//! objective, found by a closed-loop probe, an open-loop ramp and searches around its knee.

mod flags;
mod judge;
mod report;
mod run;
mod table;

use std::fmt;
use std::time::Duration;

use crate::harness::Harness;
use crate::plan::{Base, Based, Paced, ServerSettings, Takes};

pub(crate) use flags::Flags;
pub use report::*;

use super::kit::{About, Book, Scenario};

/// The capacity scenario.
#[derive(Debug)]
pub(crate) struct Capacity;

impl Scenario for Capacity {
    const ABOUT: About = About {
        name: "capacity",
        title: "Capacity (open loop: the highest rate held within a latency objective)",
        summary: "The highest rate each server holds within a latency objective",
        detail: "The highest open-loop rate held within --slo (p99<5ms by default), every answer \
                 valid and at most 1% sent late: a closed-loop probe, an open-loop ramp to past \
                 it (where the objective first breaks is the knee), then searches that settle \
                 around the knee, whose capacities the servers are compared on",
        examples: &[
            "greet-bench capacity --slo 'p99<5ms'          the highest rate each server holds",
            "greet-bench capacity --protocol h2c --streams 1,10",
        ],
        references: true,
        again: true,
        streams_list: true,
        keep_alive: false,
        ..About::DEFAULT
    };
    type Plan = Plan;
    type Flags = Flags;
    type Section = Section;

    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> anyhow::Result<()> {
        run::run(harness, plan, book).await
    }

    fn compare(section: &mut Section) {
        section.comparisons = run::comparisons(&section.servers);
    }
}

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
    /// What every scenario's plan holds; its repeats are searches, whose capacities are
    /// what servers are compared on.
    pub base: Base,
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
    /// The probe, and the connections of the probe and every level.
    pub paced: Paced,
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
    /// Searches, a block each (every server once a round): nine, whose paired ratio can
    /// reach a p-value of 1/256, so that capacity decides inside a whole run's family too
    /// (a default `all` asks about 0.8% of its first verdicts; six rounds give 1/32 at best).
    pub const REPEATS: usize = 9;
    /// `--quick` searches.
    pub const QUICK_REPEATS: usize = 1;
}

impl Based for Plan {
    const TAKES: Takes = Takes::ANYWHERE;
    const REPEATS_HELP: &'static str =
        "Searches per server and endpoint, a block each; 6 or more can decide a verdict, 9 \
         within a whole run";

    fn defaults(quick: bool) -> Self {
        let (ramp, duration, steps, repeats) = if quick {
            (
                Self::QUICK_RAMP,
                Self::QUICK_DURATION,
                Self::QUICK_STEPS,
                Self::QUICK_REPEATS,
            )
        } else {
            (Self::RAMP, Self::DURATION, Self::STEPS, Self::REPEATS)
        };
        Self {
            base: Base::new(ServerSettings::delayed(0), repeats),
            endpoints: vec![greet_core::paths::GREETINGS.to_owned()],
            slo: Slo::DEFAULT,
            ramp,
            duration,
            steps,
            paced: Paced::defaults(quick),
        }
    }

    fn base(&self) -> &Base {
        &self.base
    }

    fn base_mut(&mut self) -> &mut Base {
        &mut self.base
    }
}
