//! workloads's report: its section of results.json, and what is drawn from it: tables, charts,
//! CSV files, its figures as points and its scorecard rows.

use serde::{Deserialize, Serialize};

use super::Profile;
use crate::scenario::kit::Compared;
use anyhow::Result;
use greet_model::plan::Metric;
use greet_model::results::{Frame, Trial};
use greet_report::charts::series;
use greet_report::points::{load_figures, Point};
use greet_report::scorecard::{Entry, Row};
use greet_report::svg::Chart;
use greet_report::table::{
    comparison_notes, failure_notes, grouped, opt, spread, undecided, Table,
};
use greet_report::{csv, Charts, Render, Tables};
use greet_stats::distinct;
use greet_stats::paired::Comparison;
use greet_stats::Summary;

/// The workloads scenario: every profile on every server, a fresh server per run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// `--workers` given to the servers.
    pub workers: usize,
    /// Users (keep-alive connections, or WebSockets) of each load.
    pub concurrency: usize,
    /// Measured part of each run, seconds.
    pub duration_s: f64,
    /// Unmeasured load before it, seconds.
    pub warmup_s: f64,
    /// Each upload's size, bytes.
    pub upload_bytes: u64,
    /// The upload's slices, seconds (0 in a file from before they could be longer).
    #[serde(default)]
    pub upload_slice_s: f64,
    /// One entry per server and profile.
    pub cells: Vec<WorkloadCell>,
    /// Per profile, every pair of servers on their runs' throughputs.
    pub comparisons: Vec<ProfileComparisons>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub frame: Frame,
}

/// One server on one profile.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkloadCell {
    /// The server.
    pub server: String,
    /// The profile.
    pub profile: Profile,
    /// Each run, in order.
    pub runs: Vec<Trial>,
    /// The load generator's CPU per request in each run, microseconds.
    pub client_cpu_us_each: Vec<f64>,
    /// Throughput over the runs.
    pub requests_per_s: Summary,
    /// Its median throughput over the best server's of its league (at the defaults, or with
    /// knobs) on this profile.
    pub share_of_best: Option<f64>,
    /// Valid answers, percent of all runs' requests.
    pub success_rate: f64,
    /// Median of the runs' median latency, milliseconds.
    pub p50_ms: f64,
    /// Median of the runs' 99th percentile latency, milliseconds.
    pub p99_ms: f64,
    /// Median of the runs' bytes per answer, as they came (compressed where they were).
    pub bytes_per_answer: Option<f64>,
    /// Median of the runs' server CPU per request (user and system time over the load, over
    /// its requests), microseconds.
    pub server_cpu_us: Option<f64>,
    /// Median of the runs' load generator CPU per request, microseconds.
    pub client_cpu_us: Option<f64>,
    /// Highest resident memory of the server in any run, MiB.
    pub rss_max_mib: Option<f64>,
}

impl WorkloadCell {
    /// An empty cell of `server` on `profile`.
    pub fn new(server: String, profile: Profile) -> Self {
        Self {
            server,
            profile,
            runs: Vec::new(),
            client_cpu_us_each: Vec::new(),
            requests_per_s: Summary::default(),
            share_of_best: None,
            success_rate: 0.0,
            p50_ms: 0.0,
            p99_ms: 0.0,
            bytes_per_answer: None,
            server_cpu_us: None,
            client_cpu_us: None,
            rss_max_mib: None,
        }
    }
}

/// The servers compared on one profile.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProfileComparisons {
    /// The profile.
    pub profile: Profile,
    /// Every pair of servers.
    pub comparisons: Vec<Comparison>,
}

