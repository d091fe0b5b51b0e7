//! The paired verdict: how two servers measured in the same blocks compare, in one of four
//! words, and how a run's many comparisons hold their error rate together.
//!
//! - **Blocks.** A block measures each server once, close together in time, in a Williams
//!   order ([`crate::order`]). Only the ratio of two servers' figures *within* a block is
//!   used: a slow spell of the machine falls on both members of a block and cancels in their
//!   ratio, where it would widen two pooled samples.
//! - **Ratio and interval.** Over the blocks' log ratios, the estimate is the
//!   Hodges–Lehmann one (the median of the averages of every two blocks' log ratios) and
//!   the interval the Wilcoxon signed-rank interval around it: exact, and free of any
//!   assumption on the shape of the noise but its symmetry on a log scale. Shown as
//!   `0.82× [0.78, 0.86]`.
//! - **Four words**, against an equivalence band (±5% by default): **ahead** or **behind**
//!   when the interval lies wholly outside the band on one side, **equal** when wholly
//!   inside it, **undecided** otherwise. The band is the same either way round: from
//!   1 − band to 1 / (1 − band), neither figure more than `band` below the other. "Equal" is a claim, made with the same confidence as
//!   "ahead".
//! - **Many comparisons at once.** A run's comparisons, every scenario's together, make two
//!   families: the claims that two figures differ (ahead, behind) and the claims that they
//!   are equal. Each comparison's p-value for each kind (the smallest error rate at which its
//!   interval would make that claim) goes through Benjamini–Hochberg at 5% within its family
//!   ([`threshold`]), which holds the expected share of false words among the ahead and
//!   behind words the run gives, and apart from it among its equal words. Pooled, the easy
//!   equal claims of a quiet run would count as discoveries and loosen the threshold for the
//!   differences (`calibration.rs` measures it). An interval is drawn at the level of the
//!   word it gives (an undecided one at the stricter of the two), the level that makes
//!   exactly the decided ones decided (Benjamini–Yekutieli's false-coverage-rate
//!   intervals), so a word and its interval never disagree.
//! - **Adding blocks as it goes.** A scenario that stops adding blocks once its figures are
//!   decided has looked at them more than once; each look is a chance of a false verdict,
//!   so each of its p-values counts as many times larger as the looks its budget allows, and
//!   its intervals are drawn that much stricter (Bonferroni over the looks:
//!   [`Member::looks`]).
//! - **Checked on a run's own noise** (`offline.rs`, [`offline_aa`]): its blocks with each
//!   block's servers swapped by a coin, judged again; every word then is false.

use serde::{Deserialize, Serialize};

#[cfg(test)]
mod calibration;
mod comparison;
mod offline;

pub use comparison::{pairwise, Comparison, Figure};
pub use offline::{offline_aa, Permuted};

/// The equivalence band when none is set: within ±5% two figures are equal.
pub const BAND: f64 = 0.05;

/// The fewest blocks whose interval can decide anything alone: with 5, the widest interval
/// (the smallest and largest ratios) is at 94%, short of 95%.
pub const FEWEST_BLOCKS: usize = 6;

/// The widest band `--band` takes: past it, "equal" would say little.
pub const WIDEST_BAND: f64 = 0.5;

/// The run's rate of false verdicts (Benjamini–Hochberg's q).
pub const RATE: f64 = 0.05;

/// How every verdict is reached, as the reports state it.
pub const METHOD: &str = "paired blocks (each server once a block, close together, in a \
                          Williams order: over a cycle of blocks each server in every place and \
                          after every other alike; each scenario's block in its frame); ratio = \
                          Hodges-Lehmann estimate of the blocks' ratios, interval = Wilcoxon \
                          signed-rank; ahead/behind/equal against a band around 1, else \
                          undecided; Benjamini-Hochberg at 5% over the run's comparisons, \
                          every scenario's together, the differences (ahead, behind) and the \
                          equalities each a family of their own, each p-value times its \
                          scenario's looks where blocks are added as it goes";

