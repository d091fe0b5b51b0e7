//! The order diagnostic: whether a server's place in a block moved a figure anyway. For every
//! pair of servers on a figure judged by blocks whose loads say where they ran
//! ([`greet_model::results::Trial::seq`]), their block ratios split by which one ran first and
//! tested ([`greet_stats::mann_whitney::position_effect`]). The Williams order gives each place
//! alike, so an effect cancels in the ratio's centre, but it widens the spread and says what a
//! slice leaves for the next. A run prints a word only for the pairs past the threshold, which
//! is Bonferroni's over every pair tested: a diagnostic, strict enough not to cry wolf. The
//! scorecard hands it each figure's servers ([`Placing`]); it knows nothing of the scorecard.

use greet_stats::mann_whitney::{position_effect, Position};

/// The error rate over every pair a diagnostic tests.
const ALPHA: f64 = 0.05;

/// Bonferroni's threshold over `tested` pairs: what one pair's p must reach for a word. The
/// block diagnostics (this one, [`crate::left_out`]) each test every pair of every figure.
pub(crate) fn threshold(tested: usize) -> f64 {
    ALPHA / tested.max(1) as f64
}

/// One server on a figure as the diagnostic reads it: its name, its blocks' figures (not a
/// number where a block is left out), and each block's place in the run, where recorded.
pub type Placing<'a> = (&'a str, Vec<f64>, &'a [Option<u64>]);

/// A pair tested: what it is (`greet-axum against greet-actix on workloads: static
/// throughput`), the server whose running first is measured, and what that did.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    /// The pair and its figure.
    pub what: String,
    /// The first of the pair, whose running first is measured.
    pub a: String,
    /// What running first did.
    pub position: Position,
}

/// Every pair of `servers` on one figure (`what`: `on workloads: static throughput`) whose
/// places are both recorded, with a block each way round.
pub fn placed(what: &str, servers: &[Placing<'_>]) -> Vec<Placed> {
    let known: Vec<&Placing<'_>> = (servers.iter())
        .filter(|(_, values, seqs)| !seqs.is_empty() && seqs.len() == values.len())
        .collect();
    let mut out = Vec::new();
    for (i, (a, a_values, a_seqs)) in known.iter().copied().enumerate() {
        for (b, b_values, b_seqs) in known[i + 1..].iter().copied() {
            let blocks: Vec<(f64, bool)> = (a_values.iter().zip(b_values))
                .zip(a_seqs.iter().zip(b_seqs.iter()))
                .filter_map(|((x, y), (&sa, &sb))| Some((x / y, sa? < sb?)))
                .collect();
            if let Some(position) = position_effect(&blocks) {
                out.push(Placed {
                    what: format!("{a} against {b} {what}"),
                    a: (*a).to_owned(),
                    position,
                });
            }
        }
    }
    out
}

/// A word for each pair of `placed` whose place moved its figure past the threshold over them
/// all; none where no pair's did.
pub fn words(placed: &[Placed]) -> Vec<String> {
    let threshold = threshold(placed.len());
    (placed.iter())
        .filter(|p| p.position.p <= threshold)
        .map(|p| {
            format!(
                "Order: {}, {:.2}× with {a} first against {a} second in a block (p = {:.1e}, \
                 {} blocks; threshold {:.1e} over {} pairs tested): the place in a block moves \
                 this figure; the Williams order gives each place alike, so the ratio stands, \
                 with a wider spread.",
                p.what,
                p.position.effect,
                p.position.p,
                p.position.blocks,
                threshold,
                placed.len(),
                a = p.a,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three servers over 12 blocks in a Williams order, `b` 10% faster whenever it runs
    /// before `a`: that pair alone gets a word. Without places nothing is tested.
    #[test]
    fn a_place_that_moves_a_figure_is_named_and_no_other() {
        let (n, blocks) = (3, 12);
        let mut seqs = vec![Vec::new(); n];
        let mut values = vec![Vec::new(); n];
        for block in 0..blocks {
            let order = greet_stats::order::williams(n, block);
            let place = |s: usize| order.iter().position(|&x| x == s).unwrap();
            let jitter = 1.0 + 0.004 * ((block * 7 % 5) as f64 - 2.0);
            for s in 0..n {
                seqs[s].push(Some((block * n + place(s)) as u64));
                let lift = if s == 1 && place(1) < place(0) {
                    1.1
                } else {
                    1.0
                };
                values[s].push(1000.0 * jitter * lift * (1.0 + 0.002 * s as f64));
            }
        }
        let servers = |with: bool| -> Vec<Placing<'_>> {
            (0..n)
                .map(|s| {
                    let places: &[Option<u64>] = if with { &seqs[s] } else { &[] };
                    (["a", "b", "c"][s], values[s].clone(), places)
                })
                .collect()
        };
        let tested = placed("on loops: throughput", &servers(true));
        assert_eq!(tested.len(), 3, "every pair: {tested:?}");
        let said = words(&tested);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with(
                "Order: a against b on loops: throughput, 1.10× with a first against a second"
            ),
            "{said:?}"
        );
        assert!(placed("on loops: throughput", &servers(false)).is_empty());
    }
}
