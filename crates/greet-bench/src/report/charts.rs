//! What the scenarios' charts share: [`ChartFile`] (a chart named by its section and file, so
//! the HTML report places it without guessing from file names), bars and whiskers from a
//! scenario's cells, and file names from paths.

use crate::stats::Summary;

/// One chart of a section, drawn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChartFile {
    /// The section it belongs to.
    pub(crate) section: &'static str,
    /// Its file name, e.g. `NAME-throughput.svg`.
    pub(crate) file: String,
    /// The SVG document.
    pub(crate) svg: String,
}

/// A bar per series in each group, from `value` of whatever `find` finds.
pub(crate) fn series<G, T>(
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
pub(crate) fn whiskers<G>(
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
pub(crate) fn slug(path: &str) -> String {
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
