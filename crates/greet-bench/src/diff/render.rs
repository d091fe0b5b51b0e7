//! A comparison of two runs ([`Diff`]) in each output format: aligned text, a Markdown table,
//! JSON, and one HTML page whose forest plot shows each figure's ratio NEW/OLD, its spread
//! over the runs, the noise band and the verdict by colour.

use std::fmt::Write as _;

use greet_report::svg::esc;

use super::{Diff, Row};

/// How `compare` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Aligned columns for a terminal.
    Text,
    /// A Markdown table, for a pull-request comment.
    Markdown,
    /// The [`Diff`] as JSON.
    Json,
    /// One self-contained page: a forest plot of the ratios, then the table.
    Html,
}

/// The columns of the tables.
const HEADERS: [&str; 9] = [
    "scenario", "server", "at", "figure", "old", "new", "new/old", "p", "verdict",
];

/// `diff` in `format`.
pub(crate) fn render(diff: &Diff, format: Format) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(diff).unwrap_or_default() + "\n",
        Format::Html => page(diff),
        Format::Text | Format::Markdown => table(diff, format == Format::Markdown),
    }
}

/// One row's cells.
fn cells(r: &Row) -> [String; 9] {
    [
        r.scenario.clone(),
        r.server.clone(),
        r.at.clone(),
        format!("{} ({})", r.metric, r.metric.unit()),
        figure(r.old),
        figure(r.new),
        r.ratio
            .map_or("-".to_owned(), |ratio| format!("{ratio:.3}")),
        r.p.map_or("-".to_owned(), |p| format!("{p:.3}")),
        r.verdict.clone(),
    ]
}

/// The summary line: how many figures, the noise band, what differs on purpose.
fn summary(diff: &Diff) -> String {
    let mut line = format!(
        "{} figure(s) in both runs ({} only in OLD, {} only in NEW); noise band ±{:.0} %",
        diff.rows.len(),
        diff.unpaired[0],
        diff.unpaired[1],
        diff.noise * 100.0
    );
    if !diff.varied.is_empty() {
        let _ = write!(line, "; varied on purpose: {}", diff.varied.join(", "));
    }
    line
}

fn table(diff: &Diff, md: bool) -> String {
    let rows: Vec<[String; 9]> = diff.rows.iter().map(cells).collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}{}",
        if md { "**compare**: " } else { "compare: " },
        summary(diff)
    );
    for line in &diff.differences {
        let _ = writeln!(out, "{}differs: {line}", if md { "- " } else { "  " });
    }
    out.push('\n');
    if md {
        let _ = writeln!(out, "| {} |", HEADERS.join(" | "));
        let _ = writeln!(out, "|{}", " --- |".repeat(HEADERS.len()));
        for row in &rows {
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        return out;
    }
    let mut widths: Vec<usize> = HEADERS.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, &w)| format!("{c:<w$}"))
            .collect();
        format!("{}\n", cells.join("  ").trim_end())
    };
    out.push_str(&line(&HEADERS.map(String::from)));
    for row in &rows {
        out.push_str(&line(row));
    }
    out.push_str(&standings(diff));
    out
}

/// The scorecard rows both runs have: each server's share of the best and its mark, OLD → NEW.
fn standings(diff: &Diff) -> String {
    if diff.standings.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nScorecard, OLD → NEW: each server's share of the best and its word in that run \
         (paired blocks): + ahead, - behind, = equal, ? undecided, > capped\n",
    );
    for s in &diff.standings {
        let cells: Vec<String> = s
            .servers
            .iter()
            .map(|(server, [(o, om), (n, nm)])| {
                format!("{server} {o:.2}{} → {n:.2}{}", om.sign(), nm.sign())
            })
            .collect();
        let _ = writeln!(out, "  {}: {}", s.figure, cells.join(", "));
    }
    let _ = writeln!(out, "{}", diff.again.line());
    out
}

