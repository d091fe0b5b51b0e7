//! The offline A/A on a recorded run: the 24 comparisons of a default `workloads` run
//! (`workloads-blocks.json`: three servers, eight profiles, 20–40 blocks each, on a noisy
//! day of this machine), each block's servers swapped by a coin and the run judged again.
//! Every word the swapped blocks give is false; there should be at most the run's 5%.

use greet_stats::binomial_upper;
use greet_stats::paired::{offline_aa, Comparison, Member, BAND};

/// The recorded comparisons, as results.json holds them.
fn recorded() -> Vec<Comparison> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workloads-blocks.json");
    let text = std::fs::read_to_string(&path).expect("workloads-blocks.json");
    serde_json::from_str(&text).expect("comparisons")
}

#[test]
fn a_recorded_run_swapped_gives_few_false_words() {
    let comparisons = recorded();
    assert_eq!(comparisons.len(), 24);
    // Workloads looks at its blocks up to three times.
    let members: Vec<Member> = comparisons.iter().map(|c| c.member(BAND, 3)).collect();
    let aa = offline_aa(&members, 200, 1);
    assert_eq!(aa.judged, 200 * 24);
    eprintln!(
        "offline A/A of the recorded run: {} words, {}",
        aa.words,
        aa.rate()
    );
    let share = aa.words as f64 / aa.judged as f64;
    assert!(share <= 0.05, "{aa:?}: {}", aa.rate());
    // Not only below on average: the bound from these rounds is under the run's rate too.
    assert!(
        binomial_upper(aa.words, aa.judged, 0.95) <= 0.05,
        "{}",
        aa.rate()
    );
}
