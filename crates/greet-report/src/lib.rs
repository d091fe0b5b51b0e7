//! Everything a run writes, by output format over one data model, as ripgrep's printer is:
//! [`table`] (the tables, as text), [`csv`], [`charts`] (drawn by [`svg`] on `canvas`) and
//! `html` (one self-contained page). These are primitives: each scenario builds its own
//! tables, charts and CSV files from them, and shows itself to the report through [`Render`].
//! The [`scorecard`] is judged over every section and printed by `scorecard_text`; [`order`]
//! says where a server's place in a block moved a figure anyway, and [`left_out`] where the
//! blocks left out fell on one server.
//! [`write_all`] rewrites every file after every step, so an interrupted run keeps what it
//! measured.
//!
//! A crate of its own under the harness (`greet-bench`): it draws from the data model
//! (`greet-model`) and the verdicts (`greet-stats`) alone, and names no scenario; a scenario's
//! section comes to it as a [`Render`].

mod canvas;
pub mod charts;
pub mod csv;
pub mod gains;
mod html;
pub mod left_out;
pub mod order;
pub mod points;
pub mod scorecard;
mod scorecard_text;
pub mod svg;
pub mod table;
mod words;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use greet_model::results::Results;
use points::Point;

use charts::ChartFile;
use table::Table;

/// A section's tables, in order: written where they are built.
pub trait Tables {
    /// Its tables, in order.
    fn tables(&self) -> Vec<Table>;
}

/// A section's charts, each of the kind it draws, as its own tests read them.
pub trait Charts {
    /// The kind of chart it draws (bars, lines, or [`svg::Drawing`] where it draws both).
    type Chart: Into<svg::Drawing>;
    /// Its charts: file name and the chart.
    fn charts(&self) -> Vec<(String, Self::Chart)>;
}

/// A section's charts as the report draws them: written once, for every [`Charts`].
pub trait Drawn {
    /// Its charts: file name and the drawing.
    fn drawings(&self) -> Vec<(String, svg::Drawing)>;
}

impl<T: Charts> Drawn for T {
    fn drawings(&self) -> Vec<(String, svg::Drawing)> {
        (self.charts().into_iter())
            .map(|(file, chart)| (file, chart.into()))
            .collect()
    }
}

/// A scenario's section as the report draws it: its tables ([`Tables`]) and charts
/// ([`Charts`]), each written where it is built, and here its CSV files, flat figures and
/// scorecard rows.
pub trait Render: Tables + Drawn {
    /// Its CSV files: file name and contents.
    fn csv(&self) -> Result<Vec<(String, String)>>;
    /// Every figure it holds, flat, for thresholds and `compare`; `scenario` is filled in by
    /// the caller.
    fn points(&self) -> Vec<Point>;
    /// Its headline figures, for the scorecard.
    fn scorecard(&self) -> Vec<scorecard::Row>;
    /// What it says in words beside the scorecard's verdicts: the mechanism behind a
    /// difference, where the section can name it.
    fn words(&self) -> Vec<String> {
        Vec::new()
    }
    /// What each server with knobs changes against its crate at its defaults, a figure per
    /// column of the table of what each knob buys ([`gains::table`]).
    fn knobs(&self) -> Vec<gains::KnobFigure> {
        Vec::new()
    }
}

/// A section that ran, with its name and heading.
#[derive(Clone, Copy)]
pub struct Present<'a> {
    /// Its scenario's name: its key in results.json, its anchor in report.html.
    pub name: &'static str,
    /// Its heading.
    pub title: &'static str,
    /// What one of its blocks is, as its results recorded it ([`greet_model::results::Frame::block`]):
    /// empty where it judges nothing by blocks, or in a file from before it was recorded.
    pub block: &'a str,
    /// A load its comparisons rest on is measured once more where heavy steal disturbed it.
    pub measures_again: bool,
    /// It loads the stores the harness starts.
    pub stores: bool,
    /// How many times its blocks could have been looked at to decide whether to add more
    /// (1: a fixed number of blocks): its verdicts pay for each look.
    pub looks: usize,
    /// The section.
    pub section: &'a dyn Render,
}

impl std::fmt::Debug for Present<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Present").field("name", &self.name).finish()
    }
}

/// Every scenario's section of a run.
pub trait Sections {
    /// The sections that ran, in order.
    fn present(&self) -> Vec<Present<'_>>;
    /// Every comparison of every section that ran, each with its section's looks
    /// ([`Present::looks`]): the run's family with the scorecard's rows
    /// ([`scorecard::judge_run`]).
    fn comparisons_mut(&mut self) -> Vec<(usize, &mut greet_stats::paired::Comparison)>;
}

