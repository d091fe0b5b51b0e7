//! The rate section: capacity, then latency at fixed request rates.

use std::collections::BTreeMap;

use greet_load::{Tally, SPECTRUM};
use serde::{Deserialize, Serialize};

use crate::stats::mann_whitney::Comparison;

use super::run::Sampled;
use super::{Failure, Transport};

/// The rate scenario: open-loop load, each request on a fixed schedule and its latency counted
/// from its intended send time (no coordinated omission), at fractions of each server's
/// capacity or at fixed rates.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Rate {
    /// The protocol its requests went over.
    #[serde(flatten, default)]
    pub transport: Transport,
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
    /// On a swarm: the node its task ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
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
    /// The corrected latency at every percentile of [`greet_load::SPECTRUM`] and the maximum:
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
    /// On a ramp, each second of it (runs merged): the time series.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<RateWindow>,
}

/// One second of a ramp, its runs merged.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct RateWindow {
    /// Seconds from the ramp's start to this second's.
    pub at_s: u64,
    /// Requests intended in this second, a second (mean over the runs).
    pub offered_rps: f64,
    /// Requests answered (or failed) in this second, a second (mean over the runs).
    pub achieved_rps: f64,
    /// Of the requests intended in it, those sent late (all runs).
    pub late: u64,
    /// Of the requests intended in it, valid responses, percent (0 in a second past the
    /// schedule's end, where answers only drain).
    pub success_rate: f64,
    /// Their latency from the intended send.
    pub latency_ms: Spectrum,
}

impl RateWindow {
    /// Second `at` of a ramp, from its window over `runs` runs merged (rates are means per
    /// run).
    pub fn of(at: usize, window: &greet_load::Window, runs: f64) -> Self {
        Self {
            at_s: at as u64,
            offered_rps: window.corrected.requests() as f64 / runs,
            achieved_rps: window.completed as f64 / runs,
            late: window.late,
            success_rate: window.corrected.figures().success_rate,
            latency_ms: Spectrum::of(&window.corrected),
        }
    }
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

impl Spectrum {
    /// The percentile `p` of the ones kept (50, 90, 99, 99.9), as an objective names it.
    pub fn at(&self, p: f64) -> f64 {
        if p <= 50.0 {
            self.p50
        } else if p <= 90.0 {
            self.p90
        } else if p <= 99.0 {
            self.p99
        } else {
            self.p999
        }
    }

    /// The percentiles of a tally's valid responses.
    pub fn of(tally: &Tally) -> Self {
        let values = tally.spectrum_ms();
        let at = |q: f64| {
            SPECTRUM
                .iter()
                .position(|&s| s == q)
                .and_then(|i| values.get(i))
                .copied()
                .unwrap_or(0.0)
        };
        Self {
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            p999: at(0.999),
            p9999: at(0.9999),
            max: values.last().copied().unwrap_or(0.0),
        }
    }
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
    /// Each agent's own figures, when the schedule was split over several (`--agents`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<super::AgentRun>,
}
