//! The text tables and charts of the loops, soak and sweep scenarios, in the ladder tables'
//! layout, each followed by its comparisons.

use std::fmt::Write as _;

use super::svg::{render as draw, Chart};
use super::table::{opt, render};
use crate::compare::{Comparison, Verdict};
use crate::results::{Failure, Loops, Results, Soak, Summary, Sweep};
use crate::stats;

/// Every scenario's tables, in run order.
pub fn text(results: &Results) -> String {
    let mut out = String::new();
    if let Some(loops) = &results.loops {
        out.push_str(&loops_text(loops));
    }
    if let Some(soak) = &results.soak {
        out.push_str(&soak_text(soak));
    }
    if let Some(sweep) = &results.sweep {
        out.push_str(&sweep_text(sweep));
    }
    out
}

/// `(file name, svg)` of every scenario's charts.
pub fn charts(results: &Results) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(loops) = &results.loops {
        out.push(("loops.svg", draw(&loops_chart(loops))));
    }
    if let Some(soak) = &results.soak {
        let (throughput, threads) = soak_charts(soak);
        out.push(("soak-throughput.svg", draw(&throughput)));
        out.push(("soak-threads.svg", draw(&threads)));
    }
    if let Some(sweep) = &results.sweep {
        for (name, chart) in sweep_charts(sweep) {
            out.push((name, draw(&chart)));
        }
    }
    out
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

/// `median (min–max)` of a throughput.
fn spread(s: &Summary) -> String {
    format!("{:.1} ({:.1}-{:.1})", s.median, s.min, s.max)
}

fn comparison_lines(out: &mut String, comparisons: &[Comparison]) {
    for c in comparisons {
        let _ = writeln!(out, "  {}", c.line());
    }
}

/// The loops tables: per shape, throughput of each run, the average, median and min–max.
pub fn loops_text(loops: &Loops) -> String {
    let mut out = String::new();
    for shape in &loops.shapes {
        let _ = writeln!(
            out,
            "\nLoops: {} users x {} requests each, keep-alive, delay {} ms, --workers {}: requests/sec\n",
            shape.users, shape.loops, loops.delay_ms, loops.workers
        );
        let runs = shape
            .servers
            .iter()
            .map(|s| s.runs.len())
            .max()
            .unwrap_or(0);
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
                        .map_or("-".to_owned(), |r| format!("{:.1}", r.requests_per_s))
                }));
                row.extend([
                    format!("{:.1}", s.requests_per_s.mean),
                    format!("{:.1}", s.requests_per_s.median),
                    format!("{:.1}-{:.1}", s.requests_per_s.min, s.requests_per_s.max),
                    format!("{:.2}", stats::repeated(&s.runs).success_rate),
                ]);
                row
            })
            .collect();
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        out.push_str(&render(&headers, vec![rows], false));
        comparison_lines(&mut out, &shape.comparisons);
    }
    failures(&mut out, "loops", &loops.failures);
    out
}

fn failures(out: &mut String, scenario: &str, failed: &[Failure]) {
    for f in failed {
        let _ = writeln!(out, "  {scenario}: {} FAILED: {}", f.server, f.error);
    }
}

/// The distinct values of `items`, in first-seen order.
fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// Consecutive rows that agree on their first `key` cells, as one group (one dotted-rule
/// block in the table).
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

const SOAK: [&str; 9] = [
    "Application",
    "Endpoint",
    "Concurrency",
    "Hits",
    "Success rate(%)",
    "Requests/sec",
    "Average(secs)",
    "CPU avg(%)",
    "Max Memory(MB)",
];

const THREADS: [&str; 7] = [
    "Application",
    "Endpoint",
    "Concurrency",
    "Threads at start",
    "Live",
    "Peak",
    "Total started",
];

