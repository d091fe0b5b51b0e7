//! What each knob buys, across scenarios: every section that set a server with knobs
//! (`greet-hyper+pipeline-flush`) against its crate at its defaults says so through
//! [`Render::knobs`](crate::Render::knobs), a figure per column (cost: what a request
//! costs, counted; techempower: the paired throughput ratio; knobs: the contract rows the
//! knob changes), and [`table`] sets them side by side, one row per server with knobs.

use crate::table::{grouped, Table};
use crate::Present;
use greet_model::plan::{crate_of, is_tuned};
use greet_stats::paired::Comparison;

/// One figure of a server with knobs, against its crate at its defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct KnobFigure {
    /// The column: what is measured, and on what (`plaintext: throughput, timed`).
    pub column: String,
    /// The server with knobs, by its table name.
    pub server: String,
    /// The change: `-7.4%`, `3.27× [3.10, 3.41] ahead`, `slow_head_is_cut`.
    pub text: String,
}

/// What each knob buys and gives up, one row per server with knobs and one column per
/// figure the sections gave, in the order they gave them; none where no section set a knob
/// against its crate.
pub fn table(present: &[Present<'_>]) -> Option<Table> {
    let figures: Vec<KnobFigure> = present.iter().flat_map(|p| p.section.knobs()).collect();
    if figures.is_empty() {
        return None;
    }
    let mut columns: Vec<&str> = Vec::new();
    let mut servers: Vec<&str> = Vec::new();
    for f in &figures {
        if !columns.contains(&f.column.as_str()) {
            columns.push(&f.column);
        }
        if !servers.contains(&f.server.as_str()) {
            servers.push(&f.server);
        }
    }
    let rows = servers
        .iter()
        .map(|server| {
            let (crate_name, knobs) = server
                .split_once(greet_model::plan::KNOB_MARK)
                .unwrap_or((server, ""));
            let mut row = vec![crate_name.to_owned(), knobs.to_owned()];
            row.extend(columns.iter().map(|column| {
                figures
                    .iter()
                    .find(|f| f.server == *server && f.column == *column)
                    .map_or_else(|| "-".to_owned(), |f| f.text.clone())
            }));
            row
        })
        .collect();
    let mut headers = vec!["Crate", "Knobs"];
    headers.extend(columns.iter().copied());
    let mut table = Table::new(
        "What each knob buys: each crate with its knobs against the same crate at its defaults",
        &headers,
        grouped(rows, 1),
    );
    table.notes.push(
        "Counted: the change per request (instructions · allocations · syscalls; - where not \
         counted, as allocations under mimalloc); instructions and allocations come back to \
         within 1% on a rerun, syscalls to a few. Timed: throughput with the knobs over \
         without, paired block by block, with its interval and word. Gives up: the \
         contract's rows the knobs change (none: every row answers as at the defaults)."
            .to_owned(),
    );
    Some(table)
}

/// Each comparison of a server with knobs against its crate at its defaults, on the same
/// figure and load (labels `server what…`, as the harness's
/// `contenders_pairwise` names them), read as the knobs' gain: with over without, its interval and word, in column
/// `column(what, figure)`.
pub fn paired(
    comparisons: &[Comparison],
    column: impl Fn(&str, &str) -> String,
) -> Vec<KnobFigure> {
    comparisons
        .iter()
        .filter_map(|c| {
            let (a, what) = c.a.split_once(' ').unwrap_or((&c.a, ""));
            let (b, also) = c.b.split_once(' ').unwrap_or((&c.b, ""));
            if what != also || crate_of(a) != crate_of(b) {
                return None;
            }
            let (server, judged) = match (is_tuned(a), is_tuned(b)) {
                (false, true) => (b, c.judged.flipped()),
                (true, false) => (a, c.judged),
                _ => return None,
            };
            Some(KnobFigure {
                column: column(what, c.figure.describe()),
                server: server.to_owned(),
                text: format!("{} {}", judged.show(), judged.word.describe()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::points::Point;
    use crate::scorecard::Row;
    use crate::Render;

    struct Gives(Vec<KnobFigure>);

    impl crate::Tables for Gives {
        fn tables(&self) -> Vec<crate::table::Table> {
            Vec::new()
        }
    }

    impl crate::Charts for Gives {
        type Chart = crate::svg::Drawing;
        fn charts(&self) -> Vec<(String, crate::svg::Drawing)> {
            Vec::new()
        }
    }

    impl Render for Gives {
        fn csv(&self) -> anyhow::Result<Vec<(String, String)>> {
            Ok(Vec::new())
        }
        fn points(&self) -> Vec<Point> {
            Vec::new()
        }
        fn scorecard(&self) -> Vec<Row> {
            Vec::new()
        }
        fn knobs(&self) -> Vec<KnobFigure> {
            self.0.clone()
        }
    }

    fn figure(column: &str, server: &str, text: &str) -> KnobFigure {
        KnobFigure {
            column: column.to_owned(),
            server: server.to_owned(),
            text: text.to_owned(),
        }
    }

    fn present(section: &dyn Render) -> Present<'_> {
        Present {
            name: "x",
            title: "x",
            block: "a repeat",
            measures_again: false,
            stores: false,
            looks: 1,
            section,
        }
    }

    #[test]
    fn each_server_with_knobs_is_a_row_and_each_figure_a_column() {
        let counted = Gives(vec![
            figure("baseline", "greet-hyper+pipeline-flush", "-3.8%"),
            figure("baseline", "greet-axum+fat-lto+panic-abort", "-20.7%"),
        ]);
        let timed = Gives(vec![figure(
            "plaintext",
            "greet-hyper+pipeline-flush",
            "3.27× [3.10, 3.41] ahead",
        )]);
        let table = table(&[present(&counted), present(&timed)]).expect("figures");
        assert_eq!(table.headers, ["Crate", "Knobs", "baseline", "plaintext"]);
        let rows: Vec<&Vec<String>> = table.groups.iter().flatten().collect();
        assert_eq!(
            *rows[0],
            [
                "greet-hyper",
                "pipeline-flush",
                "-3.8%",
                "3.27× [3.10, 3.41] ahead"
            ]
        );
        // A figure a section did not give is a dash; the knobs keep their own `+`.
        assert_eq!(
            *rows[1],
            ["greet-axum", "fat-lto+panic-abort", "-20.7%", "-"]
        );
        assert_eq!(table.groups.len(), 2, "a group per crate");
        assert!(super::table(&[present(&Gives(Vec::new()))]).is_none());
    }

    #[test]
    fn a_paired_comparison_reads_as_the_knobs_gain() {
        use greet_stats::paired::{pairwise, Figure};
        let samples = |names: &[&str]| -> Vec<(String, Vec<f64>)> {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let level = [100.0, 300.0, 150.0][i];
                    let runs = (0..8).map(|k| level * (1.0 + 0.001 * k as f64)).collect();
                    ((*n).to_owned(), runs)
                })
                .collect()
        };
        let comparisons = pairwise(
            Figure::RequestsPerS,
            &samples(&[
                "greet-hyper plaintext none",
                "greet-hyper+pipeline-flush plaintext none",
                "greet-axum plaintext none",
            ]),
        );
        let figures = paired(&comparisons, |what, figure| format!("{what}: {figure}"));
        // Only hyper against hyper with its knob: axum is another crate.
        assert_eq!(figures.len(), 1, "{figures:?}");
        assert_eq!(figures[0].server, "greet-hyper+pipeline-flush");
        assert_eq!(figures[0].column, "plaintext none: throughput");
        assert!(
            figures[0].text.starts_with("3.00× ["),
            "{}",
            figures[0].text
        );
        assert!(figures[0].text.ends_with(" ahead"), "{}", figures[0].text);
        // The other way round, the same reading.
        let reversed = pairwise(
            Figure::RequestsPerS,
            &samples(&[
                "greet-hyper+pipeline-flush plaintext none",
                "greet-hyper plaintext none",
            ]),
        );
        let figures = paired(&reversed, |what, _| what.to_owned());
        assert!(
            figures[0].text.starts_with("0.33× ["),
            "{}",
            figures[0].text
        );
        assert!(figures[0].text.ends_with(" behind"), "{}", figures[0].text);
    }
}
