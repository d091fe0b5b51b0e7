//! What the scenarios' charts share: [`ChartFile`] (a chart named by its section and file, so
//! the HTML report places it without guessing from file names), bars and whiskers from a
//! scenario's cells, the verdict drawn ([`against_best`]), and file names from paths.

use greet_model::results::ScoreRow;
use greet_stats::Summary;

use crate::svg::Chart;

/// One chart of a section, drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartFile {
    /// The section it belongs to.
    pub section: &'static str,
    /// Its file name, e.g. `NAME-throughput.svg`.
    pub file: String,
    /// The SVG document.
    pub svg: String,
}

/// A bar per series in each group, from `value` of whatever `find` finds.
pub fn series<G, T>(
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
pub fn whiskers<G>(
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

/// A chart of verdicts: its bars, and each group's band of "equal" as a share of the best.
#[derive(Debug)]
pub struct Verdicts {
    /// The bars and their intervals.
    pub chart: Chart,
    /// Group by group, the shares within the band of the best.
    pub bands: Vec<[f64; 2]>,
}

/// The scorecard's verdicts drawn, for section `name`: a group per row of `rows` judged on
/// blocks, a bar per server at its share of the row's best (its paired ratio, turned over
/// where less is better, so below 1 is always behind), that share's interval as whiskers, and
/// the run's `band` around the best shaded: a whisker wholly inside it is equal, wholly below
/// it behind. The best stands at 1; an interval still open (too few blocks) draws none. None
/// when no row has an interval to draw: a chart of ratios without them would say less than
/// the scorecard's shares.
pub fn against_best(name: &str, rows: &[&ScoreRow], band: f64) -> Option<Verdicts> {
    let rows: Vec<&ScoreRow> = rows
        .iter()
        .copied()
        .filter(|r| !r.once && r.cells.iter().any(|c| c.vs_best.is_some()))
        .collect();
    let closed = |r: &&ScoreRow| {
        r.cells
            .iter()
            .any(|c| c.vs_best.is_some_and(|j| j.high.is_finite()))
    };
    if !rows.iter().any(closed) {
        return None;
    }
    let mut names: Vec<String> = Vec::new();
    for cell in rows.iter().flat_map(|r| &r.cells) {
        if !names.contains(&cell.server) {
            names.push(cell.server.clone());
        }
    }
    // (share, interval) of `server` on `row`: the best at 1, with no interval.
    let share = |row: &ScoreRow, server: &str| -> Option<(f64, Option<[f64; 2]>)> {
        let cell = row.cells.iter().find(|c| c.server == server)?;
        let Some(j) = cell.vs_best else {
            return Some((1.0, None));
        };
        // No blocks in common (a figure of zero): no bar.
        if !j.ratio.is_finite() {
            return None;
        }
        let open = !j.high.is_finite();
        Some(if row.metric.higher_is_better() {
            (j.ratio, (!open).then_some([j.low, j.high]))
        } else {
            (
                1.0 / j.ratio,
                (!open).then_some([1.0 / j.high, 1.0 / j.low]),
            )
        })
    };
    // Equal where neither is more than `band` below the other, turned over or not.
    let bands = vec![[1.0 - band, 1.0 / (1.0 - band)]; rows.len()];
    // The axis's label fits its 250 px: what the whiskers and the shading are goes on top.
    let chart = Chart {
        title: format!(
            "{name}: against the best, with intervals; shaded: {}, equal",
            greet_stats::paired::percent(band)
        ),
        unit: "share of the best, block by block".into(),
        groups: rows.iter().map(|r| r.figure.clone()).collect(),
        series: names
            .iter()
            .map(|n| {
                (
                    n.clone(),
                    rows.iter().map(|r| Some(share(r, n)?.0)).collect(),
                )
            })
            .collect(),
        whiskers: names
            .iter()
            .map(|n| rows.iter().map(|r| share(r, n)?.1).collect())
            .collect(),
    };
    Some(Verdicts { chart, bands })
}

/// A file-name part from a path: `/greetings/blocking` → `greetings-blocking`.
pub fn slug(path: &str) -> String {
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
    fn the_verdicts_are_drawn_where_an_interval_is() {
        use greet_model::plan::Metric;
        use greet_model::results::{Cell, Mark};
        use greet_stats::paired::{Judged, Word};
        let cell = |server: &str, vs_best: Option<Judged>| Cell {
            server: server.into(),
            median: 1.0,
            runs: 6,
            share: 1.0,
            mark: Mark::Alone,
            vs_best,
            capped: false,
            cores: None,
            cpu_us_per_request: None,
            of_floor: None,
        };
        let judged = |ratio: f64, low: f64, high: f64| Judged {
            ratio,
            low,
            high,
            level: 0.95,
            blocks: 6,
            word: Word::Behind,
        };
        let row = |metric, j: Judged| ScoreRow {
            scenario: "x".into(),
            figure: "f".into(),
            metric,
            once: false,
            cells: vec![cell("a", None), cell("b", Some(j))],
            references: Vec::new(),
            tuned: Vec::new(),
        };
        let open = row(Metric::Throughput, judged(0.8, 0.7, f64::INFINITY));
        assert!(against_best("x", &[&open], 0.05).is_none());
        let closed = row(Metric::Throughput, judged(0.8, 0.7, 0.9));
        let drawn = against_best("x", &[&closed], 0.05).expect("drawn");
        let chart = &drawn.chart;
        assert_eq!(chart.series[0].1, [Some(1.0)]);
        assert_eq!(chart.series[1].1, [Some(0.8)]);
        assert_eq!(chart.whiskers[1][0], Some([0.7, 0.9]));
        assert_eq!(drawn.bands, [[0.95, 1.0 / 0.95]]);
        assert!(
            chart.title.contains("shaded: ±5%, equal"),
            "{}",
            chart.title
        );
        let svg = crate::svg::render_banded(chart, &drawn.bands);
        assert!(svg.contains("<title>equal: 0.95-1.05</title>"), "{svg}");
        // Turned over, the band is the same.
        // Where less is better the ratio is turned over: below 1 is behind there too, and so
        // is the band.
        let slower = row(Metric::P99, judged(1.25, 1.0, 2.0));
        let drawn = against_best("x", &[&slower], 0.25).expect("drawn");
        assert_eq!(drawn.chart.series[1].1, [Some(0.8)]);
        assert_eq!(drawn.chart.whiskers[1][0], Some([0.5, 1.0]));
        assert_eq!(drawn.bands, [[0.75, 1.0 / 0.75]]);
    }

    #[test]
    fn slugs_name_files() {
        assert_eq!(slug("/greetings/blocking"), "greetings-blocking");
        assert_eq!(slug("/health"), "health");
        assert_eq!(slug("/"), "root");
    }
}