/// The soak tables: throughput and latency, threads, and the original's siege-style matrix.
pub fn soak_text(soak: &Soak) -> String {
    let bound = match (soak.duration_s, soak.requests) {
        (Some(d), _) => format!("{d} s"),
        (None, Some(n)) => format!("{n} requests"),
        (None, None) => "-".to_owned(),
    };
    let mut out = format!(
        "\nSoak: keep-alive load for {bound} per level, delay {} ms, --workers {}, --blocking-threads {}, {} run(s) each\n\n",
        soak.delay_ms, soak.workers, soak.blocking_threads, soak.repeats
    );
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
                opt(c.max_rss_mib, 2),
            ]
        })
        .collect();
    out.push_str(&render(&SOAK, grouped(rows, 1), true));
    out.push('\n');
    let rows = soak
        .cells
        .iter()
        .map(|c| {
            vec![
                c.server.clone(),
                c.endpoint.clone(),
                c.concurrency.to_string(),
                c.threads_at_start.to_string(),
                c.threads_live.to_string(),
                c.threads_peak.to_string(),
                c.threads_total.to_string(),
            ]
        })
        .collect();
    out.push_str(&render(&THREADS, grouped(rows, 1), true));
    // The siege table: servers down, levels across, "throughput, average" in each cell.
    let mut levels: Vec<usize> = soak.cells.iter().map(|c| c.concurrency).collect();
    levels.sort_unstable();
    levels.dedup();
    for endpoint in distinct(soak.cells.iter().map(|c| c.endpoint.as_str())) {
        let _ = writeln!(out, "\n{endpoint}: requests/sec, average seconds\n");
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
        out.push_str(&render(&headers, vec![rows], false));
    }
    if soak.repeats > 1 {
        out.push('\n');
        comparison_lines(&mut out, &soak.comparisons);
    } else {
        out.push_str("  one run per level: no verdicts (run with --repeats 4 or more to tell servers apart)\n");
    }
    failures(&mut out, "soak", &soak.failures);
    out
}

const SWEEP: [&str; 8] = [
    "Application",
    "Endpoint",
    "Workers",
    "Blocking threads",
    "Requests/sec",
    "min-max",
    "CPU avg(%)",
    "vs default",
];

const BEST: [&str; 8] = [
    "Application",
    "Endpoint",
    "Best setting",
    "Requests/sec",
    "Default req/s",
    "Gain",
    "p",
    "Verdict",
];

/// The sweep tables: every setting, then the best per server and endpoint.
pub fn sweep_text(sweep: &Sweep) -> String {
    let mut out = format!(
        "\nSweep: zero delay, {} keep-alive connections, {:.2} s measured after {:.2} s warm-up, \
         {} run(s) per setting on a fresh server; default --workers {} --blocking-threads {}\n\n",
        sweep.concurrency,
        sweep.duration_s,
        sweep.warmup_s,
        sweep.repeats,
        sweep.default.workers,
        sweep.default.blocking_threads.unwrap_or(0),
    );
    let mut rows: Vec<Vec<String>> = Vec::new();
    for cell in &sweep.cells {
        let base = sweep
            .best
            .iter()
            .find(|b| b.server == cell.server && b.endpoint == cell.endpoint);
        let row = vec![
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
            base.filter(|b| b.default_requests_per_s > 0.0)
                .map_or("-".to_owned(), |b| {
                    format!(
                        "{:.3}",
                        cell.requests_per_s.median / b.default_requests_per_s
                    )
                }),
        ];
        rows.push(row);
    }
    out.push_str(&render(&SWEEP, grouped(rows, 2), true));
    out.push('\n');
    let rows = sweep
        .best
        .iter()
        .map(|b| {
            vec![
                b.server.clone(),
                b.endpoint.clone(),
                b.setting.label(),
                format!("{:.1}", b.requests_per_s),
                format!("{:.1}", b.default_requests_per_s),
                format!("{:.3}", b.gain),
                format!("{:.3}", b.comparison.p_value),
                if b.setting.is_default(&sweep.default) {
                    "the default is best".to_owned()
                } else {
                    b.comparison.verdict.describe().to_owned()
                },
            ]
        })
        .collect();
    out.push_str(&render(&BEST, vec![rows], false));
    if sweep
        .best
        .iter()
        .any(|b| b.comparison.verdict == Verdict::TooFewRuns)
    {
        out.push_str("  too few runs to tell: 4 or more per setting are needed (--repeats)\n");
    }
    failures(&mut out, "sweep", &sweep.failures);
    out
}

