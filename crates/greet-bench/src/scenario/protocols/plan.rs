//! The protocols plan: keep-alive throughput at delay 0 over each protocol.

use std::time::Duration;

use crate::plan::{Measure, Measured, Protocol, SERVERS};

/// Protocols: each server loaded at delay 0 over HTTP/1.1, h2c, HTTP/1.1 over TLS and HTTP/2
/// over TLS, each against its own HTTP/1.1.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// Protocols, in order; HTTP/1.1 is always among them (the others are its fractions).
    pub protocols: Vec<Protocol>,
    /// How each protocol is measured.
    pub measure: Measure,
}

impl Plan {
    /// The defaults, or the `--quick` sizes.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            protocols: Protocol::ALL.to_vec(),
            measure: Self::measure(quick),
        }
    }
}

impl Measured for Plan {
    /// Short, since `all` runs it: 3 servers × 4 protocols × 4 runs of 0.5 s.
    const MEASURE: Measure = Measure {
        concurrency: 50,
        duration: Duration::from_millis(500),
        warmup: Duration::from_millis(200),
        repeats: 4,
    };
    const QUICK_MEASURE: Measure = Measure {
        concurrency: 10,
        duration: Duration::from_millis(100),
        warmup: Duration::ZERO,
        repeats: 2,
    };
}
