//! The rate section: capacity, then latency at fixed request rates.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::stats::mann_whitney::Comparison;

use crate::results::{Header, Machine, RateRun, RateWindow, Sampled, Spectrum, Transport};
use crate::stats::median;

/// The rate scenario: open-loop load, each request on a fixed schedule and its latency counted
/// from its intended send time (no coordinated omission), at fractions of each server's
/// capacity or at fixed rates.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// The protocol its requests went over.
    #[serde(flatten)]
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
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub header: Header,
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
    /// The achieved rate is under [`Section::over_capacity_below`] of the target.
    pub over_capacity: bool,
    /// The load generator used [`Section::client_bound_pct`] of its CPU or more: the level
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

impl RateLevel {
    /// The server's CPU per request, the median over the runs, microseconds.
    pub fn server_us_per_request(&self) -> Option<f64> {
        let each = self.server_us_each();
        (!each.is_empty()).then(|| median(&each))
    }

    /// What the machine did in its most disturbed run.
    pub fn machine(&self) -> Option<Machine> {
        Machine::worst(self.runs.iter().filter_map(|r| r.machine.as_ref()))
    }

    /// The server's CPU per request in each run, microseconds; none unless every run has it.
    pub fn server_us_each(&self) -> Vec<f64> {
        let each: Option<Vec<f64>> = self
            .runs
            .iter()
            .map(RateRun::server_us_per_request)
            .collect();
        each.unwrap_or_default()
    }
}
