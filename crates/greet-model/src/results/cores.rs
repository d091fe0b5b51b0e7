//! How busy each side's CPUs were over a load, and whether that makes its figure the load
//! generator's limit rather than the server's ([`Cores::client_bound`]).

use serde::{Deserialize, Serialize};

use greet_stats::median;

use super::Trial;

/// How busy each side's CPUs were over a load: its CPU time over the load's span, a share of
/// the CPUs it was given (pinned to; every CPU where not pinned).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct Cores {
    /// The load generator's, percent; with agents, the busiest agent's, each one CPU.
    pub client_pct: f64,
    /// The server's, percent; none where it was not sampled (a target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_pct: Option<f64>,
}

impl Cores {
    /// The load generator's share from which it is saturated. A closed loop's client sends as
    /// soon as an answer comes: where it is the limit its CPUs stay busy all through, and
    /// this machine's own wake-ups and the sampler keep a saturated core a few points under
    /// 100.
    pub const CLIENT_SATURATED_PCT: f64 = 90.0;
    /// The server's share under which it had CPU to spare: a server that sets the pace in a
    /// closed loop keeps its CPUs over this (its wake-ups and the idle moments between a
    /// batch of answers and the next requests stay within a tenth or two).
    pub const SERVER_SPARE_PCT: f64 = 80.0;

    /// The client set the figure, not the server: its CPUs were saturated while the server's
    /// had time to spare. Such a figure is a floor of what the server can do: no verdict.
    pub fn client_bound(&self) -> bool {
        self.client_pct >= Self::CLIENT_SATURATED_PCT
            && self.server_pct.is_some_and(|s| s <= Self::SERVER_SPARE_PCT)
    }

    /// Both shares as the reports write them: `client 99%, server 58%`.
    pub fn line(&self) -> String {
        match self.server_pct {
            Some(s) => format!("client {:.0}%, server {s:.0}%", self.client_pct),
            None => format!("client {:.0}%", self.client_pct),
        }
    }

    /// The medians of `runs`' shares, where every run has them.
    pub fn median_of(runs: &[Trial]) -> Option<Cores> {
        let each: Option<Vec<Cores>> = runs.iter().map(|r| r.cores).collect();
        let each = each.filter(|e| !e.is_empty())?;
        let servers: Option<Vec<f64>> = each.iter().map(|c| c.server_pct).collect();
        Some(Cores {
            client_pct: median(&each.iter().map(|c| c.client_pct).collect::<Vec<_>>()),
            server_pct: servers.map(|s| median(&s)),
        })
    }
}
