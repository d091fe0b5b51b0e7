//! Everything a run writes, by output format over one data model, as ripgrep's printer is:
//! [`table`] (the tables, as text), [`csv`], [`charts`] (drawn by [`svg`]) and [`html`] (one
//! self-contained page). These are primitives: each scenario builds its own tables, charts
//! and CSV files from them, and shows itself to the report as a [`Section`]. [`write_all`]
//! rewrites every file after every step, so an interrupted run keeps what it measured.

pub(crate) mod charts;
pub(crate) mod csv;
pub(crate) mod html;
pub(crate) mod points;
pub(crate) mod scorecard;
pub(crate) mod svg;
pub(crate) mod table;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::results::Results;
use points::Point;

use charts::ChartFile;
use table::Table;

/// A scenario's section as the report sees it: its tables, charts, CSV files and flat
/// figures.
pub(crate) trait Section {
    /// Its tables, in order.
    fn tables(&self) -> Vec<Table>;
    /// Its charts: file name and the SVG document.
    fn charts(&self) -> Vec<(String, String)>;
    /// Its CSV files: file name and contents.
    fn csv(&self) -> Result<Vec<(String, String)>>;
    /// Every figure it holds, flat, for thresholds and `compare`; `scenario` is filled in by
    /// the caller.
    fn points(&self) -> Vec<Point>;
    /// Its headline figures, for the scorecard.
    fn scorecard(&self) -> Vec<scorecard::Row>;
}

/// A section that ran, with its name and heading.
#[derive(Clone, Copy)]
pub(crate) struct Present<'a> {
    /// Its scenario's name: its key in results.json, its anchor in report.html.
    pub(crate) name: &'static str,
    /// Its heading.
    pub(crate) title: &'static str,
    /// The section.
    pub(crate) section: &'a dyn Section,
}

impl std::fmt::Debug for Present<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Present").field("name", &self.name).finish()
    }
}

/// Every scenario's section of a run.
pub(crate) trait Sections {
    /// The sections that ran, in order.
    fn present(&self) -> Vec<Present<'_>>;
}

/// Every figure of `results`, section by section.
pub(crate) fn points<S: Sections>(results: &Results<S>) -> Vec<Point> {
    results
        .sections
        .present()
        .into_iter()
        .flat_map(|p| {
            p.section.points().into_iter().map(move |mut point| {
                p.name.clone_into(&mut point.scenario);
                point
            })
        })
        .collect()
}

/// Writes every output file into `dir` (created if needed), the scorecard drawn afresh from the
/// sections. Each file is written beside its final name and renamed into place, so a reader
/// never sees half a file.
pub(crate) fn write_all<S: Sections + Serialize>(
    dir: &Path,
    results: &mut Results<S>,
) -> Result<()> {
    results.scorecard = scorecard::of(&results.sections);
    let results = &*results;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let present = results.sections.present();
    let charts: Vec<ChartFile> = present
        .iter()
        .flat_map(|p| {
            p.section.charts().into_iter().map(|(file, svg)| ChartFile {
                section: p.name,
                file,
                svg,
            })
        })
        .collect();
    let mut files: Vec<(String, String)> = vec![
        (
            "results.json".into(),
            serde_json::to_string_pretty(results)? + "\n",
        ),
        (
            "report.html".into(),
            html::page(&results.meta, &results.scorecard, &present, &charts),
        ),
    ];
    for p in &present {
        files.extend(p.section.csv()?);
    }
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
/// its title and followed by its notes, then the scorecard.
pub(crate) fn text<S: Sections>(results: &Results<S>) -> String {
    let mut out = String::new();
    for p in results.sections.present() {
        for table in p.section.tables() {
            out.push_str(&format!("\n{}\n\n{}", table.title, table.text()));
            for note in &table.notes {
                out.push_str(&format!("  {note}\n"));
            }
        }
    }
    out.push_str(&scorecard::text(&scorecard::of(&results.sections)));
    out
}
