//! The scorecard printed: the judged [`Scorecard`] as the terminal shows it (a legend, a row
//! of shares and words per figure, then the words), and the pieces report.html shares with it
//! (the tuned league's legend, CPU microseconds as written).

use greet_model::plan::Metric;
use greet_model::results::{ScoreRow, Scorecard};
use greet_stats::paired;

/// The scorecard as text: the legend, a row per figure, then the words.
pub(super) fn text(card: &Scorecard) -> String {
    if card.rows.is_empty() {
        return String::new();
    }
    // A share needs no unit or direction: 1.00 is the best either way.
    let label = |r: &ScoreRow| r.name();
    let first = card
        .rows
        .iter()
        .map(|r| label(r).chars().count())
        .max()
        .unwrap_or(0);
    // A reference or a tuned server runs in a few scenarios only: its other rows are left
    // blank, not n/a.
    let apart = |server: &str| {
        card.references
            .iter()
            .chain(&card.tuned)
            .any(|x| x == server)
    };
    let cell_text = |r: &ScoreRow, server: &str| match r.cell(server) {
        None if apart(server) => String::new(),
        None => "n/a".to_owned(),
        Some(c) => {
            let cpu = c
                .cpu_us_per_request
                .filter(|_| r.metric != Metric::CpuPerRequest)
                .map_or(String::new(), |us| format!(" · {}µs", micros(us)));
            format!("{:.2} {}{cpu}", c.share, c.mark.word())
        }
    };
    let columns: Vec<&String> = card
        .servers
        .iter()
        .chain(&card.tuned)
        .chain(&card.references)
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .map(|s| {
            card.rows
                .iter()
                .map(|r| cell_text(r, s).chars().count())
                .chain([s.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!(
        "\nScorecard: each server's share of the best (1.00 = the best) and its word against \
         the best, from paired blocks: ahead or behind by more than {}, equal within it, \
         undecided, capped (no verdict); µs: the server's CPU per request\n",
        paired::percent(card.band)
    );
    if !card.tuned.is_empty() {
        out.push_str(&format!("{}\n", tuned_legend(&card.tuned)));
    }
    if !card.references.is_empty() {
        out.push_str(&format!(
            "{} ran as references, never ranked: their columns are their figure over the best \
             server's (above 1.00: more than the best)\n",
            card.references.join(" and ")
        ));
    }
    out.push('\n');
    let mut line = format!("{:first$}", "");
    for (s, w) in columns.iter().zip(&widths) {
        line.push_str(&format!("  {s:<w$}"));
    }
    out.push_str(line.trim_end());
    out.push('\n');
    for row in &card.rows {
        let mut line = format!("{:first$}", label(row));
        for (s, w) in columns.iter().zip(&widths) {
            line.push_str(&format!("  {:<w$}", cell_text(row, s)));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if !card.words.is_empty() {
        out.push('\n');
        for w in &card.words {
            out.push_str(&format!("  {w}\n"));
        }
    }
    out
}

/// What the tuned columns are, in one line (the terminal's and report.html's).
pub(super) fn tuned_legend(tuned: &[String]) -> String {
    format!(
        "{} ran tuned, with knobs: a league of their own, each its share of the best tuned \
         server and its word against that one, never ranked against the crates at their \
         defaults",
        tuned.join(", ")
    )
}

/// Microseconds with the digits that matter at their size.
pub(super) fn micros(us: f64) -> String {
    if us >= 100.0 {
        format!("{us:.0}")
    } else {
        format!("{us:.1}")
    }
}