/// A band as the reports write it: `±5%`, `±2.5%`.
pub fn percent(band: f64) -> String {
    let pct = band * 100.0;
    if (pct - pct.round()).abs() < 1e-9 {
        format!("±{pct:.0}%")
    } else {
        format!("±{}%", (pct * 1000.0).round() / 1000.0)
    }
}

/// A comparison's word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Word {
    /// Better than the other by more than the band, with the run's confidence.
    Ahead,
    /// Worse than the other by more than the band.
    Behind,
    /// Within the band of the other.
    Equal,
    /// None of those shown: more blocks, or a quieter machine, might tell.
    Undecided,
}

impl Word {
    /// The word as the tables print it.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Ahead => "ahead",
            Self::Behind => "behind",
            Self::Equal => "equal",
            Self::Undecided => "undecided",
        }
    }

    /// Ahead or behind, equal: a verdict was reached.
    pub fn decided(self) -> bool {
        self != Self::Undecided
    }
}

/// What an interval could claim of a ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Claim {
    Above,
    Below,
    Within,
}

/// One comparison's blocks: the log ratios of `a` over `b`, block by block.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Blocks {
    logs: Vec<f64>,
}

impl Blocks {
    /// The blocks where both `a` and `b` were measured (the same index is the same block), as
    /// ratios; a block with a zero or a figure that is not finite is left out.
    pub fn of(a: &[f64], b: &[f64]) -> Self {
        let logs = a
            .iter()
            .zip(b)
            .filter(|(x, y)| x.is_finite() && y.is_finite() && **x > 0.0 && **y > 0.0)
            .map(|(x, y)| (x / y).ln())
            .collect();
        Self { logs }
    }

    /// Blocks already as ratios.
    pub fn of_ratios(ratios: &[f64]) -> Self {
        Self::of(ratios, &vec![1.0; ratios.len()])
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.logs.len()
    }

    /// None.
    pub fn is_empty(&self) -> bool {
        self.logs.is_empty()
    }

    /// Each block's ratio.
    pub fn ratios(&self) -> Vec<f64> {
        self.logs.iter().map(|l| l.exp()).collect()
    }

    /// Every two blocks' averages (each with itself too), sorted: Walsh's averages.
    fn walsh(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.logs.len() * (self.logs.len() + 1) / 2);
        for (i, x) in self.logs.iter().enumerate() {
            for y in &self.logs[i..] {
                out.push((x + y) / 2.0);
            }
        }
        out.sort_by(f64::total_cmp);
        out
    }
}

/// P(T ≤ t) for Wilcoxon's signed-rank statistic over `n` blocks when nothing differs, for
/// every t from 0 to n(n+1)/2.
fn signed_rank_cdf(n: usize) -> Vec<f64> {
    let top = n * (n + 1) / 2;
    let mut p = vec![0.0; top + 1];
    p[0] = 1.0;
    for rank in 1..=n {
        for t in (0..=top).rev() {
            let with = if t >= rank { p[t - rank] } else { 0.0 };
            p[t] = (p[t] + with) / 2.0;
        }
    }
    let mut acc = 0.0;
    for v in &mut p {
        acc += *v;
        *v = acc;
    }
    p
}

/// The error rates a family's intervals are drawn at: one for the claims that two figures
/// differ (ahead, behind), one for the claims that they are equal ([`threshold`]). Divided
/// by a scenario's looks (`alpha / looks`), both are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Alpha {
    /// For ahead and behind.
    pub differ: f64,
    /// For equal.
    pub equal: f64,
}

impl Alpha {
    /// The same rate for both kinds of claim (a family of one comparison at `rate`).
    pub fn both(rate: f64) -> Self {
        Self {
            differ: rate,
            equal: rate,
        }
    }
}

impl std::ops::Div<f64> for Alpha {
    type Output = Alpha;

    fn div(self, looks: f64) -> Alpha {
        Alpha {
            differ: self.differ / looks,
            equal: self.equal / looks,
        }
    }
}

