//! The data model of a run: what `results.json` holds, what every report is drawn from, and
//! what other tools read back (`schema_version` says which shape they read).
//!
//! One shape everywhere: every load, whatever the scenario, is a [`Trial`] (what the load
//! generator saw, [`Figures`], and what the sampler saw of the server, [`Sampled`]); every
//! scenario has a section of its own holding its settings, its figures and its comparisons,
//! each (but protocols) with its [`Transport`] and ending with what frames every section
//! ([`Frame`]: the repeats, the [`Failure`]s). This module is the envelope ([`Results`], over
//! whatever sections the scenarios define) and its reader ([`read`]); the sections are each
//! scenario's own.

mod cores;
mod paced;
mod scorecard;
mod trial;

use std::collections::BTreeMap;
use std::fmt;

use std::path::Path;

use anyhow::{bail, Context, Result};
use greet_probe::Protocol;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use cores::Cores;
pub use paced::{RateRun, RateWindow, Spectrum};
pub use scorecard::{Cell, Mark, ScoreRow, Scorecard};
pub use trial::{
    block_throughputs, per_request_us, throughputs, us_per_request_at, AgentRun, Connect, Figures,
    Gain, Handshakes, Latency, Machine, Noise, Repeated, RssFrom, Sampled, SampledBy, Trial,
};

/// How the servers were run: processes, containers or a swarm stack.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Server binaries started by the harness (and servers given with `--target`).
    #[default]
    Process,
    /// Containers of the servers' images.
    Docker,
    /// The servers as a Docker Swarm stack, the load as a swarm job of agents (`--swarm`).
    Swarm,
}

/// The shape of `results.json` this harness writes. 2: a section per scenario, under its
/// name, one [`Trial`] for every load, failures listed per section.
pub const SCHEMA_VERSION: u32 = 2;

/// The whole of `results.json`: where, when and how the run was made, each scenario's
/// section (`sections`, one key each, the scenario's name), and the thresholds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Results<S> {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// Where, when and how the run was made.
    pub meta: Meta,
    /// The answer at a glance, drawn from the sections each time they are saved.
    #[serde(default)]
    pub scorecard: Scorecard,
    /// Set when a signal cut the run short: what it stopped and what never ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<Incomplete>,
    /// What the machine did meanwhile: the hypervisor's steal, and other programs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
    /// Each scenario's section, where it ran.
    #[serde(flatten)]
    pub sections: S,
    /// The `--threshold`s the run was held to, and how each fared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<ThresholdCheck>,
}

impl<S: Default> Results<S> {
    /// No scenario has written anything yet.
    pub fn new(meta: Meta) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            meta,
            scorecard: Scorecard::default(),
            noise: None,
            incomplete: None,
            sections: S::default(),
            thresholds: Vec::new(),
        }
    }
}

/// Reads a run: its `results.json`, or a folder holding one. Another schema's file is refused
/// in one line naming its version.
pub fn read<S: DeserializeOwned>(path: &Path) -> Result<Results<S>> {
    let file = if path.is_dir() {
        path.join("results.json")
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}", file.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", file.display()))?;
    let version = value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64);
    if version != Some(u64::from(SCHEMA_VERSION)) {
        let version = version.map_or("none".to_owned(), |v| v.to_string());
        bail!(
            "{} has schema_version {version}; this greet-bench reads {SCHEMA_VERSION}",
            file.display()
        );
    }
    serde_json::from_value(value)
        .with_context(|| format!("{} is not a results.json", file.display()))
}

/// What frames every scenario's section: the runs of each measurement, and the servers that
/// failed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Frame {
    /// Runs of each measurement: the blocks (at least, where more may be added).
    pub repeats: usize,
    /// Servers that failed.
    pub failures: Vec<Failure>,
    /// The most times the blocks could be looked at to decide whether to add more (1: a
    /// fixed number of blocks); every verdict's error rate is divided by it.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub looks: usize,
    /// What one block is in its scenario, in a phrase: each block takes every server once,
    /// close together, in a Williams order ([`greet_stats::order`]: block 0 in the listed
    /// order, block `b` in `williams(n, b)`'s). Empty in a file from before it was recorded.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub block: String,
}

fn band() -> f64 {
    greet_stats::paired::BAND
}

fn one() -> usize {
    1
}

impl Default for Frame {
    fn default() -> Self {
        Self::new(0)
    }
}

impl Frame {
    /// `repeats` runs of each measurement, no failure yet.
    pub fn new(repeats: usize) -> Self {
        Self {
            repeats,
            failures: Vec::new(),
            looks: 1,
            block: String::new(),
        }
    }
}

/// A run a signal cut short.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Incomplete {
    /// The signal: `SIGINT` (Ctrl-C) or `SIGTERM`.
    pub signal: String,
    /// The scenario it stopped, whose section holds what it measured before.
    pub cut_short: Option<String>,
    /// The scenarios that never started.
    pub not_run: Vec<String>,
}

impl fmt::Display for Incomplete {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "INCOMPLETE: {} ended the run", self.signal)?;
        if let Some(scenario) = &self.cut_short {
            write!(
                f,
                " during {scenario} (its section holds what it measured before)"
            )?;
        }
        if !self.not_run.is_empty() {
            write!(f, "; never run: {}", self.not_run.join(", "))?;
        }
        Ok(())
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
    /// What else decided it: timed ratios past the limit that their runs did not show past it
    /// (held), or that had too few runs to test (breached on the ratio alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl fmt::Display for ThresholdCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.held { "held" } else { "BREACHED" };
        match (&self.worst, self.value) {
            (Some(worst), Some(value)) => write!(
                f,
                "threshold {}: {verdict} ({} figure(s); worst {value:.4} at {worst}){}",
                self.threshold,
                self.figures,
                self.note
                    .as_deref()
                    .map_or(String::new(), |n| format!("; {n}"))
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
    /// The scenarios run, in order.
    pub scenarios: Vec<String>,
    /// How servers are told apart in every comparison ([`greet_stats::paired::METHOD`]).
    pub comparison_method: String,
    /// The equivalence band every comparison is judged against (`--band`; 0.05: ±5%); a
    /// file from before the flag was judged at ±5%.
    #[serde(default = "band")]
    pub band: f64,
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
/// `compare` names them among the settings. A field a file lacks takes its default (runs from
/// before `--protocol` were HTTP/1.1): serde ignores `default` on a flattened field, so the
/// defaults are the struct's own.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Transport {
    /// `--protocol`.
    pub protocol: Protocol,
    /// `--streams`: users (virtual users, connections of a closed loop) per HTTP/2 connection.
    pub streams: usize,
    /// `--pipeline`: requests each keep-alive user has in flight.
    #[serde(skip_serializing_if = "is_one")]
    pub pipeline: usize,
    /// `--requests-per-connection`: a keep-alive user's requests on one connection before it
    /// opens another; none: one for the whole load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_per_connection: Option<usize>,
    /// `--header`: header fields every request carried, as `name: value`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<String>,
    /// `--body`: what every request POSTed (`text:…`, `size:N` or `chunked:N/K`); none: GETs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// `--tls-resume`: over TLS, handshakes resume the sessions earlier ones left.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tls_resume: bool,
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
            requests_per_connection: None,
            headers: Vec::new(),
            body: None,
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

/// On a swarm: the node a store's task ran on, as the engine placed it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct StoreNode {
    /// The store's service: `postgres`, `redis`.
    pub service: String,
    /// Its node.
    pub node: String,
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
