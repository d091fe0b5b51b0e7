//! What a load comes to, as numbers ([`Figures`]), and one agent's part of it ([`AgentRun`]):
//! the shapes results files keep, made here, where the outcomes are counted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What the load generator saw of one load.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Figures {
    /// Requests sent (or due), valid or not.
    pub requests: u64,
    /// Valid responses (the endpoint's status and body), percent of the requests.
    pub success_rate: f64,
    /// First request (connect included) to last response, seconds.
    pub total_s: f64,
    /// Valid responses per second of `total_s`: failures, however fast, add nothing.
    pub requests_per_s: f64,
    /// Fastest valid request, seconds.
    pub fastest_s: f64,
    /// Slowest valid request, seconds.
    pub slowest_s: f64,
    /// Mean of the valid requests, seconds.
    pub average_s: f64,
    /// Latency percentiles of the valid requests.
    pub latency_ms: Latency,
    /// Connections opened (one per request on fresh connections; one per user and
    /// reconnect on keep-alive).
    pub connects: u64,
    /// Time to an established connection (TCP).
    pub connect_ms: Connect,
    /// Over TLS: the handshakes after the connects (full ones, unless the load resumes
    /// sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake_ms: Option<Handshakes>,
    /// The valid answers' mean body size as it came over the wire (compressed, when it
    /// was), bytes; none when no answer was valid (or a results file before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_answer: Option<f64>,
    /// Failed requests by kind: connect, timeout, io, status, body, panic.
    pub errors: BTreeMap<String, u64>,
}

impl Figures {
    /// Valid responses.
    pub fn ok(&self) -> u64 {
        self.requests.saturating_sub(self.errors.values().sum())
    }
}

/// Latency percentiles, milliseconds (HDR histogram, 3 significant digits).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Slowest.
    pub max: f64,
}

/// TLS handshakes, milliseconds: TCP established → handshake done, on the client.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Handshakes {
    /// Handshakes made.
    pub count: u64,
    /// Of those, the ones that resumed a session (none unless the load resumes them).
    #[serde(default)]
    pub resumed: u64,
    /// Mean.
    pub avg: f64,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Slowest.
    pub max: f64,
}

/// Connect times, milliseconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Connect {
    /// Mean.
    pub avg: f64,
    /// Slowest.
    pub max: f64,
}

/// One agent's part of a load, as it counted it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct AgentRun {
    /// Its number, from 0.
    pub index: usize,
    /// Its share of the concurrency.
    pub concurrency: usize,
    /// Requests it counted, valid or not.
    pub requests: u64,
    /// Its valid responses, %.
    pub success_rate: f64,
    /// Its valid responses a second, over its own elapsed time.
    pub requests_per_s: f64,
    /// Its first request to its last answer, s.
    pub total_s: f64,
    /// How long after the shared start it began, ms.
    pub start_skew_ms: f64,
    /// CPU its process used, s (start-up and waiting included).
    pub cpu_s: f64,
    /// On a swarm: the node its task ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// `part` as a percentage of `whole` (0 when there is no whole).
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// `count` per second over `seconds` (0 over no time).
pub fn rate(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_rates_over_nothing_are_zero() {
        assert_eq!(percent(1, 4), 25.0);
        assert_eq!(percent(1, 0), 0.0);
        assert_eq!(rate(10, 2.0), 5.0);
        assert_eq!(rate(10, 0.0), 0.0);
    }
}
