//! The protocols table: each server's throughput over each protocol and its share of the
//! same server's HTTP/1.1, then the servers against each other on those shares.

use super::section::case as protocol_case;
use super::Section;

use crate::report::table::{comparison_notes, failure_notes, grouped, opt, too_few_runs, Table};

/// One row per server and protocol; the notes compare the servers per protocol.
pub(super) fn tables(protocols: &Section) -> Vec<Table> {
    let rows = protocols
        .cells
        .iter()
        .filter(|c| !c.runs.is_empty())
        .map(|cell| {
            let gain = protocols.of_http1.iter().find(|g| {
                (&g.server, g.protocol, g.streams) == (&cell.server, cell.protocol, cell.streams)
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
                        "{} (p = {:.3})",
                        g.gain.comparison.verdict.describe(),
                        g.gain.comparison.p_value
                    )
                }),
            ]
        })
        .collect();
    let mut table = Table::new(
        format!(
            "Protocols: zero delay, {} keep-alive connections{}, {:.2} s measured after {:.2} s \
             warm-up, {} run(s) per protocol on a fresh server, --workers {}",
            protocols.concurrency,
            if !protocols.cases().iter().any(|c| c.1 > 1) {
                String::new()
            } else if protocols.streams_each.len() > 1 {
                " (HTTP/2 at each stream count)".into()
            } else {
                format!(" ({} to an HTTP/2 connection)", protocols.streams)
            },
            protocols.duration_s,
            protocols.warmup_s,
            protocols.header.repeats,
            protocols.workers,
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
    table.notes = protocols
        .comparisons
        .iter()
        .flat_map(|c| {
            let lines = comparison_notes(&c.comparisons);
            lines
                .into_iter()
                .map(move |line| format!("{}: {line}", protocol_case(c.protocol, c.streams)))
        })
        .collect();
    table.notes.extend(too_few_runs(
        protocols.comparisons.iter().flat_map(|c| &c.comparisons),
    ));
    table
        .notes
        .extend(failure_notes(&protocols.header.failures));
    vec![table]
}