/// A figure with the digits that matter at its size.
fn figure(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The page: what differs, the forest plot, the table.
fn page(diff: &Diff) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>greet-bench compare</title><style>\
         body{font-family:sans-serif;margin:2em;color:#222}\
         table{border-collapse:collapse;font-size:13px}\
         th,td{padding:2px 8px;border-bottom:1px solid #e4e4e4;text-align:right}\
         td:nth-child(-n+4),th:nth-child(-n+4){text-align:left}\
         </style></head><body><h1>greet-bench compare</h1>",
    );
    let _ = write!(out, "<p>{}.</p>", esc(&summary(diff)));
    if !diff.differences.is_empty() {
        out.push_str("<p>The runs differ in:</p><ul>");
        for line in &diff.differences {
            let _ = write!(out, "<li>{}</li>", esc(line));
        }
        out.push_str("</ul>");
    }
    out.push_str(&forest(diff));
    out.push_str("<table><tr>");
    for h in HEADERS {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>");
    for row in diff.rows.iter().map(cells) {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", esc(&cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></body></html>\n");
    out
}

/// The forest plot: a line per figure, its ratio a dot on a log scale and a whisker over the
/// ratios its runs allow ([`Row::spread`]), the noise band around 1 shaded; red where worse,
/// green where better, grey otherwise.
fn forest(diff: &Diff) -> String {
    let rows: Vec<(&Row, f64)> = diff
        .rows
        .iter()
        .filter_map(|r| Some((r, r.ratio?)))
        .collect();
    // A spread over a run of 0 has no finite end: the whisker shrinks to the ratio.
    let ends = |r: &Row, ratio: f64| {
        let finite = |v: f64| if v.is_finite() && v > 0.0 { v } else { ratio };
        [finite(r.spread[0]), finite(r.spread[1])]
    };
    if rows.is_empty() {
        return String::new();
    }
    let (label_w, plot_w, line_h, top) = (430.0, 520.0, 16.0, 30.0);
    let (mut lo, mut hi) = (1.0 - 2.0 * diff.noise, 1.0 + 2.0 * diff.noise);
    for (r, ratio) in &rows {
        let [low, high] = ends(r, *ratio);
        lo = f64::min(lo, low);
        hi = f64::max(hi, high);
    }
    let clamp = |v: f64| v.clamp(1e-3, 1e3).ln();
    let (lo, hi) = (clamp(lo), clamp(hi));
    let x = |ratio: f64| label_w + (clamp(ratio) - lo) / (hi - lo).max(1e-9) * plot_w;
    let band = line_h * rows.len() as f64;
    let height = top + band + 10.0;
    let one = x(1.0);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{height:.0}\" \
         font-family=\"sans-serif\" font-size=\"11\">\
         <rect x=\"{:.1}\" y=\"{top}\" width=\"{:.1}\" height=\"{band:.1}\" fill=\"#e8eaf6\"/>\
         <line x1=\"{one:.1}\" y1=\"{top}\" x2=\"{one:.1}\" y2=\"{:.1}\" stroke=\"#888\"/>\
         <text x=\"{one:.1}\" y=\"{:.1}\" text-anchor=\"middle\">NEW/OLD = 1</text>",
        label_w + plot_w + 20.0,
        x(1.0 - diff.noise),
        x(1.0 + diff.noise) - x(1.0 - diff.noise),
        top + band,
        top - 10.0,
    );
    for (i, (r, ratio)) in rows.iter().enumerate() {
        let y = top + line_h * (i as f64 + 0.5);
        // A verdict a threshold breached goes on `; over …`: its colour is its verdict's.
        let colour = match r.verdict.split(';').next().unwrap_or_default() {
            "worse" => "#c62828",
            "better" => "#2e7d32",
            _ => "#555",
        };
        let label = format!("{} {} {} {}", r.scenario, r.server, r.at, r.metric);
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{colour}\"/>\
             <circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"{colour}\">\
             <title>{ratio:.3}: {}</title></circle>",
            label_w - 8.0,
            y + 4.0,
            esc(&label),
            x(ends(r, *ratio)[0]),
            x(ends(r, *ratio)[1]),
            x(*ratio),
            esc(&r.verdict)
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{Again, Standing};
    use greet_model::plan::Metric;
    use greet_model::results::Mark;

    fn row(ratio: f64, verdict: &str) -> Row {
        Row {
            scenario: "a".into(),
            server: "greet-hyper".into(),
            at: "/greetings c=2700".into(),
            metric: Metric::Total,
            old: 1.0,
            new: ratio,
            ratio: Some(ratio),
            old_range: [1.0, 1.0],
            new_range: [ratio, ratio],
            old_runs: vec![1.0],
            new_runs: vec![ratio],
            comparable: true,
            spread: [ratio * 0.9, ratio * 1.1],
            runs: [5, 5],
            p: Some(0.01),
            verdict: verdict.into(),
        }
    }

    #[test]
    fn every_format_shows_every_row() {
        let diff = Diff {
            differences: vec!["kernel: 6.1 → 6.2 <rc>".into()],
            varied: vec!["workers".into()],
            noise: 0.05,
            rows: vec![row(1.3, "worse"), row(0.7, "better")],
            unpaired: [0, 1],
            standings: vec![Standing {
                figure: "soak: keep-alive throughput".into(),
                servers: vec![(
                    "greet-axum".into(),
                    [(0.8, Mark::Behind), (1.0, Mark::Equal)],
                )],
            }],
            again: Again::default(),
        };
        let diff = Diff {
            again: Again::of(&diff.standings),
            ..diff
        };
        let text = render(&diff, Format::Text);
        assert!(
            text.contains("Asked again: 0 of the 1 words OLD decided came back (0%), none turned"),
            "{text}"
        );
        assert!(text.contains("differs: kernel: 6.1 → 6.2"), "{text}");
        assert!(
            text.contains("soak: keep-alive throughput: greet-axum 0.80- → 1.00="),
            "{text}"
        );
        assert!(text.contains("varied on purpose: workers"), "{text}");
        assert_eq!(text.matches("greet-hyper").count(), 2, "{text}");
        let md = render(&diff, Format::Markdown);
        assert_eq!(md.matches("\n| a |").count(), 2, "{md}");
        let json: serde_json::Value = serde_json::from_str(&render(&diff, Format::Json)).unwrap();
        assert_eq!(json["rows"][0]["ratio"], 1.3);
        assert_eq!(json["again"]["decided"], 1);
        let html = render(&diff, Format::Html);
        assert_eq!(html.matches("<circle").count(), 2, "one dot per ratio");
        assert!(
            html.contains("#c62828") && html.contains("#2e7d32"),
            "worse red, better green"
        );
        assert!(html.contains("&lt;rc&gt;"), "escaped");
    }
}
