//! Cost's report: its section of results.json, and what is drawn from it: the cost table, where
//! the instructions go, what choosing the crate costs, a chart of each cell's cost profile,
//! CSV files, its figures as points, its scorecard rows and the words that name the mechanism
//! behind the largest differences.

use anyhow::Result;
use greet_probe::Protocol;
use serde::{Deserialize, Serialize};

use greet_bed::sample::tools::Tools;
use greet_model::plan::Metric;
use greet_model::results::Frame;
use greet_report::points::Point;
use greet_report::scorecard::{Entry, Row};
use greet_report::svg::Chart;
use greet_report::{csv, Charts, Render};
use greet_stats::{distinct, median};

use super::table::{count, knob_figures, short_function, string_routine, FIGURES};
use crate::scenario::kit::Compared;

/// Cost: what each request costs each server, counted.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// Keep-alive connections of each load (an upload's are fewer: its cell says).
    pub connections: usize,
    /// The requests a cell at the plan's size counts over (N): the larger load sends N more
    /// than the smaller (N/4).
    pub requests: usize,
    /// Each upload's size, bytes.
    pub upload_bytes: u64,
    /// The instruments that counted (callgrind, dhat, perf; proc where perf could not).
    pub instruments: Vec<String>,
    /// What was not counted, and why: a line each, with what to install.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// The versions of what counted, and whether glibc took the vector-loop tunables.
    #[serde(default)]
    pub tools: Tools,
    /// One entry per server and cell.
    pub cells: Vec<CostCell>,
    /// What choosing each server's crate costs.
    pub crates: Vec<CrateCost>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub frame: Frame,
}

/// One server and one kind of request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CostCell {
    /// The server.
    pub server: String,
    /// The kind of request (`baseline`, `plaintext`, …).
    pub cell: String,
    /// The path loaded.
    pub path: String,
    /// The protocol it went over.
    pub protocol: Protocol,
    /// Its smaller load's requests, N.
    pub requests: usize,
    /// Its connections.
    pub connections: usize,
    /// One count per repeat.
    pub runs: Vec<PerRequest>,
}

/// What one request cost, each figure the difference between the loads of N/4 + N and N/4
/// requests over N; none where its instrument did not count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct PerRequest {
    /// User-space instructions (callgrind).
    pub instructions: Option<f64>,
    /// Cycles estimated from callgrind's cache model (L1 1, last level 5, memory 35).
    pub cycles: Option<f64>,
    /// Heap allocations (DHAT).
    pub allocations: Option<f64>,
    /// Bytes those allocations asked for.
    pub alloc_bytes: Option<f64>,
    /// Syscalls under real load (perf's tracepoint, or the read and write classes of
    /// /proc/PID/io where perf cannot count).
    pub syscalls: Option<f64>,
    /// `epoll_wait` calls under real load (perf): shown, never judged, as they follow the
    /// client's timing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoll_waits: Option<f64>,
    /// futex calls under real load (perf): a thread parking or waking another; shown, never
    /// judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub futexes: Option<f64>,
    /// Context switches under real load.
    pub switches: Option<f64>,
    /// The CPU the kernel charged under real load, microseconds: timed, beside the counts.
    pub cpu_us: Option<f64>,
    /// The functions with the most instructions of their own, most first, per request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<FunctionCost>,
}

/// A function's own instructions per request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct FunctionCost {
    /// Its name, as the binary's symbols give it.
    pub function: String,
    /// Its own instructions per request.
    pub instructions: f64,
}

/// What choosing a server's crate costs, beside what a request costs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CrateCost {
    /// The server.
    pub server: String,
    /// Its release binary, stripped, bytes.
    pub binary_bytes: Option<u64>,
    /// Crates its binary depends on (normal dependencies; the workspace's own left out).
    pub dependencies: Option<usize>,
    /// Resident memory each idle keep-alive connection holds, KiB.
    pub idle_kib: Option<f64>,
    /// Idle connections weighed.
    pub idle_connections: usize,
    /// A clean release build, seconds (this machine's; with `--build`).
    pub build_s: Option<f64>,
    /// A rebuild after one handler is touched, seconds (this machine's; with `--build`).
    pub rebuild_s: Option<f64>,
}

impl CostCell {
    /// `figure` in each run that counted it.
    pub(super) fn values(&self, of: fn(&PerRequest) -> Option<f64>) -> Vec<f64> {
        self.runs.iter().filter_map(of).collect()
    }

