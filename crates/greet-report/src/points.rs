//! Every figure of a run, flat: which scenario, server, endpoint and cell (level, shape,
//! setting) measured it, which [`Metric`] it is, and its value in each run. What thresholds
//! hold to and what `compare` pairs across two runs. Each scenario lists its own
//! ([`crate::Render::points`]); this module holds their shape.

use serde::{Deserialize, Serialize};

use greet_model::plan::Metric;
use greet_model::results::Trial;

/// One figure of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The scenario that measured it.
    pub scenario: String,
    /// The server.
    pub server: String,
    /// The path loaded, where the scenario names one (a scenario that loads one path only
    /// names none).
    pub endpoint: Option<String>,
    /// Where else in the scenario: `c=2700`, `4x1000`, `postgres --workers 1 --db-pool 4`…;
    /// empty for a server's own figures (start-up, peak memory).
    pub cell: String,
    /// What it measures.
    pub metric: Metric,
    /// Its value in each run, in the metric's unit.
    pub values: Vec<f64>,
}

impl Point {
    /// Where it was measured, as the tables name it: `/greetings c=2700`.
    pub fn at(&self) -> String {
        join(self.endpoint.as_deref(), &self.cell)
    }

    /// What identifies it across two runs; without its endpoint where `compare --vary
    /// endpoint` pairs one path with another.
    pub fn key(&self, endpoint: bool) -> (String, String, Option<String>, String, Metric) {
        (
            self.scenario.clone(),
            self.server.clone(),
            self.endpoint.clone().filter(|_| endpoint),
            self.cell.clone(),
            self.metric,
        )
    }
}

impl Point {
    /// Server `server`'s figures at `(endpoint, cell)` (either may be empty), one point a
    /// figure that was measured in every run and is finite; the scenario is named by the
    /// caller ([`crate::points()`]).
    pub fn each(
        server: &str,
        (endpoint, cell): (&str, &str),
        figures: impl IntoIterator<Item = (Metric, Vec<f64>)>,
    ) -> Vec<Point> {
        figures
            .into_iter()
            .filter(|(_, values)| !values.is_empty() && values.iter().all(|v| v.is_finite()))
            .map(|(metric, values)| Point {
                scenario: String::new(),
                server: server.to_owned(),
                endpoint: (!endpoint.is_empty()).then(|| endpoint.to_owned()),
                cell: cell.to_owned(),
                metric,
                values,
            })
            .collect()
    }
}

/// `endpoint cell`, either part possibly absent.
pub fn join(endpoint: Option<&str>, cell: &str) -> String {
    match endpoint {
        Some(e) if !cell.is_empty() => format!("{e} {cell}"),
        Some(e) => e.to_owned(),
        None => cell.to_owned(),
    }
}

/// What each run of one load says: its total, throughput, latencies, success, and the
/// server's peak memory and CPU where they were sampled.
pub fn load_figures(runs: &[Trial]) -> Vec<(Metric, Vec<f64>)> {
    let each = |f: &dyn Fn(&Trial) -> f64| runs.iter().map(f).collect::<Vec<_>>();
    let sampled = |f: &dyn Fn(&Trial) -> Option<f64>| {
        let values: Vec<f64> = runs.iter().filter_map(f).collect();
        if values.len() == runs.len() {
            values
        } else {
            Vec::new()
        }
    };
    // Latencies are of valid responses: a run without one has none (its tally says 0), so a
    // server answering only errors names no latency a threshold could hold as fast.
    let latency = |f: &dyn Fn(&Trial) -> f64| {
        if runs.iter().all(|r| r.load.ok() > 0) {
            each(f)
        } else {
            Vec::new()
        }
    };
    vec![
        (Metric::Total, each(&|r| r.load.total_s)),
        (Metric::Throughput, each(&|r| r.load.requests_per_s)),
        (Metric::P50, latency(&|r| r.load.latency_ms.p50)),
        (Metric::P99, latency(&|r| r.load.latency_ms.p99)),
        (Metric::P999, latency(&|r| r.load.latency_ms.p999)),
        (Metric::Success, each(&|r| r.load.success_rate)),
        (Metric::Rss, sampled(&|r| r.server.rss_max_mib)),
        (Metric::Cpu, sampled(&|r| r.server.cpu_max_pct)),
        (
            Metric::CpuPerRequest,
            sampled(&|r| r.server_us_per_request()),
        ),
    ]
}
