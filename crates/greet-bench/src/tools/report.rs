//! `greet-bench report RUN`: a run's results.json drawn again with this greet-bench: its
//! tables and scorecard printed, and its report.html, CSVs and charts written again beside it,
//! its results.json left as it was; or everything, results.json with its new scorecard
//! included, into `--out`. Nothing is measured. Last, the offline A/A of its comparisons
//! ([`greet_stats::paired::offline_aa`]): how often its own blocks, their servers swapped at
//! random, still give a word.

use std::path::{Path, PathBuf};

use crate::diff;
use greet_report::{self as report, Sections};
use greet_stats::paired::{offline_aa, Member};

use super::Outcome;

/// Rounds of the offline A/A: a few seconds for a default `all`'s comparisons.
const AA_ROUNDS: usize = 100;

/// Draws run `run` (a folder or its results.json) into `out` (default: the run's folder).
pub(crate) fn run(run: &Path, out: Option<&Path>) -> Outcome {
    let mut results = match diff::read(run) {
        Ok(results) => results,
        Err(err) => return Outcome::Usage(format!("{err:#}")),
    };
    let dir: PathBuf = match out {
        Some(dir) => dir.to_path_buf(),
        None if run.is_dir() => run.to_path_buf(),
        None => run
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
    };
    let written = if out.is_some() {
        report::write_all(&dir, &mut results)
    } else {
        report::redraw(&dir, &mut results)
    };
    if let Err(err) = written {
        eprintln!("greet-bench: error: {err:#}");
        return Outcome::Failed;
    }
    print!("{}", report::text(&results));
    if let Some(incomplete) = &results.incomplete {
        println!("\n{incomplete}");
    }
    let band = results.meta.band;
    let members: Vec<Member> = (results.sections.comparisons_mut().into_iter())
        .map(|(looks, c)| c.member(band, looks))
        .collect();
    if !members.is_empty() {
        let aa = offline_aa(&members, AA_ROUNDS, 1);
        println!(
            "\nOffline A/A: the run's {} comparisons judged again {} times with each block's \
             servers swapped by a coin: {} ahead/behind word(s) in {}, all false: {}.",
            members.len(),
            aa.rounds,
            aa.words,
            aa.judged,
            aa.rate()
        );
    }
    if dir.join("report.html").is_file() {
        eprintln!(
            "greet-bench: report.html and the charts in {}",
            dir.display()
        );
    }
    Outcome::Done
}
