//! Cost's tables: the figures of a per-request cost in the order the tables show them and
//! how a count is written, the functions a count names in a table's few words (a symbol
//! shortened; what glibc's string routines do to memory, where valgrind's count of them
//! overstates the cost), and the tables themselves: per request, what each knob changes
//! (every server with knobs, `greet-hyper+pipeline-flush`, set against its crate at its
//! defaults, cell by cell), where the instructions go, and what choosing the crate costs.

use greet_model::plan::Metric;
use greet_report::gains::KnobFigure;
use greet_report::table::{failure_notes, grouped, opt, Table};
use greet_report::Tables;

use super::{CostCell, PerRequest, Section};

/// How a figure is read from one run's counts.
type Of = fn(&PerRequest) -> Option<f64>;

/// One figure of a per-request cost, as tables, points and rows read it.
pub(super) struct Figure {
    pub(super) metric: Metric,
    pub(super) label: &'static str,
    pub(super) of: Of,
}

impl Section {
    /// Whether its syscalls were counted from `/proc`, perf unable to.
    fn by_proc(&self) -> bool {
        self.instruments.iter().any(|i| i == "proc")
    }

    /// `f`'s metric as this section counted it: syscalls counted from `/proc` where perf could
    /// not are another count ([`Metric::RwSyscalls`]), never paired with perf's.
    pub(super) fn metric(&self, f: &Figure) -> Metric {
        if f.metric == Metric::Syscalls && self.by_proc() {
            Metric::RwSyscalls
        } else {
            f.metric
        }
    }

    /// `f`'s name in this section's tables.
    pub(super) fn label(&self, f: &Figure) -> &'static str {
        match self.metric(f) {
            Metric::RwSyscalls => "read/write syscalls",
            _ => f.label,
        }
    }
}

/// The per-request figures, in table order.
pub(super) const FIGURES: [Figure; 7] = [
    Figure {
        metric: Metric::Instructions,
        label: "instructions",
        of: |c| c.instructions,
    },
    Figure {
        metric: Metric::Cycles,
        label: "cycles (est.)",
        of: |c| c.cycles,
    },
    Figure {
        metric: Metric::Allocations,
        label: "allocations",
        of: |c| c.allocations,
    },
    Figure {
        metric: Metric::AllocBytes,
        label: "bytes allocated",
        of: |c| c.alloc_bytes,
    },
    Figure {
        metric: Metric::Syscalls,
        label: "syscalls",
        of: |c| c.syscalls,
    },
    Figure {
        metric: Metric::Switches,
        label: "switches",
        of: |c| c.switches,
    },
    Figure {
        metric: Metric::CpuPerRequest,
        label: "CPU µs",
        of: |c| c.cpu_us,
    },
];

/// The waits per request, shown beside the figures and never judged: their column and how
/// a run reads them.
const WAITS: [(&str, Of); 2] = [("epoll waits", |c| c.epoll_waits), ("futex", |c| c.futexes)];

/// What the waits' columns are, for the table that shows them.
const WAITS_NOTE: &str = "epoll waits and futex: the syscalls a server waits with, counted \
    apart from its syscalls and never judged. How often an event loop finds nothing ready \
    follows the client's timing (one WebSocket echo's epoll_wait moved from 0.06 to 2.2 a \
    message between runs), but futex is also how a server pays for contention and hand-offs \
    between its threads.";

