//! The loops table.

use super::Section;

use crate::report::table::{comparison_notes, failure_notes, Table};

/// The loops tables: per shape, throughput of each run, the average, median and min–max.
pub(super) fn tables(loops: &Section) -> Vec<Table> {
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
        last.notes.extend(failure_notes(&loops.header.failures));
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