/// Every figure of `results`, section by section.
pub fn points<S: Sections>(results: &Results<S>) -> Vec<Point> {
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
pub fn write_all<S: Sections + Serialize>(dir: &Path, results: &mut Results<S>) -> Result<()> {
    write(dir, results, true)
}

/// Draws `results` into `dir` again: report.html, the CSVs and the charts, with its scorecard
/// drawn afresh; its results.json is left as it is.
pub fn redraw<S: Sections + Serialize>(dir: &Path, results: &mut Results<S>) -> Result<()> {
    write(dir, results, false)
}

/// Every output file into `dir`, results.json only if `json`; false when nothing was
/// measured, and no report drawn.
fn write<S: Sections + Serialize>(dir: &Path, results: &mut Results<S>, json: bool) -> Result<()> {
    results.scorecard = scorecard::judge_run(&mut results.sections, results.meta.band);
    let results = &*results;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut files: Vec<(String, String)> = Vec::new();
    if json {
        files.push((
            "results.json".into(),
            serde_json::to_string_pretty(results)? + "\n",
        ));
    }
    if points(results).is_empty() {
        // Nothing measured (every server failed, the only target refused): the failures are
        // in results.json, and no report of empty tables and charts is drawn.
        for stale in ["report.html", "report.tmp"] {
            let _ = std::fs::remove_file(dir.join(stale));
        }
        for (name, text) in files {
            write_atomically(&dir.join(name), &text)?;
        }
        return Ok(());
    }
    let present = results.sections.present();
    let charts: Vec<ChartFile> = present
        .iter()
        .flat_map(|p| {
            p.section
                .drawings()
                .into_iter()
                .map(|(file, chart)| ChartFile {
                    section: p.name,
                    file,
                    svg: chart.render(),
                })
                .chain(verdicts_chart(&results.scorecard, p.name))
        })
        .collect();
    files.push((
        "report.html".into(),
        html::page(
            &results.meta,
            (&results.scorecard, &noise(results)),
            results.incomplete.as_ref(),
            &present,
            &charts,
        ),
    ));
    for p in &present {
        files.extend(p.section.csv()?);
    }
    files.extend(charts.into_iter().map(|c| (c.file, c.svg)));
    for (name, text) in files {
        write_atomically(&dir.join(name), &text)?;
    }
    Ok(())
}

/// Section `name`'s verdicts drawn from the scorecard (`NAME-verdicts.svg`), where a row of
/// it was judged on blocks.
fn verdicts_chart(
    scorecard: &greet_model::results::Scorecard,
    name: &'static str,
) -> Option<ChartFile> {
    let rows: Vec<&greet_model::results::ScoreRow> = scorecard
        .rows
        .iter()
        .filter(|r| r.scenario == name)
        .collect();
    let drawn = charts::against_best(name, &rows, scorecard.band)?;
    Some(ChartFile {
        section: name,
        file: format!("{name}-verdicts.svg"),
        svg: svg::render_banded(&drawn.chart, &drawn.bands),
    })
}

fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let mut tmp = PathBuf::from(path);
    tmp.set_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Every table as text, as printed at the end of a run: section by section, each table under
/// its title and followed by its notes, then the scorecard; one line when nothing was
/// measured.
pub fn text<S: Sections>(results: &Results<S>) -> String {
    if points(results).is_empty() {
        return "greet-bench: nothing was measured (every server failed, as said above): no \
                tables, no report\n"
            .to_owned();
    }
    let mut out = String::new();
    let present = results.sections.present();
    let tables = present.iter().flat_map(|p| p.section.tables());
    for table in tables.chain(gains::table(&present)) {
        out.push_str(&format!("\n{}\n\n{}", table.title, table.text()));
        for note in &table.notes {
            out.push_str(&format!("  {note}\n"));
        }
    }
    out.push_str(&scorecard_text::text(&results.scorecard));
    let noise = noise(results);
    if !noise.is_empty() {
        out.push('\n');
        for line in noise {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}

/// What a run did about the noise of a shared machine, and what it saw of it, one line each:
/// how repeats were ordered, and the hypervisor's steal.
pub fn noise<S: Sections>(results: &Results<S>) -> Vec<String> {
    let present = results.sections.present();
    let mut out = Vec::new();
    let blocked: Vec<String> = (present.iter())
        .filter(|p| !p.block.is_empty())
        .map(|p| format!("{} ({})", p.name, p.block))
        .collect();
    if !blocked.is_empty() {
        out.push(format!(
            "Blocks take every server once, close together, in a Williams order (each server in \
             every place, and after every other, alike), so drift falls on a block alike: {}.",
            blocked.join("; ")
        ));
    }
    out.extend(scorecard::copies(&results.scorecard));
    if let Some(noise) = &results.noise {
        out.push(format!("Machine: {}.", noise.line()));
        if !noise.heavy.is_empty() {
            let again: Vec<&str> = (present.iter())
                .filter(|p| p.measures_again)
                .map(|p| p.name)
                .collect();
            let again = match again.as_slice() {
                [] => String::new(),
                names => format!(
                    " {} measure a load under heavy steal again, once, first.",
                    names.join(", ")
                ),
            };
            out.push(format!(
                "A block with a load the machine disturbed (heavy steal, or other programs on a \
                 tenth of the CPUs) is left out of that server's throughput comparisons: each \
                 says the blocks it rests on.{again}"
            ));
        }
    }
    out
}