    /// The median of `figure` over the runs, if any counted it.
    pub(super) fn median(&self, of: fn(&PerRequest) -> Option<f64>) -> Option<f64> {
        let values = self.values(of);
        (!values.is_empty()).then(|| median(&values))
    }

    /// The function with the most instructions of its own, and its share of the request's.
    pub fn top_function(&self) -> Option<(&str, f64)> {
        let run = self.runs.last()?;
        let top = run.functions.first()?;
        let share = top.instructions / run.instructions.filter(|&i| i > 0.0)?;
        Some((top.function.as_str(), share))
    }
}

/// A chart per cell: each figure as each server's multiple of the least, a bar per server.
impl Charts for Section {
    type Chart = Chart;

    fn charts(&self) -> Vec<(String, Chart)> {
        let cells = distinct(self.cells.iter().map(|c| c.cell.clone()));
        let counted = &FIGURES[..5];
        cells
            .iter()
            .map(|cell| {
                let of: Vec<&CostCell> = self.cells.iter().filter(|c| &c.cell == cell).collect();
                let series = of
                    .iter()
                    .map(|c| {
                        let values = counted
                            .iter()
                            .map(|f| {
                                let least = of
                                    .iter()
                                    .filter_map(|o| o.median(f.of))
                                    .fold(f64::INFINITY, f64::min);
                                let own = c.median(f.of)?;
                                (least > 0.0 && least.is_finite()).then(|| own / least)
                            })
                            .collect();
                        (c.server.clone(), values)
                    })
                    .collect();
                let chart = Chart {
                    title: format!("{cell}: cost per request, as a multiple of the least"),
                    unit: "× the least".to_owned(),
                    groups: counted.iter().map(|f| f.label.to_owned()).collect(),
                    series,
                    whiskers: Vec::new(),
                };
                (
                    format!("cost-{}.svg", greet_report::charts::slug(cell)),
                    chart,
                )
            })
            .collect()
    }
}

/// A row of cost.csv.
#[derive(Serialize)]
struct CostRow<'a> {
    server: &'a str,
    cell: &'a str,
    path: &'a str,
    protocol: String,
    requests: usize,
    connections: usize,
    run: usize,
    instructions: Option<f64>,
    cycles: Option<f64>,
    allocations: Option<f64>,
    alloc_bytes: Option<f64>,
    syscalls: Option<f64>,
    epoll_waits: Option<f64>,
    futexes: Option<f64>,
    switches: Option<f64>,
    cpu_us: Option<f64>,
    top_function: Option<&'a str>,
}

impl Render for Section {
    fn csv(&self) -> Result<Vec<(String, String)>> {
        let rows = self.cells.iter().flat_map(|c| {
            c.runs.iter().enumerate().map(move |(i, r)| CostRow {
                server: &c.server,
                cell: &c.cell,
                path: &c.path,
                protocol: c.protocol.to_string(),
                requests: c.requests,
                connections: c.connections,
                run: i + 1,
                instructions: r.instructions,
                cycles: r.cycles,
                allocations: r.allocations,
                alloc_bytes: r.alloc_bytes,
                syscalls: r.syscalls,
                epoll_waits: r.epoll_waits,
                futexes: r.futexes,
                switches: r.switches,
                cpu_us: r.cpu_us,
                top_function: r.functions.first().map(|f| f.function.as_str()),
            })
        });
        Ok(vec![
            ("cost.csv".to_owned(), csv::write(rows)?),
            ("crates.csv".to_owned(), csv::write(&self.crates)?),
        ])
    }

    fn points(&self) -> Vec<Point> {
        let mut out: Vec<Point> = self
            .cells
            .iter()
            .flat_map(|c| {
                let figures = FIGURES.iter().map(|f| (self.metric(f), c.values(f.of)));
                Point::each(&c.server, (&c.path, &c.cell), figures.collect::<Vec<_>>())
            })
            .collect();
        for c in &self.crates {
            let one = |v: Option<f64>| v.into_iter().collect::<Vec<_>>();
            let own = [
                (
                    Metric::Binary,
                    one(c.binary_bytes.map(|b| b as f64 / (1024.0 * 1024.0))),
                ),
                (Metric::Dependencies, one(c.dependencies.map(|d| d as f64))),
                (Metric::IdleMemory, one(c.idle_kib)),
                (Metric::Build, one(c.build_s)),
                (Metric::Rebuild, one(c.rebuild_s)),
            ];
            out.extend(Point::each(&c.server, ("", "crate"), own));
        }
        out
    }

