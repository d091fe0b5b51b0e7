//! capacity's report: its section of results.json, and what is drawn from it: tables, charts,
//! CSV files, its figures as points and its scorecard rows.

use crate::scenario::kit::Compared;
use anyhow::Result;
use greet_model::plan::Metric;
use greet_model::results::{AgentRun, Frame, Machine, RateRun, RateWindow, Spectrum, Transport};
use greet_report::charts::slug;
use greet_report::points::Point;
use greet_report::scorecard::{Entry, Row};
use greet_report::svg::{Line, LineChart, XAxis};
use greet_report::table::{comparison_notes, failure_notes, opt, Table};
use greet_report::{csv, Charts, Render, Tables};
use greet_stats::distinct;
use greet_stats::median;
use greet_stats::paired::Comparison;
use serde::{Deserialize, Serialize};

/// The capacity scenario: a closed-loop probe, an open-loop ramp to past it, then searches
/// around the knee, each a bracket halved and a staircase; a level holds when every answer is valid, at most
/// [`Section::late_share_max`] of its requests went out late, and the objective's percentile
/// of the latency from the intended send is within its bound.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// The protocol its requests went over.
    #[serde(flatten)]
    pub transport: Transport,
    /// `--delay-ms` given to the servers.
    pub delay_ms: u64,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// The objective, as `--slo` takes it (`p99<5ms`).
    pub slo: String,
    /// Its percentile.
    pub slo_percentile: f64,
    /// Its bound, milliseconds.
    pub slo_ms: f64,
    /// The most requests a holding level may send later than the objective's bound, as a
    /// fraction.
    pub late_share_max: f64,
    /// The ramp's length, seconds.
    pub ramp_s: f64,
    /// Each search level's length, seconds.
    pub duration_s: f64,
    /// Levels of each search's staircase.
    pub steps: usize,
    /// Keep-alive connections.
    pub connections: usize,
    /// One entry per server and endpoint.
    pub servers: Vec<CapacityServer>,
    /// Every pair of servers per endpoint, on the searches' capacities.
    pub comparisons: Vec<Comparison>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub frame: Frame,
}

