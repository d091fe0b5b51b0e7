//! The scorecard as results.json keeps it: one row per headline figure of the run, one cell
//! per server, each its share of the best with a verdict, and a few words drawn from the
//! verdicts. `greet_report::scorecard` builds it from the sections; this is its shape.

use serde::{Deserialize, Serialize};

use crate::plan::Metric;
use greet_stats::paired::{Judged, Word};

/// The answer at a glance.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Scorecard {
    /// The equivalence band its verdicts were judged against (0.05: ±5%), the run's
    /// `--band`; a file from before the flag was judged at ±5%.
    #[serde(default = "default_band")]
    pub band: f64,
    /// The servers, in the order they first ran: the columns.
    pub servers: Vec<String>,
    /// The reference servers that ran beside them (`greet-floor`, `nginx`): columns of
    /// their own, never ranked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<String>,
    /// The crates that ran tuned, with knobs (`greet-hyper+pipeline-flush`): a league of
    /// their own, ranked among themselves and never against the crates at their defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tuned: Vec<String>,
    /// One row per headline figure, section by section.
    pub rows: Vec<ScoreRow>,
    /// What the verdicts say, in plain words.
    pub words: Vec<String>,
}

fn default_band() -> f64 {
    greet_stats::paired::BAND
}

impl Default for Scorecard {
    fn default() -> Self {
        Self {
            band: default_band(),
            servers: Vec::new(),
            references: Vec::new(),
            tuned: Vec::new(),
            rows: Vec::new(),
            words: Vec::new(),
        }
    }
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
    /// One per tuned server that has it: its share is of the best tuned server's figure and
    /// its mark against that one, as the cells are among the crates at their defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tuned: Vec<Cell>,
}

impl ScoreRow {
    /// `soak: keep-alive throughput, c=200`.
    pub fn name(&self) -> String {
        format!("{}: {}", self.scenario, self.figure)
    }

    /// Server `server`'s cell, tuned server `server`'s, or reference server `server`'s.
    pub fn cell(&self, server: &str) -> Option<&Cell> {
        self.cells
            .iter()
            .chain(&self.tuned)
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
    /// How it stands against the best (the best: against every other).
    pub mark: Mark,
    /// Its ratio to the best, block by block, with its interval and word (none for the best,
    /// a reference, or a count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_best: Option<Judged>,
    /// The load generator or the probe ended it, not the server: it is at least this much.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
    /// How busy the client's and the server's CPUs were, the medians over its runs, where
    /// measured: a client saturated while the server had time to spare is why it is capped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<crate::results::Cores>,
    /// The server's CPU per request where it was measured, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_request: Option<f64>,
    /// Its share of the floor's figure (`greet-floor`), where the floor ran: what the
    /// framework keeps of what the machine can do (for a less-is-better figure, the floor's
    /// over its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of_floor: Option<f64>,
}

/// A cell's verdict: one of the four words ([`greet_stats::paired::Word`]) of its server
/// against the best, or why it has none.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// The best, ahead of every other by more than the band.
    Ahead,
    /// Behind the best by more than the band.
    Behind,
    /// Within the band of the best (the best: every other is behind it or equal to it, one
    /// at least equal).
    #[serde(alias = "within")]
    Equal,
    /// Not decided: the blocks were too few or too spread to show any of the three.
    #[serde(alias = "too_few_runs")]
    Undecided,
    /// A capped figure: it could be higher, so no verdict.
    Capped,
    /// The only server with this figure.
    Alone,
}

impl Mark {
    /// The mark of a word.
    pub fn of(word: Word) -> Self {
        match word {
            Word::Ahead => Self::Ahead,
            Word::Behind => Self::Behind,
            Word::Equal => Self::Equal,
            Word::Undecided => Self::Undecided,
        }
    }

    /// Its sign in the tables.
    pub fn sign(self) -> &'static str {
        match self {
            Self::Ahead => "+",
            Self::Behind => "-",
            Self::Equal => "=",
            Self::Undecided => "?",
            Self::Capped => ">",
            Self::Alone => " ",
        }
    }

    /// Its word in the text scorecard (none for a server alone).
    pub fn word(self) -> &'static str {
        match self {
            Self::Capped => "capped",
            Self::Alone => "",
            mark => mark.describe(),
        }
    }

    /// What the sign means.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Ahead => "ahead",
            Self::Behind => "behind",
            Self::Equal => "equal",
            Self::Undecided => "undecided",
            Self::Capped => "capped by the client or the probe: no verdict",
            Self::Alone => "alone",
        }
    }
}
