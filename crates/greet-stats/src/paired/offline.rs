//! The offline A/A: a run's recorded blocks with each block's two servers swapped by a fair
//! coin, judged again as one family, round after round. Swapped at random, a block's log
//! ratio keeps its size and loses its sign, so no comparison carries a server effect and every
//! ahead or behind word is false: their share is the false-word rate on the run's own noise,
//! with its blocks, its family's size, its bands and its looks. The signed-rank test is itself
//! a test over such swaps, so the rate should come out at or under the run's; what this checks
//! is the verdict as built (the estimate, the interval and its level, the band, the family),
//! on noise no model drew.

use super::{threshold, Blocks, Family, Member, Word};
use crate::{binomial_upper, Rng};

/// What the offline A/A came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permuted {
    /// Rounds run.
    pub rounds: usize,
    /// Comparisons judged, over every round.
    pub judged: usize,
    /// Of them, ahead or behind: every one false.
    pub words: usize,
}

impl Permuted {
    /// The false words' share, and its upper bound at 95%: `0.12% (at most 0.31%)`.
    pub fn rate(&self) -> String {
        let share = self.words as f64 / self.judged.max(1) as f64;
        let bound = binomial_upper(self.words, self.judged, 0.95);
        format!("{:.2}% (at most {:.2}%)", share * 100.0, bound * 100.0)
    }
}

/// `members` (the run's comparisons: their blocks, bands and looks) with their blocks swapped
/// at random and judged as one family, `rounds` times, from `seed`.
pub fn offline_aa(members: &[Member], rounds: usize, seed: u64) -> Permuted {
    let mut rng = Rng(seed.max(1));
    let mut out = Permuted {
        rounds,
        judged: 0,
        words: 0,
    };
    for _ in 0..rounds {
        let swapped: Vec<Member> = (members.iter())
            .filter(|m| !m.blocks.is_empty())
            .map(|m| Member {
                blocks: m.blocks.swapped(&mut rng),
                ..m.clone()
            })
            .collect();
        let alpha = threshold(swapped.iter().cloned());
        for m in &swapped {
            let family = Family::with_band(m.band);
            let judged = family.judge_at(&m.blocks, true, alpha / m.looks.max(1) as f64);
            out.judged += 1;
            out.words += usize::from(matches!(judged.word, Word::Ahead | Word::Behind));
        }
    }
    out
}

impl Blocks {
    /// Each block's two servers swapped by a fair coin: its log ratio's sign flipped.
    fn swapped(&self, rng: &mut Rng) -> Blocks {
        let logs = (self.logs.iter())
            .map(|&l| if rng.unit() < 0.5 { -l } else { l })
            .collect();
        Blocks { logs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paired::BAND;

    /// Blocks whose servers differ by far more than the band: as recorded, every one a
    /// word; swapped, a word at most as often as the run's rate allows.
    #[test]
    fn swapped_blocks_lose_their_words() {
        let mut rng = Rng(7);
        let members: Vec<Member> = (0..24)
            .map(|i| {
                let shift = [0.7, 1.0, 1.3][i % 3];
                let ratios: Vec<f64> = (0..20)
                    .map(|_| shift * (1.0 + 0.12 * (rng.unit() - 0.5)))
                    .collect();
                Member {
                    blocks: Blocks::of_ratios(&ratios),
                    band: BAND,
                    looks: 1,
                }
            })
            .collect();
        let alpha = threshold(members.iter().cloned());
        let recorded = (members.iter())
            .filter(|m| {
                let word = Family::with_band(m.band)
                    .judge_at(&m.blocks, true, alpha)
                    .word;
                matches!(word, Word::Ahead | Word::Behind)
            })
            .count();
        assert_eq!(recorded, 16, "the 0.7 and 1.3 ones");
        let aa = offline_aa(&members, 200, 11);
        assert_eq!((aa.rounds, aa.judged), (200, 200 * 24));
        let share = aa.words as f64 / aa.judged as f64;
        assert!(share <= 0.05, "{aa:?}: {}", aa.rate());
        assert!(aa.rate().contains("at most"), "{}", aa.rate());
        // The same seed, the same rounds.
        assert_eq!(offline_aa(&members, 200, 11), aa);
    }
}
