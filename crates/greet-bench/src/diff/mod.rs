//! The run-to-run comparison (`greet-bench compare OLD NEW`, `--baseline`): every figure
//! both runs have, paired by scenario, server and cell, as the ratio NEW/OLD of their
//! medians with a verdict, and what differs between the runs themselves (machine, CPUs,
//! kernel, crate versions, each scenario's settings). How a [`Diff`] prints is `render`'s.
//! (Servers compared with each other within one run are compared block by block:
//! [`greet_stats::paired`].)
//!
//! Two runs were measured at different times and share no blocks, so their figures cannot be
//! paired: a verdict needs runs on both sides, set against each other unpaired with
//! Mann-Whitney ([`greet_stats::mann_whitney::test`]); a figure with one run a side gets none, and neither
//! does one whose scenario ran under other settings, unless the comparison is about those
//! settings (`--vary workers`: an A/B of one setting, a deliberate change that is the point).
//! `--vary endpoint` pairs a figure with the same one on another path (`/greetings` against
//! `/greetings/blocking`). A change inside the noise band (`--noise`, 5 % by default) is never
//! called, however small its p.

mod render;

pub(crate) use render::{render, Format};

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use anyhow::{bail, Result};
use serde::Serialize;

use crate::scenario::{Kind, Results};
use greet_model::plan::{Metric, OfRuns};
use greet_model::results::{Mark, Scorecard};
use greet_report::points;
use greet_report::points::{join, Point};
use greet_stats::mann_whitney::{self, Verdict};
use greet_stats::{median, Summary};

/// The noise band's default: a ratio within 5 % of 1 is never called a change.
pub(crate) const NOISE: f64 = 0.05;

/// What `--vary` may name besides a scenario's settings: the path loaded.
pub(crate) const ENDPOINT: &str = "endpoint";

/// One figure of both runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Row {
    /// The scenario.
    pub(crate) scenario: String,
    /// The server.
    pub(crate) server: String,
    /// Where in the scenario; `OLD → NEW` for the endpoint under `--vary endpoint`.
    pub(crate) at: String,
    /// What it measures.
    pub(crate) metric: Metric,
    /// OLD's median.
    pub(crate) old: f64,
    /// NEW's median.
    pub(crate) new: f64,
    /// NEW / OLD; none where OLD is 0.
    pub(crate) ratio: Option<f64>,
    /// OLD's lowest and highest run.
    pub(crate) old_range: [f64; 2],
    /// NEW's lowest and highest run.
    pub(crate) new_range: [f64; 2],
    /// OLD's runs, each a value: what a timed ratio threshold is tested on.
    pub(crate) old_runs: Vec<f64>,
    /// NEW's runs.
    pub(crate) new_runs: Vec<f64>,
    /// False where the scenario ran under other settings than `--vary` names: shown, never
    /// judged, and not held to ratio thresholds.
    pub(crate) comparable: bool,
    /// The ratios the runs allow, NEW's lowest over OLD's highest to NEW's highest over OLD's
    /// lowest (the forest plot's whisker).
    pub(crate) spread: [f64; 2],
    /// Runs on each side.
    pub(crate) runs: [usize; 2],
    /// Mann-Whitney's two-sided p, where both sides have runs enough.
    pub(crate) p: Option<f64>,
    /// `better`, `worse`, `within the noise band`, `no difference shown`, `same count` (a
    /// count within its band), `one run each: no verdict`, `too few runs: no verdict`,
    /// `settings differ: no verdict`.
    pub(crate) verdict: String,
}

/// Two runs compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Diff {
    /// What differs between the runs themselves, one line each.
    pub(crate) differences: Vec<String>,
    /// The settings (and `endpoint`) `--vary` allowed to differ.
    pub(crate) varied: Vec<String>,
    /// The noise band, a fraction.
    pub(crate) noise: f64,
    /// Every figure both runs have.
    pub(crate) rows: Vec<Row>,
    /// Figures only OLD has, and only NEW.
    pub(crate) unpaired: [usize; 2],
    /// Each scorecard row both runs have: how the servers stood in OLD and in NEW.
    pub(crate) standings: Vec<Standing>,
    /// How OLD's words came back in NEW, over those rows.
    pub(crate) again: Again,
}

