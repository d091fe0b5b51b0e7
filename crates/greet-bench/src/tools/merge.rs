//! `greet-bench merge`: agents' reports from a cluster's logs (or files) as one level of
//! fresh connections, merged exactly, printed as tables or as its JSON.

use std::io::Read as _;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::scenario::ladder::Level;
use greet_model::results::Trial;
use greet_report::table::{agent_rows, agents_table, Table};

use super::Outcome;

/// `greet-bench merge`: the level the reports in `files` (or stdin) add up to, printed as
/// tables or as JSON.
pub(crate) fn run(files: &[PathBuf], json: bool) -> Outcome {
    let text = match read(files) {
        Ok(text) => text,
        Err(why) => return Outcome::Usage(format!("{why:#}")),
    };
    match level(&text).and_then(|level| render(&level, json)) {
        Ok(out) => {
            print!("{out}");
            Outcome::Done
        }
        Err(err) => {
            eprintln!("greet-bench merge: error: {err:#}");
            Outcome::Failed
        }
    }
}

/// The text of `files`, one after another, or of stdin when there are none; a file that
/// cannot be read is one line.
pub(crate) fn read(files: &[PathBuf]) -> Result<String> {
    let mut text = String::new();
    if files.is_empty() {
        std::io::stdin()
            .read_to_string(&mut text)
            .context("stdin")?;
        return Ok(text);
    }
    for file in files {
        let part = std::fs::read_to_string(file).with_context(|| file.display().to_string())?;
        text.push_str(&part);
        text.push('\n');
    }
    Ok(text)
}

/// The level every agent's report in `text` adds up to; an agent missing, repeated or
/// unreadable is an error, not a smaller level.
pub(crate) fn level(text: &str) -> Result<Level> {
    let reports = greet_load::gather_reports(text)?;
    let (counted, agents) = greet_load::merge(&reports);
    Ok(Level {
        concurrency: reports.iter().map(|r| r.concurrency).sum(),
        run: Trial {
            load: counted.tally().figures(),
            agents,
            ..Default::default()
        },
        runs: Vec::new(),
    })
}

/// `level` as JSON, or as tables.
pub(crate) fn render(level: &Level, json: bool) -> Result<String> {
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(level)?));
    }
    Ok(merged("agents", level)
        .iter()
        .map(|table| format!("{}\n{}\n", table.title, table.text()))
        .collect())
}

/// A level merged from agents' reports (`greet-bench merge`): its figures, then each agent's.
pub(crate) fn merged(name: &str, level: &Level) -> Vec<Table> {
    let f = &level.run.load;
    let errors: Vec<String> = f.errors.iter().map(|(k, n)| format!("{k}={n}")).collect();
    let figures = Table::new(
        format!(
            "Merged from {} agents: {} requests, one per fresh connection",
            level.run.agents.len(),
            f.requests
        ),
        &[
            "Application",
            "numRequests",
            "Concurrency",
            "Success rate(%)",
            "Total(secs)",
            "Requests/sec",
            "p50(ms)",
            "p90(ms)",
            "p99(ms)",
            "Max(ms)",
            "Errors",
        ],
        vec![vec![vec![
            name.to_owned(),
            f.requests.to_string(),
            level.concurrency.to_string(),
            format!("{:.2}", f.success_rate),
            format!("{:.4}", f.total_s),
            format!("{:.1}", f.requests_per_s),
            format!("{:.1}", f.latency_ms.p50),
            format!("{:.1}", f.latency_ms.p90),
            format!("{:.1}", f.latency_ms.p99),
            format!("{:.1}", f.latency_ms.max),
            if errors.is_empty() {
                "-".to_owned()
            } else {
                errors.join(" ")
            },
        ]]],
    );
    vec![
        figures,
        agents_table(vec![agent_rows(name, level.concurrency, &level.run)]),
    ]
}