/// The smallest error rates at which the interval of `blocks` claims a difference, and
/// equality, against `band`.
fn p_values(blocks: &Blocks, band: f64) -> (f64, f64) {
    let t = Tested::of(blocks, band);
    (t.differ.1, t.within)
}

/// One comparison's figures before the family's level is applied.
#[derive(Debug, Clone)]
struct Tested {
    walsh: Vec<f64>,
    cdf: Vec<f64>,
    /// The difference its interval comes closest to claiming (above or below the band), and
    /// the p-value of it.
    differ: (Claim, f64),
    /// The p-value of the claim that it is within the band.
    within: f64,
}

impl Tested {
    fn of(blocks: &Blocks, band: f64) -> Self {
        let walsh = blocks.walsh();
        let cdf = signed_rank_cdf(blocks.len());
        // The band is the same either way round, so that a pair and the same pair turned over
        // (a list's a / b, the scorecard's b against its best) make the same claim: equal
        // where neither is more than `band` below the other, from 1 - band to 1 / (1 - band).
        let low = (1.0 - band).ln();
        let high = -low;
        let count = |f: &dyn Fn(f64) -> bool| walsh.iter().filter(|&&w| f(w)).count();
        // The interval [W(k), W(M-k+1)] has level 1 - 2 P(T ≤ k-1); each claim needs k past
        // the averages on the wrong side of its bound.
        let p = |wrong: usize| (2.0 * cdf.get(wrong).copied().unwrap_or(1.0)).min(1.0);
        let none = blocks.is_empty();
        let or_none = |p: f64| if none { 1.0 } else { p };
        let above = (Claim::Above, or_none(p(count(&|w| w <= high))));
        let below = (Claim::Below, or_none(p(count(&|w| w >= low))));
        let within = or_none(p(count(&|w| w < low).max(count(&|w| w > high))));
        Self {
            walsh,
            cdf,
            differ: if below.1 < above.1 { below } else { above },
            within,
        }
    }

    /// The claim its interval makes at `alpha`, if any: a difference at `alpha.differ`,
    /// equality at `alpha.equal` (an interval cannot make both: one outside the band at one
    /// level is not inside it at another).
    fn claim(&self, alpha: Alpha) -> Option<Claim> {
        if self.differ.1 <= alpha.differ {
            Some(self.differ.0)
        } else if self.within <= alpha.equal {
            Some(Claim::Within)
        } else {
            None
        }
    }

    /// The Hodges–Lehmann estimate, as a ratio.
    fn estimate(&self) -> f64 {
        if self.walsh.is_empty() {
            return f64::NAN;
        }
        // Walsh's averages are sorted: the middle one, or the mean of the middle two.
        let n = self.walsh.len();
        ((self.walsh[(n - 1) / 2] + self.walsh[n / 2]) / 2.0).exp()
    }

    /// The interval at error rate `alpha` (two-sided), as ratios: unbounded where the blocks
    /// are too few to reach it.
    fn interval(&self, alpha: f64) -> (f64, f64) {
        let m = self.walsh.len();
        // The largest c with P(T ≤ c) ≤ alpha/2: the interval is [W(c+1), W(M-c)].
        let c = self.cdf.iter().take_while(|&&p| p <= alpha / 2.0).count();
        if c == 0 || m == 0 {
            return (0.0, f64::INFINITY);
        }
        let c = c.min(m.div_ceil(2));
        (self.walsh[c - 1].exp(), self.walsh[m - c].exp())
    }
}

/// A comparison judged: its ratio, its interval, its word.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    /// The ratio of the first over the second (Hodges–Lehmann over the blocks); not a number
    /// without blocks (null in results.json).
    #[serde(serialize_with = "or_null", deserialize_with = "null_nan")]
    pub ratio: f64,
    /// The interval's low end.
    pub low: f64,
    /// Its high end (infinite where the blocks were too few for any interval: null in
    /// results.json).
    #[serde(serialize_with = "or_null", deserialize_with = "null_infinite")]
    pub high: f64,
    /// The interval's confidence, e.g. 0.998 (the run's rate shared among its comparisons).
    pub level: f64,
    /// The blocks it rests on.
    pub blocks: usize,
    /// Its word, for the first against the second.
    pub word: Word,
}

