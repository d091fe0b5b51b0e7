//! `greet-bench merge`: agents' reports from a cluster's logs (or files) as one ladder level,
//! merged exactly, printed as the ladder's tables or as its JSON.

use std::io::Read as _;
use std::path::PathBuf;

use anyhow::Result;

use crate::report;
use crate::results::{Level, Run};

/// The text of `files`, one after another, or of stdin when there are none; a file that
/// cannot be read is one line.
pub(crate) fn read(files: &[PathBuf]) -> Result<String, String> {
    let mut text = String::new();
    if files.is_empty() {
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("stdin: {e}"))?;
        return Ok(text);
    }
    for file in files {
        let part = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
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
        run: Run {
            load: counted.tally().figures(),
            agents,
            ..Default::default()
        },
        runs: Vec::new(),
    })
}

/// `level` as JSON, or as the ladder's tables.
pub(crate) fn render(level: &Level, json: bool) -> Result<String> {
    if json {
        return Ok(format!("{}\n", serde_json::to_string_pretty(level)?));
    }
    Ok(report::table::ladder::merged("agents", level)
        .iter()
        .map(|table| format!("{}\n{}\n", table.title, table.text()))
        .collect())
}
