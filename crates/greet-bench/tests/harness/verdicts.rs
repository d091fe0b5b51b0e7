//! Verdicts that hold: a run asked again never turns "ahead" into "behind", and a server
//! against itself is never ahead or behind, on the real servers, at quick size with enough
//! blocks for a verdict to be possible at all.

use std::collections::BTreeMap;

use crate::common::{bench_ok, out_dir, results, turn, undisturbed};
use greet_bench::results::{Mark, Scorecard};
use greet_bench::stats::paired::{Word, FEWEST_BLOCKS};

/// Workloads at quick size on two profiles, with `blocks` blocks, into `name`.
fn workloads(name: &str, servers: &str, blocks: usize) -> Scorecard {
    let out = out_dir(name);
    let repeats = blocks.to_string();
    bench_ok(&[
        "workloads",
        "--quick",
        "--quiet",
        "--servers",
        servers,
        "--profiles",
        "baseline,json-tls",
        "--repeats",
        &repeats,
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    let run = results(&out.join("results.json"));
    let section = run.sections.workloads.expect("the workloads section");
    assert!(
        section.frame.failures.is_empty(),
        "{:?}",
        section.frame.failures
    );
    // Every comparison rests on every block the machine did not disturb, and its word agrees
    // with its interval.
    for p in &section.comparisons {
        for c in &p.comparisons {
            let runs = |server: &str| {
                let cell = section
                    .cells
                    .iter()
                    .find(|x| x.profile == p.profile && x.server == server);
                &cell.expect("a compared cell").runs
            };
            assert_eq!(runs(&c.a).len(), blocks, "{c:?}");
            assert_eq!(
                c.judged.blocks,
                undisturbed(runs(&c.a), runs(&c.b)),
                "{c:?}"
            );
        }
    }
    for c in section.comparisons.iter().flat_map(|p| &p.comparisons) {
        let j = &c.judged;
        let word = if j.low >= 0.95 && j.high <= 1.05 {
            Word::Equal
        } else if j.low > 1.05 {
            Word::Ahead
        } else if j.high < 0.95 {
            Word::Behind
        } else {
            Word::Undecided
        };
        assert_eq!(c.word(), word, "{c:?}");
    }
    run.scorecard
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
    let _turn = turn();
    let first = workloads("verdicts-first", "axum,actix,hyper", FEWEST_BLOCKS);
    let second = workloads("verdicts-second", "axum,actix,hyper", FEWEST_BLOCKS);
    let (a, b) = (marks(&first), marks(&second));
    assert_eq!(a.len(), 2 * 3, "{first:?}");
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
    let same = workloads("verdicts-a-a", "hyper,hyper", FEWEST_BLOCKS);
    assert_eq!(same.servers, ["greet-hyper", "greet-hyper#2"], "{same:?}");
    for (cell, mark) in marks(&same) {
        assert!(
            matches!(mark, Mark::Equal | Mark::Undecided),
            "{cell:?}: {mark:?}\n{same:?}"
        );
    }
}
