//! Every scenario's tables as one model, [`Table`], that the text report aligns and the HTML
//! report renders as `<table>`s, each with its comparisons and failures as notes. Each
//! scenario builds its own; this module holds [`Table`] and the cells and notes they share
//! (the agents' table among them).
//!
//! The text layout is the original's: the header line unpadded; a rule of dashes as wide as
//! each column; rows right aligned to those widths; a dotted rule between groups; every line
//! ending in ` |`. Column widths are the header labels', or the widest cell's.

use std::fmt::Write as _;

use greet_model::results::{Failure, Gain, Machine, Trial};
use greet_stats::paired::Comparison;
use greet_stats::Summary;

/// One table: a title, column headers, rows in groups (servers), and notes below it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// What it shows.
    pub title: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows, in groups separated by a dotted rule.
    pub groups: Vec<Vec<Vec<String>>>,
    /// Lines below the table: comparisons, failures.
    pub notes: Vec<String>,
}

impl Table {
    /// A table titled `title`, with `headers` over its row `groups`.
    pub fn new(title: impl Into<String>, headers: &[&str], groups: Vec<Vec<Vec<String>>>) -> Self {
        Self {
            title: title.into(),
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            groups: groups.into_iter().filter(|g| !g.is_empty()).collect(),
            notes: Vec::new(),
        }
    }

    /// The table as aligned text, in the original's layout (notes not included).
    pub fn text(&self) -> String {
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

/// `-` where a count was not measured.
pub fn count(value: Option<u64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// `-` where a figure was not measured.
pub fn opt(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
}

/// A level's steal, percent, starred from [`Machine::HEAVY_STEAL_PCT`]; `-` where unknown.
pub fn steal(machine: Option<Machine>) -> String {
    match machine {
        Some(m) if m.heavy_steal() => format!("{:.1}*", m.steal_pct),
        Some(m) => format!("{:.1}", m.steal_pct),
        None => "-".to_owned(),
    }
}

/// A line for each comparison a table's figures went through: its verdict, interval and word.
pub fn comparison_notes(comparisons: &[Comparison]) -> Vec<String> {
    comparisons.iter().map(Comparison::line).collect()
}

/// The best setting's columns: its flags, its throughput and the default's, the gain over
/// the blocks with its interval, and its word.
pub fn gain_cells(label: &str, gain: &Gain, is_default: bool) -> [String; 6] {
    [
        label.to_owned(),
        format!("{:.1}", gain.requests_per_s),
        format!("{:.1}", gain.default_requests_per_s),
        format!("{:.3}", gain.gain),
        gain.comparison.judged.show(),
        if is_default {
            "the default is best".to_owned()
        } else {
            gain.comparison.word().describe().to_owned()
        },
    ]
}

/// The note under a table whose comparisons were not all decided: how many, and what may
/// decide them.
pub fn undecided<'a>(comparisons: impl IntoIterator<Item = &'a Comparison>) -> Option<String> {
    let (mut all, mut open) = (0, 0);
    for c in comparisons {
        all += 1;
        open += usize::from(!c.word().decided());
    }
    (open > 0).then(|| {
        format!(
            "{open} of {all} comparison(s) undecided: their intervals reach across the band's \
             edge; more blocks (--repeats) may decide them"
        )
    })
}

/// A line for each server that failed in a section: `server FAILED: why`.
pub fn failure_notes(failures: &[Failure]) -> Vec<String> {
    failures
        .iter()
        .map(|f| format!("{} FAILED: {}", f.server, f.error))
        .collect()
}

/// `median (min-max)` of a throughput.
pub fn spread(s: &Summary) -> String {
    format!("{:.1} ({:.1}-{:.1})", s.median, s.min, s.max)
}

/// Consecutive rows that agree on their first `key` cells, as one group.
pub fn grouped(rows: Vec<Vec<String>>, key: usize) -> Vec<Vec<Vec<String>>> {
    let mut groups: Vec<Vec<Vec<String>>> = Vec::new();
    for row in rows {
        match groups.last_mut() {
            Some(group) if group[0][..key] == row[..key] => group.push(row),
            _ => groups.push(vec![row]),
        }
    }
    groups
}
/// Each agent's part of a level split over agents (`--agents`), rows of [`agents_table`].
pub fn agent_rows(name: &str, concurrency: usize, run: &Trial) -> Vec<Vec<String>> {
    run.agents
        .iter()
        .map(|a| {
            vec![
                name.to_owned(),
                concurrency.to_string(),
                format!("{} of {}", a.index, run.agents.len()),
                a.concurrency.to_string(),
                a.requests.to_string(),
                format!("{:.2}", a.success_rate),
                format!("{:.4}", a.total_s),
                format!("{:.1}", a.requests_per_s),
                format!("{:.1}", a.start_skew_ms),
                format!("{:.2}", a.cpu_s),
                a.node.clone().unwrap_or_else(|| "this host".to_owned()),
            ]
        })
        .collect()
}

/// The agents of levels split over several: each one's share, as it counted it (the level's
/// own figures are their merged tallies).
pub fn agents_table(groups: Vec<Vec<Vec<String>>>) -> Table {
    Table::new(
        "Agents: each one's share of its level (the level's figures merge their tallies)",
        &[
            "Application",
            "Concurrency",
            "Agent",
            "Its concurrency",
            "Requests",
            "Success rate(%)",
            "Total(secs)",
            "Requests/sec",
            "Start skew(ms)",
            "CPU(s)",
            "Node",
        ],
        groups,
    )
}
