//! One agent's share of a level, and the level again from every agent's report; one job a
//! file:
//! - this file: [`Shard`], one agent's part of a level: its index among `agents` and its share
//!   of the level's [`Work`] ([`Shard::own`], by [`share`]), a shared start instant
//!   ([`unix_ms`]), a time limit; which agent a swarm task is ([`index_of_slot`]);
//! - `run`: the agent's side ([`run_shard`], after [`reach`]): wait for the start, run its
//!   share, and hand back one [`Report`];
//! - `report`: the report, printed as JSON in lines of at most 4 KiB after [`REPORT_PREFIX`]
//!   (a process's output, a container's log: log pipelines split longer lines) and read back
//!   ([`parse_report`]); [`gather_reports`]: every
//!   agent's report in a level's output, checked to be one whole level; [`merge`]: their
//!   tallies as one, exactly (every request counted once, latencies from the agents'
//!   histograms, not from their percentiles), each agent's figures beside.
//!
//! A shard is the same wherever it runs: a local process, a replica of a swarm job, or an
//! Indexed Job's pod (whose index comes from `JOB_COMPLETION_INDEX`). Its flags, written and
//! read, are the agent's command line's: [`Shard::flags`], [`Shard::level_flags`] and
//! [`crate::agent::ShardArgs`].

mod report;
mod run;

pub use report::{
    all_reports_in, gather_reports, merge, parse_report, report_in, Report, ReportsError,
    REPORT_PREFIX,
};
pub use run::{reach, run_shard, ShardError};

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use greet_probe::Protocol;

use crate::expect::Expect;
use crate::message::{Header, RequestBody};
use crate::work::{Stop, Work};

/// An agent later than this after the shared start fails its level: its load did not
/// overlap the others'.
pub const START_LATE: Duration = Duration::from_secs(2);

/// One agent's part of a level.
#[derive(Debug, Clone, PartialEq)]
pub struct Shard {
    /// The server and endpoint, as the agents reach it: `http://10.0.0.5:8080/greetings`, or
    /// by a name the agents' network resolves.
    pub url: String,
    /// What a valid answer is.
    pub expect: Expect,
    /// Header fields each request carries besides its own.
    pub headers: Vec<Header>,
    /// A body each request sends, as a POST.
    pub body: Option<RequestBody>,
    /// The protocol.
    pub protocol: Protocol,
    /// Over TLS, handshakes resume the sessions earlier ones left.
    pub tls_resume: bool,
    /// Each connection a WebSocket on the target, each request a message echoed on it.
    pub websocket: bool,
    /// Per-request limit.
    pub timeout: Duration,
    /// The whole level's load, of which this agent runs its share.
    pub work: Work,
    /// This agent's number, from 0.
    pub index: usize,
    /// Agents in all.
    pub agents: usize,
    /// When every agent starts, milliseconds since the Unix epoch.
    pub start_at_ms: u64,
}

/// `total` split over `agents` as evenly as whole numbers go: the first `total % agents`
/// agents take one more.
pub fn share(total: usize, agents: usize, index: usize) -> usize {
    let agents = agents.max(1);
    total / agents + usize::from(index < total % agents)
}

/// The URL of `target` on the server at `host:port` (an address, or a name), over
/// `protocol`.
pub fn url_of(host: impl fmt::Display, target: &str, protocol: Protocol) -> String {
    format!("{}://{host}{target}", protocol.scheme())
}

impl Shard {
    /// This agent's part of the level.
    pub fn own(&self) -> Work {
        let part = |total| share(total, self.agents, self.index);
        match self.work {
            Work::Fresh {
                concurrency,
                requests,
            } => Work::Fresh {
                concurrency: part(concurrency),
                requests: part(requests),
            },
            Work::Sessions {
                users,
                stop,
                streams,
                pipeline,
                requests_per_connection,
            } => Work::Sessions {
                users: part(users),
                stop: match stop {
                    Stop::Total(n) => Stop::Total(part(n)),
                    each_or_time => each_or_time,
                },
                streams,
                pipeline,
                requests_per_connection,
            },
            Work::Paced(ref s) => {
                Work::Paced(s.scaled(1.0 / self.agents.max(1) as f64, part(s.connections).max(1)))
            }
        }
    }

    /// The path and query the agents GET: the URL's, `/greetings` when it has none.
    pub fn target(&self) -> String {
        match self.url.splitn(4, '/').nth(3) {
            Some(path) => format!("/{path}"),
            None => greet_core::paths::GREETINGS.to_owned(),
        }
    }

    /// The longest an agent's share may take once started: every request may take the
    /// timeout, one after another on a connection; a schedule runs its duration, and its last
    /// requests may take the timeout.
    pub fn time_limit(&self) -> Duration {
        let rounds = |requests: usize, at_once: usize| {
            let rounds = requests.div_ceil(at_once.max(1)).max(1);
            self.timeout * (u32::try_from(rounds).unwrap_or(u32::MAX - 1) + 1)
        };
        match self.work {
            Work::Fresh {
                concurrency,
                requests,
            } => rounds(requests, concurrency),
            Work::Sessions {
                stop: Stop::After(d),
                ..
            } => d + self.timeout * 2,
            Work::Paced(ref s) => s.duration() + self.timeout * 2,
            Work::Sessions {
                users,
                stop: Stop::Total(n),
                ..
            } => rounds(n, users),
            Work::Sessions {
                stop: Stop::Each(n),
                ..
            } => rounds(n, 1),
        }
    }
}

/// `t` in milliseconds since the Unix epoch, as `--start-at` takes it.
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The agent index of a swarm task's slot: the agents run as a replicated service, whose
/// slots are 1 to N (none for anything else).
pub fn index_of_slot(slot: &str) -> Option<usize> {
    slot.trim().parse::<usize>().ok()?.checked_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_whole() {
        for (total, agents) in [(2700, 2), (2701, 2), (100, 3), (1, 4), (0, 2)] {
            let shares: Vec<usize> = (0..agents).map(|i| share(total, agents, i)).collect();
            assert_eq!(shares.iter().sum::<usize>(), total, "{total} over {agents}");
            let (lo, hi) = (shares.iter().min(), shares.iter().max());
            assert!(hi.unwrap() - lo.unwrap() <= 1, "{shares:?}");
        }
    }
}
