//! The original experiment's text tables, same columns and layout, and an extended one.
//!
//! The layout: the header line unpadded; a rule of dashes as wide as each column; rows right
//! aligned to those widths; a dotted rule between servers; every line ending in ` |`. Column
//! widths are the header labels', the first column's the longest application name's.

use std::fmt::Write as _;

use crate::results::{Results, Run, ServerResult};

const LADDER: [&str; 9] = [
    "Application",
    "numRequests",
    "Concurrency",
    "Success rate(%)",
    "Total(secs)",
    "Slowest(secs)",
    "Fastest(secs)",
    "Average(secs)",
    "Requests/sec",
];

const RESOURCES: [&str; 4] = [
    "Application",
    "StartUpTime(sec)",
    "Max CPU(%)",
    "Max Memory(MB)",
];

const EXTENDED: [&str; 10] = [
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
];

/// The ladder table: one row per level, servers separated by dotted rules.
pub fn ladder(results: &Results) -> String {
    let groups = per_run(results, |s, r| {
        vec![
            s.name.clone(),
            r.requests.to_string(),
            r.concurrency.to_string(),
            format!("{:.2}", r.success_rate),
            format!("{:.4}", r.total_s),
            format!("{:.4}", r.slowest_s),
            format!("{:.4}", r.fastest_s),
            format!("{:.4}", r.average_s),
            format!("{:.4}", r.requests_per_s),
        ]
    });
    render(&LADDER, groups, true)
}

/// One group of rows per server, one row per level, with `cells` for each row.
fn per_run(
    results: &Results,
    cells: impl Fn(&ServerResult, &Run) -> Vec<String>,
) -> Vec<Vec<Vec<String>>> {
    results
        .servers
        .iter()
        .map(|s| s.runs.iter().map(|r| cells(s, r)).collect())
        .collect()
}

/// The resources table: one row per server. `-` where a figure was not measured.
pub fn resources(results: &Results) -> String {
    let rows = results
        .servers
        .iter()
        .map(|s: &ServerResult| {
            vec![
                s.name.clone(),
                opt(s.startup_s, 4),
                opt(s.max_cpu_pct, 2),
                opt(s.max_rss_mib, 2),
            ]
        })
        .collect();
    render(&RESOURCES, vec![rows], false)
}

/// Latency percentiles, connect times, threads and errors per level.
pub fn extended(results: &Results) -> String {
    let groups = per_run(results, |s, r| {
        let errors = if r.errors.is_empty() {
            "0".to_owned()
        } else {
            let kinds: Vec<_> = r.errors.iter().map(|(k, n)| format!("{k}:{n}")).collect();
            kinds.join(",")
        };
        vec![
            s.name.clone(),
            r.concurrency.to_string(),
            format!("{:.1}", r.latency_ms.p50),
            format!("{:.1}", r.latency_ms.p90),
            format!("{:.1}", r.latency_ms.p99),
            format!("{:.1}", r.latency_ms.p999),
            format!("{:.2}", r.connect_ms.avg),
            format!("{:.2}", r.connect_ms.max),
            r.max_threads.map_or("-".to_owned(), |t| t.to_string()),
            errors,
        ]
    });
    render(&EXTENDED, groups, true)
}

pub(crate) fn opt(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
}

pub(crate) fn render(headers: &[&str], groups: Vec<Vec<Vec<String>>>, dotted: bool) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in groups.iter().flatten() {
        widths[0] = widths[0].max(row[0].chars().count());
        // Wider values widen their column rather than break the layout.
        for (w, cell) in widths.iter_mut().zip(row).skip(1) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let rule = |fill: char| {
        let cells: Vec<String> = widths.iter().map(|&w| fill.to_string().repeat(w)).collect();
        format!("{} |\n", cells.join(" + "))
    };
    let mut out = format!("{} |\n", headers.join(" | "));
    out.push_str(&rule('-'));
    let groups: Vec<_> = groups.into_iter().filter(|g| !g.is_empty()).collect();
    for (i, group) in groups.iter().enumerate() {
        if i > 0 && dotted {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Cpus, Flags, Meta};

    fn results() -> Results {
        // Figures as the original published them (its req/s came from unrounded totals).
        let run = |c: usize, total_s, slowest_s, fastest_s, average_s, requests_per_s| Run {
            concurrency: c,
            requests: c,
            success_rate: 100.0,
            total_s,
            slowest_s,
            fastest_s,
            average_s,
            requests_per_s,
            ..Run::default()
        };
        let server = |name: &str, runs, startup_s, cpu, mem| ServerResult {
            name: name.to_owned(),
            endpoint: "/greetings".to_owned(),
            startup_s,
            max_cpu_pct: cpu,
            max_rss_mib: mem,
            runs,
            ..ServerResult::default()
        };
        Results {
            meta: Meta {
                machine: String::new(),
                cpus: Cpus {
                    count: 2,
                    model: String::new(),
                    server: vec![],
                    load: vec![],
                },
                kernel: String::new(),
                crate_versions: Default::default(),
                scenarios: vec!["ladder".to_owned()],
                flags: Some(Flags {
                    delay_ms: 1000,
                    workers: 1,
                    blocking_threads: 200,
                    concurrency: vec![100, 2700],
                    repeats: 1,
                    timeout_s: 60.0,
                }),
                comparison_method: String::new(),
                started_at: String::new(),
                mode: "process".to_owned(),
            },
            servers: vec![
                server(
                    "greetings-api-tomcat",
                    vec![
                        run(100, 1.2949, 1.2942, 1.2701, 1.2822, 77.2256),
                        run(2700, 14.3752, 14.2423, 1.0296, 7.4867, 187.8241),
                    ],
                    Some(1.892),
                    Some(101.26),
                    Some(269.1),
                ),
                server(
                    "greetings-api-undertow",
                    vec![run(100, 1.3076, 1.3066, 1.2665, 1.2833, 76.4765)],
                    None,
                    None,
                    None,
                ),
            ],
            ladder_comparisons: Vec::new(),
            loops: None,
            soak: None,
            sweep: None,
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
        assert_eq!(ladder(&results()), expected);
    }

    #[test]
    fn resources_matches_the_original_layout() {
        let expected = "\
Application | StartUpTime(sec) | Max CPU(%) | Max Memory(MB) |
---------------------- + ---------------- + ---------- + -------------- |
  greetings-api-tomcat |           1.8920 |     101.26 |         269.10 |
greetings-api-undertow |                - |          - |              - |
";
        assert_eq!(resources(&results()), expected);
    }

    #[test]
    fn extended_has_a_row_per_level() {
        let table = extended(&results());
        assert_eq!(table.lines().count(), 2 + 3 + 1);
        assert!(table.lines().all(|l| l.ends_with(" |")));
    }
}