/// One server and endpoint of the capacity scenario.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CapacityServer {
    /// The server.
    pub server: String,
    /// The path loaded.
    pub endpoint: String,
    /// Over HTTP/2, requests in flight sharing a connection (`--streams`).
    #[serde(default = "one")]
    pub streams: usize,
    /// Valid responses a second in the closed-loop probe.
    pub probe_rps: f64,
    /// The highest rate the load generator can pace on its CPUs, from the probe.
    pub client_max_rps: f64,
    /// Where the ramp ended: 1.2 times the probe's rate, or the client's maximum if lower.
    pub top_rps: f64,
    /// The highest rate a search may run: the client's limit where the harness paces (the
    /// closed-loop probe, latency-bound on its connections, may fall short of what the server
    /// holds open-loop), else the ramp's top.
    #[serde(default)]
    pub ceiling_rps: f64,
    /// The ramp, second by second.
    pub ramp: Vec<RateWindow>,
    /// The rate offered in the last second of the ramp that held (none when none did).
    pub ramp_knee_rps: Option<f64>,
    /// Each search's capacity: the rate its staircase settled on (the ceiling, when a level
    /// there held).
    pub searches: Vec<f64>,
    /// The capacity at the objective: the median of [`Self::searches`].
    pub capacity_rps: f64,
    /// Each search's pace: the machine's ([`Machine::pace_us`]), median over its levels,
    /// microseconds; empty unless every search has one. Higher is slower: where the searches
    /// spread, it says whether the machine drifted under them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paces_us: Vec<f64>,
    /// The searches held up to the ceiling: the capacity is at least this much, and the
    /// client's limit (or on agents, the ramp's top), not the server's, ended it.
    pub at_top: bool,
    /// Every level the searches ran, in order.
    pub steps: Vec<CapacityStep>,
    /// At half the capacity: the latency from the intended send.
    pub at_half: Option<Spectrum>,
    /// At 90% of it.
    pub at_ninety: Option<Spectrum>,
    /// At the highest level held: the server's CPU per request, microseconds.
    pub server_us_per_request: Option<f64>,
    /// At the same level: the load generator's CPU per request, microseconds.
    pub client_us_per_request: Option<f64>,
    /// On a swarm: the node its task ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// One level of a search.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CapacityStep {
    /// The search it belongs to, from 1.
    pub search: usize,
    /// Requests a second, the schedule's.
    pub target_rps: f64,
    /// Requests answered (or failed) a second.
    pub achieved_rps: f64,
    /// It held the objective.
    pub held: bool,
    /// Why not, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broke: Option<String>,
    /// The judge was unsure of it (its last quarters broke, or the rate held again after a
    /// break too long to excuse): it was run again, and the next step is that run.
    #[serde(default)]
    pub unsure: bool,
    /// It is a level run again: after one that was unsure, or one run on a disturbed machine
    /// (held or broken); the run before it is set aside.
    #[serde(default)]
    pub again: bool,
    /// What disturbed the machine meanwhile, when something did (steal, other programs'
    /// CPU): a level run so is run again, up to three times, whatever it came to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbed: Option<String>,
    /// Its quarter seconds (those in which requests were due).
    #[serde(default)]
    pub quarters: usize,
    /// Those that broke the objective, counted from 0: in a level that held, the stalls it
    /// was excused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken_quarters: Vec<usize>,
    /// What else the machine did meanwhile (steal, others' CPU), where the harness's host ran
    /// the load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<Machine>,
    /// Valid responses, percent.
    pub success_rate: f64,
    /// Requests sent a millisecond or more late.
    pub late: u64,
    /// How late the sends were at p99, milliseconds: over the objective's bound, more than 1%
    /// went out later than it allows.
    pub lag_p99_ms: f64,
    /// Of that lag, the client's own at p99, milliseconds: how late it sent requests for
    /// which a connection was free.
    #[serde(default)]
    pub own_lag_p99_ms: f64,
    /// Requests sent.
    pub requests: u64,
    /// The latency from the intended send.
    pub latency_ms: Spectrum,
    /// The load generator's CPU, percent of its CPUs.
    pub client_cpu_pct: f64,
    /// The server's mean CPU, percent of one CPU, where it was sampled.
    pub server_cpu_pct: Option<f64>,
    /// Each agent's own figures and node, when the level was split over several
    /// (`--agents`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentRun>,
}

fn one() -> usize {
    1
}

impl CapacityStep {
    /// A step with only what `run` says of how its load was split (each agent's figures,
    /// when there were several): where a load runs is the harness's to know, not the run's.
    pub(crate) fn split_as(run: &RateRun) -> Self {
        Self {
            agents: run.agents.clone(),
            ..Self::default()
        }
    }
}

/// Per endpoint (and streams), each second of every server's ramp: the objective's latency against the rate
/// offered in it, a colour per server, with the objective's bound as a flat line: where a
/// server's line crosses it is its knee.
impl Charts for Section {
    type Chart = LineChart;

    fn charts(&self) -> Vec<(String, LineChart)> {
        let mut out = Vec::new();
        let servers = distinct(self.servers.iter().map(|s| s.server.clone()));
        for case in distinct(self.servers.iter().map(|s| s.case())) {
            let mut lines = Vec::new();
            let mut widest: f64 = 0.0;
            for (colour, server) in servers.iter().enumerate() {
                let Some(record) = self
                    .servers
                    .iter()
                    .find(|s| &s.server == server && s.case() == case)
                else {
                    continue;
                };
                let mut seconds: Vec<_> = record
                    .ramp
                    .iter()
                    .filter(|w| w.latency_ms.p50 > 0.0)
                    .collect();
                seconds.sort_by(|a, b| a.offered_rps.total_cmp(&b.offered_rps));
                widest = seconds.iter().map(|w| w.offered_rps).fold(widest, f64::max);
                lines.push(Line {
                    name: format!("{server} {:.1}k/s", record.capacity_rps / 1000.0),
                    points: seconds
                        .iter()
                        .map(|w| (w.offered_rps, w.latency_ms.at(self.slo_percentile)))
                        .collect(),
                    colour,
                    dashed: false,
                });
            }
            if lines.is_empty() {
                continue;
            }
            lines.push(Line {
                name: format!("objective: {}", self.slo),
                points: vec![(0.0, self.slo_ms), (widest, self.slo_ms)],
                colour: servers.len(),
                dashed: true,
            });
            out.push((
                format!("capacity-{}.svg", slug(&case)),
                LineChart {
                    title: format!("The ramp, second by second, against {}: {case}", self.slo),
                    x_label: "requests/sec offered in the second".into(),
                    y_label: "ms from the intended send (log)".into(),
                    x_axis: XAxis::Linear,
                    lines,
                },
            ));
        }
        out
    }
}

