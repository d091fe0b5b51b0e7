//! `report.html`: one self-contained page (inline CSS and SVG, nothing fetched) with the
//! run's settings, then a section per scenario run with its tables and charts.

use std::fmt::Write as _;

use super::svg::esc;
use super::{scenarios, table};
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
    let _ = writeln!(
        out,
        "<dl><dt>Started</dt><dd>{}</dd><dt>Machine</dt><dd>{} ({} CPUs, {}), kernel {}</dd>\
         <dt>CPU split</dt><dd>{}</dd><dt>Scenarios</dt><dd>{}</dd><dt>Crates</dt><dd>{}</dd>\
         <dt>Telling servers apart</dt><dd>{}; a difference inside the noise is never \
         called a win</dd></dl>",
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
        esc(&m.scenarios.join(", ")),
        esc(&versions.join(", ")),
        esc(&m.comparison_method),
    );
    let chart = |name: &str| {
        charts
            .iter()
            .filter(|(file, _)| file.starts_with(name))
            .map(|(_, svg)| svg.as_str())
            .collect::<String>()
    };
    if let Some(flags) = &m.flags {
        let levels: Vec<_> = flags.concurrency.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            out,
            "<h2 id=\"ladder\">Ladder</h2>\n<p>Server flags --delay-ms {} --workers {} \
             --blocking-threads {}; {} concurrent, one request per fresh connection, {} run(s) \
             each{}.</p>",
            flags.delay_ms,
            flags.workers,
            flags.blocking_threads,
            levels.join(", "),
            flags.repeats,
            if flags.repeats > 1 {
                " (figures are medians)"
            } else {
                ""
            },
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
            let _ = write!(out, "<h3>{title}</h3>\n<pre>{}</pre>\n", esc(&text));
        }
        if !results.ladder_comparisons.is_empty() {
            let lines: Vec<String> = results
                .ladder_comparisons
                .iter()
                .map(|c| c.line())
                .collect();
            let _ = write!(
                out,
                "<h3>Servers compared on total time</h3>\n<pre>{}</pre>\n",
                esc(&lines.join("\n"))
            );
        }
        let ladder_charts: String = charts
            .iter()
            .filter(|(file, _)| {
                !["loops", "soak", "sweep"]
                    .iter()
                    .any(|p| file.starts_with(p))
            })
            .map(|(_, svg)| svg.as_str())
            .collect();
        let _ = write!(out, "<h3>Charts</h3>\n{ladder_charts}");
    }
    if let Some(loops) = &results.loops {
        let _ = write!(
            out,
            "<h2 id=\"loops\">Loops (the JMeter experiment)</h2>\n<pre>{}</pre>\n{}",
            esc(&scenarios::loops_text(loops)),
            chart("loops")
        );
    }
    if let Some(soak) = &results.soak {
        let _ = write!(
            out,
            "<h2 id=\"soak\">Soak (the siege / ab experiment)</h2>\n<pre>{}</pre>\n{}",
            esc(&scenarios::soak_text(soak)),
            chart("soak")
        );
    }
    if let Some(sweep) = &results.sweep {
        let _ = write!(
            out,
            "<h2 id=\"sweep\">Sweep (the tuning experiment)</h2>\n<pre>{}</pre>\n{}",
            esc(&scenarios::sweep_text(sweep)),
            chart("sweep")
        );
    }
    out.push_str("</body></html>\n");
    out
}
