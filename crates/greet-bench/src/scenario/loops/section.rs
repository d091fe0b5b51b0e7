//! The loops section: throughput per shape and server over repeated runs.

use serde::{Deserialize, Serialize};

use crate::stats::mann_whitney::Comparison;
use crate::stats::Summary;

use crate::results::{Header, Run, Transport};

/// The loops scenario: T users × L requests each, over keep-alive, repeated.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// The protocol its requests went over.
    #[serde(flatten)]
    pub transport: Transport,
    /// `--delay-ms` given to the servers.
    pub delay_ms: u64,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// One entry per shape, in order.
    pub shapes: Vec<LoopShape>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub header: Header,
}

/// One shape of the loops scenario against every server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LoopShape {
    /// Virtual users (JMeter threads).
    pub users: usize,
    /// Requests per user, back to back.
    pub loops: usize,
    /// One entry per server.
    pub servers: Vec<LoopServer>,
    /// Every pair of servers, on per-run throughput.
    pub comparisons: Vec<Comparison>,
}

/// One server's runs of one loops shape.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LoopServer {
    /// The server.
    pub name: String,
    /// Each run, in order.
    pub runs: Vec<Run>,
    /// Throughput over the runs.
    pub requests_per_s: Summary,
}
