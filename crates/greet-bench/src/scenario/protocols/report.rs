//! protocols's report: its section of results.json, and what is drawn from it: tables, charts,
//! CSV files, its figures as points and its scorecard rows.

use self::case as protocol_case;
use crate::scenario::kit::Compared;
use anyhow::Result;
use greet_model::plan::Metric;
use greet_model::results::{Frame, Gain, Trial};
use greet_probe::Protocol;
use greet_report::charts::{series, whiskers};
use greet_report::points::load_figures;
use greet_report::points::Point;
use greet_report::scorecard::{Entry, Row};
use greet_report::svg::Chart;
use greet_report::table::{comparison_notes, failure_notes, grouped, opt, undecided, Table};
use greet_report::{csv, Charts, Render, Tables};
use greet_stats::distinct;
use greet_stats::paired::Comparison;
use greet_stats::Summary;
use serde::{Deserialize, Serialize};

/// The protocols scenario: keep-alive load at delay 0 over each protocol, a fresh server per
/// run, repeats outermost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// The protocols, in order.
    pub protocols: Vec<Protocol>,
    /// `--streams`: users per HTTP/2 connection (the first, when it is a list).
    pub streams: usize,
    /// `--streams` as given: each HTTP/2 protocol is measured at each.
    #[serde(default)]
    pub streams_each: Vec<usize>,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// Connections (users) of each load.
    pub concurrency: usize,
    /// Measured part of each run, seconds.
    pub duration_s: f64,
    /// Unmeasured load before it, seconds.
    pub warmup_s: f64,
    /// One entry per server and protocol.
    pub cells: Vec<ProtocolCell>,
    /// Per server and protocol other than HTTP/1.1: its throughput against its own HTTP/1.1.
    pub of_http1: Vec<ProtocolGain>,
    /// Per protocol, every pair of servers on their runs' fractions of their own HTTP/1.1
    /// (which server keeps more of its HTTP/1.1 over it).
    pub comparisons: Vec<ProtocolComparisons>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub frame: Frame,
}

/// One server over one protocol.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ProtocolCell {
    /// The server.
    pub server: String,
    /// `http1`, `h2c`, `https` or `h2`.
    pub protocol: Protocol,
    /// Users sharing an HTTP/2 connection; 1 over HTTP/1.1.
    #[serde(default = "one")]
    pub streams: usize,
    /// Each run, in order.
    pub runs: Vec<Trial>,
    /// Throughput over the runs.
    pub requests_per_s: Summary,
    /// Valid responses, percent of all runs' requests.
    pub success_rate: f64,
    /// Median of the runs' mean server CPU, percent of one CPU.
    pub cpu_avg_pct: Option<f64>,
}

/// A server's throughput over a protocol against its own over HTTP/1.1.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProtocolGain {
    /// The server.
    pub server: String,
    /// The protocol.
    pub protocol: Protocol,
    /// Users sharing an HTTP/2 connection.
    #[serde(default = "one")]
    pub streams: usize,
    /// Median over the protocol / median over HTTP/1.1, with the test between the runs.
    #[serde(flatten)]
    pub gain: Gain,
}

/// The servers compared over one protocol.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ProtocolComparisons {
    /// The protocol.
    pub protocol: Protocol,
    /// Users sharing an HTTP/2 connection.
    #[serde(default = "one")]
    pub streams: usize,
    /// Every pair of servers.
    pub comparisons: Vec<Comparison>,
}

/// A protocol at a stream count, as tables, charts and CSV name it: `h2c`, or
/// `h2c, 10 streams` where HTTP/2 connections are shared.
pub(crate) fn case(protocol: Protocol, streams: usize) -> String {
    if streams > 1 {
        format!("{protocol}, {streams} streams")
    } else {
        protocol.to_string()
    }
}

impl ProtocolCell {
    /// Its protocol and stream count: `h2c`, or `h2c, 10 streams`.
    pub fn case(&self) -> String {
        case(self.protocol, self.streams)
    }
}

impl Section {
    /// Every protocol at every stream count it is measured at, in order: HTTP/2 at each of
    /// `streams_each` (or `streams`), the others at 1.
    pub fn cases(&self) -> Vec<(Protocol, usize)> {
        let each = if self.streams_each.is_empty() {
            vec![self.streams.max(1)]
        } else {
            self.streams_each.clone()
        };
        cases(&self.protocols, &each)
    }
}

/// `protocols` each at every one of `streams` over HTTP/2, at 1 otherwise.
pub(crate) fn cases(protocols: &[Protocol], streams: &[usize]) -> Vec<(Protocol, usize)> {
    protocols
        .iter()
        .flat_map(|&p| {
            let each = if p.http2() { streams } else { &[1][..] };
            each.iter().map(move |&n| (p, n))
        })
        .collect()
}

