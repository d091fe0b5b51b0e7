//! Where a scenario's load runs ([`Placement`]), and on a swarm its servers too: one value,
//! made once from `--agents` and `--swarm`, which the harness reads and no scenario does.

use std::num::NonZeroUsize;

/// Where a scenario's load runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// In the harness's own process.
    #[default]
    Harness,
    /// Agent processes on this machine, each a shard of every load, starting together.
    Local(NonZeroUsize),
    /// The servers as a Docker Swarm stack, each load a swarm job of agents on its network.
    Swarm(NonZeroUsize),
}

impl Placement {
    /// What `--agents N` and `--swarm` ask for: agents on the swarm (one unless told), agents
    /// here, or the harness alone.
    pub fn from_flags(agents: Option<usize>, swarm: bool) -> Self {
        let agents = agents.and_then(NonZeroUsize::new);
        match (swarm, agents) {
            (true, agents) => Self::Swarm(agents.unwrap_or(NonZeroUsize::MIN)),
            (false, Some(agents)) => Self::Local(agents),
            (false, None) => Self::Harness,
        }
    }

    /// Agents per load: none in the harness.
    pub fn agents(self) -> usize {
        match self {
            Self::Harness => 0,
            Self::Local(n) | Self::Swarm(n) => n.get(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_make_one_placement() {
        let n = |n| NonZeroUsize::new(n).unwrap();
        assert_eq!(Placement::from_flags(None, false), Placement::Harness);
        assert_eq!(
            Placement::from_flags(Some(2), false),
            Placement::Local(n(2))
        );
        assert_eq!(Placement::from_flags(None, true), Placement::Swarm(n(1)));
        assert_eq!(Placement::from_flags(Some(3), true), Placement::Swarm(n(3)));
        assert_eq!(Placement::Swarm(n(3)).agents(), 3);
        assert_eq!(Placement::Harness.agents(), 0);
    }
}
