//! `report.html`: one self-contained page (inline CSS and SVG, nothing fetched) with the run's
//! settings, then a section per scenario run: its tables as HTML tables, their notes, its charts.

use std::fmt::Write as _;

use crate::charts::ChartFile;
use crate::svg::esc;
use crate::table::Table;
use crate::Present;
use greet_model::results::{Incomplete, Meta, Scorecard};

/// The page for the run `m` describes: whether a signal cut it short, its scorecard, its
/// settings and what it saw of the machine's `noise`, then its sections `present`, with
/// `charts` inlined in their sections.
pub(crate) fn page(
    m: &Meta,
    (card, noise): (&Scorecard, &[String]),
    incomplete: Option<&Incomplete>,
    present: &[Present<'_>],
    charts: &[ChartFile],
) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>greet-bench report</title><style>\
         body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}\
         table{border-collapse:collapse;font-size:13px;margin:.5em 0}\
         th,td{padding:2px 8px;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap}\
         th{background:#f6f8fa}td:first-child,th:first-child{text-align:left}\
         tr.group td{border-top:2px solid #bbb}\
         ul.notes{font-family:monospace;font-size:12px;color:#444}\
         dt{font-weight:bold;float:left;clear:left;width:12em}dd{margin-left:13em}\
         .error{color:#b00}svg{max-width:100%;height:auto;margin:1em 0}\
         td.ahead{background:#d8f0d8}td.behind{background:#f6d6d6}td.within{color:#555}\
         td.capped,td.undecided{color:#888}ul.words{font-size:15px}\
         </style></head><body>\n<h1>Greetings API: axum, actix-web and hyper under identical load</h1>\n",
    );
    if let Some(incomplete) = incomplete {
        let _ = writeln!(
            out,
            "<p class=\"error\"><b>{}</b></p>",
            esc(&incomplete.to_string())
        );
    }
    scorecard(&mut out, card);
    if let Some(table) = crate::gains::table(present) {
        out.push_str("<h2 id=\"knob-gains\">What each knob buys</h2>\n");
        html_table(&mut out, &table);
    }
    let versions: Vec<_> = m
        .crate_versions
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let stores = present.iter().any(|p| p.stores);
    let split = if m.cpus.server.is_empty() {
        "not pinned".to_owned()
    } else if stores {
        format!(
            "servers on CPU {:?}, load generator on CPU {:?}, stores the harness starts \
             (PostgreSQL, Redis) on CPU {:?}",
            m.cpus.server, m.cpus.load, m.cpus.stores
        )
    } else {
        format!(
            "servers on CPU {:?}, load generator on CPU {:?}",
            m.cpus.server, m.cpus.load
        )
    };
    let _ = write!(
        out,
        "<dl><dt>Started</dt><dd>{}</dd><dt>Machine</dt><dd>{} ({} CPUs, {}), kernel {}</dd>\
         <dt>CPU split</dt><dd>{}</dd><dt>Scenarios</dt><dd>{}</dd><dt>Crates</dt><dd>{}</dd>",
        esc(&m.started_at),
        esc(&m.machine),
        m.cpus.count,
        esc(&m.cpus.model),
        esc(&m.kernel),
        esc(&split),
        esc(&m.scenarios.join(", ")),
        esc(&versions.join(", ")),
    );
    // How verdicts are reached matters only where some figure has runs enough for one.
    if card.rows.iter().flat_map(|r| &r.cells).any(|c| c.runs > 1) {
        let _ = write!(
            out,
            "<dt>Telling servers apart</dt><dd>{}</dd>",
            esc(&m.comparison_method)
        );
    }
    if !noise.is_empty() {
        let _ = write!(out, "<dt>Noise</dt><dd>{}</dd>", esc(&noise.join(" ")));
    }
    out.push_str("</dl>\n");
    for p in present {
        let _ = writeln!(out, "<h2 id=\"{}\">{}</h2>", p.name, esc(p.title));
        for table in p.section.tables() {
            html_table(&mut out, &table);
        }
        let drawn: Vec<&ChartFile> = charts.iter().filter(|c| c.section == p.name).collect();
        if !drawn.is_empty() {
            out.push_str("<h3>Charts</h3>\n");
            for chart in drawn {
                out.push_str(&chart.svg);
            }
        }
    }
    out.push_str("</body></html>\n");
    out
}

/// The scorecard: a row per headline figure, a cell per server coloured by its verdict, and
/// the words under it.
fn scorecard(out: &mut String, card: &Scorecard) {
    if card.rows.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"scorecard\">Scorecard</h2>\n<table><thead><tr><th>Figure</th>");
    for s in &card.servers {
        let _ = write!(out, "<th>{}</th>", esc(s));
    }
    for s in &card.tuned {
        // A tuned server's name runs long: it may break after each knob's `+`.
        let name = esc(s).replace('+', "+<wbr>");
        let _ = write!(out, "<th>{name} <small>(tuned)</small></th>");
    }
    for s in &card.references {
        let role = greet_model::plan::reference_role(s).unwrap_or("reference");
        let _ = write!(out, "<th>{} <small>({role})</small></th>", esc(s));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in &card.rows {
        let better = if row.metric.higher_is_better() {
            "more"
        } else {
            "less"
        };
        let _ = write!(
            out,
            "<tr><td>{} <small>({}, {better} is better)</small></td>",
            esc(&row.name()),
            esc(row.metric.unit())
        );
        for s in card
            .servers
            .iter()
            .chain(&card.tuned)
            .chain(&card.references)
        {
            match row.cell(s) {
                None if card.references.contains(s) || card.tuned.contains(s) => {
                    out.push_str("<td></td>")
                }
                None => out.push_str("<td>n/a</td>"),
                Some(c) => {
                    let class = serde_json::to_value(c.mark)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    let cpu = c
                        .cpu_us_per_request
                        .filter(|_| row.metric != greet_model::plan::Metric::CpuPerRequest)
                        .map_or(String::new(), |us| {
                            format!(
                                "<br/><small>{} µs/req CPU</small>",
                                crate::scorecard_text::micros(us)
                            )
                        });
                    let interval = c.vs_best.map_or(String::new(), |j| {
                        format!("<br/><small>{} to the best</small>", esc(&j.show()))
                    });
                    let _ = write!(
                        out,
                        "<td class=\"{class}\" title=\"{}: {:.4} {}\">{:.2} <b>{}</b>{interval}{cpu}</td>",
                        esc(c.mark.describe()),
                        c.median,
                        esc(row.metric.unit()),
                        c.share,
                        esc(c.mark.word())
                    );
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
    let _ = writeln!(
        out,
        "<ul class=\"notes\"><li>Each cell: the server's share of the best (1.00 = the best), \
         its word against the best, its ratio to the best block by block with the interval, and \
         the server's CPU per request where measured</li>\
         <li>{}</li>{}{}</ul>",
        esc(&format!(
            "ahead or behind: the interval lies wholly past {band} of the best; equal: \
             wholly within {band}; undecided: neither; capped: the client's limit, no \
             verdict",
            band = greet_stats::paired::percent(card.band)
        )),
        if card.tuned.is_empty() {
            String::new()
        } else {
            format!(
                "<li>{}</li>",
                esc(&crate::scorecard_text::tuned_legend(&card.tuned))
            )
        },
        if card.references.is_empty() {
            String::new()
        } else {
            format!(
                "<li>{} ran as references, never ranked: their cells are their figure over the \
                 best server's (above 1.00: more than the best)</li>",
                esc(&card.references.join(" and "))
            )
        }
    );
    if !card.words.is_empty() {
        out.push_str("<ul class=\"words\">");
        for w in &card.words {
            let _ = write!(out, "<li>{}</li>", esc(w));
        }
        out.push_str("</ul>\n");
    }
}

fn html_table(out: &mut String, table: &Table) {
    let _ = write!(out, "<h3>{}</h3>\n<table><thead><tr>", esc(&table.title));
    for header in &table.headers {
        let _ = write!(out, "<th>{}</th>", esc(header));
    }
    out.push_str("</tr></thead><tbody>\n");
    for (g, group) in table.groups.iter().enumerate() {
        for (r, row) in group.iter().enumerate() {
            out.push_str(if g > 0 && r == 0 {
                "<tr class=\"group\">"
            } else {
                "<tr>"
            });
            for cell in row {
                let _ = write!(out, "<td>{}</td>", esc(cell));
            }
            out.push_str("</tr>\n");
        }
    }
    out.push_str("</tbody></table>\n");
    if !table.notes.is_empty() {
        out.push_str("<ul class=\"notes\">");
        for note in &table.notes {
            let class = if note.contains("FAILED") {
                " class=\"error\""
            } else {
                ""
            };
            let _ = write!(out, "<li{class}>{}</li>", esc(note));
        }
        out.push_str("</ul>\n");
    }
}
