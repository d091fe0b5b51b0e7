//! Holding a run's figures (or a comparison's ratios) to the `--threshold`s
//! ([`greet_model::plan::Threshold`]), as k6 does, so that a CI job can fail on a regression. A
//! threshold holds when every figure it names holds it (the median of a figure's runs); one
//! that names no figure is breached, so a typo cannot pass.
//!
//! Two runs share no blocks, so a timed ratio past its limit may be the machine's drift, not
//! the code: where both runs have runs enough, such a figure breaches only when Mann-Whitney
//! shows NEW, divided by the limit, still past OLD ([`Fate`]); with fewer, the ratio alone
//! breaches, and the check says so. A count with two runs a side or more breaches where even
//! its runs' nearest ends are past the limit (one run a side: its ratio); success rates and
//! the ratios of single runs (`max()`, `min()`) are held to the ratio itself.

use crate::diff::{gated, ratios, Diff, Row};
use greet_model::plan::{Metric, OfRuns, Op, Threshold};
use greet_model::results::ThresholdCheck;
use greet_report::points::Point;
use greet_stats::mann_whitney::{self, Verdict};
use greet_stats::{median, Summary};

/// How one figure fared against a threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fate {
    /// Within the limit.
    Held,
    /// Past it.
    Breached,
    /// A timed ratio past the limit by its medians, but not shown past it beyond the runs'
    /// spread: held, and counted in the check's note.
    NotShown,
    /// A timed ratio past the limit whose runs are too few to test: breached on the ratio
    /// alone, and counted in the check's note.
    Untested,
}

impl Fate {
    fn breaches(self) -> bool {
        matches!(self, Self::Breached | Self::Untested)
    }
}

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
            let named = points
                .iter()
                .filter(|p| t.ratio == ratios && named_by(t, p))
                .map(|p| {
                    let value = of_runs(t.of_runs, &p.values);
                    let fate = if t.op.holds(value, t.limit) {
                        Fate::Held
                    } else {
                        Fate::Breached
                    };
                    (p, value, fate)
                });
            checked(t, named.collect())
        })
        .collect()
}

/// Holds each ratio threshold to `diff`'s ratios: of medians, or of the highest (`max()`)
/// or lowest (`min()`) runs. Without a comparison, each names nothing and is breached. Each row
/// of `diff` a threshold breached says so after its verdict (`same count; over
/// instructions<1.01x`), so the table says what the exit code does.
pub(crate) fn check_ratios(
    thresholds: &[Threshold],
    diff: Option<&mut Diff>,
) -> Vec<ThresholdCheck> {
    let Some(diff) = diff else {
        return thresholds.iter().map(|t| checked(t, Vec::new())).collect();
    };
    let mut over: Vec<(usize, &str)> = Vec::new();
    let checks = thresholds
        .iter()
        .map(|t| {
            let rows = ratios(diff, t.of_runs);
            let named: Vec<_> = rows
                .iter()
                .filter(|(p, _)| t.ratio && named_by(t, p))
                .map(|(p, i)| {
                    let ratio = p.values[0];
                    let fate = fate(t, ratio, &diff.rows[*i]);
                    if fate.breaches() {
                        over.push((*i, t.text.as_str()));
                    }
                    (p, ratio, fate)
                })
                .collect();
            checked(t, named)
        })
        .collect();
    for (i, text) in over {
        diff.rows[i].verdict.push_str(&format!("; over {text}"));
    }
    checks
}

/// How `row`, whose gated ratio is `ratio`, fares against ratio threshold `t`.
fn fate(t: &Threshold, ratio: f64, row: &Row) -> Fate {
    if t.op.holds(ratio, t.limit) {
        return Fate::Held;
    }
    if t.of_runs != OfRuns::Median {
        return Fate::Breached;
    }
    if timed(row.metric) {
        return past_limit(t.op, t.limit, &row.old_runs, &row.new_runs);
    }
    // A count with runs a side: past the limit only if the runs' nearest ends are. (The share
    // of valid answers is no count: one run past the limit is a breach.)
    if row.metric.band().is_some() && row.runs.iter().all(|&n| n >= 2) {
        let nearest = if t.op.is_upper_bound() {
            gated(row.metric, row.old_range[1], row.new_range[0])
        } else {
            gated(row.metric, row.old_range[0], row.new_range[1])
        };
        if nearest.is_some_and(|r| t.op.holds(r, t.limit)) {
            return Fate::NotShown;
        }
    }
    Fate::Breached
}

/// Whether NEW's runs, each divided by `limit`, lie past OLD's in the way `op` forbids
/// (above them for `<`, below for `>`), by Mann-Whitney at its level: that is, whether NEW/OLD
/// is shown past `limit`, not only its medians' ratio.
fn past_limit(op: Op, limit: f64, old: &[f64], new: &[f64]) -> Fate {
    let scaled: Vec<f64> = new.iter().map(|v| v / limit).collect();
    match mann_whitney::test(old, &scaled).1 {
        Verdict::TooFewRuns => Fate::Untested,
        Verdict::WithinNoise => Fate::NotShown,
        Verdict::Different => {
            let above = median(&scaled) > median(old);
            if above == op.is_upper_bound() {
                Fate::Breached
            } else {
                Fate::NotShown
            }
        }
    }
}

