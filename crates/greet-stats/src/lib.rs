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
//! - [`mann_whitney`]: two runs that share no blocks.

pub mod mann_whitney;
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

/// A small deterministic generator (xorshift) for the statistics' tests, so they need no
/// crate and never flake; each test module adds the draws it needs.
#[cfg(test)]
pub(crate) struct Rng(pub(crate) u64);

#[cfg(test)]
impl Rng {
    /// Uniform on [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Normal(mean, sd) by Box–Muller.
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

    #[test]
    fn maxima_and_distinct() {
        assert_eq!(max_of(None, Some(1.0)), Some(1.0));
        assert_eq!(max_of(Some(2.0), Some(1.0)), Some(2.0));
        assert_eq!(max_of(None, None), None);
        assert_eq!(distinct([3, 1, 3, 2, 1]), [3, 1, 2]);
    }
}