impl Judged {
    /// `0.82× [0.78, 0.86]`, or `0.82× [—]` where no interval could be drawn.
    pub fn show(&self) -> String {
        if !self.ratio.is_finite() {
            return "no blocks".to_owned();
        }
        if self.high.is_infinite() {
            return format!("{:.2}× [too few blocks]", self.ratio);
        }
        format!("{:.2}× [{:.2}, {:.2}]", self.ratio, self.low, self.high)
    }

    /// The same judgement read the other way: the second over the first (`2.00× [1.60,
    /// 2.50]`, behind, is `0.50× [0.40, 0.62]`, ahead).
    pub fn flipped(&self) -> Self {
        let word = match self.word {
            Word::Ahead => Word::Behind,
            Word::Behind => Word::Ahead,
            same => same,
        };
        // No interval stays none.
        let (low, high) = if self.high.is_infinite() {
            (self.low, self.high)
        } else {
            (1.0 / self.high, 1.0 / self.low)
        };
        Self {
            ratio: 1.0 / self.ratio,
            low,
            high,
            word,
            ..*self
        }
    }
}

/// A figure JSON cannot hold (infinite, not a number) written as null.
fn or_null<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_some(v)
    } else {
        s.serialize_none()
    }
}

/// Null read back as infinity.
fn null_infinite<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

/// Null read back as not a number.
fn null_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A run's comparisons judged together.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Family {
    /// The equivalence band (0.05: ±5%).
    pub band: f64,
    /// The false-verdict rate held over the family.
    pub rate: f64,
    /// How many times blocks were looked at before stopping, at most.
    pub looks: usize,
}

impl Default for Family {
    fn default() -> Self {
        Self {
            band: BAND,
            rate: RATE,
            looks: 1,
        }
    }
}

impl Family {
    /// The family at `band`, one look.
    pub fn with_band(band: f64) -> Self {
        Self {
            band,
            ..Self::default()
        }
    }

    /// The error rates the family's intervals are drawn at: Benjamini–Hochberg's thresholds
    /// over the family's p-values ([`threshold`]), divided by its looks; each comparison its
    /// blocks and whether more is better.
    pub fn alpha_of(&self, comparisons: &[(Blocks, bool)]) -> Alpha {
        let members: Vec<Member> = (comparisons.iter())
            .map(|(blocks, _)| Member {
                blocks: blocks.clone(),
                band: self.band,
                looks: self.looks,
            })
            .collect();
        let ps: Vec<(f64, f64)> = members.iter().map(Member::p).collect();
        Alpha {
            differ: bh(ps.iter().map(|p| p.0), self.rate),
            equal: bh(ps.iter().map(|p| p.1), self.rate),
        } / self.looks.max(1) as f64
    }

    /// One comparison judged at error rates `alpha`: its word is the claim its interval makes
    /// there, and its interval is drawn at the rate of that claim (of the stricter, where it
    /// makes none).
    pub fn judge_at(&self, blocks: &Blocks, higher: bool, alpha: Alpha) -> Judged {
        let t = Tested::of(blocks, self.band);
        let claim = t.claim(alpha);
        let rate = match claim {
            Some(Claim::Within) => alpha.equal,
            Some(_) => alpha.differ,
            None => alpha.differ.min(alpha.equal),
        };
        let (low, high) = t.interval(rate);
        let word = match (claim, higher) {
            (None, _) => Word::Undecided,
            (Some(Claim::Within), _) => Word::Equal,
            (Some(Claim::Above), true) | (Some(Claim::Below), false) => Word::Ahead,
            _ => Word::Behind,
        };
        Judged {
            ratio: t.estimate(),
            low,
            high,
            level: 1.0 - rate,
            blocks: blocks.len(),
            word,
        }
    }

