//! The TechEmpower table: each server's throughput per test and store, its share of the best
//! server there, its latency, and the servers against each other.

use super::Section;

use crate::report::table::{comparison_notes, failure_notes, grouped, opt, too_few_runs, Table};

/// One row per test, store and server, in the order the tests ran.
pub(super) fn tables(techempower: &Section) -> Vec<Table> {
    let mut cells: Vec<_> = techempower.cells.iter().collect();
    // Stable: tests in the order they ran, then stores, servers in the order given.
    let order = crate::stats::distinct(cells.iter().map(|c| (c.test.clone(), c.store.clone())));
    cells.sort_by_key(|c| order.iter().position(|k| k.0 == c.test && k.1 == c.store));
    let rows = cells
        .iter()
        .map(|c| {
            vec![
                c.test.clone(),
                c.store.clone(),
                c.server.clone(),
                format!("{:.1}", c.requests_per_s.median),
                format!("{:.1}-{:.1}", c.requests_per_s.min, c.requests_per_s.max),
                format!("{:.1}", c.share_of_best * 100.0),
                format!("{:.2}", c.p50_ms),
                format!("{:.2}", c.p99_ms),
                format!("{:.2}", c.success_rate),
                opt(c.cpu_avg_pct, 1),
            ]
        })
        .collect();
    let mut table = Table::new(
        format!(
            "TechEmpower: {} keep-alive connections (plaintext {} requests deep each), {} rows \
             per queries/updates/cached-queries request, {:.2} s measured after {:.2} s \
             warm-up, {} run(s) per test on a fresh server",
            techempower.concurrency,
            techempower.plaintext_pipeline,
            techempower.rows,
            techempower.duration_s,
            techempower.warmup_s,
            techempower.header.repeats,
        ),
        &[
            "Test",
            "Store",
            "Application",
            "Requests/sec",
            "min-max",
            "% of best",
            "p50(ms)",
            "p99(ms)",
            "Success(%)",
            "CPU avg(%)",
        ],
        grouped(rows, 2),
    );
    table.notes = comparison_notes(&techempower.comparisons);
    table.notes.extend(techempower.store_notes.iter().cloned());
    table.notes.extend(too_few_runs(&techempower.comparisons));
    table
        .notes
        .extend(failure_notes(&techempower.header.failures));
    vec![table]
}