fn loops_chart(loops: &Loops) -> Chart<'static> {
    let names = distinct(
        loops
            .shapes
            .iter()
            .flat_map(|shape| shape.servers.iter().map(|s| s.name.clone())),
    );
    let find = |shape: &crate::results::LoopShape, name: &str| {
        shape
            .servers
            .iter()
            .find(|s| s.name == name && !s.runs.is_empty())
            .map(|s| s.requests_per_s.clone())
    };
    Chart {
        title: "Loops: throughput per shape (median, whiskers min-max)",
        unit: "requests/sec",
        groups: loops
            .shapes
            .iter()
            .map(|s| format!("{} users x {}", s.users, s.loops))
            .collect(),
        series: names
            .iter()
            .map(|name| {
                let values = loops
                    .shapes
                    .iter()
                    .map(|sh| find(sh, name).map(|s| s.median))
                    .collect();
                (name.clone(), values)
            })
            .collect(),
        whiskers: names
            .iter()
            .map(|name| {
                loops
                    .shapes
                    .iter()
                    .map(|sh| find(sh, name).map(|s| [s.min, s.max]))
                    .collect()
            })
            .collect(),
    }
}

fn soak_charts(soak: &Soak) -> (Chart<'static>, Chart<'static>) {
    let groups = distinct(
        soak.cells
            .iter()
            .map(|c| (c.endpoint.clone(), c.concurrency)),
    );
    let names = distinct(soak.cells.iter().map(|c| c.server.clone()));
    let cell = |name: &str, (endpoint, level): &(String, usize)| {
        soak.cells
            .iter()
            .find(|c| c.server == name && &c.endpoint == endpoint && c.concurrency == *level)
    };
    let labels: Vec<String> = groups
        .iter()
        .map(|(e, c)| {
            format!(
                "{} c={c}",
                e.trim_start_matches("/greetings").trim_start_matches('/')
            )
        })
        .map(|l| {
            if l.starts_with(' ') {
                format!("async{l}")
            } else {
                l
            }
        })
        .collect();
    let series = |f: fn(&crate::results::SoakCell) -> f64| {
        names
            .iter()
            .map(|n| {
                let values = groups.iter().map(|g| cell(n, g).map(f)).collect();
                (n.clone(), values)
            })
            .collect()
    };
    let throughput = Chart {
        title: "Soak: throughput per endpoint and connections",
        unit: "requests/sec",
        groups: labels.clone(),
        series: series(|c| c.requests_per_s.median),
        whiskers: names
            .iter()
            .map(|n| {
                groups
                    .iter()
                    .map(|g| {
                        cell(n, g)
                            .filter(|c| c.runs.len() > 1)
                            .map(|c| [c.requests_per_s.min, c.requests_per_s.max])
                    })
                    .collect()
            })
            .collect(),
    };
    let threads = Chart {
        title: "Soak: peak live threads",
        unit: "threads",
        groups: labels,
        series: series(|c| c.threads_peak as f64),
        whiskers: Vec::new(),
    };
    (throughput, threads)
}

fn sweep_charts(sweep: &Sweep) -> Vec<(&'static str, Chart<'static>)> {
    let mut out = Vec::new();
    for (endpoint, file, title) in [
        (
            "/health",
            "sweep-ceiling.svg",
            "Sweep: ceiling (/health) by --workers",
        ),
        (
            "/greetings",
            "sweep-greetings.svg",
            "Sweep: /greetings by --workers",
        ),
        (
            "/greetings/blocking",
            "sweep-blocking.svg",
            "Sweep: /greetings/blocking by --workers and --blocking-threads",
        ),
    ] {
        let cells: Vec<_> = sweep
            .cells
            .iter()
            .filter(|c| c.endpoint == endpoint)
            .collect();
        if cells.is_empty() {
            continue;
        }
        let settings = distinct(cells.iter().map(|c| c.setting));
        let names = distinct(cells.iter().map(|c| c.server.clone()));
        let find = |n: &str, s| {
            cells
                .iter()
                .find(|c| c.server == n && c.setting == s && !c.runs.is_empty())
        };
        out.push((
            file,
            Chart {
                title,
                unit: "requests/sec (median, whiskers min-max)",
                groups: settings
                    .iter()
                    .map(|s| match s.blocking_threads {
                        Some(b) => format!("w{} b{b}", s.workers),
                        None => format!("w{}", s.workers),
                    })
                    .collect(),
                series: names
                    .iter()
                    .map(|n| {
                        let values = settings
                            .iter()
                            .map(|s| find(n, *s).map(|c| c.requests_per_s.median))
                            .collect();
                        (n.clone(), values)
                    })
                    .collect(),
                whiskers: names
                    .iter()
                    .map(|n| {
                        settings
                            .iter()
                            .map(|s| {
                                find(n, *s).map(|c| [c.requests_per_s.min, c.requests_per_s.max])
                            })
                            .collect()
                    })
                    .collect(),
            },
        ));
    }
    out
}