    fn scorecard(&self) -> Vec<Row> {
        let cells = distinct(self.cells.iter().map(|c| c.cell.clone()));
        let mut out = Vec::new();
        for cell in &cells {
            let of: Vec<&CostCell> = self.cells.iter().filter(|c| &c.cell == cell).collect();
            for f in FIGURES
                .iter()
                .filter(|f| {
                    matches!(
                        f.metric,
                        Metric::Instructions | Metric::Allocations | Metric::Syscalls
                    )
                })
                // An upload's syscalls are the reads its body arrived in, as the sender paced
                // it (10.2 and 12.1 a request in two runs of one binary): no verdict on them.
                .filter(|f| !(f.metric == Metric::Syscalls && cell == "upload"))
            {
                let entries = of.iter().map(|c| Entry::new(&c.server, c.values(f.of)));
                out.push(Row::new(
                    format!("{cell} {}", self.label(f)),
                    self.metric(f),
                    entries.collect(),
                ));
            }
        }
        let crate_row = |figure: &str, metric: Metric, value: fn(&CrateCost) -> Option<f64>| {
            let entries = self
                .crates
                .iter()
                .map(|c| Entry::new(&c.server, value(c).into_iter().collect()));
            Row::new(figure, metric, entries.collect()).once()
        };
        out.push(crate_row("binary size", Metric::Binary, |c| {
            c.binary_bytes.map(|b| b as f64 / (1024.0 * 1024.0))
        }));
        out.push(crate_row("dependencies", Metric::Dependencies, |c| {
            c.dependencies.map(|d| d as f64)
        }));
        out.push(crate_row(
            "memory per idle connection",
            Metric::IdleMemory,
            |c| c.idle_kib,
        ));
        out.push(crate_row("clean release build", Metric::Build, |c| {
            c.build_s
        }));
        out.push(crate_row(
            "rebuild after one handler",
            Metric::Rebuild,
            |c| c.rebuild_s,
        ));
        out
    }

    fn words(&self) -> Vec<String> {
        words(self)
    }

    fn knobs(&self) -> Vec<greet_report::gains::KnobFigure> {
        knob_figures(self)
    }
}

/// The contenders' cells of `cell`, with `figure` counted, least first: the crates at their
/// defaults (what a knob changes is the knobs table's).
fn ranked<'a>(
    cost: &'a Section,
    cell: &str,
    of: fn(&PerRequest) -> Option<f64>,
) -> Vec<(&'a CostCell, f64)> {
    let mut out: Vec<(&CostCell, f64)> = cost
        .cells
        .iter()
        .filter(|c| c.cell == cell && greet_model::plan::reference_role(&c.server).is_none())
        .filter(|c| greet_model::plan::knobs_of(&c.server).is_empty())
        .filter_map(|c| Some((c, c.median(of)?)))
        .collect();
    out.sort_by(|a, b| a.1.total_cmp(&b.1));
    out
}