fn one() -> usize {
    1
}

/// One row per server and protocol; the notes compare the servers per protocol.
impl Tables for Section {
    fn tables(&self) -> Vec<Table> {
        let rows = self
            .cells
            .iter()
            .filter(|c| !c.runs.is_empty())
            .map(|cell| {
                let gain = self.of_http1.iter().find(|g| {
                    (&g.server, g.protocol, g.streams)
                        == (&cell.server, cell.protocol, cell.streams)
                });
                vec![
                    cell.server.clone(),
                    cell.case(),
                    format!("{:.1}", cell.requests_per_s.median),
                    format!(
                        "{:.1}-{:.1}",
                        cell.requests_per_s.min, cell.requests_per_s.max
                    ),
                    format!("{:.2}", cell.success_rate),
                    opt(cell.cpu_avg_pct, 1),
                    gain.map_or("1".to_owned(), |g| format!("{:.3}", g.gain.gain)),
                    gain.map_or("-".to_owned(), |g| {
                        format!(
                            "{} {}",
                            g.gain.comparison.word().describe(),
                            g.gain.comparison.judged.show()
                        )
                    }),
                ]
            })
            .collect();
        let mut table = Table::new(
            format!(
                "Protocols: zero delay, {} keep-alive connections{}, {:.2} s measured after {:.2} s \
                 warm-up, {} blocks or more (each server started once a protocol), --workers {}",
                self.concurrency,
                if !self.cases().iter().any(|c| c.1 > 1) {
                    String::new()
                } else if self.streams_each.len() > 1 {
                    " (HTTP/2 at each stream count)".into()
                } else {
                    format!(" ({} to an HTTP/2 connection)", self.streams)
                },
                self.duration_s,
                self.warmup_s,
                self.frame.repeats,
                self.workers,
            ),
            &[
                "Application",
                "Protocol",
                "Requests/sec",
                "min-max",
                "Success(%)",
                "CPU avg(%)",
                "of its HTTP/1.1",
                "vs its HTTP/1.1",
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
                    .map(move |line| format!("{}: {line}", protocol_case(c.protocol, c.streams)))
            })
            .collect();
        table.notes.extend(undecided(
            self.comparisons.iter().flat_map(|c| &c.comparisons),
        ));
        table.notes.extend(failure_notes(&self.frame.failures));
        vec![table]
    }
}

/// Throughput per protocol (groups), a bar per server.
impl Charts for Section {
    type Chart = Chart;

    fn charts(&self) -> Vec<(String, Chart)> {
        let names = distinct(self.cells.iter().map(|c| c.server.clone()));
        let groups: Vec<String> = self
            .cases()
            .into_iter()
            .map(|(p, streams)| protocol_case(p, streams))
            .collect();
        let find = |name: &str, case: &String| {
            self.cells
                .iter()
                .find(|c| c.server == name && c.case() == *case && !c.runs.is_empty())
                .map(|c| c.requests_per_s.clone())
        };
        let chart = Chart {
            title: "Protocols: keep-alive throughput at zero delay".into(),
            unit: "requests/sec (median, whiskers min-max)".into(),
            series: series(&names, &groups, find, |s| s.median),
            whiskers: whiskers(&names, &groups, find),
            groups,
        };
        vec![("protocols.svg".into(), chart)]
    }
}

impl Render for Section {
    fn csv(&self) -> Result<Vec<(String, String)>> {
        let rows = self.cells.iter().flat_map(|c| {
            csv::CellKey::rows(&c.server, greet_core::paths::GREETINGS, c.case(), &c.runs)
        });
        Ok(vec![("protocols.csv".to_owned(), csv::write(rows)?)])
    }

    fn points(&self) -> Vec<Point> {
        self.cells
            .iter()
            .flat_map(|c| {
                let cell = c.protocol.to_string();
                let at = (greet_core::paths::GREETINGS, cell.as_str());
                Point::each(&c.server, at, load_figures(&c.runs))
            })
            .collect()
    }

    fn scorecard(&self) -> Vec<Row> {
        distinct(self.cells.iter().map(|c| (c.protocol, c.streams)))
            .into_iter()
            .map(|(protocol, streams)| {
                let over = if streams > 1 {
                    format!("{protocol}, {streams} streams")
                } else {
                    protocol.to_string()
                };
                Row::new(
                    format!("{over} throughput"),
                    Metric::Throughput,
                    self.cells
                        .iter()
                        .filter(|c| c.protocol == protocol && c.streams == streams)
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
            .chain(self.of_http1.iter_mut().map(|g| &mut g.gain.comparison))
            .collect()
    }
}