/// How the words of one run came back in another, over the scorecard cells both have: what
/// a run asked again must keep (no word turned round, most decided ones the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub(crate) struct Again {
    /// Cells both runs have.
    pub(crate) cells: usize,
    /// Of them, OLD's ahead, behind or equal.
    pub(crate) decided: usize,
    /// Of those, NEW's the same word.
    pub(crate) kept: usize,
    /// Of those, NEW's the opposite: behind for ahead, or ahead for behind.
    pub(crate) turned: usize,
    /// Cells undecided, in OLD and in NEW.
    pub(crate) undecided: [usize; 2],
}

impl Again {
    /// Over `standings`.
    pub(crate) fn of(standings: &[Standing]) -> Self {
        let mut again = Self::default();
        for (old, new) in standings
            .iter()
            .flat_map(|s| &s.servers)
            .map(|(_, [(_, o), (_, n)])| (*o, *n))
        {
            again.cells += 1;
            let decided = matches!(old, Mark::Ahead | Mark::Behind | Mark::Equal);
            again.decided += usize::from(decided);
            again.kept += usize::from(decided && old == new);
            again.turned += usize::from(matches!(
                (old, new),
                (Mark::Ahead, Mark::Behind) | (Mark::Behind, Mark::Ahead)
            ));
            again.undecided[0] += usize::from(old == Mark::Undecided);
            again.undecided[1] += usize::from(new == Mark::Undecided);
        }
        again
    }

    /// One line: `Asked again: 11 of the 12 words OLD decided came back (92%), none turned
    /// round; undecided: 5 of 24 cells in OLD, 9 in NEW`.
    pub(crate) fn line(&self) -> String {
        let share = if self.decided == 0 {
            String::new()
        } else {
            format!(" ({:.0}%)", 100.0 * self.kept as f64 / self.decided as f64)
        };
        let turned = match self.turned {
            0 => "none turned round".to_owned(),
            n => format!("{n} turned round (ahead in one, behind in the other)"),
        };
        format!(
            "Asked again: {} of the {} words OLD decided came back{share}, {turned}; undecided: {} \
             of {} cells in OLD, {} in NEW",
            self.kept, self.decided, self.undecided[0], self.cells, self.undecided[1]
        )
    }
}

/// A scorecard row of both runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Standing {
    /// The row: `soak: keep-alive throughput, /greetings c=200`.
    pub(crate) figure: String,
    /// Each server in both: its share of the best and its mark, in OLD and in NEW.
    pub(crate) servers: Vec<(String, [(f64, Mark); 2])>,
}

/// The scorecard `results` keeps, or, for a run written before there was one, the one its
/// sections make.
fn scorecard(results: &Results) -> Scorecard {
    if results.scorecard.rows.is_empty() {
        let mut sections = results.sections.clone();
        greet_report::scorecard::judge_run(&mut sections, results.meta.band)
    } else {
        results.scorecard.clone()
    }
}

/// Each row of NEW's scorecard that OLD's has too, with the servers both name in the same
/// league (at their defaults, or tuned: a share of another league's best is not comparable).
fn standings(old: &Scorecard, new: &Scorecard) -> Vec<Standing> {
    new.rows
        .iter()
        .filter_map(|n| {
            let o = old.rows.iter().find(|o| o.name() == n.name())?;
            let leagues = n
                .cells
                .iter()
                .map(|c| (c, &o.cells))
                .chain(n.tuned.iter().map(|c| (c, &o.tuned)));
            let servers: Vec<_> = leagues
                .filter_map(|(nc, league)| {
                    let oc = league.iter().find(|c| c.server == nc.server)?;
                    Some((
                        nc.server.clone(),
                        [(oc.share, oc.mark), (nc.share, nc.mark)],
                    ))
                })
                .collect();
            (!servers.is_empty()).then(|| Standing {
                figure: n.name(),
                servers,
            })
        })
        .collect()
}

