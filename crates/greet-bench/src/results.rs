//! The data model of a run: what `results.json` holds, what every report is drawn from, and
//! what other tools read back (`schema_version` says which shape they read).
//!
//! One shape everywhere: every load, whatever the scenario, is a [`Run`] (what the load
//! generator saw, [`Figures`], and what the sampler saw of the server, [`Sampled`]); every
//! scenario has a section of its own holding its settings, its figures, its comparisons and
//! its [`Failure`]s.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::compare::{Comparison, Figure};
use crate::plan::ScenarioKind;
use crate::stats::{max_of, median, percent, Summary};

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
    /// How servers are told apart in every comparison ([`crate::compare::METHOD`]).
    pub comparison_method: String,
    /// UTC start time, RFC 3339.
    pub started_at: String,
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

/// What the load generator saw of one load.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Figures {
    /// Requests sent (or due), valid or not.
    pub requests: u64,
    /// Valid responses (the endpoint's status and body), percent of the requests.
    pub success_rate: f64,
    /// First request (connect included) to last response, seconds.
    pub total_s: f64,
    /// Valid responses per second of `total_s`: failures, however fast, add nothing.
    pub requests_per_s: f64,
    /// Fastest valid request, seconds.
    pub fastest_s: f64,
    /// Slowest valid request, seconds.
    pub slowest_s: f64,
    /// Mean of the valid requests, seconds.
    pub average_s: f64,
    /// Latency percentiles of the valid requests.
    pub latency_ms: Latency,
    /// Connections opened (one per request on fresh connections; one per user and
    /// reconnect on keep-alive).
    pub connects: u64,
    /// Time to an established connection.
    pub connect_ms: Connect,
    /// Failed requests by kind: connect, timeout, io, status, body, panic.
    pub errors: BTreeMap<String, u64>,
}

impl Figures {
    /// Valid responses.
    pub fn ok(&self) -> u64 {
        self.requests.saturating_sub(self.errors.values().sum())
    }
}

/// Latency percentiles, milliseconds (HDR histogram, 3 significant digits).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Slowest.
    pub max: f64,
}

/// Connect times, milliseconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Connect {
    /// Mean.
    pub avg: f64,
    /// Slowest.
    pub max: f64,
}

/// What the sampler saw of the server during one load: nothing for a server the harness did
/// not start.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Sampled {
    /// Where the figures come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<SampledBy>,
    /// Highest CPU use over any 200 ms window (an engine interval, from Docker's stats),
    /// percent of one CPU.
    pub cpu_max_pct: Option<f64>,
    /// CPU use over the whole load, percent of one CPU.
    pub cpu_avg_pct: Option<f64>,
    /// Highest resident memory, MiB.
    pub rss_max_mib: Option<f64>,
    /// How `rss_max_mib` was measured.
    pub rss_max_from: Option<RssFrom>,
    /// Most live threads.
    pub threads_max: Option<u64>,
    /// Live threads at the end.
    pub threads_last: Option<u64>,
}

impl Sampled {
    /// Repeated runs' samples as one: the maxima the maxima, mean CPU the median, threads at
    /// the end the last run's; a memory peak read off readings in any run makes the maximum a
    /// sampled one.
    pub fn over(runs: &[&Sampled]) -> Sampled {
        let max_f = |f: fn(&Sampled) -> Option<f64>| runs.iter().copied().map(f).fold(None, max_of);
        let cpu: Vec<f64> = runs.iter().filter_map(|s| s.cpu_avg_pct).collect();
        Sampled {
            from: runs.first().and_then(|s| s.from),
            cpu_max_pct: max_f(|s| s.cpu_max_pct),
            cpu_avg_pct: (!cpu.is_empty()).then(|| median(&cpu)),
            rss_max_mib: max_f(|s| s.rss_max_mib),
            rss_max_from: runs.iter().filter_map(|s| s.rss_max_from).reduce(|a, b| {
                if a == RssFrom::Readings {
                    a
                } else {
                    b
                }
            }),
            threads_max: runs.iter().filter_map(|s| s.threads_max).max(),
            threads_last: runs.last().and_then(|s| s.threads_last),
        }
    }
}