/// One row per profile and server, profiles in their order.
impl Tables for Section {
    fn tables(&self) -> Vec<Table> {
        let profiles = distinct(self.cells.iter().map(|c| c.profile));
        let rows = profiles
            .iter()
            .flat_map(|&p| self.cells.iter().filter(move |c| c.profile == p))
            .filter(|c| !c.runs.is_empty())
            .map(|c| {
                vec![
                    c.profile.to_string(),
                    c.server.clone(),
                    if self.frame.repeats > 1 {
                        spread(&c.requests_per_s)
                    } else {
                        format!("{:.1}", c.requests_per_s.median)
                    },
                    opt(c.share_of_best, 2),
                    format!("{:.3}", c.p50_ms),
                    format!("{:.3}", c.p99_ms),
                    opt(c.bytes_per_answer, 0),
                    opt(c.server_cpu_us, 1),
                    opt(c.client_cpu_us, 1),
                    opt(c.rss_max_mib, 1),
                    format!("{:.2}", c.success_rate),
                ]
            })
            .collect();
        let mut table = Table::new(
            format!(
                "Workloads: {} users each, {:.2} s slices after {:.2} s warm-up, {} blocks or more \
                 per profile (each server started once a profile), --workers {}, uploads of {} \
                 bytes{}",
                self.concurrency,
                self.duration_s,
                self.warmup_s,
                self.frame.repeats,
                self.workers,
                self.upload_bytes,
                if self.upload_slice_s > self.duration_s {
                    format!(" in {:.2} s slices", self.upload_slice_s)
                } else {
                    String::new()
                },
            ),
            &[
                "Profile",
                "Application",
                "Requests/sec",
                "Share of best",
                "p50 (ms)",
                "p99 (ms)",
                "Bytes/answer",
                "Server CPU/req (µs)",
                "Client CPU/req (µs)",
                "Max memory (MiB)",
                "Success(%)",
            ],
            grouped(rows, 1),
        );
        table.notes = self
            .comparisons
            .iter()
            .flat_map(|c| {
                let lines = comparison_notes(&c.comparisons);
                lines
                    .into_iter()
                    .map(move |line| format!("{}: {line}", c.profile))
            })
            .collect();
        table.notes.extend(undecided(
            self.comparisons.iter().flat_map(|c| &c.comparisons),
        ));
        table.notes.extend(failure_notes(&self.frame.failures));
        vec![table]
    }
}

/// Server CPU per request against the cheapest server's, per profile (the throughput against
/// the best's, with its interval, is the report's verdicts chart).
impl Charts for Section {
    type Chart = Chart;

    fn charts(&self) -> Vec<(String, Chart)> {
        let names = distinct(self.cells.iter().map(|c| c.server.clone()));
        let profiles = distinct(self.cells.iter().map(|c| c.profile));
        let groups: Vec<String> = profiles.iter().map(ToString::to_string).collect();
        let find = |name: &str, group: &String| {
            self.cells
                .iter()
                .find(|c| c.server == name && c.profile.name() == group && !c.runs.is_empty())
        };
        // Per profile, against the cheapest: an upload's thousands of µs would flatten the rest.
        let cheapest = |group: &String| {
            self.cells
                .iter()
                .filter(|c| c.profile.name() == group)
                .filter_map(|c| c.server_cpu_us)
                .filter(|us| *us > 0.0)
                .fold(f64::INFINITY, f64::min)
        };
        let cpu = Chart {
            title: "Workloads: server CPU per request, against the cheapest server's per profile"
                .into(),
            unit: "times the cheapest server's CPU per request (medians; 1 = the cheapest)".into(),
            series: series(&names, &groups, find, |c| {
                let low = cheapest(&c.profile.name().to_owned());
                c.server_cpu_us
                    .filter(|_| low.is_finite())
                    .map_or(0.0, |us| us / low)
            }),
            whiskers: Vec::new(),
            groups,
        };
        vec![("workloads-cpu.svg".into(), cpu)]
    }
}

impl Render for Section {
    fn csv(&self) -> Result<Vec<(String, String)>> {
        let rows = self.cells.iter().flat_map(|c| {
            csv::CellKey::rows(&c.server, c.profile.path(), c.profile.to_string(), &c.runs)
        });
        Ok(vec![("workloads.csv".to_owned(), csv::write(rows)?)])
    }

    fn points(&self) -> Vec<Point> {
        self.cells
            .iter()
            .flat_map(|c| {
                let at = (c.profile.path(), c.profile.name());
                Point::each(&c.server, at, load_figures(&c.runs))
            })
            .collect()
    }

    fn scorecard(&self) -> Vec<Row> {
        distinct(self.cells.iter().map(|c| c.profile))
            .into_iter()
            .map(|profile| {
                Row::new(
                    format!("{} throughput", profile.name()),
                    Metric::Throughput,
                    self.cells
                        .iter()
                        .filter(|c| c.profile == profile)
                        .map(|c| Entry::throughput(&c.server, &c.runs))
                        .collect(),
                )
            })
            .collect()
    }
}

impl Compared for Section {
    /// Every comparison it makes: one family, judged together.
    fn comparisons(&mut self) -> Vec<&mut greet_stats::paired::Comparison> {
        self.comparisons
            .iter_mut()
            .flat_map(|c| &mut c.comparisons)
            .collect()
    }
}
