//! Whether two samples that cannot be paired differ beyond run-to-run noise: a two-sided
//! Mann–Whitney U test, the test Go's benchstat uses for the same question. Servers measured
//! in the same run are compared block by block (the paired verdict); this is what is left for
//! `compare`, whose two runs were measured at different times and have no blocks in common.
//!
//! Rank tests need no assumption about the shape of the noise, which on a shared machine is
//! lopsided (a neighbour's burst slows one run a lot, never speeds one up). Their price is
//! that few runs cannot reach significance at all: with 3 runs a side the smallest possible
//! two-sided p is 0.1, so three runs can show that two servers are *not* told apart, never
//! that they are. Such a comparison is reported as [`Verdict::TooFewRuns`], not as a winner.

use serde::{Deserialize, Serialize};

/// Significance level of every verdict.
pub const ALPHA: f64 = 0.05;

/// Up to this many runs a side, p is computed from the exact distribution of U.
const EXACT_UP_TO: usize = 30;

/// The outcome of comparing two samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// p < [`ALPHA`]: the difference is beyond the noise.
    Different,
    /// p ≥ [`ALPHA`] with enough runs that a real difference could have shown.
    WithinNoise,
    /// So few runs that even a complete separation cannot reach p < [`ALPHA`].
    TooFewRuns,
}

impl Verdict {
    /// A few words for the tables.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Different => "different",
            Self::WithinNoise => "within the noise",
            Self::TooFewRuns => "too few runs to tell",
        }
    }
}

/// The two-sided p-value of `a` against `b` and the verdict at [`ALPHA`].
pub fn test(a: &[f64], b: &[f64]) -> (f64, Verdict) {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return (1.0, Verdict::TooFewRuns);
    }
    let p = p_value(a, b);
    let verdict = if smallest_p(n, m) >= ALPHA {
        Verdict::TooFewRuns
    } else if p < ALPHA {
        Verdict::Different
    } else {
        Verdict::WithinNoise
    };
    (p, verdict)
}

/// U of `a`: pairs where the `a` value is larger, ties counting one half.
fn u_statistic(a: &[f64], b: &[f64]) -> f64 {
    let mut u = 0.0;
    for x in a {
        for y in b {
            u += match x.total_cmp(y) {
                std::cmp::Ordering::Greater => 1.0,
                std::cmp::Ordering::Equal => 0.5,
                std::cmp::Ordering::Less => 0.0,
            };
        }
    }
    u
}

fn p_value(a: &[f64], b: &[f64]) -> f64 {
    let (n, m) = (a.len(), b.len());
    let u = u_statistic(a, b);
    let mut all: Vec<f64> = a.iter().chain(b).copied().collect();
    all.sort_by(f64::total_cmp);
    let tied_groups = tie_groups(&all);
    if tied_groups.is_empty() && n <= EXACT_UP_TO && m <= EXACT_UP_TO {
        // U is an integer here.
        let counts = u_distribution(n, m);
        let total: f64 = counts.iter().sum();
        let u = u as usize;
        let below: f64 = counts[..=u].iter().sum();
        let above: f64 = counts[u..].iter().sum();
        return (2.0 * below.min(above) / total).min(1.0);
    }
    // Normal approximation with tie and continuity corrections.
    let (nf, mf) = (n as f64, m as f64);
    let big_n = nf + mf;
    let mean = nf * mf / 2.0;
    let ties: f64 = tied_groups
        .iter()
        .map(|&t| {
            let t = t as f64;
            t * t * t - t
        })
        .sum();
    let variance = nf * mf / 12.0 * ((big_n + 1.0) - ties / (big_n * (big_n - 1.0)));
    if variance <= 0.0 {
        // Every value is the same: nothing tells the samples apart.
        return 1.0;
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / variance.sqrt();
    (2.0 * normal_upper_tail(z)).min(1.0)
}

/// Sizes of the groups of equal values in sorted `values` (groups of one left out).
fn tie_groups(sorted: &[f64]) -> Vec<usize> {
    let mut groups = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i + 1;
        while j < sorted.len() && sorted[j] == sorted[i] {
            j += 1;
        }
        if j - i > 1 {
            groups.push(j - i);
        }
        i = j;
    }
    groups
}