/// Words that name the mechanism behind the largest differences the counts show: the
/// pipelined requests' syscalls (who writes each answer on its own), the allocations per
/// request, and the cell whose instructions differ most, with where they go.
fn words(cost: &Section) -> Vec<String> {
    let mut out = Vec::new();
    let pipelined = ranked(cost, "plaintext", |c| c.syscalls);
    if let (Some((least, l)), Some((most, m))) = (pipelined.first(), pipelined.last()) {
        if *m > 2.0 * l {
            let how = if *m >= 0.9 {
                "writes each answer on its own"
            } else {
                "writes fewer answers a syscall"
            };
            out.push(format!(
                "{} answers a pipelined request with {l:.2} syscalls, {} with {m:.2}: {} {how}.",
                least.server, most.server, most.server
            ));
        }
    }
    let allocations = ranked(cost, "baseline", |c| c.allocations);
    if let (Some((least, l)), Some((most, m))) = (allocations.first(), allocations.last()) {
        if *m > 1.5 * l.max(1.0) {
            let bytes = |c: &CostCell| count(c.median(|r| r.alloc_bytes));
            out.push(format!(
                "{} allocates {m:.0} times per request ({} B), {} {l:.0} ({} B).",
                most.server,
                bytes(most),
                least.server,
                bytes(least)
            ));
        }
    }
    let widest = distinct(cost.cells.iter().map(|c| c.cell.clone()))
        .into_iter()
        .filter_map(|cell| {
            let ranked = ranked(cost, &cell, |c| c.instructions);
            let (least, most) = (ranked.first()?, ranked.last()?);
            (least.1 > 0.0).then(|| (cell.clone(), least.0, least.1, most.0, most.1))
        })
        .max_by(|a, b| (a.4 / a.2).total_cmp(&(b.4 / b.2)));
    if let Some((cell, least, l, most, m)) = widest {
        if m > 1.5 * l {
            let mut line = format!(
                "The widest gap in instructions is on {cell}: {} runs {} a request, {} {}",
                most.server,
                count(Some(m)),
                least.server,
                count(Some(l))
            );
            if let Some((function, share)) = most.top_function().filter(|(_, s)| *s > 0.5) {
                line.push_str(&format!(
                    "; {:.0}% of {}'s are in {}",
                    share * 100.0,
                    most.server,
                    short_function(function)
                ));
                if let Some(what) = string_routine(function) {
                    line.push_str(&format!(
                        " ({what} memory: glibc's routine, on its vector loop, not the \
                         crate's own logic; set it against the CPU µs)"
                    ));
                }
            }
            line.push('.');
            out.push(line);
        }
    }
    out
}

impl Compared for Section {
    /// Every comparison it makes: one family, judged together.
    fn comparisons(&mut self) -> Vec<&mut greet_stats::paired::Comparison> {
        Vec::new()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A cell of `server` counted once, as `run`.
    pub(in crate::scenario::cost) fn cell(server: &str, cell: &str, run: PerRequest) -> CostCell {
        CostCell {
            server: server.to_owned(),
            cell: cell.to_owned(),
            path: "/x".to_owned(),
            runs: vec![run],
            ..CostCell::default()
        }
    }

    #[test]
    fn the_words_name_the_mechanism() {
        let syscalls = |s| PerRequest {
            syscalls: Some(s),
            ..PerRequest::default()
        };
        let allocations = |a, b| PerRequest {
            allocations: Some(a),
            alloc_bytes: Some(b),
            ..PerRequest::default()
        };
        let memset = |ir: f64| PerRequest {
            instructions: Some(ir),
            functions: vec![FunctionCost {
                function: "__memset_avx2_unaligned_erms".to_owned(),
                instructions: ir * 0.97,
            }],
            ..PerRequest::default()
        };
        let section = Section {
            cells: vec![
                cell("greet-actix", "plaintext", syscalls(0.131)),
                cell("greet-hyper", "plaintext", syscalls(1.069)),
                cell("greet-axum", "baseline", allocations(26.0, 17_400.0)),
                cell("greet-hyper", "baseline", allocations(5.0, 9000.0)),
                cell("greet-hyper", "websocket", memset(255_190.0)),
                cell("greet-actix", "websocket", memset(9_907.0)),
                cell("greet-floor", "plaintext", syscalls(0.01)),
                cell("greet-hyper+pipeline-flush", "plaintext", syscalls(0.125)),
            ],
            ..Section::default()
        };
        let words = words(&section);
        assert_eq!(
            words[0],
            "greet-actix answers a pipelined request with 0.13 syscalls, greet-hyper with \
             1.07: greet-hyper writes each answer on its own."
        );
        assert_eq!(
            words[1],
            "greet-axum allocates 26 times per request (17.4k B), greet-hyper 5 (9000 B)."
        );
        assert_eq!(
            words[2],
            "The widest gap in instructions is on websocket: greet-hyper runs 255.2k a request, \
             greet-actix 9907; 97% of greet-hyper's are in __memset_avx2_unaligned_erms \
             (filling memory: glibc's routine, on its vector loop, not the crate's own logic; \
             set it against the CPU µs)."
        );
        assert_eq!(
            short_function(
                "<hyper::proto::h1::role::Server as hyper::proto::h1::Http1Transaction>::parse"
            ),
            "role::Server::parse"
        );
        assert_eq!(
            short_function("<futures_util::future::Map<F, G> as core::future::Future>::poll"),
            "future::Map::poll"
        );
        assert_eq!(
            short_function("greet_hyper::response"),
            "greet_hyper::response"
        );
    }
}
