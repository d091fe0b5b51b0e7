//! rate's report: its section of results.json, and what is drawn from it: tables, charts,
//! CSV files, its figures as points and its scorecard rows; its tables, as text and as CSV,
//! are in `table.rs`.

use super::table::csv_files;
use crate::scenario::kit::Compared;
use anyhow::Result;
use greet_model::plan::Metric;
use greet_model::results::{Frame, Machine, RateRun, RateWindow, Sampled, Spectrum, Transport};
use greet_report::charts::slug;
use greet_report::points::Point;
use greet_report::scorecard::{Entry, Row};
use greet_report::svg::{Line, LineChart, XAxis};
use greet_report::{Charts, Render};
use greet_stats::distinct;
use greet_stats::median;
use greet_stats::paired::Comparison;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The rate scenario: open-loop load, each request on a fixed schedule and its latency counted
/// from its intended send time (no coordinated omission), at fractions of the lowest capacity
/// among the servers (the same rates for every server) or at fixed rates.
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
    pub frame: Frame,
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

/// Per endpoint, p50 and p99 against the achieved rate, a colour per server (and on a ramp,
/// against each second's offered rate); per server and endpoint, the corrected latency by
/// percentile, a line per level.
impl Charts for Section {
    type Chart = LineChart;

    fn charts(&self) -> Vec<(String, LineChart)> {
        let mut out = Vec::new();
        let servers = distinct(self.servers.iter().map(|s| s.server.clone()));
        for endpoint in distinct(self.servers.iter().map(|s| s.endpoint.clone())) {
            let mut lines = Vec::new();
            for (colour, server) in servers.iter().enumerate() {
                let Some(record) = self
                    .servers
                    .iter()
                    .find(|s| &s.server == server && s.endpoint == endpoint)
                else {
                    continue;
                };
                let mut levels: Vec<_> = record
                    .levels
                    .iter()
                    .filter(|l| l.refused.is_none())
                    .collect();
                levels.sort_by(|a, b| a.achieved_rps.total_cmp(&b.achieved_rps));
                for (quantile, dashed) in [("p50", false), ("p99", true)] {
                    lines.push(Line {
                        name: format!("{server} {quantile}"),
                        points: levels
                            .iter()
                            .map(|l| {
                                let y = if dashed {
                                    l.latency_ms.p99
                                } else {
                                    l.latency_ms.p50
                                };
                                (l.achieved_rps, y)
                            })
                            .collect(),
                        colour,
                        dashed,
                    });
                }
            }
            out.push((
                format!("rate-{}.svg", slug(&endpoint)),
                LineChart {
                    title: format!("Latency against throughput: {endpoint}"),
                    x_label: "achieved requests/sec".into(),
                    y_label: "ms from the intended send (log)".into(),
                    x_axis: XAxis::Linear,
                    lines,
                },
            ));
        }
        out.extend(ramps(self, &servers));
        for record in &self.servers {
            let lines = record
                .levels
                .iter()
                .filter(|l| l.refused.is_none())
                .enumerate()
                .map(|(colour, l)| Line {
                    name: format!("{} ({:.0}/s)", l.label, l.achieved_rps),
                    points: l.distribution.iter().map(|[p, ms]| (*p, *ms)).collect(),
                    colour,
                    dashed: l.over_capacity,
                })
                .collect();
            out.push((
                format!(
                    "rate-{}-{}.svg",
                    slug(&record.server),
                    slug(&record.endpoint)
                ),
                LineChart {
                    title: format!(
                        "Latency by percentile: {} {}",
                        record.server, record.endpoint
                    ),
                    x_label: "percentile (dashed: over capacity)".into(),
                    y_label: "ms from the intended send (log)".into(),
                    x_axis: XAxis::Nines,
                    lines,
                },
            ));
        }
        out
    }
}

