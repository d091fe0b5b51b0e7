//! Every figure of a run, flat: which scenario, server, endpoint and place (level, shape,
//! setting) measured it, which [`Metric`] it is, and its value in each run. What thresholds hold to
//! and what `compare` pairs across two runs.

use serde::{Deserialize, Serialize};

use crate::plan::{Metric, ScenarioKind};
use crate::results::{Results, Run};

/// One figure of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Point {
    /// The scenario that measured it.
    pub(crate) scenario: String,
    /// The server.
    pub(crate) server: String,
    /// The path loaded, where the scenario names one (the ladder, soak, sweep, business,
    /// rate; not loops, which only loads `/greetings`).
    pub(crate) endpoint: Option<String>,
    /// Where else in the scenario: `c=2700`, `4x1000`, `postgres --workers 1 --db-pool 4`…;
    /// empty for a server's own figures (start-up, peak memory).
    pub(crate) place: String,
    /// What it measures.
    pub(crate) metric: Metric,
    /// Its value in each run, in the metric's unit.
    pub(crate) values: Vec<f64>,
}

impl Point {
    /// Where it was measured, as the tables name it: `/greetings c=2700`.
    pub(crate) fn at(&self) -> String {
        join(self.endpoint.as_deref(), &self.place)
    }

    /// What identifies it across two runs; without its endpoint where `compare --vary
    /// endpoint` pairs one path with another.
    pub(crate) fn key(&self, endpoint: bool) -> (String, String, Option<String>, String, Metric) {
        (
            self.scenario.clone(),
            self.server.clone(),
            self.endpoint.clone().filter(|_| endpoint),
            self.place.clone(),
            self.metric,
        )
    }
}

/// `endpoint place`, either part possibly absent.
pub(crate) fn join(endpoint: Option<&str>, place: &str) -> String {
    match endpoint {
        Some(e) if !place.is_empty() => format!("{e} {place}"),
        Some(e) => e.to_owned(),
        None => place.to_owned(),
    }
}