impl Render for Section {
    fn csv(&self) -> Result<Vec<(String, String)>> {
        let rows = self.servers.iter().map(|s| CapacityRow {
            server: &s.server,
            endpoint: &s.endpoint,
            streams: s.streams,
            slo: &self.slo,
            capacity_rps: s.capacity_rps,
            at_top: s.at_top,
            searches: s
                .searches
                .iter()
                .map(|v| format!("{v:.0}"))
                .collect::<Vec<_>>()
                .join(" "),
            spread: spread(s.spread()),
            paces_us: (s.paces_us.iter())
                .map(|v| format!("{v:.0}"))
                .collect::<Vec<_>>()
                .join(" "),
            probe_rps: s.probe_rps,
            top_rps: s.top_rps,
            ceiling_rps: s.ceiling_rps,
            ramp_knee_rps: s.ramp_knee_rps,
            p50_ms_at_half: s.at_half.as_ref().map(|l| l.p50),
            p99_ms_at_half: s.at_half.as_ref().map(|l| l.p99),
            p50_ms_at_ninety: s.at_ninety.as_ref().map(|l| l.p50),
            p99_ms_at_ninety: s.at_ninety.as_ref().map(|l| l.p99),
            server_us_per_request: s.server_us_per_request,
            client_us_per_request: s.client_us_per_request,
        });
        Ok(vec![("capacity.csv".to_owned(), csv::write(rows)?)])
    }

    fn points(&self) -> Vec<Point> {
        self.servers
            .iter()
            .flat_map(|s| {
                // Each search's capacity: the rate its staircase settled on, a second.
                let cell = match s.streams {
                    1 => "capacity".to_owned(),
                    n => format!("capacity, {n} streams"),
                };
                let figures = [
                    (Metric::Throughput, s.searches.clone()),
                    (Metric::CpuPerRequest, s.server_us_each()),
                ];
                Point::each(&s.server, (&s.endpoint, &cell), figures)
            })
            .collect()
    }

    fn scorecard(&self) -> Vec<Row> {
        let mut out = Vec::new();
        for case in distinct(self.servers.iter().map(CapacityServer::case)) {
            let of = || self.servers.iter().filter(|s| s.case() == case);
            out.push(Row::new(
                format!("{case} capacity at {}", self.slo),
                Metric::Throughput,
                of().map(|s| {
                    let cpu = s.server_us_each();
                    Entry {
                        capped: s.at_top,
                        cpu_us: (!cpu.is_empty()).then(|| median(&cpu)),
                        resolution: s.resolution(),
                        ..Entry::new(&s.server, s.searches.clone())
                    }
                })
                .collect(),
            ));
            out.push(Row::new(
                format!("{case} CPU per request at the capacity"),
                Metric::CpuPerRequest,
                of().map(|s| Entry::new(&s.server, s.server_us_each()))
                    .collect(),
            ));
        }
        out
    }
}

/// A row of `capacity.csv`.
#[derive(Serialize)]
struct CapacityRow<'a> {
    server: &'a str,
    endpoint: &'a str,
    streams: usize,
    slo: &'a str,
    capacity_rps: f64,
    at_top: bool,
    searches: String,
    spread: String,
    paces_us: String,
    probe_rps: f64,
    top_rps: f64,
    ceiling_rps: f64,
    ramp_knee_rps: Option<f64>,
    p50_ms_at_half: Option<f64>,
    p99_ms_at_half: Option<f64>,
    p50_ms_at_ninety: Option<f64>,
    p99_ms_at_ninety: Option<f64>,
    server_us_per_request: Option<f64>,
    client_us_per_request: Option<f64>,
}