    /// Judges every comparison of the family, each from its blocks; `higher` says whether a
    /// larger figure is better (ahead is then a ratio above the band).
    pub fn judge(&self, comparisons: &[(Blocks, bool)]) -> Vec<Judged> {
        let alpha = self.alpha_of(comparisons);
        comparisons
            .iter()
            .map(|(blocks, higher)| self.judge_at(blocks, *higher, alpha))
            .collect()
    }

    /// One comparison judged alone (a family of one).
    pub fn judge_one(&self, blocks: Blocks, higher: bool) -> Judged {
        self.judge(&[(blocks, higher)])[0]
    }
}

/// One comparison of a run's family, as the family counts it.
#[derive(Debug, Clone)]
pub struct Member {
    /// Its blocks.
    pub blocks: Blocks,
    /// The band it is judged against.
    pub band: f64,
    /// How many times its scenario could look at its blocks to decide whether to add more
    /// (1: a fixed number of blocks): its p-value counts this many times larger, and it is
    /// judged at the run's threshold divided by this.
    pub looks: usize,
}

impl Member {
    /// Its p-values, a difference's and equality's, each times its looks (Bonferroni over
    /// the looks).
    fn p(&self) -> (f64, f64) {
        let (differ, equal) = p_values(&self.blocks, self.band);
        let looks = self.looks.max(1) as f64;
        (differ * looks, equal * looks)
    }
}

impl Member {
    /// A figure against itself (a setting that is its own best: every block's ratio exactly
    /// 1): its "equal" would be certain, and counted among the discoveries it would loosen the
    /// threshold for every other comparison.
    fn is_self(&self) -> bool {
        !self.blocks.is_empty() && self.blocks.logs.iter().all(|l| *l == 0.0)
    }

    /// What makes two members one test: the same blocks either way round (a scorecard cell
    /// against its row's best is also a pair of its scenario's list, or that pair turned
    /// over), the same band, the same looks.
    fn key(&self) -> (Vec<i64>, u64, usize) {
        // Ratios stored and read back differ from those computed afresh in the last bits.
        let sorted = |sign: f64| {
            let mut logs: Vec<i64> = (self.blocks.logs.iter())
                .map(|l| (sign * l * 1e9).round() as i64)
                .collect();
            logs.sort_unstable();
            logs
        };
        let logs = sorted(1.0).min(sorted(-1.0));
        (logs, self.band.to_bits(), self.looks)
    }
}

/// The run's thresholds: Benjamini–Hochberg at [`RATE`] over every distinct member's
/// p-values (each times its looks; a comparison printed twice, in the scorecard and in a
/// list, is one test and counts once; a figure against itself, or one with every block left
/// out, no test at all), the differences' and the equalities' each a family of its own. A
/// member with `looks` looks is judged at the thresholds divided by them: it is decided
/// exactly when BH counts it among its family's discoveries.
pub fn threshold(members: impl IntoIterator<Item = Member>) -> Alpha {
    let mut seen = std::collections::HashSet::new();
    let ps: Vec<(f64, f64)> = (members.into_iter())
        .filter(|m| !m.is_self() && !m.blocks.is_empty())
        .filter(|m| seen.insert(m.key()))
        .map(|m| m.p())
        .collect();
    Alpha {
        differ: bh(ps.iter().map(|p| p.0), RATE),
        equal: bh(ps.iter().map(|p| p.1), RATE),
    }
}

