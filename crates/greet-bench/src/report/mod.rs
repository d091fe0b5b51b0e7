//! Everything a run writes: the text tables, `results.json`, the ladder's two CSVs and four
//! SVG charts, each other scenario's charts, and `report.html`, rewritten after every step so
//! an interrupted run keeps what it measured.

pub mod csv;
pub mod html;
pub mod scenarios;
pub mod svg;
pub mod table;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::results::Results;

/// Writes every output file into `dir` (created if needed). Each file is written beside its
/// final name and renamed into place, so a reader never sees half a file.
pub fn write_all(dir: &Path, results: &Results) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut charts = svg::charts(results);
    charts.extend(scenarios::charts(results));
    let json = serde_json::to_string_pretty(results)?;
    let mut files: Vec<(String, String)> = vec![
        ("results.json".into(), json + "\n"),
        ("report.html".into(), html::page(results, &charts)),
    ];
    if results.meta.flags.is_some() {
        files.push(("ladder.csv".into(), csv::ladder(results)));
        files.push(("resources.csv".into(), csv::resources(results)));
    }
    files.extend(charts.into_iter().map(|(name, svg)| (name.to_owned(), svg)));
    for (name, text) in files {
        write_atomically(&dir.join(name), &text)?;
    }
    Ok(())
}

fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let mut tmp = PathBuf::from(path);
    tmp.set_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// The text tables, as printed at the end of a run: the ladder's three when it ran, then
/// each other scenario's.
pub fn text(results: &Results) -> String {
    let mut out = String::new();
    if results.meta.flags.is_some() {
        out = format!(
            "{}\n{}\n{}",
            table::ladder(results),
            table::resources(results),
            table::extended(results)
        );
        for c in &results.ladder_comparisons {
            out.push_str(&format!("  total time: {}\n", c.line()));
        }
    }
    out + &scenarios::text(results)
}
