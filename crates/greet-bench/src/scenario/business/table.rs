//! The business tables.

use super::Section;

use crate::report::table::{
    comparison_notes, failure_notes, gain_cells, grouped, opt, too_few_runs, Table,
};

/// The business tables: every cell; each store-bound endpoint as a fraction of the ceiling,
/// with the servers compared; the best `--db-pool`.
pub(super) fn tables(business: &Section) -> Vec<Table> {
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
            business.header.repeats,
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
    best.notes.extend(failure_notes(&business.header.failures));
    vec![cells, fractions, best]
}
