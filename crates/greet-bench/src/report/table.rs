//! Every scenario's tables as one model, [`Table`], that the text report aligns and the HTML
//! report renders as `<table>`s: the original experiment's two tables (same columns and
//! layout) and an extended one, the loops, soak and sweep tables, each with its comparisons and
//! failures as notes.
//!
//! The text layout is the original's: the header line unpadded; a rule of dashes as wide as
//! each column; rows right aligned to those widths; a dotted rule between groups; every line
//! ending in ` |`. Column widths are the header labels', or the widest cell's.

use std::fmt::Write as _;

use crate::compare::{Comparison, Verdict};
use crate::plan::ScenarioKind;
use crate::results::{
    Business, Failure, Gain, Ladder, LadderServer, Level, Loops, Rate, RateServer, Results, Soak,
    Sweep,
};
use crate::stats::{distinct, Summary};

/// One table: a title, column headers, rows in groups (servers), and notes below it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// What it shows.
    pub title: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows, in groups separated by a dotted rule.
    pub groups: Vec<Vec<Vec<String>>>,
    /// Lines below the table: comparisons, failures.
    pub notes: Vec<String>,
}

impl Table {
    fn new(title: impl Into<String>, headers: &[&str], groups: Vec<Vec<Vec<String>>>) -> Self {
        Self {
            title: title.into(),
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            groups: groups.into_iter().filter(|g| !g.is_empty()).collect(),
            notes: Vec::new(),
        }
    }