/// What watched the server.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SampledBy {
    /// The server's /proc entry, every 20 ms: the harness and the server share a machine.
    Proc,
    /// The Docker engine's stats, about once a second: a container (on this host or another);
    /// memory is the engine's count (the cgroup's, less its page cache), threads its tasks.
    DockerStats,
}

/// Where a peak resident-memory figure comes from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RssFrom {
    /// The kernel's peak counter (VmHWM), reset when the load started: exact.
    PeakCounter,
    /// The counter could not be reset (no right to the process's clear_refs): the highest of
    /// the readings taken every 20 ms, which can miss a shorter peak.
    Readings,
}

/// One load against one server: the unit of every scenario.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Run {
    /// What the load generator saw.
    #[serde(flatten)]
    pub load: Figures,
    /// What the sampler saw of the server.
    #[serde(flatten)]
    pub server: Sampled,
    /// A container's figures as the Docker engine's stats gave them, beside /proc's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<Sampled>,
}

impl Run {
    /// Repeated runs of one load as one: every figure the median over the runs, errors summed
    /// (and the requests with them), resource maxima the maxima.
    pub fn median_of(runs: &[Run]) -> Run {
        if runs.len() <= 1 {
            return runs.first().cloned().unwrap_or_default();
        }
        let med = |f: fn(&Run) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
        let mut errors = BTreeMap::new();
        for run in runs {
            for (kind, n) in &run.load.errors {
                *errors.entry(kind.clone()).or_insert(0) += n;
            }
        }
        let requests: u64 = runs.iter().map(|r| r.load.requests).sum();
        let failed: u64 = errors.values().sum();
        Run {
            load: Figures {
                requests: requests / runs.len() as u64,
                success_rate: percent(requests - failed.min(requests), requests),
                total_s: med(|r| r.load.total_s),
                requests_per_s: med(|r| r.load.requests_per_s),
                fastest_s: med(|r| r.load.fastest_s),
                slowest_s: med(|r| r.load.slowest_s),
                average_s: med(|r| r.load.average_s),
                latency_ms: Latency {
                    p50: med(|r| r.load.latency_ms.p50),
                    p90: med(|r| r.load.latency_ms.p90),
                    p99: med(|r| r.load.latency_ms.p99),
                    p999: med(|r| r.load.latency_ms.p999),
                    max: med(|r| r.load.latency_ms.max),
                },
                connects: runs.iter().map(|r| r.load.connects).sum::<u64>() / runs.len() as u64,
                connect_ms: Connect {
                    avg: med(|r| r.load.connect_ms.avg),
                    max: med(|r| r.load.connect_ms.max),
                },
                errors,
            },
            server: Sampled::over(&runs.iter().map(|r| &r.server).collect::<Vec<_>>()),
            engine: runs.last().and_then(|r| r.engine.clone()),
        }
    }
}

/// Each run's throughput, in order: the sample servers are compared on.
pub fn throughputs(runs: &[Run]) -> Vec<f64> {
    runs.iter().map(|r| r.load.requests_per_s).collect()
}

/// What repeated keep-alive runs add up to.
#[derive(Debug, Clone, PartialEq)]
pub struct Repeated {
    /// Throughput over the runs.
    pub requests_per_s: Summary,
    /// Valid responses over all runs.
    pub hits: u64,
    /// Valid responses, percent of all requests over all runs.
    pub success_rate: f64,
    /// Median of the runs' mean latencies, seconds.
    pub average_s: f64,
    /// Median of the runs' mean server CPU, when sampled.
    pub cpu_avg_pct: Option<f64>,
}

impl Repeated {
    /// Sums and medians of `runs`.
    pub fn of(runs: &[Run]) -> Self {
        let hits = runs.iter().map(|r| r.load.ok()).sum();
        let requests = runs.iter().map(|r| r.load.requests).sum();
        let cpu: Vec<f64> = runs.iter().filter_map(|r| r.server.cpu_avg_pct).collect();
        Self {
            requests_per_s: Summary::of(&throughputs(runs)),
            hits,
            success_rate: percent(hits, requests),
            average_s: median(&runs.iter().map(|r| r.load.average_s).collect::<Vec<_>>()),
            cpu_avg_pct: (!cpu.is_empty()).then(|| median(&cpu)),
        }
    }
}