/// Per endpoint that ran a ramp, each second's p50 and p99 against the rate offered in it, a
/// colour per server: where latency leaves the floor is the knee.
fn ramps(rate: &Section, servers: &[String]) -> Vec<(String, LineChart)> {
    let mut out = Vec::new();
    for endpoint in distinct(rate.servers.iter().map(|s| s.endpoint.clone())) {
        let mut lines = Vec::new();
        for (colour, server) in servers.iter().enumerate() {
            let ramped = rate
                .servers
                .iter()
                .filter(|s| &s.server == server && s.endpoint == endpoint)
                .flat_map(|s| &s.levels)
                .find(|l| !l.windows.is_empty());
            let Some(level) = ramped else { continue };
            let mut seconds: Vec<_> = level
                .windows
                .iter()
                .filter(|w| w.latency_ms.p50 > 0.0)
                .collect();
            seconds.sort_by(|a, b| a.offered_rps.total_cmp(&b.offered_rps));
            for (quantile, dashed) in [("p50", false), ("p99", true)] {
                lines.push(Line {
                    name: format!("{server} {quantile}"),
                    points: seconds
                        .iter()
                        .map(|w| {
                            let l = &w.latency_ms;
                            (w.offered_rps, if dashed { l.p99 } else { l.p50 })
                        })
                        .collect(),
                    colour,
                    dashed,
                });
            }
        }
        if !lines.is_empty() {
            out.push((
                format!("rate-ramp-{}.svg", slug(&endpoint)),
                LineChart {
                    title: format!(
                        "Latency against offered rate, each second of the ramp: {endpoint}"
                    ),
                    x_label: "requests/sec offered in the second".into(),
                    y_label: "ms from the intended send (log)".into(),
                    x_axis: XAxis::Linear,
                    lines,
                },
            ));
        }
    }
    out
}

impl Render for Section {
    fn words(&self) -> Vec<String> {
        let mut out = Vec::new();
        for endpoint in distinct(self.servers.iter().map(|s| s.endpoint.as_str())) {
            let fractions = self.servers.iter().any(|s| {
                s.endpoint == endpoint && s.levels.iter().any(|l| l.label.contains("% ("))
            });
            let servers = self
                .servers
                .iter()
                .filter(|s| s.endpoint == endpoint)
                .count();
            if let (true, true, Some((server, capacity))) = (
                fractions,
                servers > 1,
                super::run::lowest_capacity(&self.servers, endpoint),
            ) {
                out.push(format!(
                    "rate loaded every server at the same rates on {endpoint}: fractions of the \
                     lowest capacity, {server}'s {capacity:.0}/s."
                ));
            }
        }
        out
    }

    fn csv(&self) -> Result<Vec<(String, String)>> {
        csv_files(self)
    }

    fn points(&self) -> Vec<Point> {
        let mut out = Vec::new();
        for s in &self.servers {
            for level in s.levels.iter().filter(|l| l.refused.is_none()) {
                let runs = |f: fn(&RateRun) -> f64| level.runs.iter().map(f).collect::<Vec<_>>();
                let figures = [
                    // Valid answers a second, as everywhere else.
                    (
                        Metric::Throughput,
                        runs(|r| r.achieved_rps * r.success_rate / 100.0),
                    ),
                    (Metric::P50, runs(|r| r.latency_ms.p50)),
                    (Metric::P99, runs(|r| r.latency_ms.p99)),
                    (Metric::P999, runs(|r| r.latency_ms.p999)),
                    (Metric::Success, runs(|r| r.success_rate)),
                    (Metric::CpuPerRequest, level.server_us_each()),
                ];
                out.extend(Point::each(&s.server, (&s.endpoint, &level.label), figures));
            }
        }
        out
    }

    fn scorecard(&self) -> Vec<Row> {
        let mut out = Vec::new();
        let keys = distinct(self.servers.iter().flat_map(|s| {
            s.levels
                .iter()
                .filter(|l| l.refused.is_none())
                .map(move |l| (s.endpoint.as_str(), l.label.as_str()))
        }));
        for (endpoint, label) in keys {
            let levels: Vec<(&str, &RateLevel)> = self
                .servers
                .iter()
                .filter(|s| s.endpoint == endpoint)
                .filter_map(|s| {
                    let l = s
                        .levels
                        .iter()
                        .find(|l| l.label == label && l.refused.is_none())?;
                    Some((s.server.as_str(), l))
                })
                .collect();
            // Every server at the same rate: a fraction is of the lowest capacity.
            let at = label;
            out.push(Row::new(
                format!("{endpoint} at {at}: CPU per request"),
                Metric::CpuPerRequest,
                levels
                    .iter()
                    .map(|(s, l)| Entry::new(s, l.server_us_each()))
                    .collect(),
            ));
            out.push(Row::new(
                format!("{endpoint} at {at}: p99"),
                Metric::P99,
                levels
                    .iter()
                    .map(|(s, l)| {
                        // A latency is of valid answers: a run without one has none.
                        let answered = l.runs.iter().all(|r| r.success_rate > 0.0);
                        let p99 = l.runs.iter().map(|r| r.latency_ms.p99);
                        Entry {
                            cpu_us: l.server_us_per_request(),
                            ..Entry::new(s, if answered { p99.collect() } else { Vec::new() })
                        }
                    })
                    .collect(),
            ));
        }
        out
    }
}

impl Compared for Section {
    /// Every comparison it makes: one family, judged together.
    fn comparisons(&mut self) -> Vec<&mut greet_stats::paired::Comparison> {
        self.comparisons.iter_mut().collect()
    }
}
