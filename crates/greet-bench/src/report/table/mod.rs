//! Every scenario's tables as one model, [`Table`], that the text report aligns and the HTML
//! report renders as `<table>`s, each with its comparisons and failures as notes. Each
//! scenario builds its own in a module of its name (the ladder's: the original experiment's
//! two tables, same columns and layout, and an extended one); this one holds [`Table`], the
//! dispatch by scenario and the cells they share.
//!
//! The text layout is the original's: the header line unpadded; a rule of dashes as wide as
//! each column; rows right aligned to those widths; a dotted rule between groups; every line
//! ending in ` |`. Column widths are the header labels', or the widest cell's.

mod business;
mod capacity;
pub(crate) mod ladder;
mod loops;
mod protocols;
mod rate;
mod soak;
mod sweep;
mod techempower;

use std::fmt::Write as _;

use crate::plan::ScenarioKind;
use crate::results::{Failure, Gain, Results};
use crate::stats::mann_whitney::{Comparison, Verdict};
use crate::stats::Summary;

/// One table: a title, column headers, rows in groups (servers), and notes below it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    /// What it shows.
    pub(crate) title: String,
    /// Column headers.
    pub(crate) headers: Vec<String>,
    /// Rows, in groups separated by a dotted rule.
    pub(crate) groups: Vec<Vec<Vec<String>>>,
    /// Lines below the table: comparisons, failures.
    pub(crate) notes: Vec<String>,
}

impl Table {
    fn new(title: impl Into<String>, headers: &[&str], groups: Vec<Vec<Vec<String>>>) -> Self {
        Self {
            title: title.into(),
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            groups: groups.into_iter().filter(|g| !g.is_empty()).collect(),
            notes: Vec::new(),
        }
    }

    /// The table as aligned text, in the original's layout (notes not included).
    pub(crate) fn text(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in self.groups.iter().flatten() {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let rule = |fill: char| {
            let cells: Vec<String> = widths.iter().map(|&w| fill.to_string().repeat(w)).collect();
            format!("{} |\n", cells.join(" + "))
        };
        let mut out = format!("{} |\n", self.headers.join(" | "));
        out.push_str(&rule('-'));
        for (i, group) in self.groups.iter().enumerate() {
            if i > 0 {
                out.push_str(&rule('.'));
            }
            for row in group {
                let cells: Vec<String> = row
                    .iter()
                    .zip(&widths)
                    .map(|(cell, &w)| format!("{cell:>w$}"))
                    .collect();
                let _ = writeln!(out, "{} |", cells.join(" | "));
            }
        }
        out
    }
}

/// The tables of `section` of `results` (none when it did not run).
pub(crate) fn tables(results: &Results, section: ScenarioKind) -> Vec<Table> {
    match section {
        ScenarioKind::Ladder => results
            .ladder
            .as_ref()
            .map(ladder::tables)
            .unwrap_or_default(),
        ScenarioKind::Loops => results
            .loops
            .as_ref()
            .map(loops::tables)
            .unwrap_or_default(),
        ScenarioKind::Soak => results.soak.as_ref().map(soak::tables).unwrap_or_default(),
        ScenarioKind::Sweep => results
            .sweep
            .as_ref()
            .map(sweep::tables)
            .unwrap_or_default(),
        ScenarioKind::Business => results
            .business
            .as_ref()
            .map(business::tables)
            .unwrap_or_default(),
        ScenarioKind::Rate => results.rate.as_ref().map(rate::tables).unwrap_or_default(),
        ScenarioKind::Capacity => results
            .capacity
            .as_ref()
            .map(capacity::tables)
            .unwrap_or_default(),
        ScenarioKind::Protocols => results
            .protocols
            .as_ref()
            .map(protocols::tables)
            .unwrap_or_default(),
        ScenarioKind::TechEmpower => results
            .techempower
            .as_ref()
            .map(techempower::tables)
            .unwrap_or_default(),
    }
}

/// `-` where a count was not measured.
fn count(value: Option<u64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// `-` where a figure was not measured.
pub(crate) fn opt(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
}

fn comparison_notes(comparisons: &[Comparison]) -> Vec<String> {
    comparisons.iter().map(Comparison::line).collect()
}

/// The best setting's columns: its flags, its throughput and the default's, the gain, p and
/// the verdict.
fn gain_cells(label: &str, gain: &Gain, is_default: bool) -> [String; 6] {
    [
        label.to_owned(),
        format!("{:.1}", gain.requests_per_s),
        format!("{:.1}", gain.default_requests_per_s),
        format!("{:.3}", gain.gain),
        format!("{:.3}", gain.comparison.p_value),
        if is_default {
            "the default is best".to_owned()
        } else {
            gain.comparison.verdict.describe().to_owned()
        },
    ]
}

/// The note under a table whose comparisons had too few runs to reach a verdict.
fn too_few_runs<'a>(comparisons: impl IntoIterator<Item = &'a Comparison>) -> Option<String> {
    comparisons
        .into_iter()
        .any(|c| c.verdict == Verdict::TooFewRuns)
        .then(|| "too few runs to tell: 4 or more per setting are needed (--repeats)".to_owned())
}

fn failure_notes(failures: &[Failure]) -> Vec<String> {
    failures
        .iter()
        .map(|f| format!("{} FAILED: {}", f.server, f.error))
        .collect()
}

/// `median (min-max)` of a throughput.
fn spread(s: &Summary) -> String {
    format!("{:.1} ({:.1}-{:.1})", s.median, s.min, s.max)
}

/// Consecutive rows that agree on their first `key` cells, as one group.
fn grouped(rows: Vec<Vec<String>>, key: usize) -> Vec<Vec<Vec<String>>> {
    let mut groups: Vec<Vec<Vec<String>>> = Vec::new();
    for row in rows {
        match groups.last_mut() {
            Some(group) if group[0][..key] == row[..key] => group.push(row),
            _ => groups.push(vec![row]),
        }
    }
    groups
}