/// How the ladder's servers were run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Server binaries started by the harness (and servers given with `--target`).
    Process,
    /// Containers of the servers' images.
    Docker,
}

/// The ladder, the original experiment: each server started, verified, and loaded at each
/// concurrency level, one request per fresh connection.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ladder {
    /// Processes or containers.
    pub mode: Mode,
    /// `--delay-ms` given to the servers.
    pub delay_ms: u64,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// `--blocking-threads` given to the servers.
    pub blocking_threads: usize,
    /// The concurrency levels, in order; each sends as many requests as its concurrency.
    pub concurrency: Vec<usize>,
    /// Runs of each level (figures are medians when more than one).
    pub repeats: usize,
    /// Per-request timeout, seconds.
    pub timeout_s: f64,
    /// One entry per server (and endpoint), in run order.
    pub servers: Vec<LadderServer>,
    /// With repeats: every pair of servers at each level, on per-run total time.
    pub comparisons: Vec<Comparison>,
    /// Servers that failed.
    pub failures: Vec<Failure>,
}

/// One server (and endpoint) of the ladder: start-up, resources and a level per concurrency.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LadderServer {
    /// The name in the tables, e.g. `greet-axum`.
    pub name: String,
    /// The path loaded, e.g. `/greetings`.
    pub endpoint: String,
    /// Where it was loaded, `host:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<String>,
    /// Spawn → first 200 on `/health`, seconds (none for `--target`).
    pub startup_s: Option<f64>,
    /// Resident memory after start-up, before any load, MiB.
    pub idle_rss_mib: Option<f64>,
    /// Highest CPU use over all levels, percent of one CPU.
    pub cpu_max_pct: Option<f64>,
    /// Highest resident memory over all levels, MiB.
    pub rss_max_mib: Option<f64>,
    /// How `rss_max_mib` was measured.
    pub rss_max_from: Option<RssFrom>,
    /// Most threads over all levels.
    pub threads_max: Option<u64>,
    /// One entry per concurrency level measured.
    pub levels: Vec<Level>,
}

impl LadderServer {
    /// Folds the levels' resource maxima into the server's.
    pub fn fold_maxima(&mut self) {
        let all = Sampled::over(
            &self
                .levels
                .iter()
                .map(|l| &l.run.server)
                .collect::<Vec<_>>(),
        );
        self.cpu_max_pct = all.cpu_max_pct;
        self.rss_max_mib = all.rss_max_mib;
        self.rss_max_from = all.rss_max_from;
        self.threads_max = all.threads_max;
    }
}

/// One concurrency level of one server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Level {
    /// Requests in flight at once (and requests sent).
    pub concurrency: usize,
    /// The level's figures: its one run, or the medians of its runs.
    #[serde(flatten)]
    pub run: Run,
    /// Each run, in order, when the level was repeated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<Run>,
}

/// The loops scenario: T users × L requests each, over keep-alive, repeated.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Loops {
    /// `--delay-ms` given to the servers.
    pub delay_ms: u64,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// Runs of each shape per server.
    pub repeats: usize,
    /// One entry per shape, in order.
    pub shapes: Vec<LoopShape>,
    /// Servers that failed.
    pub failures: Vec<Failure>,
}

/// One shape of the loops scenario against every server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LoopShape {
    /// Virtual users (JMeter threads).
    pub users: usize,
    /// Requests per user, back to back.
    pub loops: usize,
    /// One entry per server.
    pub servers: Vec<LoopServer>,
    /// Every pair of servers, on per-run throughput.
    pub comparisons: Vec<Comparison>,
}

/// One server's runs of one loops shape.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LoopServer {
    /// The server.
    pub name: String,
    /// Each run, in order.
    pub runs: Vec<Run>,
    /// Throughput over the runs.
    pub requests_per_s: Summary,
}

