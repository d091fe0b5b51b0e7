//! Verdicts that hold: a run asked again never turns "ahead" into "behind", and a server
//! against itself is never ahead or behind, on the real servers, at quick size with enough
//! blocks for a verdict to be possible at all; the band a run is judged against is its own.

use std::collections::BTreeMap;

use crate::common::{bench_ok, out_dir, quiet, results, undisturbed};
use greet_model::results::{Mark, Scorecard};
use greet_stats::paired::{Alpha, Blocks, Comparison, Family, Word, FEWEST_BLOCKS};

/// Blocks enough that a clear gap is decided in the family of a quick two-profile run: at
/// 10, a signed-rank p-value can be 1/512, under 5% over the family's ten comparisons.
const BLOCKS: usize = 10;

/// The blocks a run adds at each look while a figure is undecided (the harness's step).
const STEP: usize = 10;

/// Workloads at quick size on two profiles (static, where the crates are far apart, and
/// json-tls), with `blocks` blocks and up to two looks more within `budget` (0s: none),
/// judged against `band`, into `name`: its scorecard, and its comparisons with their blocks.
fn workloads(
    name: &str,
    servers: &str,
    (blocks, budget): (usize, &str),
    band: &str,
) -> (Scorecard, Vec<Comparison>) {
    let out = out_dir(name);
    let repeats = blocks.to_string();
    bench_ok(&[
        "workloads",
        "--quick",
        "--quiet",
        "--servers",
        servers,
        "--profiles",
        "static,json-tls",
        "--repeats",
        &repeats,
        "--budget",
        budget,
        "--band",
        band,
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    let run = results(&out.join("results.json"));
    let share: f64 = band.trim_end_matches('%').parse::<f64>().expect("a band") / 100.0;
    assert_eq!((run.meta.band, run.scorecard.band), (share, share));
    let section = run.sections.workloads.expect("the workloads section");
    assert!(
        section.frame.failures.is_empty(),
        "{:?}",
        section.frame.failures
    );
    let adds = budget != "0s";
    assert_eq!(section.frame.looks, if adds { 3 } else { 1 });
    // Every comparison rests on every block the machine did not disturb, and its word agrees
    // with its interval; a profile's servers ran the same blocks, `blocks` or a look's more.
    for p in &section.comparisons {
        for c in &p.comparisons {
            let runs = |server: &str| {
                let cell = section
                    .cells
                    .iter()
                    .find(|x| x.profile == p.profile && x.server == server);
                &cell.expect("a compared cell").runs
            };
            let ran = runs(&c.a).len();
            assert_eq!(ran, runs(&c.b).len(), "{c:?}");
            let looks = if adds { 0..=2 } else { 0..=0 };
            assert!(
                looks.map(|k| blocks + k * STEP).any(|n| n == ran),
                "{ran} blocks: {c:?}"
            );
            assert_eq!(
                c.judged.blocks,
                undisturbed(runs(&c.a), runs(&c.b)),
                "{c:?}"
            );
        }
    }
    for c in section.comparisons.iter().flat_map(|p| &p.comparisons) {
        let j = &c.judged;
        assert_eq!(c.band, share, "{c:?}");
        let top = 1.0 / (1.0 - share);
        let word = if j.low >= 1.0 - share && j.high <= top {
            Word::Equal
        } else if j.low > top {
            Word::Ahead
        } else if j.high < 1.0 - share {
            Word::Behind
        } else {
            Word::Undecided
        };
        assert_eq!(c.word(), word, "{c:?}");
    }
    let compared = section.comparisons.into_iter().flat_map(|p| p.comparisons);
    (run.scorecard, compared.collect())
}

/// Each cell's mark, by row and server.
fn marks(card: &Scorecard) -> BTreeMap<(String, String), Mark> {
    card.rows
        .iter()
        .flat_map(|r| {
            r.cells
                .iter()
                .map(move |c| ((r.name(), c.server.clone()), c.mark))
        })
        .collect()
}

#[test]
fn a_rerun_never_flips_a_verdict_and_a_server_never_beats_itself() {
    let _quiet = quiet();
    // Twenty blocks, and more while undecided as a full-size run adds them (each p-value then
    // pays for three looks): on a noisy machine ten blocks can leave every figure undecided,
    // and then nothing could flip.
    let until = (2 * BLOCKS, "120s");
    let (first, _) = workloads("verdicts-first", "axum,actix,hyper", until, "5%");
    let (second, _) = workloads("verdicts-second", "axum,actix,hyper", until, "5%");
    let (a, b) = (marks(&first), marks(&second));
    assert_eq!(a.len(), 2 * 3, "{first:?}");
    // A rerun that decided nothing could never flip: the first run must have decided.
    assert!(
        a.values()
            .any(|m| matches!(m, Mark::Ahead | Mark::Behind | Mark::Equal)),
        "nothing decided, so nothing could flip\n{first:?}"
    );
    for (cell, mark) in &a {
        let again = b.get(cell).copied();
        let flipped = matches!(
            (mark, again),
            (Mark::Ahead, Some(Mark::Behind)) | (Mark::Behind, Some(Mark::Ahead))
        );
        assert!(
            !flipped,
            "{cell:?}: {mark:?} then {again:?}\n{first:?}\n{second:?}"
        );
    }
    // The same server twice: never ahead, never behind, whichever is the best by median.
    let (same, _) = workloads("verdicts-a-a", "hyper,hyper", (FEWEST_BLOCKS, "0s"), "5%");
    assert_eq!(same.servers, ["greet-hyper", "greet-hyper#2"], "{same:?}");
    for (cell, mark) in marks(&same) {
        assert!(
            matches!(mark, Mark::Equal | Mark::Undecided),
            "{cell:?}: {mark:?}\n{same:?}"
        );
    }
}

#[test]
fn a_wide_band_says_a_server_equals_itself() {
    let _quiet = quiet();
    // Within ±50%, the same server twice is equal on every figure: the band reaches the
    // verdicts, and equal is a word the run can say. A comparison left with fewer blocks than
    // can decide (a burst of steal leaves its block out) is the one excuse. At ten blocks one
    // stalled turn (0.07 of its pair, once in CI) holds the interval's low end, so a figure
    // still undecided adds blocks as a full-size run does: at twenty, one block cannot.
    let (same, compared) = workloads("verdicts-wide-band", "hyper,hyper", (BLOCKS, "120s"), "50%");
    let mut equal = 0;
    for row in &same.rows {
        for c in &row.cells {
            let judged = c.vs_best.filter(|j| j.blocks >= FEWEST_BLOCKS);
            if judged.is_some() {
                assert_eq!(c.mark, Mark::Equal, "{}: {c:?}\n{same:?}", row.name());
                equal += 1;
            }
        }
    }
    assert!(equal > 0, "no comparison kept enough blocks\n{same:?}");
    assert!(
        same.words
            .iter()
            .any(|w| w.starts_with("Equal, every server within ±50% of the best")),
        "{:?}",
        same.words
    );
    // An A/A that can fail: the same blocks judged again against the default ±5%, alone, at
    // a 0.2% error rate. Ten blocks reach it (its two-sided p is then 2/1024, every block past
    // the band on one side), so a copy favoured by its place in the order, its port or its
    // start would be named; with the truth at 1, inside the band, a fair harness is named far
    // less often than that rate, which holds at the band's edge.
    let strict = Alpha::both(0.002);
    let favoured: Vec<f64> = (0..BLOCKS).map(|i| 1.06 + 0.004 * i as f64).collect();
    let planted = Family::with_band(0.05).judge_at(&Blocks::of_ratios(&favoured), true, strict);
    assert_eq!(
        planted.word,
        Word::Ahead,
        "a copy 6-10% ahead in ten blocks is named"
    );
    for c in &compared {
        let again = Family::with_band(0.05).judge_at(&c.blocks(), c.higher(), strict);
        assert!(
            !matches!(again.word, Word::Ahead | Word::Behind),
            "{} {} against {}: {again:?}\n{c:?}",
            c.figure.describe(),
            c.a,
            c.b
        );
    }
}
