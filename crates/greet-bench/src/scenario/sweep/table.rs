//! The sweep tables.

use super::Section;

use crate::report::table::{failure_notes, gain_cells, grouped, opt, too_few_runs, Table};

/// The sweep tables: every setting, then the best per server and endpoint.
pub(super) fn tables(sweep: &Section) -> Vec<Table> {
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
            sweep.header.repeats,
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
    best.notes.extend(failure_notes(&sweep.header.failures));
    vec![settings, best]
}
