//! The protocols section: each server's throughput over each protocol, as a fraction of its
//! own HTTP/1.1, and the servers against each other.

use greet_probe::Protocol;
use serde::{Deserialize, Serialize};

use crate::stats::mann_whitney::Comparison;
use crate::stats::Summary;

use crate::results::{Gain, Header, Run};

/// The protocols scenario: keep-alive load at delay 0 over each protocol, a fresh server per
/// run, repeats outermost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// The protocols, in order.
    pub protocols: Vec<Protocol>,
    /// `--streams`: users per HTTP/2 connection (the first, when it is a list).
    pub streams: usize,
    /// `--streams` as given: each HTTP/2 protocol is measured at each.
    #[serde(default)]
    pub streams_each: Vec<usize>,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// Connections (users) of each load.
    pub concurrency: usize,
    /// Measured part of each run, seconds.
    pub duration_s: f64,
    /// Unmeasured load before it, seconds.
    pub warmup_s: f64,
    /// One entry per server and protocol.
    pub cells: Vec<ProtocolCell>,
    /// Per server and protocol other than HTTP/1.1: its throughput against its own HTTP/1.1.
    pub of_http1: Vec<ProtocolGain>,
    /// Per protocol, every pair of servers on their runs' fractions of their own HTTP/1.1
    /// (which server keeps more of its HTTP/1.1 over it).
    pub comparisons: Vec<ProtocolComparisons>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub header: Header,
}

/// One server over one protocol.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ProtocolCell {
    /// The server.
    pub server: String,
    /// `http1`, `h2c`, `https` or `h2`.
    pub protocol: Protocol,
    /// Users sharing an HTTP/2 connection; 1 over HTTP/1.1.
    #[serde(default = "one")]
    pub streams: usize,
    /// Each run, in order.
    pub runs: Vec<Run>,
    /// Throughput over the runs.
    pub requests_per_s: Summary,
    /// Valid responses, percent of all runs' requests.
    pub success_rate: f64,
    /// Median of the runs' mean server CPU, percent of one CPU.
    pub cpu_avg_pct: Option<f64>,
}

/// A server's throughput over a protocol against its own over HTTP/1.1.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProtocolGain {
    /// The server.
    pub server: String,
    /// The protocol.
    pub protocol: Protocol,
    /// Users sharing an HTTP/2 connection.
    #[serde(default = "one")]
    pub streams: usize,
    /// Median over the protocol / median over HTTP/1.1, with the test between the runs.
    #[serde(flatten)]
    pub gain: Gain,
}

/// The servers compared over one protocol.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ProtocolComparisons {
    /// The protocol.
    pub protocol: Protocol,
    /// Users sharing an HTTP/2 connection.
    #[serde(default = "one")]
    pub streams: usize,
    /// Every pair of servers.
    pub comparisons: Vec<Comparison>,
}

/// A protocol at a stream count, as tables, charts and CSV name it: `h2c`, or
/// `h2c, 10 streams` where HTTP/2 connections are shared.
pub(crate) fn case(protocol: Protocol, streams: usize) -> String {
    if streams > 1 {
        format!("{protocol}, {streams} streams")
    } else {
        protocol.to_string()
    }
}

impl ProtocolCell {
    /// Its protocol and stream count: `h2c`, or `h2c, 10 streams`.
    pub fn case(&self) -> String {
        case(self.protocol, self.streams)
    }
}

impl Section {
    /// Every protocol at every stream count it is measured at, in order: HTTP/2 at each of
    /// `streams_each` (or `streams`), the others at 1.
    pub fn cases(&self) -> Vec<(Protocol, usize)> {
        let each = if self.streams_each.is_empty() {
            vec![self.streams.max(1)]
        } else {
            self.streams_each.clone()
        };
        cases(&self.protocols, &each)
    }
}

/// `protocols` each at every one of `streams` over HTTP/2, at 1 otherwise.
pub(crate) fn cases(protocols: &[Protocol], streams: &[usize]) -> Vec<(Protocol, usize)> {
    protocols
        .iter()
        .flat_map(|&p| {
            let each = if p.http2() { streams } else { &[1][..] };
            each.iter().map(move |&n| (p, n))
        })
        .collect()
}

fn one() -> usize {
    1
}