/// The smallest two-sided p any outcome can give with `n` and `m` runs: a complete separation,
/// 2 / C(n + m, n) in the exact test.
pub fn smallest_p(n: usize, m: usize) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    let mut arrangements = 1.0f64;
    for i in 0..n.min(m) {
        arrangements = arrangements * (n + m - i) as f64 / (i + 1) as f64;
    }
    (2.0 / arrangements).min(1.0)
}

/// How many of the C(n + m, n) orderings of two samples give each U from 0 to n·m: the
/// coefficients of the Gaussian binomial, built up one sample size at a time.
fn u_distribution(n: usize, m: usize) -> Vec<f64> {
    // table[j] = distribution for sizes (i, j) as i grows; f(i, j) = f(i-1, j) shifted by j
    // (the largest value is from the first sample: it beats all j of the second) + f(i, j-1).
    let mut table: Vec<Vec<f64>> = (0..=m).map(|_| vec![1.0]).collect();
    for _i in 1..=n {
        let mut next: Vec<Vec<f64>> = Vec::with_capacity(m + 1);
        next.push(vec![1.0]);
        for j in 1..=m {
            let from_a = &table[j];
            let from_b = &next[j - 1];
            let len = (from_a.len() + j).max(from_b.len());
            let mut dist = vec![0.0; len];
            for (u, c) in from_a.iter().enumerate() {
                dist[u + j] += c;
            }
            for (u, c) in from_b.iter().enumerate() {
                dist[u] += c;
            }
            next.push(dist);
        }
        table = next;
    }
    let mut dist = table.swap_remove(m);
    dist.resize(n * m + 1, 0.0);
    dist
}

/// P(Z > z) for a standard normal Z (Abramowitz and Stegun 7.1.26 for erfc, error < 1.5e-7).
fn normal_upper_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    let erfc = if x >= 0.0 { erfc } else { 2.0 - erfc };
    erfc / 2.0
}

/// What running first did to a pair's ratio, over the blocks where each ran first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Position {
    /// The pair's ratio (a over b) in the blocks where a ran first, over its ratio where b
    /// did, median to median: 1 where the place in the block moves nothing.
    pub effect: f64,
    /// The two-sided p-value of the two groups of log ratios (Mann–Whitney).
    pub p: f64,
    /// Blocks with a ratio and a known order.
    pub blocks: usize,
}

