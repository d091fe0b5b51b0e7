//! Everything a run writes, laid out by output format over one data model
//! ([`crate::results::Results`]), as ripgrep's printer is: [`table`] (the tables, as text), [`csv`],
//! [`charts`] (drawn by [`svg`]) and [`html`] (one self-contained page), each covering every
//! scenario. [`write_all`] rewrites them all after every step, so an interrupted run keeps what
//! it measured.

pub(crate) mod charts;
pub(crate) mod comparison;
pub(crate) mod csv;
pub(crate) mod html;
pub(crate) mod svg;
pub(crate) mod table;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::results::Results;

/// Writes every output file into `dir` (created if needed). Each file is written beside its
/// final name and renamed into place, so a reader never sees half a file.
pub(crate) fn write_all(dir: &Path, results: &Results) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let charts = charts::charts(results);
    let mut files: Vec<(String, String)> = vec![
        (
            "results.json".into(),
            serde_json::to_string_pretty(results)? + "\n",
        ),
        ("report.html".into(), html::page(results, &charts)),
    ];
    files.extend(csv::files(results)?);
    files.extend(charts.into_iter().map(|c| (c.file, c.svg)));
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

/// Every table as text, as printed at the end of a run: section by section, each table under
/// its title and followed by its notes.
pub(crate) fn text(results: &Results) -> String {
    let mut out = String::new();
    for section in results.present() {
        for table in table::tables(results, section) {
            out.push_str(&format!("\n{}\n\n{}", table.title, table.text()));
            for note in &table.notes {
                out.push_str(&format!("  {note}\n"));
            }
        }
    }
    out
}