/// A figure whose runs scatter with the machine's pace: not a count (held to its band and
/// grain) and not the share of valid answers (a single invalid one is the code's).
fn timed(metric: Metric) -> bool {
    metric.band().is_none() && metric != Metric::Success
}

/// `t`'s check over the figures it `named`, each with its value and fate: breached where any
/// breaches, the worst of those (else of all) named.
fn checked(t: &Threshold, named: Vec<(&Point, f64, Fate)>) -> ThresholdCheck {
    let worse = |a: &(&Point, f64, Fate), b: &(&Point, f64, Fate)| {
        if t.op.is_upper_bound() {
            a.1.total_cmp(&b.1)
        } else {
            b.1.total_cmp(&a.1)
        }
    };
    let breached = named.iter().filter(|n| n.2.breaches());
    let worst = breached
        .max_by(|a, b| worse(a, b))
        .or_else(|| named.iter().max_by(|a, b| worse(a, b)));
    let count = |fate: Fate| named.iter().filter(|n| n.2 == fate).count();
    let mut notes = Vec::new();
    match count(Fate::NotShown) {
        0 => {}
        n => notes.push(format!(
            "{n} past the limit by their medians but not beyond their runs' spread: held"
        )),
    }
    match count(Fate::Untested) {
        0 => {}
        n => notes.push(format!(
            "{n} on the ratio alone: too few runs to test against the machine's drift \
             (4 a side suffice)"
        )),
    }
    ThresholdCheck {
        threshold: t.text.clone(),
        held: !named.is_empty() && !named.iter().any(|n| n.2.breaches()),
        figures: named.len(),
        worst: worst.map(|(p, _, _)| format!("{} {} {}", p.scenario, p.server, p.at())),
        value: worst.map(|(_, v, _)| *v),
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// The value of a figure's runs a threshold holds.
fn of_runs(which: OfRuns, values: &[f64]) -> f64 {
    match which {
        OfRuns::Median => Summary::of(values).median,
        OfRuns::Max => Summary::of(values).max,
        OfRuns::Min => Summary::of(values).min,
    }
}

/// Whether `t` names figure `p`: its metric, and its server where it names one.
fn named_by(t: &Threshold, p: &Point) -> bool {
    p.metric == t.metric && t.server.as_deref().is_none_or(|s| names(&p.server, s))
}

/// Whether `server` (`greet-axum`) is what `name` (`axum` or `greet-axum`) names.
fn names(server: &str, name: &str) -> bool {
    server == name || server.strip_prefix("greet-") == Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A comparison of one figure, `metric`, whose runs were `old` and `new`.
    fn compared(metric: Metric, old: &[f64], new: &[f64]) -> Diff {
        let summary = |v: &[f64]| {
            let s = Summary::of(v);
            [s.min, s.max]
        };
        let (o, n) = (median(old), median(new));
        let row = Row {
            scenario: "a".into(),
            server: "greet-hyper".into(),
            at: "/greetings c=2700".into(),
            metric,
            old: o,
            new: n,
            ratio: Some(n / o),
            old_range: summary(old),
            new_range: summary(new),
            old_runs: old.to_vec(),
            new_runs: new.to_vec(),
            comparable: true,
            spread: [0.0, 0.0],
            runs: [old.len(), new.len()],
            p: None,
            verdict: String::new(),
        };
        Diff {
            differences: Vec::new(),
            varied: Vec::new(),
            noise: crate::diff::NOISE,
            rows: vec![row],
            unpaired: [0, 0],
            standings: Vec::new(),
            again: crate::diff::Again::default(),
        }
    }

    fn gate(threshold: &str, diff: &Diff) -> ThresholdCheck {
        check_ratios(&[threshold.parse().unwrap()], Some(&mut diff.clone())).remove(0)
    }

    /// A timed ratio breaches only where NEW's runs, divided by the limit, lie past OLD's:
    /// runs that scatter (a machine drifting within each run) put the medians 10.6% apart and
    /// hold; a shift clear of the scatter breaches; two runs a side cannot be tested, so the
    /// ratio alone breaches, and the line says which it was.
    #[test]
    fn a_timed_ratio_breaches_only_where_its_runs_show_it_past_the_limit() {
        let drifting = compared(
            Metric::Total,
            &[1.00, 1.02, 1.04, 1.20, 1.22],
            &[1.05, 1.10, 1.15, 1.25, 1.28],
        );
        let held = gate("total<1.10x", &drifting);
        assert!(held.held, "{held}");
        assert!(held.value.unwrap() > 1.10, "{held}");
        assert!(
            held.to_string()
                .contains("1 past the limit by their medians but not beyond"),
            "{held}"
        );
        let slower = compared(
            Metric::Total,
            &[1.00, 1.01, 1.02, 1.03, 1.04],
            &[1.20, 1.21, 1.22, 1.23, 1.24],
        );
        let breached = gate("total<1.10x", &slower);
        assert!(!breached.held && breached.note.is_none(), "{breached}");
        // The same shift against a limit it is past at its medians (1.22 / 1.02 = 1.196) but
        // not by its runs: divided by 1.18, NEW's runs (1.017 to 1.051) overlap OLD's.
        assert!(gate("total<1.18x", &slower).held);
        // A lower bound, the same way round: throughput that fell by a fifth, and one that
        // scattered.
        let fell = compared(
            Metric::Throughput,
            &[100.0, 101.0, 102.0, 103.0, 104.0],
            &[80.0, 81.0, 82.0, 83.0, 84.0],
        );
        assert!(!gate("throughput>0.95x", &fell).held);
        let scattered = compared(
            Metric::Throughput,
            &[100.0, 104.0, 96.0, 80.0, 120.0],
            &[94.0, 90.0, 70.0, 110.0, 98.0],
        );
        let held = gate("throughput>0.95x", &scattered);
        assert!(held.held && held.value.unwrap() < 0.95, "{held}");
        // Two runs a side: Mann-Whitney's smallest p is a third, so nothing is tested.
        let two = compared(Metric::Total, &[1.00, 1.01], &[1.20, 1.21]);
        let alone = gate("total<1.10x", &two);
        assert!(!alone.held, "{alone}");
        assert!(
            alone
                .to_string()
                .contains("1 on the ratio alone: too few runs"),
            "{alone}"
        );
        // max() and min() hold single runs to the ratio itself.
        // (NEW's slowest 1.28 over OLD's 1.22 is 1.049, past 1.04 however the runs scatter.)
        assert!(!gate("max(total)<1.04x", &drifting).held);
    }

    /// A count is held to its ratio on one run a side; with runs a side, to the runs' nearest
    /// ends, so a baseline counted twice carries its own spread; a move within the grain is
    /// none. The share of valid answers is held to its ratio: it does not scatter with the
    /// machine's pace.
    #[test]
    fn counts_are_held_to_their_spread_and_valid_answers_to_the_ratio() {
        let counted = compared(Metric::Instructions, &[16_000.0], &[16_400.0]);
        let breached = gate("instructions<1.01x", &counted);
        assert!(!breached.held && breached.note.is_none(), "{breached}");
        // Counted twice a side: 16,000 and 16,250 against 16,200 and 16,500; the medians are
        // 1.5% apart, the nearest runs 16,250 and 16,200.
        let spread = compared(
            Metric::Instructions,
            &[16_000.0, 16_250.0],
            &[16_200.0, 16_500.0],
        );
        let held = gate("instructions<1.01x", &spread);
        assert!(held.held && held.value.unwrap() > 1.01, "{held}");
        assert!(
            held.to_string().contains("not beyond their runs' spread"),
            "{held}"
        );
        let apart = compared(
            Metric::Instructions,
            &[16_000.0, 16_050.0],
            &[16_300.0, 16_400.0],
        );
        assert!(!gate("instructions<1.01x", &apart).held);
        // 1.5% is one count by the table's band (2%) and past a gate of 1%: the row says both.
        let mut marked = compared(Metric::Instructions, &[16_000.0], &[16_240.0]);
        marked.rows[0].verdict = "same count".into();
        let checks = check_ratios(&["instructions<1.01x".parse().unwrap()], Some(&mut marked));
        assert!(!checks[0].held, "{}", checks[0]);
        assert_eq!(
            marked.rows[0].verdict,
            "same count; over instructions<1.01x"
        );
        // The floor's 1,300 a request, moved 40 by the harness's own work: within the grain.
        let floor = compared(Metric::Instructions, &[1300.0], &[1340.0]);
        assert!(gate("instructions<1.01x", &floor).held);
        let invalid = compared(
            Metric::Success,
            &[100.0, 100.0, 100.0, 100.0, 100.0],
            &[100.0, 100.0, 99.9, 100.0, 100.0],
        );
        assert!(gate("success>=1x", &invalid).held, "the median held");
        assert!(!gate("min(success)>=1x", &invalid).held, "one run did not");
        // A median that fell is a breach, however the runs overlap.
        let fell = compared(
            Metric::Success,
            &[100.0, 100.0, 100.0, 100.0, 100.0],
            &[99.0, 99.0, 99.0, 100.0, 100.0],
        );
        let breached = gate("success>=1x", &fell);
        assert!(!breached.held && breached.note.is_none(), "{breached}");
        // An absolute threshold names no ratio.
        assert_eq!(gate("success>=100%", &fell).figures, 0);
    }
}