/// The soak scenario: duration- or count-bounded load at each concurrency, on the async and
/// the blocking endpoint, counting the server's threads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Soak {
    /// Each load's duration, seconds (when bounded by time).
    pub duration_s: Option<f64>,
    /// Each load's request count (when bounded by count).
    pub requests: Option<usize>,
    /// `--delay-ms` given to the servers.
    pub delay_ms: u64,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// `--blocking-threads` given to the servers.
    pub blocking_threads: usize,
    /// Runs of each cell.
    pub repeats: usize,
    /// One entry per server, endpoint and concurrency, in run order.
    pub cells: Vec<SoakCell>,
    /// Every pair of servers at each endpoint and concurrency, on per-run throughput.
    pub comparisons: Vec<Comparison>,
    /// Servers that failed.
    pub failures: Vec<Failure>,
}

/// One server, endpoint and concurrency of the soak scenario.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct SoakCell {
    /// The server.
    pub server: String,
    /// The path loaded.
    pub endpoint: String,
    /// Connections (siege's `-c`).
    pub concurrency: usize,
    /// Valid responses, over all runs.
    pub hits: u64,
    /// Valid responses, percent of the requests.
    pub success_rate: f64,
    /// Throughput over the runs, valid responses per second.
    pub requests_per_s: Summary,
    /// Mean latency, seconds (median over the runs).
    pub average_s: f64,
    /// Live threads when the server had started, before any load (none for a target).
    pub threads_at_start: Option<u64>,
    /// Live threads at the end of this cell.
    pub threads_live: Option<u64>,
    /// Most live threads during this cell.
    pub threads_peak: Option<u64>,
    /// Thread ids seen since the server started, this cell included (threads started).
    pub threads_total: Option<u64>,
    /// Mean CPU use over the cell, percent of one CPU (median over the runs).
    pub cpu_avg_pct: Option<f64>,
    /// Highest CPU use over any 200 ms window, percent of one CPU.
    pub cpu_max_pct: Option<f64>,
    /// Highest resident memory, MiB.
    pub rss_max_mib: Option<f64>,
    /// Each run, in order.
    pub runs: Vec<Run>,
}

/// The sweep scenario: zero-delay load over a grid of `--workers`, and of
/// `--blocking-threads` on the blocking endpoint, a fresh server per run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Sweep {
    /// Connections of each load.
    pub concurrency: usize,
    /// Measured part of each run, seconds.
    pub duration_s: f64,
    /// Unmeasured load before it, seconds.
    pub warmup_s: f64,
    /// Runs of each setting, each on a freshly started server.
    pub repeats: usize,
    /// The `--workers` grid.
    pub workers: Vec<usize>,
    /// The `--blocking-threads` grid (blocking endpoint only).
    pub blocking_threads: Vec<usize>,
    /// The settings the other scenarios use.
    pub default: Setting,
    /// One entry per server, endpoint and setting.
    pub cells: Vec<SweepCell>,
    /// Per server and endpoint: the best setting against the default.
    pub best: Vec<SweepBest>,
    /// Servers that failed.
    pub failures: Vec<Failure>,
}

/// Server thread settings.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct Setting {
    /// `--workers`.
    pub workers: usize,
    /// `--blocking-threads` (none: not swept for this endpoint).
    pub blocking_threads: Option<usize>,
}

impl Setting {
    /// As server flags: `--workers 2 --blocking-threads 16`.
    pub fn label(&self) -> String {
        match self.blocking_threads {
            Some(b) => format!("--workers {} --blocking-threads {b}", self.workers),
            None => format!("--workers {}", self.workers),
        }
    }

    /// Whether this is `default` (a setting without a blocking-thread count is, when its
    /// workers are the default's: the count does not apply to its endpoint).
    pub fn is_default(&self, default: &Setting) -> bool {
        self.workers == default.workers
            && self
                .blocking_threads
                .is_none_or(|b| Some(b) == default.blocking_threads)
    }
}

/// One server, endpoint and setting of the sweep.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct SweepCell {
    /// The server.
    pub server: String,
    /// The path loaded.
    pub endpoint: String,
    /// The thread settings.
    pub setting: Setting,
    /// Throughput over the runs, valid responses per second.
    pub requests_per_s: Summary,
    /// Valid responses, percent, over all runs.
    pub success_rate: f64,
    /// Mean CPU use, percent of one CPU (median over the runs).
    pub cpu_avg_pct: Option<f64>,
    /// Each run, in order.
    pub runs: Vec<Run>,
}

