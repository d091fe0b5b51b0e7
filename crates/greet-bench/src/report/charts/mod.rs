//! What each scenario draws, in a module of its name: its figures as [`Chart`]s, each named by
//! its section and file, so the HTML report places them without guessing from file names.

mod business;
mod capacity;
mod ladder;
mod loops;
mod protocols;
mod rate;
mod soak;
mod sweep;
mod techempower;

use crate::plan::ScenarioKind;
use crate::report::svg::{render, render_lines, Chart};
use crate::results::Results;
use crate::stats::Summary;

/// One chart of a section, drawn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChartFile {
    /// The section it belongs to.
    pub(crate) section: ScenarioKind,
    /// Its file name, e.g. `soak-threads.svg`.
    pub(crate) file: String,
    /// The SVG document.
    pub(crate) svg: String,
}

/// Every chart of `results`, section by section.
pub(crate) fn charts(results: &Results) -> Vec<ChartFile> {
    let bars = |charts: Vec<(String, Chart)>| -> Vec<(String, String)> {
        charts
            .into_iter()
            .map(|(file, chart)| (file, render(&chart)))
            .collect()
    };
    let mut out = Vec::new();
    for section in ScenarioKind::ALL {
        let drawn = match section {
            ScenarioKind::Ladder => results.ladder.as_ref().map(|s| bars(ladder::charts(s))),
            ScenarioKind::Loops => results.loops.as_ref().map(|s| bars(loops::charts(s))),
            ScenarioKind::Soak => results.soak.as_ref().map(|s| bars(soak::charts(s))),
            ScenarioKind::Sweep => results.sweep.as_ref().map(|s| bars(sweep::charts(s))),
            ScenarioKind::Business => results.business.as_ref().map(|s| bars(business::charts(s))),
            ScenarioKind::Rate => results.rate.as_ref().map(|s| {
                rate::charts(s)
                    .into_iter()
                    .map(|(file, chart)| (file, render_lines(&chart)))
                    .collect()
            }),
            ScenarioKind::Capacity => results.capacity.as_ref().map(|s| {
                capacity::charts(s)
                    .into_iter()
                    .map(|(file, chart)| (file, render_lines(&chart)))
                    .collect()
            }),
            ScenarioKind::Protocols => results
                .protocols
                .as_ref()
                .map(|s| bars(protocols::charts(s))),
            ScenarioKind::TechEmpower => results
                .techempower
                .as_ref()
                .map(|s| bars(techempower::charts(s))),
        };
        out.extend(
            drawn
                .into_iter()
                .flatten()
                .map(|(file, svg)| ChartFile { section, file, svg }),
        );
    }
    out
}

/// A bar per series in each group, from `value` of whatever `find` finds.
fn series<G, T>(
    names: &[String],
    groups: &[G],
    find: impl Fn(&str, &G) -> Option<T>,
    value: impl Fn(&T) -> f64,
) -> Vec<(String, Vec<Option<f64>>)> {
    names
        .iter()
        .map(|name| {
            let values = groups
                .iter()
                .map(|g| find(name, g).map(|t| value(&t)))
                .collect();
            (name.clone(), values)
        })
        .collect()
}

/// Min–max whiskers per series in each group, where `find` finds a summary of several runs.
fn whiskers<G>(
    names: &[String],
    groups: &[G],
    find: impl Fn(&str, &G) -> Option<Summary>,
) -> Vec<Vec<Option<[f64; 2]>>> {
    names
        .iter()
        .map(|name| {
            groups
                .iter()
                .map(|g| find(name, g).map(|s| [s.min, s.max]))
                .collect()
        })
        .collect()
}

/// A file-name part from a path: `/greetings/blocking` → `greetings-blocking`.
fn slug(path: &str) -> String {
    let slug: String = path
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let slug = slug.trim_matches('-').to_owned();
    if slug.is_empty() {
        "root".to_owned()
    } else {
        slug
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_name_files() {
        assert_eq!(slug("/greetings/blocking"), "greetings-blocking");
        assert_eq!(slug("/health"), "health");
        assert_eq!(slug("/"), "root");
    }
}
