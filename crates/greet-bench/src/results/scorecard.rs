//! The scorecard as results.json keeps it: one row per headline figure of the run, one cell
//! per server, each its share of the best with a verdict, and a few words drawn from the
//! verdicts. `report::scorecard` builds it from the sections; this is its shape.

use serde::{Deserialize, Serialize};

use crate::plan::Metric;

/// The answer at a glance.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Scorecard {
    /// The servers, in the order they first ran: the columns.
    pub servers: Vec<String>,
    /// The reference servers that ran beside them (`greet-floor`, `nginx`): columns of
    /// their own, never ranked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<String>,
    /// One row per headline figure, section by section.
    pub rows: Vec<ScoreRow>,
    /// What the verdicts say, in plain words.
    pub words: Vec<String>,
}

/// One headline figure, every server's.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScoreRow {
    /// The scenario that measured it.
    pub scenario: String,
    /// What it is: `keep-alive throughput, c=200`.
    pub figure: String,
    /// Its metric: its unit, and whether more is better.
    pub metric: Metric,
    /// Measured once a server by design (start-up): more repeats would not decide it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub once: bool,
    /// One per server that has the figure.
    pub cells: Vec<Cell>,
    /// One per reference server that has it: its share is of the best server's figure (above
    /// 1 where it does better), its mark always [`Mark::Alone`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<Cell>,
}

impl ScoreRow {
    /// `soak: keep-alive throughput, c=200`.
    pub fn name(&self) -> String {
        format!("{}: {}", self.scenario, self.figure)
    }

    /// Server `server`'s cell, or reference server `server`'s.
    pub fn cell(&self, server: &str) -> Option<&Cell> {
        self.cells
            .iter()
            .chain(&self.references)
            .find(|c| c.server == server)
    }
}

/// One server's figure.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cell {
    /// The server.
    pub server: String,
    /// The median of its runs, in the metric's unit.
    pub median: f64,
    /// Runs behind it.
    pub runs: usize,
    /// Its share of the best: 1 for the best, less for the others (for a figure where less is
    /// better, the best's over its own).
    pub share: f64,
    /// How it stands against the best (the best: against the runner-up).
    pub mark: Mark,
    /// The load generator or the probe ended it, not the server: it is at least this much.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
    /// The server's CPU per request where it was measured, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_request: Option<f64>,
    /// Its share of the floor's figure (`greet-floor`), where the floor ran: what the
    /// framework keeps of what the machine can do (for a less-is-better figure, the floor's
    /// over its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of_floor: Option<f64>,
}

/// A cell's verdict.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// The best, ahead of every other beyond the noise.
    Ahead,
    /// Behind the best beyond the noise.
    Behind,
    /// Within the noise of the best (the best: of the runner-up).
    Within,
    /// Too few runs to tell.
    TooFewRuns,
    /// A capped figure: it could be higher, so no verdict.
    Capped,
    /// The best, ahead beyond the noise of every other but one whose figure was capped and
    /// could be higher: no verdict.
    Undecided,
    /// The only server with this figure.
    Alone,
}

impl Mark {
    /// Its sign in the tables.
    pub fn sign(self) -> &'static str {
        match self {
            Self::Ahead => "+",
            Self::Behind => "-",
            Self::Within => "=",
            Self::TooFewRuns => "?",
            Self::Capped => ">",
            Self::Undecided => "~",
            Self::Alone => " ",
        }
    }

    /// What the sign means.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Ahead => "ahead beyond the noise",
            Self::Behind => "behind beyond the noise",
            Self::Within => "within the noise",
            Self::TooFewRuns => "too few runs to tell",
            Self::Capped => "capped by the client or the probe",
            Self::Undecided => "no verdict: another's figure was capped",
            Self::Alone => "alone",
        }
    }
}
