//! What an open-loop (paced) load records: one run of a level ([`RateRun`]), its latency
//! percentiles ([`Spectrum`]), and a ramp's seconds ([`RateWindow`]). The rate and capacity
//! scenarios both keep them.

use greet_load::{Tally, SPECTRUM};
use serde::{Deserialize, Serialize};

use super::trial::{us_per_request_at, AgentRun, Machine, Sampled};

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
    pub agents: Vec<AgentRun>,
    /// What else the machine did meanwhile, where the harness's host ran the load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<Machine>,
}

impl RateRun {
    /// The server's CPU per request at this rate, microseconds: its mean CPU over a second
    /// over the requests answered in one. At a fixed rate this is the steadiest figure a
    /// shared machine gives: a stall delays requests but adds no CPU to them.
    pub fn server_us_per_request(&self) -> Option<f64> {
        us_per_request_at(self.server.cpu_avg_pct?, self.achieved_rps)
    }
}
