//! A scenario that leaves out every part the scenario contract requires, listed only with the
//! `incomplete-scenario` feature: that build fails, and `tests/contract.rs` holds that it
//! fails once for each part left out. Everything else a scenario has is here, so that the
//! only errors are those:
//!
//! - no `ABOUT` (what it says of itself, its name first) in its [`Scenario`] impl;
//! - no field `frame` in its section (the part of a section every scenario has);
//! - no [`Compared`](super::kit::Compared) for its section (what it compares);
//! - no [`Run`](super::kit::Run) (how it runs).

use serde::{Deserialize, Serialize};

use greet_model::plan::{Base, Based, ServerSettings, Takes};
use greet_report::points::Point;
use greet_report::scorecard::Row;
use greet_report::svg::Drawing;
use greet_report::table::Table;
use greet_report::{Charts, Render, Tables};

use super::kit::Scenario;

/// The scenario.
#[derive(Debug)]
pub(crate) struct Incomplete;

impl Scenario for Incomplete {
    type Plan = Plan;
    type Flags = crate::flags::NoOwn;
    type Section = Section;
}

/// Its plan: the base alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario's plan holds.
    pub base: Base,
}

impl Based for Plan {
    const TAKES: Takes = Takes::SERVERS_ONLY;
    const REPEATS_HELP: &'static str = "Runs";

    fn defaults(_quick: bool) -> Self {
        Self {
            base: Base::new(ServerSettings::delayed(0), 1),
        }
    }
}

/// Its section: nothing, not even the frame.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Section {}

impl Tables for Section {
    fn tables(&self) -> Vec<Table> {
        Vec::new()
    }
}

impl Charts for Section {
    type Chart = Drawing;

    fn charts(&self) -> Vec<(String, Drawing)> {
        Vec::new()
    }
}

impl Render for Section {
    fn csv(&self) -> anyhow::Result<Vec<(String, String)>> {
        Ok(Vec::new())
    }

    fn points(&self) -> Vec<Point> {
        Vec::new()
    }

    fn scorecard(&self) -> Vec<Row> {
        Vec::new()
    }
}
