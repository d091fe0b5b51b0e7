//! Holding a run's figures (or a comparison's ratios) to the `--threshold`s
//! ([`greet_model::plan::Threshold`]), as k6 does, so that a CI job can fail on a regression. A
//! threshold holds when every figure it names holds it (the median of a figure's runs); one
//! that names no figure is breached, so a typo cannot pass.

use crate::diff::{ratios, Diff};
use greet_model::plan::{OfRuns, Threshold};
use greet_model::results::ThresholdCheck;
use greet_report::points::Point;
use greet_stats::Summary;

/// Holds each threshold to `points` (absolute thresholds to a run's figures, ratio thresholds
/// to a comparison's ratios, each given as a point of one value); a threshold of the other
/// kind is breached with nothing named.
pub(crate) fn check(
    thresholds: &[Threshold],
    points: &[Point],
    ratios: bool,
) -> Vec<ThresholdCheck> {
    thresholds
        .iter()
        .map(|t| {
            let named: Vec<(&Point, f64)> = points
                .iter()
                .filter(|p| t.ratio == ratios && p.metric == t.metric)
                .filter(|p| t.server.as_deref().is_none_or(|s| names(&p.server, s)))
                .map(|p| (p, of_runs(t.of_runs, &p.values)))
                .collect();
            let worst = named.iter().copied().max_by(|a, b| {
                let (a, b) = (a.1, b.1);
                if t.op.is_upper_bound() {
                    a.total_cmp(&b)
                } else {
                    b.total_cmp(&a)
                }
            });
            ThresholdCheck {
                threshold: t.text.clone(),
                held: worst.is_some_and(|(_, v)| t.op.holds(v, t.limit)),
                figures: named.len(),
                worst: worst.map(|(p, _)| format!("{} {} {}", p.scenario, p.server, p.at())),
                value: worst.map(|(_, v)| v),
            }
        })
        .collect()
}

/// Holds each ratio threshold to `diff`'s ratios: of medians, or of the highest (`max()`)
/// or lowest (`min()`) runs. Without a comparison, each names nothing and is breached.
pub(crate) fn check_ratios(thresholds: &[Threshold], diff: Option<&Diff>) -> Vec<ThresholdCheck> {
    thresholds
        .iter()
        .flat_map(|t| {
            let ratios = diff.map_or_else(Vec::new, |d| ratios(d, t.of_runs));
            check(std::slice::from_ref(t), &ratios, true)
        })
        .collect()
}

/// The value of a figure's runs a threshold holds.
fn of_runs(which: OfRuns, values: &[f64]) -> f64 {
    match which {
        OfRuns::Median => Summary::of(values).median,
        OfRuns::Max => Summary::of(values).max,
        OfRuns::Min => Summary::of(values).min,
    }
}

/// Whether `server` (`greet-axum`) is what `name` (`axum` or `greet-axum`) names.
fn names(server: &str, name: &str) -> bool {
    server == name || server.strip_prefix("greet-") == Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use greet_model::plan::Metric;

    fn point(server: &str, metric: Metric, values: &[f64]) -> Point {
        Point {
            scenario: "a".into(),
            server: server.into(),
            endpoint: Some("/greetings".into()),
            cell: "c=2700".into(),
            metric,
            values: values.to_vec(),
        }
    }

    #[test]
    fn a_threshold_holds_when_its_worst_figure_does() {
        let points = [
            point("greet-axum", Metric::Total, &[1.1, 1.3, 1.2]),
            point("greet-hyper", Metric::Total, &[1.0]),
            point("greet-hyper", Metric::Throughput, &[900.0]),
        ];
        let checked = |t: &str| {
            let t: Threshold = t.parse().unwrap();
            check(&[t], &points, false).remove(0)
        };
        let all = checked("total<1.25s");
        assert!(all.held && all.figures == 2, "{all}");
        assert_eq!(
            all.value,
            Some(1.2),
            "the median of axum's runs is the worst"
        );
        assert!(!checked("total<1.15s").held);
        assert!(checked("hyper:total<1.15s").held);
        assert!(!checked("throughput>1000/s").held);
        // Every run: axum's slowest is 1.3 s.
        let every = checked("max(total)<1.25s");
        assert!(!every.held && every.value == Some(1.3), "{every}");
        assert!(
            !checked("min(total)>1.05s").held,
            "hyper's one run is 1.0 s"
        );
        assert!(checked("axum:min(total)>1.05s").held);
        let none = checked("rss<64MiB");
        assert!(!none.held && none.figures == 0, "{none}");
        assert!(none.to_string().contains("BREACHED"), "{none}");
        let wrong_kind = checked("total<1.1x");
        assert!(!wrong_kind.held, "a ratio on a single run names nothing");
    }
}
