//! What every scenario's plan is built on ([`Base`]: its servers, the servers it did not
//! start, the flags its servers start with, the runs of each measurement, where its load
//! runs), and what a plan is to the rest ([`Based`]: its defaults, its base, which of the
//! base's flags it takes). A setting every scenario shares is a field here and a flag in
//! one group (`greet-bench`'s `flags::BaseArgs`), written once.

use super::{Foreign, Placement, ServerSettings, ServerSpec, Target, SERVERS};

/// What every scenario's plan holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Base {
    /// Servers the harness starts, in order (the ladder's may name an endpoint of their own).
    pub servers: Vec<ServerSpec>,
    /// Servers it did not start, and what a valid answer is.
    pub foreign: Foreign,
    /// The flags the servers are started with.
    pub server: ServerSettings,
    /// Runs of each measurement.
    pub repeats: usize,
    /// Where the load runs.
    pub place: Placement,
}

impl Base {
    /// The workspace's servers, no target, `server`'s flags, `repeats` runs of each
    /// measurement, the load in the harness.
    pub fn new(server: ServerSettings, repeats: usize) -> Self {
        Self {
            servers: SERVERS.iter().map(|s| ServerSpec::new(s)).collect(),
            foreign: Foreign::default(),
            server,
            repeats,
            place: Placement::Harness,
        }
    }

    /// The servers' short names, in order.
    pub fn shorts(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.short.clone()).collect()
    }

    /// Runs it on `shorts`, in order, each on the scenario's endpoint.
    pub fn set_servers(&mut self, shorts: &[String]) {
        self.servers = shorts.iter().map(|s| ServerSpec::new(s)).collect();
    }

    /// The servers it loads that the harness does not start.
    pub fn targets(&self) -> &[Target] {
        &self.foreign.targets
    }
}

/// Which of the base's settings a scenario takes from its command line (the others keep
/// their defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Takes {
    /// A server may name its own endpoint (`axum:/greetings/blocking`).
    pub endpoint_each: bool,
    /// Servers it did not start (`--target`, `--expect`, `--contract`).
    pub foreign: bool,
    /// The servers' flags (`--delay-ms`, `--workers`, `--blocking-threads`).
    pub server: bool,
    /// Where the load runs (`--agents`, `--swarm`).
    pub place: bool,
}

impl Takes {
    /// Servers and repeats only: a scenario that restarts every server with settings of its
    /// own, from the harness.
    pub const SERVERS_ONLY: Takes = Takes {
        endpoint_each: false,
        foreign: false,
        server: false,
        place: false,
    };
    /// Servers, targets and the servers' flags, from the harness.
    pub const SERVED: Takes = Takes {
        foreign: true,
        server: true,
        ..Self::SERVERS_ONLY
    };
    /// As [`Takes::SERVED`], anywhere the load can run.
    pub const ANYWHERE: Takes = Takes {
        place: true,
        ..Self::SERVED
    };
}

/// Where a plan keeps the [`Base`] it is built on. The harness's list of scenarios writes it
/// for every scenario's plan, from the plan's field `base`: no scenario writes it by hand.
pub trait Grounded {
    /// Its base.
    fn base(&self) -> &Base;
    /// Its base, to set.
    fn base_mut(&mut self) -> &mut Base;
}

/// A scenario's plan: its defaults, the [`Base`] it is built on ([`Grounded`]), and which of
/// the base's settings its command line takes.
pub trait Based: Grounded + Sized {
    /// The base's settings its command line takes.
    const TAKES: Takes;
    /// What one of its repeats is, for `--repeats`' help: `Runs of each level`.
    const REPEATS_HELP: &'static str;

    /// Its defaults, or its `--quick` sizes.
    fn defaults(quick: bool) -> Self;
}
