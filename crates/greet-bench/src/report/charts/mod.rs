//! What each scenario draws (one module each): its figures as [`Chart`]s, each named by its section and file, so
//! the HTML report places them without guessing from file names.

mod business;
mod ladder;
mod loops;
mod rate;
mod soak;
mod sweep;

use crate::plan::ScenarioKind;
use crate::report::svg::{render, render_lines, Chart};
use crate::results::Results;
use crate::stats::Summary;

/// One chart of a section, drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartFile {
    /// The section it belongs to.
    pub section: ScenarioKind,
    /// Its file name, e.g. `soak-threads.svg`.
    pub file: String,
    /// The SVG document.
    pub svg: String,
}

/// Every chart of `results`, section by section.
pub fn charts(results: &Results) -> Vec<ChartFile> {
    let mut out = Vec::new();
    let mut add = |section: ScenarioKind, charts: Vec<(String, Chart)>| {
        out.extend(charts.into_iter().map(|(file, chart)| ChartFile {
            section,
            file,
            svg: render(&chart),
        }));
    };
    if let Some(ladder) = &results.ladder {
        add(ScenarioKind::Ladder, ladder::charts(ladder));
    }
    if let Some(loops) = &results.loops {
        add(
            ScenarioKind::Loops,
            vec![("loops.svg".into(), loops::charts(loops))],
        );
    }
    if let Some(soak) = &results.soak {
        add(ScenarioKind::Soak, soak::charts(soak));
    }
    if let Some(sweep) = &results.sweep {
        add(ScenarioKind::Sweep, sweep::charts(sweep));
    }
    if let Some(business) = &results.business {
        add(ScenarioKind::Business, business::charts(business));
    }
    if let Some(rate) = &results.rate {
        out.extend(
            rate::charts(rate)
                .into_iter()
                .map(|(file, chart)| ChartFile {
                    section: ScenarioKind::Rate,
                    file,
                    svg: render_lines(&chart),
                }),
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