/// Compares `new` with `old`, judging figures whose scenario's settings differ only in what
/// `vary` names; a name in `vary` the runs do not differ in is refused in one line (a typo
/// would otherwise leave every verdict out).
pub(crate) fn diff(old: &Results, new: &Results, noise: f64, vary: &[String]) -> Result<Diff> {
    let mut differences = meta_differences(old, new);
    let mut unlike = Vec::new();
    let mut differing = Vec::new();
    for &kind in Kind::ALL {
        let changed = setting_differences(&section(old, kind), &section(new, kind));
        if changed.is_empty() {
            continue;
        }
        let lines: Vec<String> = changed
            .iter()
            .map(|(key, line)| {
                let on_purpose = if vary.contains(key) { " (varied)" } else { "" };
                format!("{line}{on_purpose}")
            })
            .collect();
        differences.push(format!("{} settings: {}", kind.name(), lines.join(", ")));
        if changed.iter().any(|(key, _)| !vary.contains(key)) {
            unlike.push(kind.name());
        }
        differing.extend(changed.into_iter().map(|(key, _)| key));
    }
    let by_endpoint = !vary.iter().any(|v| v == ENDPOINT);
    // A key may stand twice (`--concurrency 10,10`, `--servers hyper,hyper`): the n-th of OLD
    // pairs with the n-th of NEW.
    let old_points = points(old);
    let mut by_key: BTreeMap<_, VecDeque<&Point>> = BTreeMap::new();
    for o in &old_points {
        by_key.entry(o.key(by_endpoint)).or_default().push_back(o);
    }
    let new_points = points(new);
    let mut rows = Vec::new();
    for n in &new_points {
        let Some(o) = by_key
            .get_mut(&n.key(by_endpoint))
            .and_then(VecDeque::pop_front)
        else {
            continue;
        };
        let at = if o.endpoint == n.endpoint {
            n.at()
        } else {
            differing.push(ENDPOINT.to_owned());
            let path = |p: &Point| p.endpoint.clone().unwrap_or_else(|| "-".to_owned());
            join(Some(&format!("{} → {}", path(o), path(n))), &n.cell)
        };
        let comparable = !unlike.contains(&n.scenario.as_str());
        let (old_median, new_median) = (median(&o.values), median(&n.values));
        let ratio = (old_median != 0.0).then(|| new_median / old_median);
        let (p, verdict) = match ratio {
            _ if !comparable => (None, "settings differ: no verdict".to_owned()),
            // A count from none (no failing row, no allocation) has no ratio but is judged:
            // whatever it counts now is more.
            None if n.metric.band().is_some() => {
                verdict(n.metric, &o.values, &n.values, f64::INFINITY, noise)
            }
            None => (None, "old is 0: no ratio".to_owned()),
            Some(ratio) => verdict(n.metric, &o.values, &n.values, ratio, noise),
        };
        rows.push(Row {
            scenario: n.scenario.clone(),
            server: n.server.clone(),
            at,
            metric: n.metric,
            old: old_median,
            new: new_median,
            ratio,
            old_range: range(&o.values),
            new_range: range(&n.values),
            old_runs: o.values.clone(),
            new_runs: n.values.clone(),
            comparable,
            spread: spread(&o.values, &n.values),
            runs: [o.values.len(), n.values.len()],
            p,
            verdict,
        });
    }
    if let Some(unused) = vary.iter().find(|v| !differing.contains(v)) {
        differing.sort();
        differing.dedup();
        let differ = if differing.is_empty() {
            "nothing".to_owned()
        } else {
            differing.join(", ")
        };
        bail!("--vary {unused}: the runs do not differ in it (they differ in: {differ})");
    }
    let paired = rows.len();
    let standings = standings(&scorecard(old), &scorecard(new));
    Ok(Diff {
        differences,
        varied: vary.to_vec(),
        noise,
        rows,
        unpaired: [old_points.len() - paired, new_points.len() - paired],
        again: Again::of(&standings),
        standings,
    })
}

fn verdict(
    metric: Metric,
    old: &[f64],
    new: &[f64],
    ratio: f64,
    noise: f64,
) -> (Option<f64>, String) {
    // A count repeats to well under its band: one run a side decides it.
    if let Some(same) = metric.same_count(median(old), median(new)) {
        let text = if same {
            "same count"
        } else if (ratio > 1.0) == metric.higher_is_better() {
            "better"
        } else {
            "worse"
        };
        return (None, text.to_owned());
    }
    if old.len() == 1 && new.len() == 1 {
        return (None, "one run each: no verdict".to_owned());
    }
    let (p, verdict) = mann_whitney::test(old, new);
    let text = match verdict {
        Verdict::TooFewRuns => return (None, "too few runs: no verdict".to_owned()),
        // A success rate of 95 % is a large change however close its ratio is to 1.
        _ if metric != Metric::Success && (ratio - 1.0).abs() <= noise => "within the noise band",
        Verdict::WithinNoise => "no difference shown",
        Verdict::Different if (ratio > 1.0) == metric.higher_is_better() => "better",
        Verdict::Different => "worse",
    };
    (Some(p), text.to_owned())
}

