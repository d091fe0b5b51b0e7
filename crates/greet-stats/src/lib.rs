//! Plain statistics over figures: medians, summaries of repeated runs, the
//! paired verdict between servers measured in the same blocks ([`paired`]: a ratio, its
//! interval and one of four words), and, for two runs that share no blocks, whether two
//! samples differ ([`mann_whitney`]). The bottom of the harness (`greet-bench`): it knows
//! nothing of loads, servers or results, and depends on no crate of the workspace, so its
//! claims can be tested on numbers alone.
//!
//! Layout:
//! - this file: [`median`], [`Summary`], [`distinct`], [`max_of`];
//! - [`paired`]: the verdict between servers measured in the same blocks, the run's family
//!   of comparisons (`paired/comparison.rs`: one comparison as results.json stores it);
//! - [`mann_whitney`]: two runs that share no blocks;
//! - [`order`]: the order servers take their slices in, block by block (a Williams design);
//! - [`binomial_upper`]: how high a rate of false words can be, given the words an A/A run saw.

pub mod mann_whitney;
pub mod order;
pub mod paired;

use serde::{Deserialize, Serialize};

/// The median of `values` (the mean of the two middle ones for an even count; 0 when empty).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// The larger of two optional figures, or whichever there is.
pub fn max_of(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The distinct values of `items`, in first-seen order.
pub fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// The median of a figure over runs, with its range.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Summary {
    /// Median.
    pub median: f64,
    /// Mean (the original experiments' "average").
    pub mean: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Summary {
    /// The summary of `values` (all zero when empty).
    pub fn of(values: &[f64]) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        Self {
            median: median(values),
            mean: values.iter().sum::<f64>() / values.len() as f64,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// The one-sided upper bound at `level` (0.95) on a rate seen `k` times in `n` trials
/// (Clopper–Pearson): the highest rate under which `k` or fewer would be seen at least
/// 1 − `level` of the time. 0 words in 60 cells: at most 4.9%.
pub fn binomial_upper(k: usize, n: usize, level: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    let (mut low, mut high) = (0.0, 1.0);
    for _ in 0..60 {
        let mid = (low + high) / 2.0;
        if at_most(k, n, mid) > 1.0 - level {
            low = mid;
        } else {
            high = mid;
        }
    }
    high
}

/// The two-sided p-value of a sign test: how often `a` against `b`, or further from even, would
/// be seen if each of the `a + b` events fell either way at even odds (1 when there are none).
pub fn sign_test(a: usize, b: usize) -> f64 {
    (2.0 * at_most(a.min(b), a + b, 0.5)).min(1.0)
}

/// P(at most `k` of `n`) at rate `p` (0 < p < 1), summed in logs.
fn at_most(k: usize, n: usize, p: f64) -> f64 {
    let ln_choose =
        |i: usize| -> f64 { (1..=i).map(|j| ((n - i + j) as f64 / j as f64).ln()).sum() };
    (0..=k.min(n))
        .map(|i| (ln_choose(i) + i as f64 * p.ln() + (n - i) as f64 * (1.0 - p).ln()).exp())
        .sum()
}

/// A small deterministic generator (xorshift), so that the statistics' tests and the offline
/// A/A ([`paired::offline_aa`]) need no crate and repeat exactly.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    /// Uniform on [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Normal(mean, sd) by Box–Muller.
    #[cfg(test)]
    pub(crate) fn normal(&mut self, mean: f64, sd: f64) -> f64 {
        let (u1, u2) = (self.unit().max(1e-12), self.unit());
        mean + sd * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_summaries() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        let s = Summary::of(&[3.0, 1.0, 2.0, 10.0]);
        assert_eq!((s.median, s.mean, s.min, s.max), (2.5, 4.0, 1.0, 10.0));
        assert_eq!(Summary::of(&[]), Summary::default());
    }

    /// Clopper–Pearson's one-sided bounds, as published: 0 of 60 at most 4.87%, 1 of 100 at
    /// most 4.66%.
    #[test]
    fn binomial_bounds() {
        let close = |k, n, want: f64| {
            let got = binomial_upper(k, n, 0.95);
            assert!((got - want).abs() < 5e-5, "{k} of {n}: {got}");
        };
        close(0, 60, 1.0 - 0.05f64.powf(1.0 / 60.0));
        close(0, 60, 0.0487);
        close(1, 100, 0.0466);
        assert_eq!(binomial_upper(3, 3, 0.95), 1.0);
        assert_eq!(binomial_upper(0, 0, 0.95), 1.0);
    }

    /// The sign test's exact two-sided p: 9 of 10 one way is 22/1024; 5 of 10 is no evidence.
    #[test]
    fn sign_tests() {
        assert!((sign_test(9, 1) - 22.0 / 1024.0).abs() < 1e-12);
        assert!((sign_test(1, 9) - sign_test(9, 1)).abs() < 1e-12);
        assert_eq!(sign_test(5, 5), 1.0);
        assert_eq!(sign_test(0, 0), 1.0);
        assert!((sign_test(4, 0) - 0.125).abs() < 1e-12);
    }

    #[test]
    fn maxima_and_distinct() {
        assert_eq!(max_of(None, Some(1.0)), Some(1.0));
        assert_eq!(max_of(Some(2.0), Some(1.0)), Some(2.0));
        assert_eq!(max_of(None, None), None);
        assert_eq!(distinct([3, 1, 3, 2, 1]), [3, 1, 2]);
    }
}
