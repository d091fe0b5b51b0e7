//! The soak tables.

use super::Section;
use crate::stats::distinct;

use crate::report::table::{
    agent_rows, agents_table, comparison_notes, count, failure_notes, grouped, opt, spread, Table,
};

/// The soak tables: throughput and latency, threads, and the original's siege-style matrix per
/// endpoint.
pub(super) fn tables(soak: &Section) -> Vec<Table> {
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
                if soak.header.repeats > 1 {
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
            soak.delay_ms, soak.workers, soak.blocking_threads, soak.header.repeats
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
        last.notes = if soak.header.repeats > 1 {
            comparison_notes(&soak.comparisons)
        } else {
            vec!["one run per level: no verdicts (run with --repeats 4 or more to tell servers apart)".to_owned()]
        };
        last.notes.extend(failure_notes(&soak.header.failures));
    }
    let with_agents = soak
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
        agents.notes = distinct(soak.cells.iter().filter_map(|c| {
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