impl Compared for Section {
    /// Every comparison it makes: one family, judged together.
    fn comparisons(&mut self) -> Vec<&mut greet_stats::paired::Comparison> {
        self.comparisons.iter_mut().collect()
    }
}

/// One row per server and endpoint: the capacity at the objective, how the search found it,
/// the latency below it, and what each side's CPU spent per request there.
impl Tables for Section {
    fn tables(&self) -> Vec<Table> {
        let ms = |l: Option<&greet_model::results::Spectrum>| {
            l.map_or("-".to_owned(), |l| format!("{:.3} / {:.3}", l.p50, l.p99))
        };
        let rows = self
            .servers
            .iter()
            .map(|s| {
                let ratio = match (s.client_us_per_request, s.server_us_per_request) {
                    (Some(c), Some(v)) if v > 0.0 => Some(c / v),
                    _ => None,
                };
                vec![
                    s.server.clone(),
                    s.case(),
                    format!("{}{:.0}", if s.at_top { ">= " } else { "" }, s.capacity_rps),
                    s.searches
                        .iter()
                        .map(|v| format!("{v:.0}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                    spread(s.spread()),
                    if s.paces_us.is_empty() {
                        "-".to_owned()
                    } else {
                        (s.paces_us.iter())
                            .map(|v| format!("{v:.0}"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    },
                    format!("{:.0}", s.probe_rps),
                    opt(s.ramp_knee_rps, 0),
                    ms(s.at_half.as_ref()),
                    ms(s.at_ninety.as_ref()),
                    opt(s.server_us_per_request, 1),
                    opt(s.client_us_per_request, 1),
                    opt(ratio, 2),
                ]
            })
            .collect();
        let mut table = Table::new(
            format!(
                "Capacity at {} (every answer valid, at most {:.0}% sent later than it allows), a {:.0} s ramp then {} \
                 search(es), each a staircase of {} levels of {:.1} s, {} connections, delay {} ms, --workers {}",
                self.slo,
                self.late_share_max * 100.0,
                self.ramp_s,
                self.frame.repeats,
                self.steps,
                self.duration_s,
                self.connections,
                self.delay_ms,
                self.workers
            ),
            &[
                "Application",
                "Endpoint",
                "Capacity(req/s)",
                "Searches",
                "Spread",
                "Paces (us)",
                "Closed-loop probe",
                "Ramp knee",
                "p50 / p99 at 50%",
                "p50 / p99 at 90%",
                "Server us/req",
                "Client us/req",
                "Client/server",
            ],
            vec![rows],
        );
        table.notes.push(
            ">= : held up to the top of the search (what the client can pace; on agents, 1.2 \
             times the probe): the capacity is at least this; Spread: the lowest and highest search \
             from the capacity; Paces: how long the machine took meanwhile for a fixed piece of \
             kernel work, each search's median (higher is slower); us/req: CPU microseconds per request at the highest level held under the capacity"
                .to_owned(),
        );
        for s in &self.servers {
            let disturbed = s.disturbed_verdicts();
            if disturbed > 0 {
                table.notes.push(format!(
                    "{} {}: {disturbed} level(s) decided on a disturbed machine, every run of \
                     them disturbed (steal, or other programs on the CPUs): its searches may be \
                     off, most likely low",
                    s.server,
                    s.case()
                ));
            }
        }
        table.notes.extend(comparison_notes(&self.comparisons));
        table.notes.extend(failure_notes(&self.frame.failures));
        vec![table]
    }
}

/// The searches' spread around the capacity, in percent (`-8% +5%`).
fn spread(spread: Option<(f64, f64)>) -> String {
    spread.map_or("-".to_owned(), |(low, high)| {
        format!("{:+.0}% {:+.0}%", (low - 1.0) * 100.0, (high - 1.0) * 100.0)
    })
}
