//! Protocols: keep-alive throughput at zero delay over HTTP/1.1, h2c, HTTP/1.1 over TLS and
//! HTTP/2 over TLS, each a fraction of the same server's HTTP/1.1.

mod flags;
mod report;
mod run;

use std::time::Duration;

use greet_model::plan::{Base, Based, Budget, Measure, Measured, Protocol, Takes, GRID_REPEATS};

pub(crate) use flags::Flags;
pub use report::*;

use super::kit::{About, Scenario};

/// The protocols scenario.
#[derive(Debug)]
pub(crate) struct Protocols;

impl Scenario for Protocols {
    const ABOUT: About = About {
        name: "protocols",
        block: "a slice of each server in each case, every server started once",
        title: "Protocols (HTTP/1.1, h2c, HTTPS and HTTP/2 over TLS)",
        summary: "Keep-alive throughput over HTTP/1.1, h2c, HTTPS and h2",
        detail: "Keep-alive throughput at zero delay over HTTP/1.1, h2c, HTTP/1.1 over TLS and \
                 HTTP/2 over TLS, each a fraction of the same server's HTTP/1.1, and the servers \
                 compared on those fractions",
        examples: &[
            "greet-bench protocols --quick",
            "greet-bench protocols --streams 1,10          HTTP/2 with 1 and 10 streams a connection",
        ],
        own_protocols: true,
        streams_list: true,
        measures_again: true,
        ..About::DEFAULT
    };
    type Plan = Plan;
    type Flags = Flags;
    type Section = Section;
}

/// Protocols: each server loaded at delay 0 over HTTP/1.1, h2c, HTTP/1.1 over TLS and HTTP/2
/// over TLS, each against its own HTTP/1.1.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario's plan holds.
    pub base: Base,
    /// Protocols, in order; HTTP/1.1 is always among them (the others are its fractions).
    pub protocols: Vec<Protocol>,
    /// How each protocol is measured.
    pub measure: Measure,
    /// Blocks added while its figures are still undecided.
    pub budget: Budget,
}

impl Plan {
    /// Time for the whole scenario, blocks added where undecided: about one and a half times
    /// what its 20 blocks take.
    pub const BUDGET: Duration = Duration::from_secs(100);
}

impl Based for Plan {
    const TAKES: Takes = Takes::SERVERS_ONLY;
    const REPEATS_HELP: &'static str = GRID_REPEATS;

    fn defaults(quick: bool) -> Self {
        Self {
            base: Self::grid(quick),
            protocols: Protocol::ALL.to_vec(),
            measure: Self::measure(quick),
            budget: Budget::of(if quick { Duration::ZERO } else { Self::BUDGET }),
        }
    }
}

impl Measured for Plan {
    /// Short, since `all` runs it: 3 servers × 4 protocols, each started once, × 20 blocks
    /// of 0.25 s (short slices, many blocks, as workloads).
    const MEASURE: Measure = Measure {
        connections: 50,
        duration: Duration::from_millis(250),
        warmup: Duration::from_millis(200),
    };
    const REPEATS: usize = 20;
    const QUICK_MEASURE: Measure = Measure {
        connections: 10,
        duration: Duration::from_millis(100),
        warmup: Duration::ZERO,
    };
}
