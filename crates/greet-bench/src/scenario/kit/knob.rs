//! A study of knobs as the scenarios that run its parts take it: which part each runs, the
//! servers and sizes, and which pairs it compares (each knob against its crate).

/// A part of a study of knobs (`knobs`): what judges each knob against its crate, each part
/// run by the scenario that measures it ([`Scenario::knob_part`](super::Scenario::knob_part)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KnobPart {
    /// What a request costs, counted.
    Counted,
    /// Throughput against the crate, paired block by block.
    Timed,
    /// The contract's rows each knob changes.
    Contract,
}

impl KnobPart {
    /// Every part, in the order they run.
    pub(crate) const ALL: [KnobPart; 3] = [Self::Counted, Self::Timed, Self::Contract];

    /// Its name on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Counted => "counted",
            Self::Timed => "timed",
            Self::Contract => "contract",
        }
    }
}

impl std::str::FromStr for KnobPart {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == text.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
                format!("{text:?} is no part: {}", names.join(", "))
            })
    }
}

impl std::fmt::Display for KnobPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A study of knobs, as the scenarios that run its parts take it: every crate at its
/// defaults and with each knob (`hyper`, `hyper+pipeline-flush`), the sizes, the blocks of a
/// timed part.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KnobStudy {
    /// The servers, by short name.
    pub(crate) servers: Vec<String>,
    /// At the `--quick` sizes.
    pub(crate) quick: bool,
    /// Blocks of a timed part.
    pub(crate) blocks: usize,
    /// The parts it runs.
    pub(crate) parts: Vec<KnobPart>,
}

/// Whether a study of knobs compares servers `a` and `b` (table names): two crates at their
/// defaults, or a crate with knobs against the same crate at its defaults. Never two servers
/// with knobs: each knob is judged against its crate, and with a score of them every pair
/// would be hundreds of comparisons.
pub(crate) fn in_knob_study(a: &str, b: &str) -> bool {
    use greet_model::plan::{crate_of, is_tuned};
    match (is_tuned(a), is_tuned(b)) {
        (false, false) => true,
        (true, true) => false,
        _ => crate_of(a) == crate_of(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_study_of_knobs_sets_each_knob_against_its_crate() {
        assert!(in_knob_study("greet-hyper", "greet-actix"));
        assert!(in_knob_study("greet-hyper+pipeline-flush", "greet-hyper"));
        assert!(in_knob_study("greet-hyper", "greet-hyper+mimalloc"));
        assert!(!in_knob_study("greet-hyper+mimalloc", "greet-axum"));
        assert!(!in_knob_study(
            "greet-hyper+mimalloc",
            "greet-hyper+fat-lto"
        ));
    }
}
