//! `report.html`: one self-contained page (inline CSS and SVG, nothing fetched) with the
//! run's settings, the three tables and the four charts.

use std::fmt::Write as _;

use super::svg::esc;
use super::table;
use crate::results::Results;

/// The page for `results`, with `charts` (`(file name, svg)`) inlined.
pub fn page(results: &Results, charts: &[(&str, String)]) -> String {
    let m = &results.meta;
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>greet-bench report</title><style>\
         body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}\
         pre{background:#f6f8fa;padding:1em;overflow-x:auto;font-size:12px}\
         dt{font-weight:bold;float:left;clear:left;width:12em}dd{margin-left:13em}\
         .error{color:#b00}svg{max-width:100%;height:auto;margin:1em 0}\
         </style></head><body>\n<h1>Greetings API: axum, actix-web and hyper under identical load</h1>\n",
    );
    let versions: Vec<_> = m
        .crate_versions
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let levels: Vec<_> = m
        .flags
        .concurrency
        .iter()
        .map(ToString::to_string)
        .collect();
    let _ = writeln!(
        out,
        "<dl><dt>Started</dt><dd>{}</dd><dt>Machine</dt><dd>{} ({} CPUs, {}), kernel {}</dd>\
         <dt>CPU split</dt><dd>{}</dd><dt>Server flags</dt><dd>--delay-ms {} --workers {} \
         --blocking-threads {}</dd><dt>Levels</dt><dd>{} concurrent, one request per fresh \
         connection, {} run(s) each{}</dd><dt>Crates</dt><dd>{}</dd></dl>",
        esc(&m.started_at),
        esc(&m.machine),
        m.cpus.count,
        esc(&m.cpus.model),
        esc(&m.kernel),
        if m.cpus.server.is_empty() {
            "not pinned".to_owned()
        } else {
            format!(
                "servers on CPU {:?}, load generator on CPU {:?}",
                m.cpus.server, m.cpus.load
            )
        },
        m.flags.delay_ms,
        m.flags.workers,
        m.flags.blocking_threads,
        levels.join(", "),
        m.flags.repeats,
        if m.flags.repeats > 1 {
            " (figures are medians)"
        } else {
            ""
        },
        esc(&versions.join(", ")),
    );
    for s in results.servers.iter().filter(|s| s.error.is_some()) {
        let _ = writeln!(
            out,
            "<p class=\"error\">{} failed: {}</p>",
            esc(&s.name),
            esc(s.error.as_deref().unwrap_or_default())
        );
    }
    for (title, text) in [
        ("Ladder", table::ladder(results)),
        ("Start-up and resources", table::resources(results)),
        (
            "Latency percentiles, connect times, threads, errors",
            table::extended(results),
        ),
    ] {
        let _ = write!(out, "<h2>{title}</h2>\n<pre>{}</pre>\n", esc(&text));
    }
    out.push_str("<h2>Charts</h2>\n");
    for (_, svg) in charts {
        out.push_str(svg);
    }
    out.push_str("</body></html>\n");
    out
}
