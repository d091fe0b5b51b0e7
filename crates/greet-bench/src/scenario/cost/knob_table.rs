//! What each knob changes, counted: every server with knobs (`greet-hyper+pipeline-flush`)
//! set against its crate at its defaults, cell by cell, as one table of the cost report.

use crate::plan::Metric;
use crate::report::gains::KnobFigure;
use crate::report::table::{grouped, Table};

use super::figures::{count, Figure, FIGURES};
use super::{CostCell, Section};

/// What each server with knobs (`greet-hyper+pipeline-flush`) changes per request against
/// its crate at its defaults, cell by cell; none without such a pair.
pub(super) fn knobs_table(cost: &Section) -> Option<Table> {
    let figures = [
        Metric::Instructions,
        Metric::Allocations,
        Metric::Syscalls,
        Metric::CpuPerRequest,
    ];
    let figures: Vec<&Figure> = FIGURES
        .iter()
        .filter(|f| figures.contains(&f.metric))
        .collect();
    let rows: Vec<Vec<String>> = pairs(cost)
        .map(|(base, tuned)| {
            let mut row = vec![tuned.cell.clone(), tuned.server.clone()];
            row.extend(figures.iter().map(|f| change(base.median(f.of), tuned.median(f.of))));
            row
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut headers = vec!["Cell", "Application"];
    headers.extend(figures.iter().map(|f| f.label));
    let mut table = Table::new(
        "What each knob changes: per request, the crate at its defaults → with the knob",
        &headers,
        grouped(rows, 0),
    );
    table.notes.push(
        "Counts are counted (a change past 2% is the knob's); CPU µs is timed, this \
         machine's. Under mimalloc allocations are not counted (-): DHAT sees only malloc."
            .to_owned(),
    );
    Some(table)
}

/// Each cell of a server with knobs, with the same cell of its crate at its defaults:
/// `(defaults, with knobs)`; none where the crate did not run the cell.
fn pairs(cost: &Section) -> impl Iterator<Item = (&CostCell, &CostCell)> {
    cost.cells
        .iter()
        .filter(|c| crate::plan::is_tuned(&c.server))
        .filter_map(|tuned| {
            let defaults = crate::plan::crate_of(&tuned.server);
            let base = cost
                .cells
                .iter()
                .find(|c| c.cell == tuned.cell && c.server == defaults)?;
            Some((base, tuned))
        })
}

/// Each server with knobs, cell by cell, for the table of what each knob buys: the change of
/// its counts per request, `-3.8% · -14.3% · -88.2%` (instructions · allocations · syscalls).
pub(super) fn knob_figures(cost: &Section) -> Vec<KnobFigure> {
    let counted = [Metric::Instructions, Metric::Allocations, Metric::Syscalls];
    pairs(cost)
        .map(|(base, tuned)| {
            let changes: Vec<String> = FIGURES
                .iter()
                .filter(|f| counted.contains(&f.metric))
                .map(|f| match (base.median(f.of), tuned.median(f.of)) {
                    (Some(b), Some(t)) if b > 0.0 => format!("{:+.1}%", (t / b - 1.0) * 100.0),
                    _ => "-".to_owned(),
                })
                .collect();
            KnobFigure {
                column: format!("{}: counted", tuned.cell),
                server: tuned.server.clone(),
                text: changes.join(" · "),
            }
        })
        .collect()
}

/// `15.4k → 14.8k (-3.8%)`: a figure at the defaults, with a knob, and the change.
fn change(base: Option<f64>, tuned: Option<f64>) -> String {
    match (base, tuned) {
        (Some(b), Some(t)) if b > 0.0 => format!(
            "{} → {} ({:+.1}%)",
            count(Some(b)),
            count(Some(t)),
            (t / b - 1.0) * 100.0
        ),
        (b, t) => format!("{} → {}", count(b), count(t)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::cost::report::tests::cell;
    use crate::scenario::cost::PerRequest;

    #[test]
    fn each_knob_is_set_against_its_crate_at_its_defaults() {
        let counted = |instructions, allocations| PerRequest {
            instructions: Some(instructions),
            allocations,
            ..PerRequest::default()
        };
        let section = Section {
            cells: vec![
                cell("greet-hyper", "baseline", counted(15_400.0, Some(7.0))),
                cell("greet-hyper+no-head-timeout", "baseline", counted(14_000.0, Some(6.0))),
                cell("greet-hyper+mimalloc", "baseline", counted(15_000.0, None)),
                // No crate at its defaults in this cell: no row.
                cell("greet-axum+mimalloc", "baseline", counted(20_000.0, None)),
            ],
            ..Section::default()
        };
        let table = knobs_table(&section).expect("two knobs against their crate");
        let rows: Vec<&Vec<String>> = table.groups.iter().flatten().collect();
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[0][1], "greet-hyper+no-head-timeout");
        assert_eq!(rows[0][2], "15.4k → 14.0k (-9.1%)");
        assert_eq!(rows[0][3], "7.00 → 6.00 (-14.3%)");
        assert_eq!(rows[1][3], "7.00 → -");
        let plain = Section {
            cells: vec![cell("greet-hyper", "baseline", counted(15_400.0, Some(7.0)))],
            ..Section::default()
        };
        assert!(knobs_table(&plain).is_none());
        assert!(knob_figures(&plain).is_empty());
        // The same pairs, for the table of what each knob buys.
        let figures = knob_figures(&section);
        assert_eq!(figures.len(), 2, "{figures:?}");
        assert_eq!(figures[0].column, "baseline: counted");
        assert_eq!(figures[0].server, "greet-hyper+no-head-timeout");
        assert_eq!(figures[0].text, "-9.1% · -14.3% · -");
        assert_eq!(figures[1].text, "-2.6% · - · -");
    }
}