impl Section {
    /// How far instructions and allocations came back between this run's repeats, as
    /// measured: the widest spread of any cell, (highest − lowest) / median; with one run
    /// each, that it was not measured here.
    fn repeatability(&self) -> String {
        let widest = |of: Of| {
            (self.cells.iter())
                .filter_map(|c| {
                    let v = c.values(of);
                    let (m, lo, hi) = (
                        c.median(of)?,
                        v.iter().copied().reduce(f64::min)?,
                        v.iter().copied().reduce(f64::max)?,
                    );
                    (v.len() >= 2 && m > 0.0).then(|| (hi - lo) / m)
                })
                .reduce(f64::max)
        };
        let moved = [
            ("instructions", widest(|c| c.instructions)),
            ("allocations", widest(|c| c.allocations)),
        ]
        .into_iter()
        .filter_map(|(name, spread)| Some(format!("{name} {:.2}%", spread? * 100.0)))
        .collect::<Vec<_>>();
        if moved.is_empty() {
            "one run each, so how far a count comes back was not measured in this run \
             (--repeats 2 or more measures it)"
                .to_owned()
        } else {
            format!(
                "over {} runs each, the widest spread between a cell's runs was {}",
                self.frame.repeats,
                moved.join(", ")
            )
        }
    }

    /// Whether any cell's waits were counted (perf counts them; /proc cannot).
    fn shows_waits(&self) -> bool {
        self.cells.iter().any(|c| {
            WAITS
                .iter()
                .any(|(_, of)| c.runs.iter().any(|r| of(r).is_some()))
        })
    }
}

/// A count as tables show it: thousands with a `k` past 10,000, two decimals under 10; one
/// below zero, a count that fell as the load grew, flagged `(fell)` ([`FELL`]).
pub(super) fn count(value: Option<f64>) -> String {
    let Some(v) = value else {
        return "-".to_owned();
    };
    let digits = match v.abs() {
        a if a >= 10_000.0 => format!("{:.1}k", v / 1000.0),
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        _ => format!("{v:.2}"),
    };
    if v < 0.0 {
        format!("{digits} (fell)")
    } else {
        digits
    }
}

/// What a count flagged `(fell)` is, for a table that shows one.
pub(super) const FELL: &str = "(fell): the count was lower after the larger load than after \
    the smaller, so the difference is below zero. Kept as counted, not as a cost of zero: it is \
    no cost a request pays but what the two loads did apart (a buffer grown in one, context \
    switches batching spared), and a count to take again.";

/// A function's name, short enough for a table: `<Type as Trait>::f` as `Type::f`, generics
/// left out, its last three path segments.
pub(super) fn short_function(name: &str) -> String {
    let name = match name.strip_prefix('<') {
        Some(inner) => {
            // The `>` that closes the leading `<`.
            let mut depth = 1;
            let close = inner.char_indices().find_map(|(i, c)| {
                match c {
                    '<' => depth += 1,
                    '>' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i)
            });
            match close {
                Some(at) => {
                    let ty = inner[..at].split(" as ").next().unwrap_or_default();
                    format!("{ty}{}", &inner[at + 1..])
                }
                None => name.to_owned(),
            }
        }
        None => name.to_owned(),
    };
    let mut out = String::new();
    let mut depth = 0;
    for c in name.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    let segments: Vec<&str> = out.split("::").collect();
    let tail = segments[segments.len().saturating_sub(3)..].join("::");
    match tail.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &tail[..cut]),
        None => tail,
    }
}

/// What glibc's string routine `function` does to memory, where it is one: `filling`
/// (memset) or `copying` (memcpy, memmove).
pub(super) fn string_routine(function: &str) -> Option<&'static str> {
    if function.contains("memset") {
        Some("filling")
    } else if function.contains("memcpy") || function.contains("memmove") {
        Some("copying")
    } else {
        None
    }
}