fn range(values: &[f64]) -> [f64; 2] {
    let s = Summary::of(values);
    [s.min, s.max]
}

fn spread(old: &[f64], new: &[f64]) -> [f64; 2] {
    let (old, new) = (Summary::of(old), Summary::of(new));
    [new.min / old.max, new.max / old.min]
}

/// A scenario's section of `results` as JSON, or null.
fn section(results: &Results, kind: Kind) -> serde_json::Value {
    serde_json::to_value(results)
        .ok()
        .and_then(|v| v.get(kind.name()).cloned())
        .unwrap_or(serde_json::Value::Null)
}

/// The settings two sections of one scenario differ in, each as its name and `name old → new`:
/// every plain field (delay, workers, durations, mode…) but the number of repeats, which
/// changes how sure a verdict is, not what it is about.
fn setting_differences(old: &serde_json::Value, new: &serde_json::Value) -> Vec<(String, String)> {
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
        return Vec::new();
    };
    let plain = |v: &serde_json::Value| !(v.is_array() || v.is_object());
    let mut out = Vec::new();
    for (key, o) in old.iter().filter(|(k, v)| plain(v) && *k != "repeats") {
        if let Some(n) = new.get(key).filter(|n| plain(n) && *n != o) {
            out.push((key.clone(), format!("{key} {o} → {n}")));
        }
    }
    out
}

fn meta_differences(old: &Results, new: &Results) -> Vec<String> {
    let (o, n) = (&old.meta, &new.meta);
    let mut out = Vec::new();
    let mut differ = |what: &str, a: String, b: String| {
        if a != b {
            out.push(format!("{what}: {a} → {b}"));
        }
    };
    differ("machine", o.machine.clone(), n.machine.clone());
    differ("CPUs", o.cpus.count.to_string(), n.cpus.count.to_string());
    differ("CPU model", o.cpus.model.clone(), n.cpus.model.clone());
    differ(
        "server CPUs",
        format!("{:?}", o.cpus.server),
        format!("{:?}", n.cpus.server),
    );
    differ("kernel", o.kernel.clone(), n.kernel.clone());
    let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".to_owned());
    differ("commit", or_unknown(&o.commit), or_unknown(&n.commit));
    differ("rustc", or_unknown(&o.rustc), or_unknown(&n.rustc));
    // Words judged against another band are not the same claims: "asked again" says so here.
    let band = greet_stats::paired::percent;
    differ("band", band(o.band), band(n.band));
    for (krate, version) in &n.crate_versions {
        let before = o
            .crate_versions
            .get(krate)
            .cloned()
            .unwrap_or_else(|| "-".into());
        differ(krate, before, version.clone());
    }
    out
}

/// The ratios of `diff` as points of one value each, beside the index of the row each comes
/// from, for ratio thresholds: only where the runs' settings agree. NEW's median over OLD's, or with
/// `max()`/`min()` NEW's highest (or lowest) run over OLD's: a change that slows one run of
/// eight (a listen backlog of 128 slows the first) moves no median.
pub(crate) fn ratios(diff: &Diff, of_runs: OfRuns) -> Vec<(Point, usize)> {
    (diff.rows.iter().enumerate())
        .filter(|(_, r)| r.comparable)
        .filter_map(|(i, r)| {
            let ratio = match of_runs {
                OfRuns::Median => gated(r.metric, r.old, r.new)?,
                OfRuns::Max => gated(r.metric, r.old_range[1], r.new_range[1])?,
                OfRuns::Min => gated(r.metric, r.old_range[0], r.new_range[0])?,
            };
            let point = Point {
                scenario: r.scenario.clone(),
                server: r.server.clone(),
                endpoint: None,
                cell: r.at.clone(),
                metric: r.metric,
                values: vec![ratio],
            };
            Some((point, i))
        })
        .collect()
}

