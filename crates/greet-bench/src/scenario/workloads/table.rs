//! The workloads table: a row per profile and server, its share of the profile's best, and
//! the servers against each other per profile in the notes.

use super::Section;

use crate::report::table::{
    comparison_notes, failure_notes, grouped, opt, spread, too_few_runs, Table,
};
use crate::stats::distinct;

/// One row per profile and server, profiles in their order.
pub(super) fn tables(workloads: &Section) -> Vec<Table> {
    let profiles = distinct(workloads.cells.iter().map(|c| c.profile));
    let rows = profiles
        .iter()
        .flat_map(|&p| workloads.cells.iter().filter(move |c| c.profile == p))
        .filter(|c| !c.runs.is_empty())
        .map(|c| {
            vec![
                c.profile.to_string(),
                c.server.clone(),
                if workloads.header.repeats > 1 {
                    spread(&c.requests_per_s)
                } else {
                    format!("{:.1}", c.requests_per_s.median)
                },
                opt(c.share_of_best, 2),
                format!("{:.3}", c.p50_ms),
                format!("{:.3}", c.p99_ms),
                opt(c.bytes_per_answer, 0),
                opt(c.server_cpu_us, 1),
                opt(c.client_cpu_us, 1),
                opt(c.rss_max_mib, 1),
                format!("{:.2}", c.success_rate),
            ]
        })
        .collect();
    let mut table = Table::new(
        format!(
            "Workloads: {} users each, {:.2} s measured after {:.2} s warm-up, {} run(s) per \
             profile on a fresh server, --workers {}, uploads of {} bytes",
            workloads.concurrency,
            workloads.duration_s,
            workloads.warmup_s,
            workloads.header.repeats,
            workloads.workers,
            workloads.upload_bytes,
        ),
        &[
            "Profile",
            "Application",
            "Requests/sec",
            "Share of best",
            "p50 (ms)",
            "p99 (ms)",
            "Bytes/answer",
            "Server CPU/req (µs)",
            "Client CPU/req (µs)",
            "Max memory (MiB)",
            "Success(%)",
        ],
        grouped(rows, 1),
    );
    table.notes = workloads
        .comparisons
        .iter()
        .flat_map(|c| {
            let lines = comparison_notes(&c.comparisons);
            lines
                .into_iter()
                .map(move |line| format!("{}: {line}", c.profile))
        })
        .collect();
    table.notes.extend(too_few_runs(
        workloads.comparisons.iter().flat_map(|c| &c.comparisons),
    ));
    table
        .notes
        .extend(failure_notes(&workloads.header.failures));
    vec![table]
}