/// Every figure of `results`, scenario by scenario.
pub(crate) fn points(results: &Results) -> Vec<Point> {
    let mut out = Vec::new();
    for kind in ScenarioKind::ALL {
        let mut add = |server: &str, at: (&str, String), metric: Metric, values: Vec<f64>| {
            if !values.is_empty() && values.iter().all(|v| v.is_finite()) {
                out.push(Point {
                    scenario: kind.name().to_owned(),
                    server: server.to_owned(),
                    endpoint: (!at.0.is_empty()).then(|| at.0.to_owned()),
                    place: at.1,
                    metric,
                    values,
                });
            }
        };
        match kind {
            ScenarioKind::Ladder => {
                for s in results.ladder.iter().flat_map(|l| &l.servers) {
                    // A server may be loaded on two endpoints in one ladder (`axum:/greetings/blocking`).
                    let at = || (s.endpoint.as_str(), String::new());
                    let one = |v: Option<f64>| v.into_iter().collect::<Vec<_>>();
                    add(
                        &s.name,
                        at(),
                        Metric::Startup,
                        one(s.startup_s.map(|v| v * 1e3)),
                    );
                    add(&s.name, at(), Metric::Rss, one(s.rss_max_mib));
                    add(&s.name, at(), Metric::Cpu, one(s.cpu_max_pct));
                    for level in &s.levels {
                        let runs = if level.runs.is_empty() {
                            std::slice::from_ref(&level.run)
                        } else {
                            &level.runs[..]
                        };
                        for (metric, values) in load_figures(runs) {
                            let at = (s.endpoint.as_str(), format!("c={}", level.concurrency));
                            add(&s.name, at, metric, values);
                        }
                    }
                }
            }
            ScenarioKind::Loops => {
                for shape in results.loops.iter().flat_map(|l| &l.shapes) {
                    for s in &shape.servers {
                        let at = ("", format!("{}x{}", shape.users, shape.loops));
                        for (metric, values) in load_figures(&s.runs) {
                            add(&s.name, at.clone(), metric, values);
                        }
                    }
                }
            }
            ScenarioKind::Soak => {
                for c in results.soak.iter().flat_map(|s| &s.cells) {
                    let at = (c.endpoint.as_str(), format!("c={}", c.concurrency));
                    for (metric, values) in load_figures(&c.runs) {
                        add(&c.server, at.clone(), metric, values);
                    }
                }
            }
            ScenarioKind::Sweep => {
                for c in results.sweep.iter().flat_map(|s| &s.cells) {
                    let at = (c.endpoint.as_str(), c.setting.label());
                    for (metric, values) in load_figures(&c.runs) {
                        add(&c.server, at.clone(), metric, values);
                    }
                }
            }
            ScenarioKind::Business => {
                for c in results.business.iter().flat_map(|b| &b.cells) {
                    let at = (
                        c.endpoint.as_str(),
                        format!("{} {}", c.store, c.setting.label()),
                    );
                    for (metric, values) in load_figures(&c.runs) {
                        add(&c.server, at.clone(), metric, values);
                    }
                }
            }
            ScenarioKind::TechEmpower => {
                for c in results.techempower.iter().flat_map(|t| &t.cells) {
                    let at = (c.target.as_str(), c.store.clone());
                    for (metric, values) in load_figures(&c.runs) {
                        add(&c.server, at.clone(), metric, values);
                    }
                }
            }
            ScenarioKind::Protocols => {
                for c in results.protocols.iter().flat_map(|p| &p.cells) {
                    let at = (greet_core::paths::GREETINGS, c.protocol.to_string());
                    for (metric, values) in load_figures(&c.runs) {
                        add(&c.server, at.clone(), metric, values);
                    }
                }
            }
            ScenarioKind::Capacity => {
                for s in results.capacity.iter().flat_map(|c| &c.servers) {
                    // Each bisection's capacity: the highest rate it held, a second.
                    let at = match s.streams {
                        1 => (s.endpoint.as_str(), "capacity".to_owned()),
                        n => (s.endpoint.as_str(), format!("capacity, {n} streams")),
                    };
                    add(&s.server, at, Metric::Throughput, s.searches.clone());
                }
            }
            ScenarioKind::Rate => {
                for s in results.rate.iter().flat_map(|r| &r.servers) {
                    for level in s.levels.iter().filter(|l| l.refused.is_none()) {
                        let at = (s.endpoint.as_str(), level.label.clone());
                        let runs = |f: fn(&crate::results::RateRun) -> f64| {
                            level.runs.iter().map(f).collect::<Vec<_>>()
                        };
                        add(
                            &s.server,
                            at.clone(),
                            Metric::Throughput,
                            // Valid answers a second, as everywhere else.
                            runs(|r| r.achieved_rps * r.success_rate / 100.0),
                        );
                        add(
                            &s.server,
                            at.clone(),
                            Metric::P50,
                            runs(|r| r.latency_ms.p50),
                        );
                        add(
                            &s.server,
                            at.clone(),
                            Metric::P99,
                            runs(|r| r.latency_ms.p99),
                        );
                        add(
                            &s.server,
                            at.clone(),
                            Metric::P999,
                            runs(|r| r.latency_ms.p999),
                        );
                        add(&s.server, at, Metric::Success, runs(|r| r.success_rate));
                    }
                }
            }
        }
    }
    out
}

/// What each run of one load says: its total, throughput, latencies, success, and the
/// server's peak memory and CPU where they were sampled.
fn load_figures(runs: &[Run]) -> Vec<(Metric, Vec<f64>)> {
    let each = |f: &dyn Fn(&Run) -> f64| runs.iter().map(f).collect::<Vec<_>>();
    let sampled = |f: &dyn Fn(&Run) -> Option<f64>| {
        let values: Vec<f64> = runs.iter().filter_map(f).collect();
        if values.len() == runs.len() {
            values
        } else {
            Vec::new()
        }
    };
    // Latencies are of valid responses: a run without one has none (its tally says 0), so a
    // server answering only errors names no latency a threshold could hold as fast.
    let latency = |f: &dyn Fn(&Run) -> f64| {
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
    ]
}