/// The ratio a gate holds a figure to: NEW over OLD. A count that moved by no more than its
/// grain ([`Metric::grain`]: a few events over a load, what the harness's own work adds) is 1.
/// One at or under its grain (none, one that fell) has no ratio worth the name, so it is held
/// by its grain instead: past it, 1 and the growth in grains (in whole units where the grain is
/// 0: rows, dependencies), so 0 → 3 allocations a request is 61 times and no ratio limit lets
/// it through.
pub(crate) fn gated(metric: Metric, old: f64, new: f64) -> Option<f64> {
    let ratio = if metric.band().is_none() {
        (old != 0.0).then(|| new / old)?
    } else {
        let grain = metric.grain();
        if old > grain {
            if (new - old).abs() <= grain {
                1.0
            } else {
                new / old
            }
        } else if new - old <= grain {
            1.0
        } else {
            1.0 + (new - old) / if grain > 0.0 { grain } else { 1.0 }
        }
    };
    ratio.is_finite().then_some(ratio)
}

/// Reads a run: its `results.json`, or a folder holding one.
pub(crate) fn read(path: &Path) -> Result<Results> {
    greet_model::results::read(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rerun_counts_words_kept_and_turned_round() {
        use Mark::*;
        let standing = |figure: &str, marks: &[(Mark, Mark)]| Standing {
            figure: figure.into(),
            servers: (marks.iter().enumerate())
                .map(|(i, &(o, n))| (format!("s{i}"), [(1.0, o), (1.0, n)]))
                .collect(),
        };
        let again = Again::of(&[
            standing(
                "a",
                &[(Behind, Behind), (Ahead, Behind), (Equal, Undecided)],
            ),
            standing(
                "b",
                &[(Undecided, Ahead), (Capped, Capped), (Behind, Ahead)],
            ),
        ]);
        let want = Again {
            cells: 6,
            decided: 4,
            kept: 1,
            turned: 2,
            undecided: [1, 1],
        };
        assert_eq!(again, want);
        assert_eq!(
            again.line(),
            "Asked again: 1 of the 4 words OLD decided came back (25%), 2 turned round (ahead \
             in one, behind in the other); undecided: 1 of 6 cells in OLD, 1 in NEW"
        );
    }

    #[test]
    fn verdicts_need_runs_a_difference_and_more_than_the_noise() {
        let v = |m, o: &[f64], n: &[f64]| {
            let ratio = median(n) / median(o);
            verdict(m, o, n, ratio, NOISE).1
        };
        let slow = [1.30, 1.31, 1.32, 1.33, 1.34];
        let fast = [1.00, 1.01, 1.02, 1.03, 1.04];
        assert_eq!(v(Metric::Total, &fast, &slow), "worse");
        assert_eq!(v(Metric::Total, &slow, &fast), "better");
        assert_eq!(v(Metric::Throughput, &fast, &slow), "better");
        assert_eq!(v(Metric::Total, &[1.0], &[1.3]), "one run each: no verdict");
        // A count: one run a side, judged on its band (2%).
        assert_eq!(
            v(Metric::Instructions, &[16_000.0], &[16_240.0]),
            "same count"
        );
        assert_eq!(v(Metric::Instructions, &[16_000.0], &[16_400.0]), "worse");
        // The floor's 1,300 a request: 3% is 40 instructions, within the grain of 50.
        assert_eq!(v(Metric::Instructions, &[1300.0], &[1340.0]), "same count");
        assert_eq!(v(Metric::Instructions, &[1300.0], &[1400.0]), "worse");
        assert_eq!(v(Metric::Allocations, &[26.0], &[5.0]), "better");
        // Near zero, the grain: 2 allocations against 7 over a thousand messages are one.
        assert_eq!(v(Metric::Allocations, &[0.002], &[0.007]), "same count");
        assert_eq!(v(Metric::Allocations, &[0.0], &[3.06]), "worse");
        // A row answers or not: one more failing is worse, none either side the same.
        assert_eq!(v(Metric::ContractRows, &[0.0], &[1.0]), "worse");
        assert_eq!(v(Metric::ContractRows, &[2.0], &[2.0]), "same count");
        assert_eq!(v(Metric::ContractRows, &[50.0], &[51.0]), "worse");
        assert_eq!(v(Metric::Syscalls, &[0.12], &[1.07]), "worse");
        assert_eq!(
            v(Metric::Total, &[1.0, 1.1], &[1.3, 1.4]),
            "too few runs: no verdict"
        );
        let close = [1.010, 1.011, 1.012, 1.013, 1.014];
        assert_eq!(v(Metric::Total, &fast, &close), "within the noise band");
        let mixed = [1.30, 1.00, 1.33, 1.02, 1.31];
        assert_eq!(v(Metric::Total, &fast, &mixed), "no difference shown");
    }

    use crate::scenario::ladder::{self, LadderServer, Level};
    use greet_model::results::{Cpus, Frame, Meta, Mode, Transport, Trial};

    fn run(total_s: f64, valid: bool) -> Trial {
        let mut run = Trial::default();
        run.load.requests = 10;
        run.load.total_s = total_s;
        run.load.latency_ms.p99 = total_s * 1e3;
        if valid {
            run.load.success_rate = 100.0;
        } else {
            run.load.errors.insert("status".into(), 10);
        }
        run
    }

    /// A ladder of one level at 10, a server entry per `(name, total, valid)`.
    fn ladder(delay_ms: u64, servers: &[(&str, f64, bool)]) -> Results {
        let meta = Meta {
            machine: "m".into(),
            cpus: Cpus {
                count: 2,
                model: "cpu".into(),
                server: vec![0],
                load: vec![1],
                stores: vec![1],
            },
            kernel: "k".into(),
            crate_versions: BTreeMap::new(),
            scenarios: vec!["ladder".into()],
            comparison_method: String::new(),
            band: greet_stats::paired::BAND,
            started_at: String::new(),
            commit: None,
            rustc: None,
        };
        let mut results = Results::new(meta);
        results.sections.ladder = Some(ladder::Section {
            transport: Transport::default(),
            frame: Frame::new(1),
            mode: Mode::Process,
            delay_ms,
            workers: 1,
            blocking_threads: 200,
            concurrency: vec![10],
            timeout_s: 60.0,
            servers: servers
                .iter()
                .map(|(name, total, valid)| LadderServer {
                    name: (*name).into(),
                    endpoint: "/greetings".into(),
                    levels: vec![Level {
                        concurrency: 10,
                        run: run(*total, *valid),
                        runs: Vec::new(),
                    }],
                    ..LadderServer::default()
                })
                .collect(),
            comparisons: Vec::new(),
        });
        results
    }

    #[test]
    fn a_figure_that_stands_twice_pairs_in_order() {
        let twice = ladder(20, &[("hyper", 1.0, true), ("hyper", 2.0, true)]);
        let d = diff(&twice, &twice, NOISE, &[]).unwrap();
        let totals: Vec<(f64, Option<f64>)> = d
            .rows
            .iter()
            .filter(|r| r.metric == Metric::Total)
            .map(|r| (r.old, r.ratio))
            .collect();
        assert_eq!(totals, [(1.0, Some(1.0)), (2.0, Some(1.0))]);
        assert_eq!(d.unpaired, [0, 0]);
        let once = ladder(20, &[("hyper", 1.0, true)]);
        assert_eq!(
            diff(&twice, &once, NOISE, &[]).unwrap().unpaired[0],
            d.rows.len() / 2
        );
    }

    /// A count from none, or from one that fell, is held by its grain: growth past it
    /// breaches any ratio limit, growth within it none; a count well above its grain is its
    /// plain ratio once it moved past the grain, a timed figure always, and a timed figure
    /// from zero has none.
    #[test]
    fn a_count_from_nothing_is_held_by_its_grain() {
        let ratio = |m, old, new| gated(m, old, new);
        assert_eq!(ratio(Metric::Allocations, 0.0, 3.0), Some(61.0));
        assert_eq!(ratio(Metric::Allocations, -0.02, 0.01), Some(1.0));
        assert_eq!(ratio(Metric::Allocations, 0.02, 0.0), Some(1.0));
        assert!(ratio(Metric::Allocations, 0.0, 0.06).unwrap() > 1.01);
        assert_eq!(ratio(Metric::ContractRows, 0.0, 1.0), Some(2.0));
        assert_eq!(ratio(Metric::ContractRows, 0.0, 0.0), Some(1.0));
        assert_eq!(ratio(Metric::Instructions, 15_400.0, 15_554.0), Some(1.01));
        // The floor's count, moved by the harness's own work by less than the grain: 1. Past
        // the grain, its plain ratio.
        assert_eq!(ratio(Metric::Instructions, 1300.0, 1345.0), Some(1.0));
        assert_eq!(ratio(Metric::Instructions, 1300.0, 1365.0), Some(1.05));
        assert_eq!(ratio(Metric::Total, 2.0, 2.5), Some(1.25));
        assert_eq!(ratio(Metric::Total, 0.0, 2.5), None);
    }

    #[test]
    fn other_settings_are_never_held_to_a_ratio() {
        let (fast, slow) = (
            ladder(20, &[("hyper", 0.02, true)]),
            ladder(1000, &[("hyper", 1.0, true)]),
        );
        let d = diff(&slow, &fast, NOISE, &[]).unwrap();
        assert!(d
            .differences
            .iter()
            .any(|l| l == "ladder settings: delay_ms 1000 → 20"));
        assert!(d.rows.iter().all(|r| !r.comparable), "{:?}", d.rows);
        assert!(
            ratios(&d, OfRuns::Median).is_empty(),
            "no ratio to hold: a ratio threshold names nothing"
        );
        let same = diff(&fast, &fast, NOISE, &[]).unwrap();
        let with_ratio = same.rows.iter().filter(|r| r.ratio.is_some()).count();
        assert!(with_ratio > 0 && ratios(&same, OfRuns::Median).len() == with_ratio);
        assert!(same.differences.is_empty(), "{:?}", same.differences);
        let mut wide = fast.clone();
        wide.meta.band = 0.1;
        let d = diff(&fast, &wide, NOISE, &[]).unwrap();
        assert_eq!(d.differences, ["band: ±5% → ±10%"]);
    }

    #[test]
    fn a_setting_varied_on_purpose_is_judged_and_a_typo_is_refused() {
        let (one, two) = (
            ladder(20, &[("hyper", 1.0, true)]),
            ladder(1000, &[("hyper", 1.3, true)]),
        );
        let vary = ["delay_ms".to_owned()];
        let d = diff(&one, &two, NOISE, &vary).unwrap();
        assert!(d.rows.iter().all(|r| r.comparable), "{:?}", d.rows);
        assert!(
            d.differences
                .iter()
                .any(|l| l.ends_with("delay_ms 20 → 1000 (varied)")),
            "{:?}",
            d.differences
        );
        assert!(!ratios(&d, OfRuns::Median).is_empty());
        let err = diff(&one, &two, NOISE, &["worker".to_owned()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--vary worker: the runs do not differ in it (they differ in: delay_ms)"
        );
    }

    #[test]
    fn vary_endpoint_pairs_one_path_with_another() {
        let (async_, mut blocking) = (
            ladder(20, &[("hyper", 1.0, true)]),
            ladder(20, &[("hyper", 9.0, true)]),
        );
        blocking.sections.ladder.as_mut().unwrap().servers[0].endpoint =
            "/greetings/blocking".into();
        let apart = diff(&async_, &blocking, NOISE, &[]).unwrap();
        assert!(apart.rows.is_empty(), "another path is another cell");
        let vary = [ENDPOINT.to_owned()];
        let paired = diff(&async_, &blocking, NOISE, &vary).unwrap();
        let total = paired
            .rows
            .iter()
            .find(|r| r.metric == Metric::Total)
            .unwrap();
        assert_eq!(total.at, "/greetings → /greetings/blocking c=10");
        assert_eq!(total.ratio, Some(9.0));
        assert_eq!(paired.unpaired, [0, 0]);
        assert!(
            diff(&async_, &async_, NOISE, &vary).is_err(),
            "no endpoint differs"
        );
    }

    #[test]
    fn a_load_without_one_valid_answer_has_no_latency() {
        let errors = ladder(20, &[("hyper", 0.001, false)]);
        let metrics: Vec<Metric> = points(&errors).iter().map(|p| p.metric).collect();
        assert!(metrics.contains(&Metric::Total) && metrics.contains(&Metric::Success));
        assert!(!metrics.contains(&Metric::P99), "{metrics:?}");
    }

    #[test]
    fn settings_that_differ_are_named_but_repeats_are_not() {
        let old = serde_json::json!({"delay_ms": 1000, "repeats": 1, "servers": []});
        let new = serde_json::json!({"delay_ms": 0, "repeats": 5, "servers": [1]});
        assert_eq!(
            setting_differences(&old, &new),
            [("delay_ms".to_owned(), "delay_ms 1000 → 0".to_owned())]
        );
        assert!(setting_differences(&old, &old).is_empty());
    }
}