/// The cost tables: per request, what each knob changes, where the instructions go, and what
/// choosing the crate costs.
impl Tables for Section {
    fn tables(&self) -> Vec<Table> {
        let mut headers = vec!["Cell", "Application"];
        headers.extend(FIGURES.iter().map(|f| self.label(f)));
        let waits = self.shows_waits();
        if waits {
            headers.extend(WAITS.iter().map(|(label, _)| *label));
        }
        let rows: Vec<Vec<String>> = self
            .cells
            .iter()
            .map(|c| {
                let mut row = vec![c.cell.clone(), c.server.clone()];
                row.extend(FIGURES.iter().map(|f| match f.metric {
                    Metric::CpuPerRequest => opt(c.median(f.of), 1),
                    _ => count(c.median(f.of)),
                }));
                if waits {
                    row.extend(WAITS.iter().map(|(_, of)| count(c.median(*of))));
                }
                row
            })
            .collect();
        let each = self.requests / self.connections.max(1);
        let mut per_request = Table::new(
            format!(
                "Cost per request, counted: loads of {warm} and {more} requests on {c} keep-alive \
                 connections, their difference over {n}; over TLS, of static files, db and \
                 fortunes 4 times as many on {few} connections, compressed answers as many on \
                 {few}; uploads {few} connections of {up} ({} run(s) each)",
                self.frame.repeats,
                n = self.requests,
                warm = self.connections * super::warm_up(each),
                more = self.connections * super::warm_up(each) + self.requests,
                c = self.connections,
                few = self.connections.min(super::Plan::FEW),
                up = each.min(super::Plan::UPLOAD_EACH),
            ),
            &headers,
            grouped(rows, 0),
        );
        let syscalls = if self.by_proc() {
            "read/write syscalls over 5% (from /proc/PID/io where perf could not count: the \
             read and write class only, another count than perf's syscalls, never compared \
             with it)"
        } else {
            "syscalls over 5% (from perf's tracepoint; the waits, epoll_wait and futex, left \
             out of them)"
        };
        per_request.notes.push(format!(
            "Counted by {}; {}. A difference in instructions or allocations over 2% is a \
             difference, in {syscalls}. CPU µs is timed, this machine's.",
            if self.instruments.is_empty() {
                "nothing".to_owned()
            } else {
                self.instruments.join(", ")
            },
            self.repeatability(),
        ));
        if waits {
            per_request.notes.push(WAITS_NOTE.to_owned());
        }
        per_request.notes.extend(self.tools.describe());
        let fell = self.cells.iter().any(|c| {
            FIGURES
                .iter()
                .filter(|f| f.metric != Metric::CpuPerRequest)
                .any(|f| c.median(f.of).is_some_and(|m| m < 0.0))
        });
        if fell {
            per_request.notes.push(FELL.to_owned());
        }
        per_request.notes.extend(self.skipped.iter().cloned());
        per_request
            .notes
            .extend(failure_notes(&self.frame.failures));
        let functions: Vec<Vec<String>> = self
            .cells
            .iter()
            .filter_map(|c| {
                let (name, share) = c.top_function()?;
                Some(vec![
                    c.cell.clone(),
                    c.server.clone(),
                    short_function(name),
                    format!("{:.1}%", share * 100.0),
                ])
            })
            .collect();
        let mut out = vec![per_request];
        out.extend(knobs_table(self));
        if !functions.is_empty() {
            out.push(Table::new(
                "Where the instructions go: each cell's costliest function, by its own instructions",
                &["Cell", "Application", "Function", "Share"],
                grouped(functions, 0),
            ));
        }
        let crates: Vec<Vec<String>> = self
            .crates
            .iter()
            .map(|c| {
                vec![
                    c.server.clone(),
                    opt(c.binary_bytes.map(|b| b as f64 / (1024.0 * 1024.0)), 2),
                    c.dependencies.map_or("-".to_owned(), |d| d.to_string()),
                    opt(c.idle_kib, 1),
                    opt(c.build_s, 0),
                    opt(c.rebuild_s, 1),
                ]
            })
            .collect();
        if !crates.is_empty() {
            let mut table = Table::new(
                "What choosing the crate costs",
                &[
                    "Application",
                    "Binary (MiB, stripped)",
                    "Dependencies",
                    "Idle connection (KiB)",
                    "Clean build (s)",
                    "Rebuild (s)",
                ],
                vec![crates],
            );
            table.notes.push(format!(
                "Idle: resident memory over {} idle keep-alive connections, each after one request. \
                 Build times are this machine's, with --build only.",
                self.crates.first().map_or(0, |c| c.idle_connections)
            ));
            out.push(table);
        }
        out
    }
}