/// Whether the place in a block moves a pair's ratio: `blocks` are each block's ratio of a
/// over b and whether a ran first. The Williams order gives each place alike, so such an
/// effect cancels in the ratio's centre; it still widens the blocks' spread, and it says
/// what a slice leaves for the next ([`crate::order`]). None without a block each way.
pub fn position_effect(blocks: &[(f64, bool)]) -> Option<Position> {
    let logs = |first: bool| -> Vec<f64> {
        (blocks.iter())
            .filter(|&&(r, f)| f == first && r.is_finite() && r > 0.0)
            .map(|&(r, _)| r.ln())
            .collect()
    };
    let (first, second) = (logs(true), logs(false));
    if first.is_empty() || second.is_empty() {
        return None;
    }
    let (p, _) = test(&first, &second);
    Some(Position {
        effect: (crate::median(&first) - crate::median(&second)).exp(),
        p,
        blocks: first.len() + second.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pair 8% apart whichever runs first has no position effect; one whose ratio rises 10%
    /// when a runs first has one, decided over 20 blocks; one order only says nothing.
    #[test]
    fn running_first_is_told_from_the_pair_itself() {
        let jitter = |i: usize| 1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0);
        let blocks = |lift: f64| -> Vec<(f64, bool)> {
            (0..20)
                .map(|i| {
                    let first = i % 2 == 0;
                    (0.92 * jitter(i) * if first { lift } else { 1.0 }, first)
                })
                .collect()
        };
        let none = position_effect(&blocks(1.0)).expect("both orders");
        assert!(
            none.p > 0.05 && (none.effect - 1.0).abs() < 0.03,
            "{none:?}"
        );
        let some = position_effect(&blocks(1.10)).expect("both orders");
        assert!(some.p < 0.001, "{some:?}");
        assert!((some.effect - 1.10).abs() < 0.03, "{some:?}");
        assert_eq!(some.blocks, 20);
        let one_way: Vec<(f64, bool)> = blocks(1.1).into_iter().filter(|b| b.1).collect();
        assert_eq!(position_effect(&one_way), None);
        assert_eq!(position_effect(&[(f64::NAN, true), (1.0, false)]), None);
    }

    use crate::Rng;

    impl Rng {
        fn sample(&mut self, n: usize, mean: f64, sd: f64) -> Vec<f64> {
            (0..n).map(|_| self.normal(mean, sd)).collect()
        }
    }

    #[test]
    fn exact_distribution_matches_the_tables() {
        // n = m = 3: C(6, 3) = 20 orderings, U from 0 to 9, symmetric.
        let d = u_distribution(3, 3);
        assert_eq!(d, [1.0, 1.0, 2.0, 3.0, 3.0, 3.0, 3.0, 2.0, 1.0, 1.0]);
        assert_eq!(u_distribution(2, 5).iter().sum::<f64>(), 21.0);
        assert_eq!(u_distribution(5, 2).iter().sum::<f64>(), 21.0);
        // Published critical value: n = m = 8, two-sided alpha 0.05 → U ≤ 13.
        let d = u_distribution(8, 8);
        let total: f64 = d.iter().sum();
        assert!(2.0 * d[..=13].iter().sum::<f64>() / total < 0.05);
        assert!(2.0 * d[..=14].iter().sum::<f64>() / total > 0.05);
    }

    #[test]
    fn clearly_different_samples_are_different() {
        let fast = [105.0, 107.0, 106.0, 108.0, 104.5];
        let slow = [100.0, 101.0, 99.5, 100.5, 102.0];
        let (p, verdict) = test(&fast, &slow);
        assert_eq!(verdict, Verdict::Different);
        // A complete separation of 5 and 5: 2 / C(10, 5).
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        // Order does not matter to p.
        assert_eq!(test(&slow, &fast), (p, Verdict::Different));
    }

    #[test]
    fn one_distribution_twice_is_not_different() {
        let same = [100.0, 103.0, 98.0, 101.0, 99.0];
        let (p, verdict) = test(&same, &same);
        assert_eq!(verdict, Verdict::WithinNoise);
        assert!(p > 0.9, "{p}");
    }

    #[test]
    fn three_runs_a_side_cannot_separate() {
        assert!((smallest_p(3, 3) - 0.1).abs() < 1e-12);
        let (p, verdict) = test(&[110.0, 111.0, 112.0], &[100.0, 101.0, 102.0]);
        assert_eq!(verdict, Verdict::TooFewRuns);
        assert!((p - 0.1).abs() < 1e-12);
        assert!(smallest_p(4, 4) < ALPHA && smallest_p(3, 5) < ALPHA);
        assert!(smallest_p(3, 4) > ALPHA);
        assert_eq!(test(&[1.0], &[]), (1.0, Verdict::TooFewRuns));
    }

    #[test]
    fn false_alarms_stay_near_alpha_and_real_shifts_are_found() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let trials = 2000;
        let mut false_alarms = 0;
        let mut found = 0;
        for _ in 0..trials {
            let a = rng.sample(8, 1000.0, 30.0);
            let b = rng.sample(8, 1000.0, 30.0);
            if test(&a, &b).1 == Verdict::Different {
                false_alarms += 1;
            }
            // Two standard deviations apart.
            let c = rng.sample(8, 1060.0, 30.0);
            if test(&c, &b).1 == Verdict::Different {
                found += 1;
            }
        }
        // The exact test is conservative: at most alpha, with room for sampling error.
        assert!(
            false_alarms <= trials * 6 / 100,
            "{false_alarms} of {trials}"
        );
        assert!(found >= trials * 90 / 100, "{found} of {trials}");
    }

    #[test]
    fn ties_and_large_samples_use_the_normal_approximation() {
        // All values equal: nothing to tell apart.
        assert_eq!(test(&[5.0; 6], &[5.0; 6]), (1.0, Verdict::WithinNoise));
        // With ties, a clear shift still shows.
        let a = [1.0, 1.0, 2.0, 2.0, 3.0, 3.0];
        let b = [7.0, 7.0, 8.0, 8.0, 9.0, 9.0];
        let (p, verdict) = test(&a, &b);
        assert_eq!(verdict, Verdict::Different, "{p}");
        // The approximation agrees with the exact test on a large untied sample.
        let mut rng = Rng(7);
        let a = rng.sample(25, 0.0, 1.0);
        let b = rng.sample(25, 0.4, 1.0);
        let exact = p_value(&a, &b);
        let mut with_tie = a.clone();
        with_tie[0] = with_tie[1];
        let approx = p_value(&with_tie, &b);
        assert!((exact - approx).abs() < 0.03, "{exact} {approx}");
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
    }
}
