//! Whether the blocks left out fall on one server: a load the machine disturbed (heavy steal,
//! other programs on the CPUs) leaves its block out of that figure's comparisons. If what
//! disturbs a slice follows the server (a faster one's packets, a hungrier one's threads), the
//! blocks left are not a random share of the run, and the verdict leans. For every pair of
//! servers on a figure judged by blocks, the blocks where exactly one of the two was left out
//! are counted each way and set against even odds ([`greet_stats::sign_test`]); a word is
//! printed only past Bonferroni's threshold over every pair tested, as the order diagnostic
//! does ([`crate::order`]).

use greet_stats::sign_test;

use crate::order::{threshold, Placing};

/// A pair with blocks left out on one side only.
#[derive(Debug, Clone, PartialEq)]
pub struct Lopsided {
    /// The pair and its figure: `greet-axum and greet-hyper on workloads: static throughput`.
    pub what: String,
    /// Each server of the pair, and the blocks it alone was left out of.
    pub alone: [(String, usize); 2],
    /// The sign test's two-sided p.
    pub p: f64,
}

/// Every pair of `servers` on one figure (`what`: `on workloads: static throughput`) with a
/// block left out on one side only (a block's figure not a number: [`Placing`]).
pub fn lopsided<'a>(what: &str, servers: impl IntoIterator<Item = Placing<'a>>) -> Vec<Lopsided> {
    let servers: Vec<Placing<'a>> = servers.into_iter().collect();
    let mut out = Vec::new();
    for (i, (a, a_blocks, _)) in servers.iter().enumerate() {
        for (b, b_blocks, _) in &servers[i + 1..] {
            let (mut a_alone, mut b_alone) = (0, 0);
            for (x, y) in a_blocks.iter().zip(b_blocks) {
                match (x.is_nan(), y.is_nan()) {
                    (true, false) => a_alone += 1,
                    (false, true) => b_alone += 1,
                    _ => {}
                }
            }
            if a_alone + b_alone > 0 {
                out.push(Lopsided {
                    what: format!("{a} and {b} {what}"),
                    alone: [((*a).to_owned(), a_alone), ((*b).to_owned(), b_alone)],
                    p: sign_test(a_alone, b_alone),
                });
            }
        }
    }
    out
}

/// A word for each pair of `tested` whose blocks left out fell on one side past the threshold
/// over them all; none where no pair's did.
pub fn words(tested: &[Lopsided]) -> Vec<String> {
    let threshold = threshold(tested.len());
    (tested.iter())
        .filter(|t| t.p <= threshold)
        .map(|t| {
            let [(a, a_alone), (b, b_alone)] = &t.alone;
            format!(
                "Left out: {}, {a}'s load alone in {a_alone} blocks and {b}'s alone in {b_alone} \
                 (p = {:.1e}; threshold {:.1e} over {} pairs tested): what disturbed the machine \
                 followed one server, so the blocks this figure rests on are not a random share \
                 of the run.",
                t.what,
                t.p,
                threshold,
                tested.len(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks left out on one server's side nine times in ten are named; the same number
    /// shared out evenly, or blocks left out on both sides at once, are not.
    #[test]
    fn blocks_left_out_on_one_side_are_named() {
        let blocks = |out: &[usize]| -> Vec<f64> {
            (0..20)
                .map(|i| if out.contains(&i) { f64::NAN } else { 100.0 })
                .collect()
        };
        let lopsided_pair = [
            (
                "greet-axum",
                blocks(&[0, 2, 4, 6, 8, 10, 12, 14, 16]),
                &[][..],
            ),
            ("greet-hyper", blocks(&[1]), &[]),
        ];
        let tested = lopsided("on workloads: static throughput", lopsided_pair.clone());
        assert_eq!(tested.len(), 1);
        assert_eq!(tested[0].alone[0], ("greet-axum".to_owned(), 9));
        let said = words(&tested);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with(
                "Left out: greet-axum and greet-hyper on workloads: static throughput, \
                 greet-axum's load alone in 9 blocks and greet-hyper's alone in 1"
            ),
            "{said:?}"
        );
        let even = [
            ("greet-axum", blocks(&[0, 2, 4, 6, 8]), &[][..]),
            ("greet-hyper", blocks(&[1, 3, 5, 7, 9]), &[]),
        ];
        assert!(words(&lopsided("on x", even)).is_empty());
        let together = [
            ("greet-axum", blocks(&[0, 1, 2, 3, 4, 5, 6, 7, 8]), &[][..]),
            ("greet-hyper", blocks(&[0, 1, 2, 3, 4, 5, 6, 7, 8]), &[]),
        ];
        assert!(lopsided("on x", together).is_empty());
        // Among many pairs tested the threshold is stricter: 9 to 1 (p = 0.021) is not past
        // 0.05 / 3.
        let three = [
            lopsided_pair[0].clone(),
            lopsided_pair[1].clone(),
            ("greet-actix", blocks(&[3]), &[]),
        ];
        assert!(words(&lopsided("on x", three)).is_empty());
    }
}
