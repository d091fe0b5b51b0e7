//! soak's report: its section of results.json, and what is drawn from it: tables, charts,
//! CSV files, its figures as points and its scorecard rows.

use crate::scenario::kit::Compared;
use anyhow::Result;
use greet_model::plan::Metric;
use greet_model::results::{Frame, Transport, Trial};
use greet_report::charts::{series, whiskers};
use greet_report::points::load_figures;
use greet_report::points::Point;
use greet_report::scorecard::{Entry, Row};
use greet_report::svg::Chart;
use greet_report::table::{
    agent_rows, agents_table, comparison_notes, count, failure_notes, grouped, opt, spread, Table,
};
use greet_report::{csv, Charts, Render, Tables};
use greet_stats::distinct;
use greet_stats::paired::Comparison;
use greet_stats::Summary;
use serde::{Deserialize, Serialize};

/// The soak scenario: duration- or count-bounded load at each concurrency, on the async and
/// the blocking endpoint, counting the server's threads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// The protocol its requests went over.
    #[serde(flatten)]
    pub transport: Transport,
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
    /// One entry per server, endpoint and concurrency, in run order.
    pub cells: Vec<SoakCell>,
    /// Every pair of servers at each endpoint and concurrency, on per-run throughput.
    pub comparisons: Vec<Comparison>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub frame: Frame,
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
    /// Mean answer size as it came over the wire (compressed, when it was), bytes (median
    /// over the runs); none in results from before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_answer: Option<f64>,
    /// Live threads when the server had started, before any load (none for a target).
    pub threads_at_start: Option<u64>,
    /// On a swarm: the node the server's task ran on (its last repeat's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
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
    pub runs: Vec<Trial>,
}

/// The soak tables: throughput and latency, threads, and the original's siege-style matrix per
/// endpoint.
impl Tables for Section {
    fn tables(&self) -> Vec<Table> {
        let bound = match (self.duration_s, self.requests) {
            (Some(d), _) => format!("{d} s"),
            (None, Some(n)) => format!("{n} requests"),
            (None, None) => "-".to_owned(),
        };
        let rows = self
            .cells
            .iter()
            .map(|c| {
                vec![
                    c.server.clone(),
                    c.endpoint.clone(),
                    c.concurrency.to_string(),
                    c.hits.to_string(),
                    format!("{:.2}", c.success_rate),
                    if self.frame.repeats > 1 {
                        spread(&c.requests_per_s)
                    } else {
                        format!("{:.1}", c.requests_per_s.median)
                    },
                    format!("{:.4}", c.average_s),
                    opt(c.bytes_per_answer, 0),
                    opt(c.cpu_avg_pct, 1),
                    opt(c.rss_max_mib, 2),
                ]
            })
            .collect();
        let mut out = vec![Table::new(
            format!(
                "Soak: keep-alive load for {bound} per level, delay {} ms, --workers {}, --blocking-threads {}, {} run(s) each",
                self.delay_ms, self.workers, self.blocking_threads, self.frame.repeats
            ),
            &[
                "Application",
                "Endpoint",
                "Concurrency",
                "Hits",
                "Success rate(%)",
                "Requests/sec",
                "Average(secs)",
                "Bytes/answer",
                "CPU avg(%)",
                "Max Memory(MB)",
            ],
            grouped(rows, 1),
        )];
        let rows = self
            .cells
            .iter()
            .map(|c| {
                vec![
                    c.server.clone(),
                    c.endpoint.clone(),
                    c.concurrency.to_string(),
                    count(c.threads_at_start),
                    count(c.threads_live),
                    count(c.threads_peak),
                    count(c.threads_total),
                ]
            })
            .collect();
        out.push(Table::new(
            "Soak: the server's threads",
            &[
                "Application",
                "Endpoint",
                "Concurrency",
                "Threads at start",
                "Live",
                "Peak",
                "Total started",
            ],
            grouped(rows, 1),
        ));
        // The siege table: servers down, levels across, "throughput, average" in each cell.
        let mut levels: Vec<usize> = self.cells.iter().map(|c| c.concurrency).collect();
        levels.sort_unstable();
        levels.dedup();
        for endpoint in distinct(self.cells.iter().map(|c| c.endpoint.as_str())) {
            let mut headers = vec!["Application".to_owned()];
            headers.extend(levels.iter().map(|c| format!("-c {c}")));
            let servers = distinct(
                self.cells
                    .iter()
                    .filter(|c| c.endpoint == endpoint)
                    .map(|c| c.server.as_str()),
            );
            let rows = servers
                .iter()
                .map(|server| {
                    let mut row = vec![(*server).to_owned()];
                    row.extend(levels.iter().map(|level| {
                        self.cells
                            .iter()
                            .find(|c| {
                                c.server == *server
                                    && c.endpoint == endpoint
                                    && c.concurrency == *level
                            })
                            .map_or("-".to_owned(), |c| {
                                format!("{:.1}/s, {:.4} s", c.requests_per_s.median, c.average_s)
                            })
                    }));
                    row
                })
                .collect();
            let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
            out.push(Table::new(
                format!("{endpoint}: requests/sec, average seconds"),
                &headers,
                vec![rows],
            ));
        }
        if let Some(last) = out.last_mut() {
            last.notes = if self.frame.repeats > 1 {
                comparison_notes(&self.comparisons)
            } else {
                vec![
                    "one run per level: no verdicts (--repeats 6 or more can decide them)"
                        .to_owned(),
                ]
            };
            last.notes.extend(failure_notes(&self.frame.failures));
        }
        let with_agents = self
            .cells
            .iter()
            .filter(|c| c.runs.iter().any(|r| !r.agents.is_empty()));
        let rows: Vec<Vec<Vec<String>>> = with_agents
            .map(|c| {
                let name = format!("{} {}", c.server, c.endpoint);
                c.runs
                    .iter()
                    .flat_map(|run| agent_rows(&name, c.concurrency, run))
                    .collect()
            })
            .collect();
        if !rows.is_empty() {
            let mut agents = agents_table(rows);
            agents.notes = distinct(self.cells.iter().filter_map(|c| {
                let node = c.node.as_ref()?;
                Some(format!(
                    "{} {} ran on swarm node {node}",
                    c.server, c.endpoint
                ))
            }));
            out.push(agents);
        }
        out
    }
}