/// The best setting of one server and endpoint, against the default.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepBest {
    /// The server.
    pub server: String,
    /// The path loaded.
    pub endpoint: String,
    /// The setting with the highest median throughput.
    pub setting: Setting,
    /// Its throughput against the default's.
    #[serde(flatten)]
    pub gain: Gain,
}

/// The best of several settings against the default, on throughput.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Gain {
    /// The best setting's median throughput.
    pub requests_per_s: f64,
    /// The default setting's median throughput.
    pub default_requests_per_s: f64,
    /// Best / default.
    pub gain: f64,
    /// Best against default, on per-run throughput.
    pub comparison: Comparison,
}

impl Gain {
    /// The runs of the best setting (`top`) against the default's (`base`), each named by
    /// its flags.
    pub fn of(top: (&str, &[Run]), base: (&str, &[Run])) -> Self {
        let (a, b) = (throughputs(top.1), throughputs(base.1));
        let (top_rps, base_rps) = (median(&a), median(&b));
        Self {
            requests_per_s: top_rps,
            default_requests_per_s: base_rps,
            gain: if base_rps == 0.0 {
                0.0
            } else {
                top_rps / base_rps
            },
            comparison: Comparison::new(Figure::RequestsPerS, top.0, &a, base.0, &b),
        }
    }
}

/// The business scenario: each server's store-bound endpoints (`/db`, `/queries`,
/// `/business`) against its own ceiling (`/health`) on the same server, on each store, over
/// grids of `--workers` and `--db-pool`; a fresh server per setting and repeat, every endpoint
/// loaded on it in turn.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Business {
    /// Keep-alive connections of each load.
    pub concurrency: usize,
    /// Measured part of each load, seconds.
    pub duration_s: f64,
    /// Unmeasured load before it, seconds.
    pub warmup_s: f64,
    /// Runs of each setting, each on a freshly started server.
    pub repeats: usize,
    /// The stores, by name (`sqlite`, `postgres+redis`).
    pub stores: Vec<String>,
    /// The `--workers` grid.
    pub workers: Vec<usize>,
    /// The `--db-pool` grid.
    pub db_pools: Vec<usize>,
    /// The setting every other figure is taken at.
    pub default: PoolSetting,
    /// How the database and cache servers were run, per store.
    pub store_notes: Vec<String>,
    /// One entry per server, store, endpoint and setting.
    pub cells: Vec<BusinessCell>,
    /// Per server, store and store-bound endpoint at the default setting: its throughput as a
    /// fraction of `/health`'s on the same servers.
    pub fractions: Vec<CeilingFraction>,
    /// Per server, store and store-bound endpoint: the best `--db-pool` against the default.
    pub best_pools: Vec<PoolBest>,
    /// Every pair of servers on each store and endpoint, at the default setting.
    pub comparisons: Vec<Comparison>,
    /// Servers that failed.
    pub failures: Vec<Failure>,
}

/// A server's thread and pool settings in the business scenario.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, PartialOrd, Ord)]
pub struct PoolSetting {
    /// `--workers`.
    pub workers: usize,
    /// `--db-pool`.
    pub db_pool: usize,
}

impl PoolSetting {
    /// As server flags.
    pub fn label(&self) -> String {
        format!("--workers {} --db-pool {}", self.workers, self.db_pool)
    }
}

/// One server, store, endpoint and setting of the business scenario.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct BusinessCell {
    /// The server.
    pub server: String,
    /// The store.
    pub store: String,
    /// The path loaded.
    pub endpoint: String,
    /// The thread and pool settings.
    pub setting: PoolSetting,
    /// Throughput over the runs, valid responses per second.
    pub requests_per_s: Summary,
    /// Valid responses, percent, over all runs.
    pub success_rate: f64,
    /// Mean CPU use of the server, percent of one CPU (median over the runs).
    pub cpu_avg_pct: Option<f64>,
    /// The database and cache servers over the runs (PostgreSQL's postmaster and backends,
    /// and Redis, summed; resident memory counts pages shared between PostgreSQL's
    /// processes once per process), when the harness started them.
    pub store_processes: Option<Sampled>,
    /// Each run, in order.
    pub runs: Vec<Run>,
    /// What the store processes did in each run, in order.
    pub store_runs: Vec<Sampled>,
}

