//! The knobs scenario's section of results.json (each server's failing rows of the
//! contract), its table of what each knob gives up, and its column of the table of what each
//! knob buys.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::scenario::kit::Compared;
use greet_model::plan::{crate_of, is_tuned, Metric};
use greet_model::results::Frame;
use greet_report::gains::KnobFigure;
use greet_report::points::Point;
use greet_report::scorecard::Row;
use greet_report::svg::Drawing;
use greet_report::table::{failure_notes, grouped, Table};
use greet_report::{csv, Charts, Render, Tables};

/// The knobs scenario's part of results.json.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// Each server checked, in order: the crates at their defaults and with their knobs.
    pub servers: Vec<Checked>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub frame: Frame,
}

/// One server's rows of the contract that failed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Checked {
    /// The server, by its table name (`greet-hyper+pipeline-flush`).
    pub server: String,
    /// Each row it failed, with what differed; none: it answered every row.
    pub failing: Vec<FailingRow>,
}

/// A row of the contract a server failed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct FailingRow {
    /// The contract's name for it (`slow_head_is_cut`).
    pub row: String,
    /// What differed.
    pub why: String,
}

impl Section {
    /// The rows `checked` fails that its crate at its defaults answers: what its knobs give
    /// up. All it fails where it is the crate at its defaults, or its crate was not checked.
    pub fn given_up<'a>(&'a self, checked: &'a Checked) -> Vec<&'a FailingRow> {
        let defaults = self
            .servers
            .iter()
            .find(|c| c.server == crate_of(&checked.server) && c.server != checked.server);
        checked
            .failing
            .iter()
            .filter(|f| defaults.is_none_or(|d| d.failing.iter().all(|g| g.row != f.row)))
            .collect()
    }
}

impl Compared for Section {
    /// Every comparison it makes: none (a row answers or not).
    fn comparisons(&mut self) -> Vec<&mut greet_stats::paired::Comparison> {
        Vec::new()
    }
}

/// What differed, cut to a table's width: a row of many cases lists them all (the whole is in
/// knobs.csv and results.json).
fn short(why: &str) -> String {
    const WIDTH: usize = 100;
    match why.char_indices().nth(WIDTH) {
        Some((at, _)) => format!("{}…", &why[..at]),
        None => why.to_owned(),
    }
}

impl Tables for Section {
    fn tables(&self) -> Vec<Table> {
        let rows = self
            .servers
            .iter()
            .flat_map(|checked| {
                // A crate at its defaults has no crate to set it against: every row it fails
                // is shown (none should be).
                let mut rows: Vec<Vec<String>> = self
                    .given_up(checked)
                    .into_iter()
                    .map(|f| vec![checked.server.clone(), f.row.clone(), short(&f.why)])
                    .collect();
                if rows.is_empty() {
                    rows.push(vec![
                        checked.server.clone(),
                        "none".to_owned(),
                        "every row answers as at the defaults".to_owned(),
                    ]);
                }
                rows
            })
            .collect();
        let mut table = Table::new(
            "What each knob gives up: the contract's rows that answer otherwise with it on \
             (the quick cases, a slow head, HTTP/1.1's idle limit, a WebSocket echo; what \
             differed in full in knobs.csv)",
            &["Application", "Row", "What differed"],
            grouped(rows, 1),
        );
        table.notes.extend(failure_notes(&self.frame.failures));
        vec![table]
    }
}

impl Charts for Section {
    type Chart = Drawing;

    fn charts(&self) -> Vec<(String, Drawing)> {
        Vec::new()
    }
}

impl Render for Section {
    fn csv(&self) -> Result<Vec<(String, String)>> {
        /// A row of knobs.csv.
        #[derive(Serialize)]
        struct CsvRow<'a> {
            server: &'a str,
            row: &'a str,
            why: &'a str,
        }
        let rows = self.servers.iter().flat_map(|c| {
            c.failing.iter().map(|f| CsvRow {
                server: &c.server,
                row: &f.row,
                why: &f.why,
            })
        });
        Ok(vec![("knobs.csv".to_owned(), csv::write(rows)?)])
    }

    fn points(&self) -> Vec<Point> {
        self.servers
            .iter()
            .flat_map(|c| {
                let rows = c.failing.len() as f64;
                Point::each(&c.server, ("", ""), [(Metric::ContractRows, vec![rows])])
            })
            .collect()
    }

    fn scorecard(&self) -> Vec<Row> {
        Vec::new()
    }

    fn knobs(&self) -> Vec<KnobFigure> {
        self.servers
            .iter()
            .filter(|c| is_tuned(&c.server))
            .map(|checked| {
                let rows: Vec<&str> = self
                    .given_up(checked)
                    .iter()
                    .map(|f| f.row.as_str())
                    .collect();
                KnobFigure {
                    column: "Gives up (contract rows)".to_owned(),
                    server: checked.server.clone(),
                    text: if rows.is_empty() {
                        "none".to_owned()
                    } else {
                        rows.join(", ")
                    },
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(server: &str, rows: &[&str]) -> Checked {
        Checked {
            server: server.to_owned(),
            failing: rows
                .iter()
                .map(|r| FailingRow {
                    row: (*r).to_owned(),
                    why: format!("{r} differed"),
                })
                .collect(),
        }
    }

    #[test]
    fn a_knob_gives_up_the_rows_its_crate_answers() {
        let section = Section {
            servers: vec![
                checked("greet-hyper", &["odd_row"]),
                checked(
                    "greet-hyper+no-head-timeout",
                    &["odd_row", "slow_head_is_cut"],
                ),
                checked("greet-hyper+mimalloc", &[]),
                // Its crate not checked: every failing row is the knob's.
                checked("greet-axum+pipeline-flush", &["bad_request_line"]),
            ],
            ..Section::default()
        };
        let figures = section.knobs();
        let texts: Vec<(&str, &str)> = figures
            .iter()
            .map(|f| (f.server.as_str(), f.text.as_str()))
            .collect();
        assert_eq!(
            texts,
            [
                ("greet-hyper+no-head-timeout", "slow_head_is_cut"),
                ("greet-hyper+mimalloc", "none"),
                ("greet-axum+pipeline-flush", "bad_request_line"),
            ]
        );
        let table = &section.tables()[0];
        let rows: Vec<&Vec<String>> = table.groups.iter().flatten().collect();
        // The crate's own odd row is shown on the crate, not on its knob.
        assert_eq!(rows[0][..2], ["greet-hyper", "odd_row"]);
        assert_eq!(
            rows[1][..2],
            ["greet-hyper+no-head-timeout", "slow_head_is_cut"]
        );
        assert_eq!(rows[2][..2], ["greet-hyper+mimalloc", "none"]);
        let points = section.points();
        assert_eq!(points.len(), 4);
        assert_eq!(
            (points[1].metric, &points[1].values),
            (Metric::ContractRows, &vec![2.0])
        );
        let long = "x".repeat(300);
        assert_eq!(short(&long).chars().count(), 101);
        assert_eq!(short("brief"), "brief");
        let csv = &section.csv().expect("writes")[0].1;
        assert!(
            csv.contains("greet-hyper+no-head-timeout,slow_head_is_cut,"),
            "{csv}"
        );
    }
}
