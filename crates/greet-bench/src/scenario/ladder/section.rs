//! The ladder's section: each server's start-up, resources and levels.

use serde::{Deserialize, Serialize};

use crate::stats::mann_whitney::Comparison;

use crate::results::{Header, Level, Mode, RssFrom, Sampled, Transport};

/// The ladder, the original experiment: each server started, verified, and loaded at each
/// concurrency level, one request per fresh connection.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// The protocol its requests went over.
    #[serde(flatten)]
    pub transport: Transport,
    /// Processes or containers.
    pub mode: Mode,
    /// `--delay-ms` given to the servers.
    pub delay_ms: u64,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// `--blocking-threads` given to the servers.
    pub blocking_threads: usize,
    /// The concurrency levels, in order; each sends as many requests as its concurrency.
    pub concurrency: Vec<usize>,
    /// Per-request timeout, seconds.
    pub timeout_s: f64,
    /// One entry per server (and endpoint), in run order.
    pub servers: Vec<LadderServer>,
    /// With repeats: every pair of servers at each level, on per-run total time.
    pub comparisons: Vec<Comparison>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub header: Header,
}

/// One server (and endpoint) of the ladder: start-up, resources and a level per concurrency.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LadderServer {
    /// The name in the tables, e.g. `greet-axum`.
    pub name: String,
    /// The path loaded, e.g. `/greetings`.
    pub endpoint: String,
    /// Where it was loaded, `host:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<String>,
    /// On a swarm: the node its task ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Spawn → first 200 on `/health`, seconds (none for `--target`).
    pub startup_s: Option<f64>,
    /// Resident memory after start-up, before any load, MiB.
    pub idle_rss_mib: Option<f64>,
    /// Highest CPU use over all levels, percent of one CPU.
    pub cpu_max_pct: Option<f64>,
    /// Highest resident memory over all levels, MiB.
    pub rss_max_mib: Option<f64>,
    /// How `rss_max_mib` was measured.
    pub rss_max_from: Option<RssFrom>,
    /// Most threads over all levels.
    pub threads_max: Option<u64>,
    /// One entry per concurrency level measured.
    pub levels: Vec<Level>,
}

impl Section {
    /// Whether its connections made TLS handshakes (`--protocol https` or `h2`).
    pub fn over_tls(&self) -> bool {
        self.servers
            .iter()
            .flat_map(|s| &s.levels)
            .any(|l| l.run.load.handshake_ms.is_some())
    }
}

impl LadderServer {
    /// Folds the levels' resource maxima into the server's.
    pub fn fold_maxima(&mut self) {
        let all = Sampled::over(
            &self
                .levels
                .iter()
                .map(|l| &l.run.server)
                .collect::<Vec<_>>(),
        );
        self.cpu_max_pct = all.cpu_max_pct;
        self.rss_max_mib = all.rss_max_mib;
        self.rss_max_from = all.rss_max_from;
        self.threads_max = all.threads_max;
    }
}