/// A store-bound endpoint's throughput against the same server's ceiling.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CeilingFraction {
    /// The server.
    pub server: String,
    /// The store.
    pub store: String,
    /// The store-bound path.
    pub endpoint: String,
    /// Its median throughput.
    pub requests_per_s: f64,
    /// `/health`'s median throughput on the same servers.
    pub ceiling_requests_per_s: f64,
    /// The one over the other.
    pub fraction: f64,
}

/// The best `--db-pool` of one server, store and endpoint, against the default.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PoolBest {
    /// The server.
    pub server: String,
    /// The store.
    pub store: String,
    /// The path loaded.
    pub endpoint: String,
    /// The setting with the highest median throughput.
    pub setting: PoolSetting,
    /// Its throughput against the default's.
    #[serde(flatten)]
    pub gain: Gain,
}

/// The rate scenario: open-loop load, each request on a fixed schedule and its latency counted
/// from its intended send time (no coordinated omission), at fractions of each server's
/// capacity or at fixed rates.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Rate {
    /// `--delay-ms` given to the servers.
    pub delay_ms: u64,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// Each level's length, seconds.
    pub duration_s: f64,
    /// The closed-loop probe's length, seconds.
    pub probe_s: f64,
    /// Keep-alive connections.
    pub connections: usize,
    /// Runs of each level.
    pub repeats: usize,
    /// A request sent this much after its intended time counts as late, milliseconds.
    pub late_ms: f64,
    /// A level whose achieved rate is under this fraction of its target is over capacity.
    pub over_capacity_below: f64,
    /// A level that used this much of the load generator's CPU, percent, is client-bound.
    pub client_bound_pct: f64,
    /// One entry per server and endpoint.
    pub servers: Vec<RateServer>,
    /// Every pair of servers at each endpoint and level, on per-run p99 and achieved rate.
    pub comparisons: Vec<Comparison>,
    /// Servers that failed.
    pub failures: Vec<Failure>,
}

/// One server and endpoint of the rate scenario.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct RateServer {
    /// The server.
    pub server: String,
    /// The path loaded.
    pub endpoint: String,
    /// Valid responses a second in the closed-loop probe: the capacity the levels are
    /// fractions of.
    pub capacity_rps: f64,
    /// The load generator's CPU in the probe, percent of its CPUs.
    pub probe_client_cpu_pct: f64,
    /// The highest rate the load generator can send on its CPUs, from the probe (a level
    /// above it is refused).
    pub client_max_rps: f64,
    /// One entry per level, in order.
    pub levels: Vec<RateLevel>,
}

/// One target rate against one server and endpoint: its runs merged.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct RateLevel {
    /// The level as asked for: `50%` of the capacity, or `5000/s`.
    pub label: String,
    /// Requests a second, the schedule's.
    pub target_rps: f64,
    /// Why the level was not run (a rate the load generator cannot send), when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Requests answered (or failed) a second: what the server let through.
    pub achieved_rps: f64,
    /// The achieved rate is under [`Rate::over_capacity_below`] of the target.
    pub over_capacity: bool,
    /// The load generator used [`Rate::client_bound_pct`] of its CPU or more: the level
    /// measured it as much as the server.
    pub client_bound: bool,
    /// Requests sent, all runs.
    pub requests: u64,
    /// Valid responses, percent.
    pub success_rate: f64,
    /// Requests sent a late threshold or more after their intended time.
    pub late: u64,
    /// Most connections busy at once.
    pub busy_max: usize,
    /// Latency from the intended send time: the corrected latency.
    pub latency_ms: Spectrum,
    /// Latency from the actual send: the service time a closed-loop tool reports.
    pub service_ms: Spectrum,
    /// Intended → actual send.
    pub lag_ms: Spectrum,
    /// The corrected latency at every percentile of [`crate::load::SPECTRUM`] and the maximum:
    /// `[percentile, milliseconds]`.
    pub distribution: Vec<[f64; 2]>,
    /// Failed requests by kind.
    pub errors: BTreeMap<String, u64>,
    /// The load generator's CPU, percent of its CPUs (median over the runs).
    pub client_cpu_pct: f64,
    /// What the sampler saw of the server (maxima over the runs).
    pub server: Sampled,
    /// Each run, in order.
    pub runs: Vec<RateRun>,
}