impl Charts for Section {
    type Chart = Chart;

    fn charts(&self) -> Vec<(String, Chart)> {
        let groups = distinct(
            self.cells
                .iter()
                .map(|c| (c.endpoint.clone(), c.concurrency)),
        );
        let names = distinct(self.cells.iter().map(|c| c.server.clone()));
        let cell = |name: &str, (endpoint, level): &(String, usize)| {
            self.cells
                .iter()
                .find(|c| c.server == name && &c.endpoint == endpoint && c.concurrency == *level)
        };
        let labels: Vec<String> = groups.iter().map(|(e, c)| format!("{e} c={c}")).collect();
        let throughput = Chart {
            title: "Soak: throughput per endpoint and connections".into(),
            unit: "requests/sec".into(),
            groups: labels.clone(),
            series: series(&names, &groups, cell, |c: &&SoakCell| {
                c.requests_per_s.median
            }),
            whiskers: whiskers(&names, &groups, |name, g| {
                cell(name, g)
                    .filter(|c| c.runs.len() > 1)
                    .map(|c| c.requests_per_s.clone())
            }),
        };
        let threads = Chart {
            title: "Soak: peak live threads".into(),
            unit: "threads".into(),
            groups: labels,
            series: series(
                &names,
                &groups,
                |n, g| cell(n, g).filter(|c| c.threads_peak.is_some()),
                |c: &&SoakCell| c.threads_peak.unwrap_or(0) as f64,
            ),
            whiskers: Vec::new(),
        };
        vec![
            ("soak-throughput.svg".into(), throughput),
            ("soak-threads.svg".into(), threads),
        ]
    }
}

impl Render for Section {
    fn csv(&self) -> Result<Vec<(String, String)>> {
        let rows = self.cells.iter().flat_map(|c| {
            csv::CellKey::rows(&c.server, &c.endpoint, c.concurrency.to_string(), &c.runs)
        });
        Ok(vec![("soak.csv".to_owned(), csv::write(rows)?)])
    }

    fn points(&self) -> Vec<Point> {
        self.cells
            .iter()
            .flat_map(|c| {
                let cell = format!("c={}", c.concurrency);
                Point::each(&c.server, (&c.endpoint, &cell), load_figures(&c.runs))
            })
            .collect()
    }

    fn scorecard(&self) -> Vec<Row> {
        // The highest concurrency of each endpoint: where the servers differ most.
        distinct(self.cells.iter().map(|c| c.endpoint.as_str()))
            .into_iter()
            .filter_map(|endpoint| {
                let top = self
                    .cells
                    .iter()
                    .filter(|c| c.endpoint == endpoint)
                    .map(|c| c.concurrency)
                    .max()?;
                let entries = self
                    .cells
                    .iter()
                    .filter(|c| c.endpoint == endpoint && c.concurrency == top)
                    .map(|c| Entry::throughput(&c.server, &c.runs))
                    .collect();
                Some(Row::new(
                    format!("{endpoint} c={top} throughput"),
                    Metric::Throughput,
                    entries,
                ))
            })
            .collect()
    }
}

impl Compared for Section {
    /// Every comparison it makes: one family, judged together.
    fn comparisons(&mut self) -> Vec<&mut greet_stats::paired::Comparison> {
        self.comparisons.iter_mut().collect()
    }
}