/// Benjamini–Hochberg's threshold at rate `q` over `ps`: `decided` × q / count, at least one
/// share (an interval is drawn even where nothing is decided).
fn bh(ps: impl Iterator<Item = f64>, q: f64) -> f64 {
    let mut ps: Vec<f64> = ps.collect();
    let m = ps.len().max(1);
    ps.sort_by(f64::total_cmp);
    let decided = (1..=ps.len())
        .rev()
        .find(|&i| ps[i - 1] <= i as f64 * q / m as f64)
        .unwrap_or(0);
    decided.max(1) as f64 * q / m as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::Rng;

    impl Rng {
        /// A ratio of two noisy figures: `shift` times a lopsided noise (a neighbour's burst
        /// slows a slice a lot, never speeds one up) on each side.
        fn ratio(&mut self, shift: f64, spread: f64) -> f64 {
            let mut noise = || {
                let u = self.unit();
                1.0 - spread * u * u * u
            };
            shift * noise() / noise()
        }
    }

    #[test]
    fn the_signed_rank_distribution_matches_the_tables() {
        let cdf = signed_rank_cdf(10);
        // Tables: P(T ≤ 8) = 0.0244, P(T ≤ 10) = 0.0420 for n = 10.
        assert!((cdf[8] - 0.0244).abs() < 1e-4, "{}", cdf[8]);
        assert!((cdf[10] - 0.0420).abs() < 1e-4, "{}", cdf[10]);
        assert_eq!(*cdf.last().unwrap(), 1.0);
        assert_eq!(signed_rank_cdf(3)[0], 0.125);
    }

    #[test]
    fn the_interval_and_the_estimate() {
        let ratios = [0.80, 0.82, 0.81, 0.85, 0.79, 0.83, 0.84, 0.80, 0.82, 0.81];
        let j = Family::default().judge_one(Blocks::of_ratios(&ratios), true);
        assert!((j.ratio - 0.8198).abs() < 0.005, "{j:?}");
        assert!(j.low < j.ratio && j.ratio < j.high, "{j:?}");
        assert!(j.low > 0.79 && j.high < 0.85, "{j:?}");
        assert_eq!(j.word, Word::Behind);
        assert_eq!(j.blocks, 10);
        assert!(j.show().starts_with("0.81× [0.8"), "{}", j.show());
        // Read the other way: the inverse ratio and interval, ahead.
        let back = j.flipped();
        assert!((back.ratio * j.ratio - 1.0).abs() < 1e-12, "{back:?}");
        assert!((back.low * j.high - 1.0).abs() < 1e-12, "{back:?}");
        assert!((back.high * j.low - 1.0).abs() < 1e-12, "{back:?}");
        assert_eq!((back.word, back.blocks), (Word::Ahead, 10));
        // Where less is better, the same ratios are ahead.
        let j = Family::default().judge_one(Blocks::of_ratios(&ratios), false);
        assert_eq!(j.word, Word::Ahead);
    }

    #[test]
    fn equal_is_a_claim_that_needs_blocks() {
        let tight = [1.01, 0.99, 1.00, 1.02, 0.98, 1.01, 1.00, 0.99];
        let j = Family::default().judge_one(Blocks::of_ratios(&tight), true);
        assert_eq!(j.word, Word::Equal, "{j:?}");
        assert!(j.low >= 0.95 && j.high <= 1.05, "{j:?}");
        // Three blocks cannot reach 95% at all: undecided, and no interval.
        let j = Family::default().judge_one(Blocks::of_ratios(&tight[..3]), true);
        assert_eq!(j.word, Word::Undecided);
        assert!(j.high.is_infinite());
        assert!(j.flipped().show().ends_with("[too few blocks]"));
        // Loose blocks around 1 are not shown equal.
        let loose = [1.3, 0.7, 1.2, 0.8, 1.25, 0.75, 1.1, 0.9];
        let j = Family::default().judge_one(Blocks::of_ratios(&loose), true);
        assert_eq!(j.word, Word::Undecided, "{j:?}");
    }

    #[test]
    fn an_open_interval_survives_results_json() {
        let j = Family::default().judge_one(Blocks::of_ratios(&[1.0, 1.1]), true);
        assert!(j.high.is_infinite());
        let text = serde_json::to_string(&j).unwrap();
        assert!(text.contains("\"high\":null"), "{text}");
        let back: Judged = serde_json::from_str(&text).unwrap();
        assert_eq!(back, j);
        let none = Family::default().judge_one(Blocks::default(), true);
        let back: Judged = serde_json::from_str(&serde_json::to_string(&none).unwrap()).unwrap();
        assert!(back.ratio.is_nan() && back.high.is_infinite());
    }

    #[test]
    fn pairs_are_blocks_by_index_and_skip_what_is_missing() {
        let b = Blocks::of(&[2.0, 0.0, 3.0, 4.0], &[1.0, 1.0, f64::NAN]);
        assert_eq!(b.len(), 1);
        assert!((b.ratios()[0] - 2.0).abs() < 1e-12);
        let j = Family::default().judge_one(Blocks::default(), true);
        assert_eq!(j.word, Word::Undecided);
        assert_eq!(j.show(), "no blocks");
    }

    #[test]
    fn a_server_against_itself_is_never_ahead_or_behind() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut equal = 0;
        for _ in 0..400 {
            let ratios: Vec<f64> = (0..12).map(|_| rng.ratio(1.0, 0.3)).collect();
            let calm: Vec<f64> = (0..12).map(|_| rng.ratio(1.0, 0.1)).collect();
            let c = Family::default().judge_one(Blocks::of_ratios(&calm), true);
            assert!(!matches!(c.word, Word::Ahead | Word::Behind), "{calm:?}");
            equal += usize::from(c.word == Word::Equal);
            let j = Family::default().judge_one(Blocks::of_ratios(&ratios), true);
            assert!(!matches!(j.word, Word::Ahead | Word::Behind), "{ratios:?}");
        }
        // Where bursts take up to 10% off a slice, twelve blocks show most of them equal.
        assert!(equal > 200, "{equal} of 400 equal");
    }

    #[test]
    fn a_comparison_printed_twice_is_one_test() {
        let member = |ratios: &[f64]| Member {
            blocks: Blocks::of_ratios(ratios),
            band: BAND,
            looks: 1,
        };
        let lead = [1.2, 1.21, 1.19, 1.22, 1.2, 1.18, 1.2, 1.23];
        let turned: Vec<f64> = lead.iter().map(|r| 1.0 / r).collect();
        let nothing = [0.8, 1.25, 0.8, 1.25, 0.8, 1.25, 0.8, 1.25];
        let once = threshold([member(&lead), member(&nothing)]);
        // The lead (p = 2/256) is decided beside one comparison showing nothing, at 5%/2.
        assert!((once.differ - 0.025).abs() < 1e-12, "{once:?}");
        let twice = threshold([member(&lead), member(&turned), member(&nothing)]);
        assert_eq!(twice, once);
        // Turned over, a pair makes the same claim, at the same p-value.
        let judge = |r: &[f64]| Family::default().judge_one(Blocks::of_ratios(r), true);
        assert_eq!(judge(&lead).flipped().word, judge(&turned).word);
        // The same sizes with a sign changed are another test.
        let mut crossed = lead;
        crossed[0] = 1.0 / crossed[0];
        let other = threshold([member(&lead), member(&crossed), member(&nothing)]);
        assert_ne!(other, once);
        // Two comparisons that show nothing are two tests, and ask more of the lead.
        let other = [0.8, 1.25, 0.8, 1.25, 0.8, 1.25, 0.8, 1.26];
        let more = threshold([member(&lead), member(&nothing), member(&other)]);
        assert!((more.differ - 0.05 / 3.0).abs() < 1e-12, "{more:?}");
    }

    #[test]
    fn equal_claims_do_not_loosen_the_threshold_for_differences() {
        let member = |ratios: &[f64]| Member {
            blocks: Blocks::of_ratios(ratios),
            band: BAND,
            looks: 1,
        };
        let lead = [1.2, 1.21, 1.19, 1.22, 1.2, 1.18, 1.2, 1.23];
        let nothing = [0.8, 1.25, 0.8, 1.25, 0.8, 1.25, 0.8, 1.25];
        let tight = [1.01, 0.99, 1.00, 1.02, 0.98, 1.01, 1.00, 0.99];
        let tighter = [1.0, 1.01, 1.0, 0.99, 1.0, 1.01, 1.0, 0.99];
        let alone = threshold([member(&lead), member(&nothing)]);
        let with = threshold([
            member(&lead),
            member(&nothing),
            member(&tight),
            member(&tighter),
        ]);
        // The lead is the differences' one discovery of four: 5% / 4, not the 3 × 5% / 4 it
        // would be pooled with the two equal claims.
        assert!((alone.differ - 0.05 / 2.0).abs() < 1e-12, "{alone:?}");
        assert!((with.differ - 0.05 / 4.0).abs() < 1e-12, "{with:?}");
        // A setting against itself is no test: the thresholds do not move.
        let same = threshold([
            member(&lead),
            member(&nothing),
            member(&tight),
            member(&tighter),
            member(&[1.0; 8]),
        ]);
        assert_eq!(same, with);
        // The two equal claims are their family's two discoveries.
        assert!((with.equal - 2.0 * 0.05 / 4.0).abs() < 1e-12, "{with:?}");
        // Each word's interval is drawn at its own family's level.
        let tight_word = Family::default().judge_at(&Blocks::of_ratios(&tight), true, with);
        assert_eq!(tight_word.word, Word::Equal);
        assert!((tight_word.level - (1.0 - with.equal)).abs() < 1e-12);
        let lead_word = Family::default().judge_at(&Blocks::of_ratios(&lead), true, with);
        assert_eq!(lead_word.word, Word::Ahead);
        assert!((lead_word.level - (1.0 - with.differ)).abs() < 1e-12);
        let none = Family::default().judge_at(&Blocks::of_ratios(&nothing), true, with);
        assert_eq!(none.word, Word::Undecided);
        assert!((none.level - (1.0 - with.differ.min(with.equal))).abs() < 1e-12);
    }

    #[test]
    fn the_family_holds_its_rate_where_nothing_differs() {
        // 24 comparisons of servers 4% apart (inside the band: ahead or behind is false).
        let mut rng = Rng(12345);
        let mut false_words = 0;
        for _ in 0..200 {
            let family: Vec<(Blocks, bool)> = (0..24)
                .map(|_| {
                    let r: Vec<f64> = (0..10).map(|_| rng.ratio(1.04, 0.2)).collect();
                    (Blocks::of_ratios(&r), true)
                })
                .collect();
            let judged = Family::default().judge(&family);
            false_words += judged
                .iter()
                .filter(|j| matches!(j.word, Word::Ahead | Word::Behind))
                .count();
        }
        assert!(false_words <= 5, "{false_words} false verdicts in 200 runs");
    }

    #[test]
    fn a_real_lead_is_found_and_its_interval_agrees_with_its_word() {
        let mut rng = Rng(777);
        let family: Vec<(Blocks, bool)> = (0..24)
            .map(|i| {
                let shift = if i % 3 == 0 { 1.3 } else { 1.0 };
                let r: Vec<f64> = (0..10).map(|_| rng.ratio(shift, 0.1)).collect();
                (Blocks::of_ratios(&r), true)
            })
            .collect();
        let judged = Family::default().judge(&family);
        for (i, j) in judged.iter().enumerate() {
            if i % 3 == 0 {
                assert_eq!(j.word, Word::Ahead, "{i}: {j:?}");
            }
            let top = 1.0 / (1.0 - BAND);
            let inside = j.low >= 1.0 - BAND && j.high <= top;
            let above = j.low > top;
            let below = j.high < 1.0 - BAND;
            let word = match (inside, above, below) {
                (true, _, _) => Word::Equal,
                (_, true, _) => Word::Ahead,
                (_, _, true) => Word::Behind,
                _ => Word::Undecided,
            };
            assert_eq!(j.word, word, "{i}: {j:?}");
        }
        // More looks, a stricter level: fewer or the same decided.
        let looked = Family {
            looks: 4,
            ..Family::default()
        }
        .judge(&family);
        let decided = |js: &[Judged]| js.iter().filter(|j| j.word.decided()).count();
        assert!(decided(&looked) <= decided(&judged));
        assert!(looked[0].level > judged[0].level);
    }
}