/// Latency percentiles to the fourth nine, milliseconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Spectrum {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// 99.99th percentile.
    pub p9999: f64,
    /// Slowest.
    pub max: f64,
}

/// One run of one level.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct RateRun {
    /// Requests answered (or failed) a second.
    pub achieved_rps: f64,
    /// Requests sent late.
    pub late: u64,
    /// Corrected latency.
    pub latency_ms: Spectrum,
    /// Service time.
    pub service_ms: Spectrum,
    /// Valid responses, percent.
    pub success_rate: f64,
    /// The load generator's CPU, percent of its CPUs.
    pub client_cpu_pct: f64,
    /// What the sampler saw of the server.
    pub server: Sampled,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(requests: u64, failed: u64, total_s: f64, rps: f64, cpu: Option<f64>) -> Run {
        Run {
            load: Figures {
                requests,
                total_s,
                requests_per_s: rps,
                average_s: total_s / 2.0,
                errors: BTreeMap::from([("io".to_owned(), failed)]),
                ..Figures::default()
            },
            server: Sampled {
                cpu_avg_pct: cpu,
                cpu_max_pct: cpu,
                rss_max_from: Some(RssFrom::PeakCounter),
                ..Sampled::default()
            },
            engine: None,
        }
    }

    #[test]
    fn repeated_runs_add_up() {
        let r = Repeated::of(&[
            run(100, 0, 1.0, 10.0, Some(50.0)),
            run(100, 10, 3.0, 30.0, None),
            run(200, 0, 2.0, 20.0, Some(70.0)),
        ]);
        assert_eq!((r.hits, r.success_rate), (390, 97.5));
        assert_eq!(
            (r.requests_per_s.median, r.requests_per_s.min),
            (20.0, 10.0)
        );
        assert_eq!((r.average_s, r.cpu_avg_pct), (1.0, Some(60.0)));
    }

    #[test]
    fn medians_of_runs_keep_errors_and_maxima() {
        let mut sampled = run(10, 1, 1.1, 9.0, Some(60.0));
        sampled.server.rss_max_from = Some(RssFrom::Readings);
        let runs = [
            run(10, 1, 1.2, 8.0, Some(50.0)),
            run(10, 1, 1.0, 10.0, Some(70.0)),
            sampled,
        ];
        let m = Run::median_of(&runs);
        assert_eq!((m.load.total_s, m.load.requests_per_s), (1.1, 9.0));
        assert_eq!(m.load.errors.get("io"), Some(&3));
        assert_eq!(m.load.requests, 10);
        assert!((m.load.success_rate - 90.0).abs() < 1e-9);
        assert_eq!(m.server.cpu_max_pct, Some(70.0));
        assert_eq!(
            m.server.rss_max_from,
            Some(RssFrom::Readings),
            "one sampled peak taints"
        );
        assert_eq!(Run::median_of(&runs[..1]), runs[0]);
    }

    #[test]
    fn the_json_of_a_level_is_flat_and_reads_back() {
        let level = Level {
            concurrency: 10,
            run: run(10, 0, 1.0, 10.0, Some(1.0)),
            runs: Vec::new(),
        };
        let json = serde_json::to_value(&level).unwrap();
        for key in [
            "concurrency",
            "requests",
            "requests_per_s",
            "cpu_max_pct",
            "rss_max_from",
        ] {
            assert!(json.get(key).is_some(), "{key} in {json}");
        }
        assert!(json.get("runs").is_none(), "no runs list for a single run");
        assert_eq!(serde_json::from_value::<Level>(json).unwrap(), level);
    }
}
