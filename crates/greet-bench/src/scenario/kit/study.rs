//! A study: a scenario that stands for parts other scenarios run, each the scenario that
//! measures it best, on the study's servers and sizes (`knobs` is one: its servers are the
//! crates with each knob).

/// What one part of a study measures, each run by the scenario that measures it
/// ([`Scenario::part`](super::Scenario::part)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// What a request costs, counted.
    Counted,
    /// Throughput, paired block by block.
    Timed,
    /// The contract's rows each server answers otherwise.
    Contract,
}

impl Part {
    /// Every part, in the order they run.
    pub(crate) const ALL: [Part; 3] = [Self::Counted, Self::Timed, Self::Contract];

    /// Its name on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Counted => "counted",
            Self::Timed => "timed",
            Self::Contract => "contract",
        }
    }
}

impl std::str::FromStr for Part {
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

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A study, as the scenarios that run its parts take it: the servers, the sizes, the blocks
/// of a timed part, and the parts. Each server with knobs in it is judged against its crate
/// alone ([`greet_model::plan::against_its_crate`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Study {
    /// The servers, by short name.
    pub(crate) servers: Vec<String>,
    /// At the `--quick` sizes.
    pub(crate) quick: bool,
    /// Blocks of a timed part.
    pub(crate) blocks: usize,
    /// The parts it runs.
    pub(crate) parts: Vec<Part>,
}
