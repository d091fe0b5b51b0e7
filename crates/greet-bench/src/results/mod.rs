//! The data model of a run: what `results.json` holds, what every report is drawn from, and
//! what other tools read back (`schema_version` says which shape they read).
//!
//! One shape everywhere: every load, whatever the scenario, is a [`Run`] (what the load
//! generator saw, [`Figures`], and what the sampler saw of the server, [`Sampled`]); every
//! scenario has a section of its own holding its settings, its figures, its comparisons and
//! its [`Failure`]s.

mod business;
mod capacity;
mod ladder;
mod loops;
mod protocols;
mod rate;
mod run;
mod soak;
mod sweep;
mod techempower;

use std::collections::BTreeMap;
use std::fmt;

use greet_probe::Protocol;
use serde::{Deserialize, Serialize};

use crate::plan::ScenarioKind;

pub use business::{Business, BusinessCell, CeilingFraction, PoolBest, PoolSetting};
pub use capacity::{Capacity, CapacityServer, CapacityStep};
pub use ladder::{Ladder, LadderServer, Level, Mode};
pub use loops::{LoopServer, LoopShape, Loops};
pub(crate) use protocols::{case as protocol_case, cases as protocol_cases};
pub use protocols::{ProtocolCell, ProtocolComparisons, ProtocolGain, Protocols};
pub use rate::{Rate, RateLevel, RateRun, RateServer, RateWindow, Spectrum};
pub use run::{
    throughputs, AgentRun, Connect, Figures, Gain, Handshakes, Latency, Repeated, RssFrom, Run,
    Sampled, SampledBy,
};
pub use soak::{Soak, SoakCell};
pub use sweep::{Setting, Sweep, SweepBest, SweepCell};
pub use techempower::{TechEmpower, TechEmpowerCell, NO_STORE};

/// The shape of `results.json` this harness writes. 2: a section per scenario (the ladder's
/// under `ladder`), one [`Run`] for every load, failures listed per section.
pub const SCHEMA_VERSION: u32 = 2;

/// The whole of `results.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Results {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// Where, when and how the run was made.
    pub meta: Meta,
    /// The original experiment, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder: Option<Ladder>,
    /// Fixed-count keep-alive loops (the JMeter experiment), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<Loops>,
    /// Duration-bounded load counting threads (the siege / ab experiment), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<Soak>,
    /// Zero-delay load over thread-count grids (the tuning experiment), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,
    /// Store-bound endpoints against the ceiling (the tuning experiment's business
    /// endpoint), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub business: Option<Business>,
    /// Open-loop load at fixed request rates, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// The highest open-loop rate each server holds within a latency objective, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    /// Keep-alive throughput over each protocol, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocols: Option<Protocols>,
    /// TechEmpower's seven tests, when they ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub techempower: Option<TechEmpower>,
    /// The `--threshold`s the run was held to, and how each fared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<ThresholdCheck>,
}

impl Results {
    /// No scenario has written anything yet.
    pub fn new(meta: Meta) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            meta,
            ladder: None,
            loops: None,
            soak: None,
            sweep: None,
            business: None,
            rate: None,
            capacity: None,
            protocols: None,
            techempower: None,
            thresholds: Vec::new(),
        }
    }

    /// Whether `kind` has written its section.
    pub fn has(&self, kind: ScenarioKind) -> bool {
        match kind {
            ScenarioKind::Ladder => self.ladder.is_some(),
            ScenarioKind::Loops => self.loops.is_some(),
            ScenarioKind::Soak => self.soak.is_some(),
            ScenarioKind::Sweep => self.sweep.is_some(),
            ScenarioKind::Business => self.business.is_some(),
            ScenarioKind::Rate => self.rate.is_some(),
            ScenarioKind::Capacity => self.capacity.is_some(),
            ScenarioKind::Protocols => self.protocols.is_some(),
            ScenarioKind::TechEmpower => self.techempower.is_some(),
        }
    }

    /// The scenarios that have written their sections, in order.
    pub fn present(&self) -> Vec<ScenarioKind> {
        ScenarioKind::ALL
            .into_iter()
            .filter(|kind| self.has(*kind))
            .collect()
    }
}

/// How a threshold fared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdCheck {
    /// The threshold, as typed.
    pub threshold: String,
    /// Whether every figure it names held it.
    pub held: bool,
    /// The figures it named.
    pub figures: usize,
    /// The figure closest to breaching it (or breaching it most): its place and value.
    pub worst: Option<String>,
    /// That figure's value (the median of its runs, or with `max()`/`min()` their highest or
    /// lowest), in the metric's unit or as a ratio.
    pub value: Option<f64>,
}

impl fmt::Display for ThresholdCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.held { "held" } else { "BREACHED" };
        match (&self.worst, self.value) {
            (Some(worst), Some(value)) => write!(
                f,
                "threshold {}: {verdict} ({} figure(s); worst {value:.4} at {worst})",
                self.threshold, self.figures
            ),
            _ => write!(
                f,
                "threshold {}: {verdict} (no figure of that name was measured)",
                self.threshold
            ),
        }
    }
}

/// Where, when and how the run was made.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Meta {
    /// Host name.
    pub machine: String,
    /// CPUs and how they were split.
    pub cpus: Cpus,
    /// Kernel release.
    pub kernel: String,
    /// Versions of the server crates, from Cargo.lock.
    pub crate_versions: BTreeMap<String, String>,
    /// The scenarios run, in order: `ladder`, `loops`, `soak`, `sweep`, `business`, `rate`.
    pub scenarios: Vec<String>,
    /// How servers are told apart in every comparison ([`crate::stats::mann_whitney::METHOD`]).
    pub comparison_method: String,
    /// UTC start time, RFC 3339.
    pub started_at: String,
    /// The workspace's commit the run was made from (`+dirty` with uncommitted changes), when
    /// the harness runs from its workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The compiler that built the harness (and the servers, built with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rustc: Option<String>,
}

/// How a scenario's requests went: the protocol (`http1`, `h2c`, `https`, `h2`) and, over
/// HTTP/2, the users sharing a connection. Plain fields of each scenario's section, so that
/// `compare` names them among the settings; runs from before the protocols were HTTP/1.1.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Transport {
    /// `--protocol`.
    pub protocol: Protocol,
    /// `--streams`: users (virtual users, connections of a closed loop) per HTTP/2 connection.
    pub streams: usize,
    /// `--pipeline`: requests each keep-alive user has in flight.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub pipeline: usize,
    /// `--tls-resume`: over TLS, handshakes resume the sessions earlier ones left.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls_resume: bool,
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

impl Default for Transport {
    fn default() -> Self {
        Self {
            protocol: Protocol::Http1,
            streams: 1,
            pipeline: 1,
            tls_resume: false,
        }
    }
}

/// CPUs of the machine and the split between server and load generator.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cpus {
    /// CPUs the harness could use.
    pub count: usize,
    /// Processor model, from /proc/cpuinfo.
    pub model: String,
    /// CPUs each server was pinned to (empty: not pinned).
    pub server: Vec<usize>,
    /// CPUs the load generator was pinned to (empty: not pinned).
    pub load: Vec<usize>,
    /// CPUs the stores the harness started (PostgreSQL, Redis) were pinned to (empty: not
    /// pinned): the load generator's, for want of a third place on two cores.
    #[serde(default)]
    pub stores: Vec<usize>,
}

/// A server that failed in a scenario (start-up, contract check, died mid-run, unclean
/// exit), and why. What it measured before failing stays in its section.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Failure {
    /// The server (and endpoint, where the scenario has several).
    pub server: String,
    /// What went wrong.
    pub error: String,
}