/// What each server with knobs (`greet-hyper+pipeline-flush`) changes per request against
/// its crate at its defaults, cell by cell; none without such a pair.
pub(super) fn knobs_table(cost: &Section) -> Option<Table> {
    let figures = [
        Metric::Instructions,
        Metric::Allocations,
        Metric::Syscalls,
        Metric::CpuPerRequest,
    ];
    let figures: Vec<&Figure> = FIGURES
        .iter()
        .filter(|f| figures.contains(&f.metric))
        .collect();
    let rows: Vec<Vec<String>> = pairs(cost)
        .map(|(base, tuned)| {
            let mut row = vec![tuned.cell.clone(), tuned.server.clone()];
            row.extend(
                figures
                    .iter()
                    .map(|f| change(base.median(f.of), tuned.median(f.of))),
            );
            row
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut headers = vec!["Cell", "Application"];
    headers.extend(figures.iter().map(|f| cost.label(f)));
    let mut table = Table::new(
        "What each knob changes: per request, the crate at its defaults → with the knob",
        &headers,
        grouped(rows, 0),
    );
    table.notes.push(
        "Counts are counted (a change past 2% is the knob's); CPU µs is timed, this \
         machine's. Under mimalloc allocations are not counted (-): DHAT sees only malloc."
            .to_owned(),
    );
    Some(table)
}

/// Each cell of a server with knobs, with the same cell of its crate at its defaults:
/// `(defaults, with knobs)`; none where the crate did not run the cell.
fn pairs(cost: &Section) -> impl Iterator<Item = (&CostCell, &CostCell)> {
    cost.cells
        .iter()
        .filter(|c| greet_model::plan::is_tuned(&c.server))
        .filter_map(|tuned| {
            let defaults = greet_model::plan::crate_of(&tuned.server);
            let base = cost
                .cells
                .iter()
                .find(|c| c.cell == tuned.cell && c.server == defaults)?;
            Some((base, tuned))
        })
}

/// Each server with knobs, cell by cell, for the table of what each knob buys: the change of
/// its counts per request, `-3.8% · -14.3% · -88.2%` (instructions · allocations · syscalls).
pub(super) fn knob_figures(cost: &Section) -> Vec<KnobFigure> {
    let counted = [Metric::Instructions, Metric::Allocations, Metric::Syscalls];
    pairs(cost)
        .map(|(base, tuned)| {
            let changes: Vec<String> = FIGURES
                .iter()
                .filter(|f| counted.contains(&f.metric))
                .map(|f| match (base.median(f.of), tuned.median(f.of)) {
                    (Some(b), Some(t)) if b > 0.0 => format!("{:+.1}%", (t / b - 1.0) * 100.0),
                    _ => "-".to_owned(),
                })
                .collect();
            KnobFigure {
                column: format!("{}: counted", tuned.cell),
                server: tuned.server.clone(),
                text: changes.join(" · "),
            }
        })
        .collect()
}

/// `15.4k → 14.8k (-3.8%)`: a figure at the defaults, with a knob, and the change.
fn change(base: Option<f64>, tuned: Option<f64>) -> String {
    match (base, tuned) {
        (Some(b), Some(t)) if b > 0.0 => format!(
            "{} → {} ({:+.1}%)",
            count(Some(b)),
            count(Some(t)),
            (t / b - 1.0) * 100.0
        ),
        (b, t) => format!("{} → {}", count(b), count(t)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::cost::report::tests::cell;
    use greet_bed::sample::tools::Tools;

    /// A count below zero is printed as counted and flagged, with what the flag means; a
    /// table without one says nothing of it.
    #[test]
    fn a_count_that_fell_is_flagged_not_zeroed() {
        assert_eq!(count(Some(-0.021)), "-0.02 (fell)");
        assert_eq!(count(Some(-12_345.0)), "-12.3k (fell)");
        assert_eq!(count(Some(0.0)), "0.00");
        assert_eq!(count(Some(15_400.0)), "15.4k");
        let counted = |allocations| PerRequest {
            instructions: Some(15_400.0),
            allocations: Some(allocations),
            ..PerRequest::default()
        };
        let table = |allocations| {
            let section = Section {
                cells: vec![cell("greet-hyper", "websocket", counted(allocations))],
                ..Section::default()
            };
            section.tables().remove(0)
        };
        let fell = table(-0.02);
        let row = fell.groups.iter().flatten().next().expect("a row");
        assert_eq!(row[4], "-0.02 (fell)", "{row:?}");
        assert!(fell.notes.iter().any(|n| n == FELL), "{:?}", fell.notes);
        let grew = table(0.02);
        assert!(!grew.notes.iter().any(|n| n == FELL), "{:?}", grew.notes);
    }

    /// Syscalls counted from /proc, perf unable to, are the read and write class only: named
    /// `rw_syscalls` in points and the scorecard, so `compare` never pairs them with perf's
    /// and a `syscalls` threshold names none of them.
    #[test]
    fn syscalls_from_proc_are_another_count() {
        use greet_report::Render;
        let counted = PerRequest {
            syscalls: Some(2.5),
            ..PerRequest::default()
        };
        let section = |instruments: &[&str]| Section {
            instruments: instruments.iter().map(|&i| i.to_owned()).collect(),
            cells: vec![cell("greet-hyper", "baseline", counted.clone())],
            ..Section::default()
        };
        let metrics = |s: &Section| {
            let mut m: Vec<Metric> = (s.points().iter())
                .filter(|p| p.values == [2.5])
                .map(|p| p.metric)
                .collect();
            m.dedup();
            m
        };
        let by_perf = section(&["callgrind", "dhat", "perf"]);
        let by_proc = section(&["proc"]);
        assert_eq!(metrics(&by_perf), [Metric::Syscalls]);
        assert_eq!(metrics(&by_proc), [Metric::RwSyscalls]);
        let header = |s: &Section| s.tables().remove(0).headers[6].clone();
        assert_eq!(header(&by_perf), "syscalls");
        assert_eq!(header(&by_proc), "read/write syscalls");
    }

    /// The waits perf counted are columns of their own, explained, and never points (so never
    /// judged or gated); without them (from /proc) there is no column at all. The note says
    /// what counted, by version.
    #[test]
    fn the_waits_are_shown_apart_and_never_judged() {
        use greet_report::Render;
        let counted = PerRequest {
            syscalls: Some(2.5),
            epoll_waits: Some(0.75),
            futexes: Some(0.125),
            ..PerRequest::default()
        };
        let section = Section {
            instruments: vec!["perf".into()],
            tools: Tools {
                perf: Some("6.1".into()),
                ..Tools::default()
            },
            cells: vec![cell("greet-hyper", "baseline", counted.clone())],
            ..Section::default()
        };
        let table = section.tables().remove(0);
        let at = |h: &str| table.headers.iter().position(|x| x == h).expect(h);
        let row = table.groups.iter().flatten().next().expect("a row");
        assert_eq!(
            (&row[at("epoll waits")], &row[at("futex")]),
            (&"0.75".into(), &"0.12".into())
        );
        assert!(
            table.notes.iter().any(|n| n == WAITS_NOTE),
            "{:?}",
            table.notes
        );
        assert!(
            table.notes.iter().any(|n| n == "Counted with perf 6.1."),
            "{:?}",
            table.notes
        );
        let values: Vec<f64> = section
            .points()
            .iter()
            .flat_map(|p| p.values.clone())
            .collect();
        assert!(values.contains(&2.5), "{values:?}");
        assert!(
            !values.contains(&0.75) && !values.contains(&0.125),
            "{values:?}"
        );
        let by_proc = Section {
            cells: vec![cell(
                "greet-hyper",
                "baseline",
                PerRequest {
                    syscalls: Some(2.5),
                    ..PerRequest::default()
                },
            )],
            ..Section::default()
        };
        let table = by_proc.tables().remove(0);
        assert!(
            !table.headers.iter().any(|h| h == "futex"),
            "{:?}",
            table.headers
        );
        assert!(!table.notes.iter().any(|n| n == WAITS_NOTE));
    }

    /// The note prints how far this run's counts came back, not a fixed sentence: the widest
    /// spread of any cell over its runs, or that one run each measured none.
    #[test]
    fn the_note_says_how_far_the_counts_came_back_in_this_run() {
        let runs = |instructions: &[f64]| CostCell {
            runs: instructions
                .iter()
                .map(|&i| PerRequest {
                    instructions: Some(i),
                    allocations: Some(7.0),
                    ..PerRequest::default()
                })
                .collect(),
            ..cell("greet-hyper", "baseline", PerRequest::default())
        };
        let section = |cells| Section {
            cells,
            frame: greet_model::results::Frame::new(3),
            ..Section::default()
        };
        let three = section(vec![
            runs(&[990.0, 1000.0, 1010.0]),
            runs(&[500.0, 500.0, 500.0]),
        ]);
        assert_eq!(
            three.repeatability(),
            "over 3 runs each, the widest spread between a cell's runs was instructions 2.00%, \
             allocations 0.00%"
        );
        let once = section(vec![runs(&[1000.0])]);
        assert!(
            once.repeatability().starts_with("one run each"),
            "{}",
            once.repeatability()
        );
        let note = &three.tables()[0].notes[0];
        assert!(note.contains("instructions 2.00%"), "{note}");
    }

    #[test]
    fn each_knob_is_set_against_its_crate_at_its_defaults() {
        let counted = |instructions, allocations| PerRequest {
            instructions: Some(instructions),
            allocations,
            ..PerRequest::default()
        };
        let section = Section {
            cells: vec![
                cell("greet-hyper", "baseline", counted(15_400.0, Some(7.0))),
                cell(
                    "greet-hyper+no-head-timeout",
                    "baseline",
                    counted(14_000.0, Some(6.0)),
                ),
                cell("greet-hyper+mimalloc", "baseline", counted(15_000.0, None)),
                // No crate at its defaults in this cell: no row.
                cell("greet-axum+mimalloc", "baseline", counted(20_000.0, None)),
            ],
            ..Section::default()
        };
        let table = knobs_table(&section).expect("two knobs against their crate");
        let rows: Vec<&Vec<String>> = table.groups.iter().flatten().collect();
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[0][1], "greet-hyper+no-head-timeout");
        assert_eq!(rows[0][2], "15.4k → 14.0k (-9.1%)");
        assert_eq!(rows[0][3], "7.00 → 6.00 (-14.3%)");
        assert_eq!(rows[1][3], "7.00 → -");
        let plain = Section {
            cells: vec![cell(
                "greet-hyper",
                "baseline",
                counted(15_400.0, Some(7.0)),
            )],
            ..Section::default()
        };
        assert!(knobs_table(&plain).is_none());
        assert!(knob_figures(&plain).is_empty());
        // The same pairs, for the table of what each knob buys.
        let figures = knob_figures(&section);
        assert_eq!(figures.len(), 2, "{figures:?}");
        assert_eq!(figures[0].column, "baseline: counted");
        assert_eq!(figures[0].server, "greet-hyper+no-head-timeout");
        assert_eq!(figures[0].text, "-9.1% · -14.3% · -");
        assert_eq!(figures[1].text, "-2.6% · - · -");
    }
}