    /// The table as aligned text, in the original's layout (notes not included).
    pub fn text(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in self.groups.iter().flatten() {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let rule = |fill: char| {
            let cells: Vec<String> = widths.iter().map(|&w| fill.to_string().repeat(w)).collect();
            format!("{} |\n", cells.join(" + "))
        };
        let mut out = format!("{} |\n", self.headers.join(" | "));
        out.push_str(&rule('-'));
        for (i, group) in self.groups.iter().enumerate() {
            if i > 0 {
                out.push_str(&rule('.'));
            }
            for row in group {
                let cells: Vec<String> = row
                    .iter()
                    .zip(&widths)
                    .map(|(cell, &w)| format!("{cell:>w$}"))
                    .collect();
                let _ = writeln!(out, "{} |", cells.join(" | "));
            }
        }
        out
    }
}

/// The tables of `section` of `results` (none when it did not run).
pub fn tables(results: &Results, section: ScenarioKind) -> Vec<Table> {
    match section {
        ScenarioKind::Ladder => results.ladder.as_ref().map(ladder).unwrap_or_default(),
        ScenarioKind::Loops => results.loops.as_ref().map(loops).unwrap_or_default(),
        ScenarioKind::Soak => results.soak.as_ref().map(soak).unwrap_or_default(),
        ScenarioKind::Sweep => results.sweep.as_ref().map(sweep).unwrap_or_default(),
        ScenarioKind::Business => results.business.as_ref().map(business).unwrap_or_default(),
        ScenarioKind::Rate => results.rate.as_ref().map(rate).unwrap_or_default(),
    }
}

/// `-` where a count was not measured.
fn count(value: Option<u64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// `-` where a figure was not measured.
pub(crate) fn opt(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
}

fn comparison_notes(comparisons: &[Comparison]) -> Vec<String> {
    comparisons.iter().map(Comparison::line).collect()
}

/// The best setting's columns: its flags, its throughput and the default's, the gain, p and
/// the verdict.
fn gain_cells(label: &str, gain: &Gain, is_default: bool) -> [String; 6] {
    [
        label.to_owned(),
        format!("{:.1}", gain.requests_per_s),
        format!("{:.1}", gain.default_requests_per_s),
        format!("{:.3}", gain.gain),
        format!("{:.3}", gain.comparison.p_value),
        if is_default {
            "the default is best".to_owned()
        } else {
            gain.comparison.verdict.describe().to_owned()
        },
    ]
}

/// The note under a table whose comparisons had too few runs to reach a verdict.
fn too_few_runs<'a>(comparisons: impl IntoIterator<Item = &'a Comparison>) -> Option<String> {
    comparisons
        .into_iter()
        .any(|c| c.verdict == Verdict::TooFewRuns)
        .then(|| "too few runs to tell: 4 or more per setting are needed (--repeats)".to_owned())
}

fn failure_notes(failures: &[Failure]) -> Vec<String> {
    failures
        .iter()
        .map(|f| format!("{} FAILED: {}", f.server, f.error))
        .collect()
}

/// One group of rows per server, one row per level, with `cells` for each row.
fn per_level(
    servers: &[LadderServer],
    cells: impl Fn(&LadderServer, &Level) -> Vec<String>,
) -> Vec<Vec<Vec<String>>> {
    servers
        .iter()
        .map(|s| s.levels.iter().map(|l| cells(s, l)).collect())
        .collect()
}

/// The ladder's three tables: the original's two and the extended one.
pub fn ladder(ladder: &Ladder) -> Vec<Table> {
    let levels: Vec<String> = ladder.concurrency.iter().map(ToString::to_string).collect();
    let mut original = Table::new(
        format!(
            "Ladder: {} concurrent, one request per fresh connection, --delay-ms {} --workers {}, {} run(s) each{}",
            levels.join(", "),
            ladder.delay_ms,
            ladder.workers,
            ladder.repeats,
            if ladder.repeats > 1 { " (figures are medians)" } else { "" }
        ),
        &[
            "Application",
            "numRequests",
            "Concurrency",
            "Success rate(%)",
            "Total(secs)",
            "Slowest(secs)",
            "Fastest(secs)",
            "Average(secs)",
            "Requests/sec",
        ],
        per_level(&ladder.servers, |s, l| {
            let f = &l.run.load;
            vec![
                s.name.clone(),
                f.requests.to_string(),
                l.concurrency.to_string(),
                format!("{:.2}", f.success_rate),
                format!("{:.4}", f.total_s),
                format!("{:.4}", f.slowest_s),
                format!("{:.4}", f.fastest_s),
                format!("{:.4}", f.average_s),
                format!("{:.4}", f.requests_per_s),
            ]
        }),
    );
    original.notes = failure_notes(&ladder.failures);
    let resources = Table::new(
        "Start-up and resources",
        &[
            "Application",
            "StartUpTime(sec)",
            "Max CPU(%)",
            "Max Memory(MB)",
        ],
        vec![ladder
            .servers
            .iter()
            .map(|s| {
                vec![
                    s.name.clone(),
                    opt(s.startup_s, 4),
                    opt(s.cpu_max_pct, 2),
                    opt(s.rss_max_mib, 2),
                ]
            })
            .collect()],
    );
    let mut extended = Table::new(
        "Latency percentiles, connect times, threads, errors",
        &[
            "Application",
            "Concurrency",
            "p50(ms)",
            "p90(ms)",
            "p99(ms)",
            "p99.9(ms)",
            "Connect avg(ms)",
            "Connect max(ms)",
            "Max threads",
            "Errors",
        ],
        per_level(&ladder.servers, |s, l| {
            let f = &l.run.load;
            let errors = if f.errors.is_empty() {
                "0".to_owned()
            } else {
                let kinds: Vec<_> = f.errors.iter().map(|(k, n)| format!("{k}:{n}")).collect();
                kinds.join(",")
            };
            vec![
                s.name.clone(),
                l.concurrency.to_string(),
                format!("{:.1}", f.latency_ms.p50),
                format!("{:.1}", f.latency_ms.p90),
                format!("{:.1}", f.latency_ms.p99),
                format!("{:.1}", f.latency_ms.p999),
                format!("{:.2}", f.connect_ms.avg),
                format!("{:.2}", f.connect_ms.max),
                l.run
                    .server
                    .threads_max
                    .map_or("-".to_owned(), |t| t.to_string()),
                errors,
            ]
        }),
    );
    extended.notes = comparison_notes(&ladder.comparisons);
    vec![original, resources, extended]
}

/// The original's names for the first three runs.
fn run_label(i: usize) -> String {
    match i {
        0 => "first".to_owned(),
        1 => "second".to_owned(),
        2 => "third".to_owned(),
        _ => format!("run {}", i + 1),
    }
}

/// `median (min-max)` of a throughput.
fn spread(s: &Summary) -> String {
    format!("{:.1} ({:.1}-{:.1})", s.median, s.min, s.max)
}

/// The loops tables: per shape, throughput of each run, the average, median and min–max.
pub fn loops(loops: &Loops) -> Vec<Table> {
    let mut out: Vec<Table> = loops
        .shapes
        .iter()
        .map(|shape| {
            let runs = shape.servers.iter().map(|s| s.runs.len()).max().unwrap_or(0);
            let mut headers: Vec<String> = vec!["Application".into()];
            headers.extend((0..runs).map(run_label));
            headers.extend(["average", "median", "min-max", "Success rate(%)"].map(String::from));
            let rows = shape
                .servers
                .iter()
                .map(|s| {
                    let mut row = vec![s.name.clone()];
                    row.extend((0..runs).map(|i| {
                        s.runs
                            .get(i)
                            .map_or("-".to_owned(), |r| format!("{:.1}", r.load.requests_per_s))
                    }));
                    let success = crate::results::Repeated::of(&s.runs).success_rate;
                    row.extend([
                        format!("{:.1}", s.requests_per_s.mean),
                        format!("{:.1}", s.requests_per_s.median),
                        format!("{:.1}-{:.1}", s.requests_per_s.min, s.requests_per_s.max),
                        format!("{success:.2}"),
                    ]);
                    row
                })
                .collect();
            let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
            let mut table = Table::new(
                format!(
                    "Loops: {} users x {} requests each, keep-alive, delay {} ms, --workers {}: requests/sec",
                    shape.users, shape.loops, loops.delay_ms, loops.workers
                ),
                &headers,
                vec![rows],
            );
            table.notes = comparison_notes(&shape.comparisons);
            table
        })
        .collect();
    if let Some(last) = out.last_mut() {
        last.notes.extend(failure_notes(&loops.failures));
    }
    out
}

/// Consecutive rows that agree on their first `key` cells, as one group.
fn grouped(rows: Vec<Vec<String>>, key: usize) -> Vec<Vec<Vec<String>>> {
    let mut groups: Vec<Vec<Vec<String>>> = Vec::new();
    for row in rows {
        match groups.last_mut() {
            Some(group) if group[0][..key] == row[..key] => group.push(row),
            _ => groups.push(vec![row]),
        }
    }
    groups
}

/// The soak tables: throughput and latency, threads, and the original's siege-style matrix per
/// endpoint.
pub fn soak(soak: &Soak) -> Vec<Table> {
    let bound = match (soak.duration_s, soak.requests) {
        (Some(d), _) => format!("{d} s"),
        (None, Some(n)) => format!("{n} requests"),
        (None, None) => "-".to_owned(),
    };
    let rows = soak
        .cells
        .iter()
        .map(|c| {
            vec![
                c.server.clone(),
                c.endpoint.clone(),
                c.concurrency.to_string(),
                c.hits.to_string(),
                format!("{:.2}", c.success_rate),
                if soak.repeats > 1 {
                    spread(&c.requests_per_s)
                } else {
                    format!("{:.1}", c.requests_per_s.median)
                },
                format!("{:.4}", c.average_s),
                opt(c.cpu_avg_pct, 1),
                opt(c.rss_max_mib, 2),
            ]
        })
        .collect();
    let mut out = vec![Table::new(
        format!(
            "Soak: keep-alive load for {bound} per level, delay {} ms, --workers {}, --blocking-threads {}, {} run(s) each",
            soak.delay_ms, soak.workers, soak.blocking_threads, soak.repeats
        ),
        &[
            "Application",
            "Endpoint",
            "Concurrency",
            "Hits",
            "Success rate(%)",
            "Requests/sec",
            "Average(secs)",
            "CPU avg(%)",
            "Max Memory(MB)",
        ],
        grouped(rows, 1),
    )];
    let rows = soak
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
    let mut levels: Vec<usize> = soak.cells.iter().map(|c| c.concurrency).collect();
    levels.sort_unstable();
    levels.dedup();
    for endpoint in distinct(soak.cells.iter().map(|c| c.endpoint.as_str())) {
        let mut headers = vec!["Application".to_owned()];
        headers.extend(levels.iter().map(|c| format!("-c {c}")));
        let servers = distinct(
            soak.cells
                .iter()
                .filter(|c| c.endpoint == endpoint)
                .map(|c| c.server.as_str()),
        );
        let rows = servers
            .iter()
            .map(|server| {
                let mut row = vec![(*server).to_owned()];
                row.extend(levels.iter().map(|level| {
                    soak.cells
                        .iter()
                        .find(|c| {
                            c.server == *server && c.endpoint == endpoint && c.concurrency == *level
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
        last.notes = if soak.repeats > 1 {
            comparison_notes(&soak.comparisons)
        } else {
            vec!["one run per level: no verdicts (run with --repeats 4 or more to tell servers apart)".to_owned()]
        };
        last.notes.extend(failure_notes(&soak.failures));
    }
    out
}

/// The sweep tables: every setting, then the best per server and endpoint.
pub fn sweep(sweep: &Sweep) -> Vec<Table> {
    let rows = sweep
        .cells
        .iter()
        .map(|cell| {
            let base = sweep
                .best
                .iter()
                .find(|b| b.server == cell.server && b.endpoint == cell.endpoint);
            vec![
                cell.server.clone(),
                cell.endpoint.clone(),
                cell.setting.workers.to_string(),
                cell.setting
                    .blocking_threads
                    .map_or("-".to_owned(), |b| b.to_string()),
                format!("{:.1}", cell.requests_per_s.median),
                format!(
                    "{:.1}-{:.1}",
                    cell.requests_per_s.min, cell.requests_per_s.max
                ),
                opt(cell.cpu_avg_pct, 1),
                base.filter(|b| b.gain.default_requests_per_s > 0.0)
                    .map_or("-".to_owned(), |b| {
                        format!(
                            "{:.3}",
                            cell.requests_per_s.median / b.gain.default_requests_per_s
                        )
                    }),
            ]
        })
        .collect();
    let settings = Table::new(
        format!(
            "Sweep: zero delay, {} keep-alive connections, {:.2} s measured after {:.2} s warm-up, \
             {} run(s) per setting on a fresh server; default --workers {} --blocking-threads {}",
            sweep.concurrency,
            sweep.duration_s,
            sweep.warmup_s,
            sweep.repeats,
            sweep.default.workers,
            sweep.default.blocking_threads.unwrap_or(0),
        ),
        &[
            "Application",
            "Endpoint",
            "Workers",
            "Blocking threads",
            "Requests/sec",
            "min-max",
            "CPU avg(%)",
            "vs default",
        ],
        grouped(rows, 2),
    );
    let rows = sweep
        .best
        .iter()
        .map(|b| {
            vec![b.server.clone(), b.endpoint.clone()]
                .into_iter()
                .chain(gain_cells(
                    &b.setting.label(),
                    &b.gain,
                    b.setting.is_default(&sweep.default),
                ))
                .collect()
        })
        .collect();
    let mut best = Table::new(
        "Sweep: the best setting per server and endpoint",
        &[
            "Application",
            "Endpoint",
            "Best setting",
            "Requests/sec",
            "Default req/s",
            "Gain",
            "p",
            "Verdict",
        ],
        vec![rows],
    );
    best.notes
        .extend(too_few_runs(sweep.best.iter().map(|b| &b.gain.comparison)));
    best.notes.extend(failure_notes(&sweep.failures));
    vec![settings, best]
}

/// The business tables: every cell; each store-bound endpoint as a fraction of the ceiling,
/// with the servers compared; the best `--db-pool`.
pub fn business(business: &Business) -> Vec<Table> {
    let rows = business
        .cells
        .iter()
        .map(|cell| {
            let stores = cell.store_processes.as_ref();
            vec![
                cell.server.clone(),
                cell.store.clone(),
                cell.endpoint.clone(),
                cell.setting.workers.to_string(),
                cell.setting.db_pool.to_string(),
                format!("{:.1}", cell.requests_per_s.median),
                format!(
                    "{:.1}-{:.1}",
                    cell.requests_per_s.min, cell.requests_per_s.max
                ),
                format!("{:.2}", cell.success_rate),
                opt(cell.cpu_avg_pct, 1),
                opt(stores.and_then(|s| s.cpu_avg_pct), 1),
                opt(stores.and_then(|s| s.rss_max_mib), 1),
            ]
        })
        .collect();
    let mut cells = Table::new(
        format!(
            "Business: zero delay, {} keep-alive connections, {:.2} s measured after {:.2} s \
             warm-up, {} run(s) per setting on a fresh server; default {}",
            business.concurrency,
            business.duration_s,
            business.warmup_s,
            business.repeats,
            business.default.label(),
        ),
        &[
            "Application",
            "Store",
            "Endpoint",
            "Workers",
            "DB pool",
            "Requests/sec",
            "min-max",
            "Success(%)",
            "CPU avg(%)",
            "Store CPU avg(%)",
            "Store RSS max(MiB)",
        ],
        grouped(rows, 2),
    );
    cells.notes.extend(business.store_notes.iter().cloned());
    let rows = business
        .fractions
        .iter()
        .map(|f| {
            vec![
                f.server.clone(),
                f.store.clone(),
                f.endpoint.clone(),
                format!("{:.1}", f.requests_per_s),
                format!("{:.1}", f.ceiling_requests_per_s),
                format!("{:.3}", f.fraction),
            ]
        })
        .collect();
    let mut fractions = Table::new(
        format!(
            "Business: each store-bound endpoint as a fraction of the same server's /health, {}",
            business.default.label()
        ),
        &[
            "Application",
            "Store",
            "Endpoint",
            "Requests/sec",
            "/health req/s",
            "Fraction",
        ],
        grouped(rows, 2),
    );
    fractions.notes = comparison_notes(&business.comparisons);
    let rows = business
        .best_pools
        .iter()
        .map(|b| {
            vec![b.server.clone(), b.store.clone(), b.endpoint.clone()]
                .into_iter()
                .chain(gain_cells(
                    &b.setting.label(),
                    &b.gain,
                    b.setting == business.default,
                ))
                .collect()
        })
        .collect();
    let mut best = Table::new(
        "Business: the best --db-pool (and --workers) per server, store and endpoint",
        &[
            "Application",
            "Store",
            "Endpoint",
            "Best setting",
            "Requests/sec",
            "Default req/s",
            "Gain",
            "p",
            "Verdict",
        ],
        grouped(rows, 2),
    );
    best.notes.extend(too_few_runs(
        business
            .best_pools
            .iter()
            .map(|b| &b.gain.comparison)
            .chain(&business.comparisons),
    ));
    best.notes.extend(failure_notes(&business.failures));
    vec![cells, fractions, best]
}

/// The latency budget the rate tables rank levels by: a p99 of 1 ms is what a service
/// answering from memory on loopback keeps until it saturates, so the rate where it breaks is
/// the knee.
pub const P99_BUDGET_MS: f64 = 1.0;

/// The highest achieved rate of `record` with a p99 within [`P99_BUDGET_MS`], not over
/// capacity.
pub fn within_budget(record: &RateServer) -> Option<f64> {
    record
        .levels
        .iter()
        .filter(|l| l.refused.is_none() && !l.over_capacity && l.latency_ms.p99 <= P99_BUDGET_MS)
        .map(|l| l.achieved_rps)
        .reduce(f64::max)
}

/// The rate tables: each server's capacity, then per endpoint every level's latencies.
pub fn rate(rate: &Rate) -> Vec<Table> {
    let rows = rate
        .servers
        .iter()
        .map(|r| {
            vec![
                r.server.clone(),
                r.endpoint.clone(),
                format!("{:.0}", r.capacity_rps),
                format!("{:.0}", r.probe_client_cpu_pct),
                if r.client_max_rps > 0.0 {
                    format!("{:.0}", r.client_max_rps)
                } else {
                    "-".to_owned()
                },
                within_budget(r).map_or("-".to_owned(), |v| format!("{v:.0}")),
            ]
        })
        .collect();
    let mut out = vec![Table::new(
        format!(
            "Rate: capacity by a {:.1} s closed-loop probe on {} connections, delay {} ms, --workers {}",
            rate.probe_s, rate.connections, rate.delay_ms, rate.workers
        ),
        &[
            "Application",
            "Endpoint",
            "Capacity(req/s)",
            "Client CPU in probe(%)",
            "Client max(req/s)",
            &format!("Highest rate, p99 <= {P99_BUDGET_MS} ms"),
        ],
        vec![rows],
    )];
    for endpoint in distinct(rate.servers.iter().map(|s| s.endpoint.as_str())) {
        let groups = rate
            .servers
            .iter()
            .filter(|s| s.endpoint == endpoint)
            .map(|s| {
                s.levels
                    .iter()
                    .map(|l| {
                        let state = match (&l.refused, l.over_capacity, l.client_bound) {
                            (Some(_), _, _) => "refused",
                            (None, true, true) => "over, client",
                            (None, true, false) => "over",
                            (None, false, true) => "held, client",
                            (None, false, false) => "held",
                        };
                        let ms = |v: f64| {
                            if l.refused.is_some() {
                                "-".to_owned()
                            } else {
                                format!("{v:.3}")
                            }
                        };
                        vec![
                            s.server.clone(),
                            l.label.clone(),
                            format!("{:.0}", l.target_rps),
                            format!("{:.0}", l.achieved_rps),
                            state.to_owned(),
                            ms(l.latency_ms.p50),
                            ms(l.latency_ms.p90),
                            ms(l.latency_ms.p99),
                            ms(l.latency_ms.p999),
                            ms(l.latency_ms.p9999),
                            ms(l.latency_ms.max),
                            ms(l.service_ms.p99),
                            l.late.to_string(),
                            l.busy_max.to_string(),
                            format!("{:.0}", l.client_cpu_pct),
                            opt(l.server.cpu_avg_pct, 0),
                        ]
                    })
                    .collect()
            })
            .collect();
        let mut table = Table::new(
            format!(
                "Rate: {endpoint}, {:.1} s a level, latency in ms from each request's intended send",
                rate.duration_s
            ),
            &[
                "Application",
                "Level",
                "Target/s",
                "Achieved/s",
                "Capacity",
                "p50",
                "p90",
                "p99",
                "p99.9",
                "p99.99",
                "max",
                "Service p99",
                "Late",
                "Busy conns",
                "Client CPU(%)",
                "Server CPU(%)",
            ],
            groups,
        );
        table.notes = rate
            .servers
            .iter()
            .filter(|s| s.endpoint == endpoint)
            .flat_map(|s| {
                s.levels.iter().filter_map(move |l| {
                    l.refused
                        .as_ref()
                        .map(|why| format!("{} {}: refused: {why}", s.server, l.label))
                })
            })
            .collect();
        table.notes.extend(
            rate.comparisons
                .iter()
                .filter(|c| c.a.contains(&format!(" {endpoint} ")))
                .map(Comparison::line),
        );
        out.push(table);
    }
    if let Some(last) = out.last_mut() {
        last.notes.push(format!(
            "Capacity: held (achieved >= {:.0}% of the target), over, or refused (more than the \
             load generator can send); client: the load generator used {:.0}% of its CPU or \
             more; late: sent {} ms or more after the intended time",
            rate.over_capacity_below * 100.0,
            rate.client_bound_pct,
            rate.late_ms
        ));
        if rate.repeats < 4 {
            last.notes.push(format!(
                "{} run(s) per level: no verdicts (--repeats 4 or more to tell servers apart)",
                rate.repeats
            ));
        }
        last.notes.extend(failure_notes(&rate.failures));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Figures, Mode, Run, Sampled};

    fn ladder_of() -> Ladder {
        // Figures as the original published them (its req/s came from unrounded totals).
        let level = |c: usize, total_s, slowest_s, fastest_s, average_s, requests_per_s| Level {
            concurrency: c,
            run: Run {
                load: Figures {
                    requests: c as u64,
                    success_rate: 100.0,
                    total_s,
                    slowest_s,
                    fastest_s,
                    average_s,
                    requests_per_s,
                    ..Figures::default()
                },
                server: Sampled::default(),
                engine: None,
            },
            runs: Vec::new(),
        };
        let server = |name: &str, levels, startup_s, cpu, mem| LadderServer {
            name: name.to_owned(),
            endpoint: "/greetings".to_owned(),
            startup_s,
            cpu_max_pct: cpu,
            rss_max_mib: mem,
            levels,
            ..LadderServer::default()
        };
        Ladder {
            mode: Mode::Process,
            delay_ms: 1000,
            workers: 1,
            blocking_threads: 200,
            concurrency: vec![100, 2700],
            repeats: 1,
            timeout_s: 60.0,
            servers: vec![
                server(
                    "greetings-api-tomcat",
                    vec![
                        level(100, 1.2949, 1.2942, 1.2701, 1.2822, 77.2256),
                        level(2700, 14.3752, 14.2423, 1.0296, 7.4867, 187.8241),
                    ],
                    Some(1.892),
                    Some(101.26),
                    Some(269.1),
                ),
                server(
                    "greetings-api-undertow",
                    vec![level(100, 1.3076, 1.3066, 1.2665, 1.2833, 76.4765)],
                    None,
                    None,
                    None,
                ),
            ],
            comparisons: Vec::new(),
            failures: vec![Failure {
                server: "greetings-api-undertow".into(),
                error: "died".into(),
            }],
        }
    }

    #[test]
    fn ladder_matches_the_original_layout() {
        let expected = "\
Application | numRequests | Concurrency | Success rate(%) | Total(secs) | Slowest(secs) | Fastest(secs) | Average(secs) | Requests/sec |
---------------------- + ----------- + ----------- + --------------- + ----------- + ------------- + ------------- + ------------- + ------------ |
  greetings-api-tomcat |         100 |         100 |          100.00 |      1.2949 |        1.2942 |        1.2701 |        1.2822 |      77.2256 |
  greetings-api-tomcat |        2700 |        2700 |          100.00 |     14.3752 |       14.2423 |        1.0296 |        7.4867 |     187.8241 |
...................... + ........... + ........... + ............... + ........... + ............. + ............. + ............. + ............ |
greetings-api-undertow |         100 |         100 |          100.00 |      1.3076 |        1.3066 |        1.2665 |        1.2833 |      76.4765 |
";
        let tables = ladder(&ladder_of());
        assert_eq!(tables[0].text(), expected);
        assert_eq!(tables[0].notes, ["greetings-api-undertow FAILED: died"]);
    }

    #[test]
    fn resources_matches_the_original_layout() {
        let expected = "\
Application | StartUpTime(sec) | Max CPU(%) | Max Memory(MB) |
---------------------- + ---------------- + ---------- + -------------- |
  greetings-api-tomcat |           1.8920 |     101.26 |         269.10 |
greetings-api-undertow |                - |          - |              - |
";
        assert_eq!(ladder(&ladder_of())[1].text(), expected);
    }

    #[test]
    fn extended_has_a_row_per_level() {
        let text = ladder(&ladder_of())[2].text();
        assert_eq!(text.lines().count(), 2 + 3 + 1);
        assert!(text.lines().all(|l| l.ends_with(" |")));
    }
}
