//! A load as one value ([`Load`]: whom, what, how answers are checked, and its [`Work`]):
//! what every loop takes, and what an agent's shard carries a share of.

use std::net::SocketAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::conn::Wire;
use crate::expect::Check;
use crate::message::{Header, RequestBody};
use crate::schedule::Schedule;

/// A load: the server, the request, the check of its answers, and the work.
#[derive(Debug, Clone)]
pub struct Load {
    /// The server.
    pub addr: SocketAddr,
    /// Path and query to GET, e.g. `/greetings`.
    pub target: String,
    /// Header fields every request carries besides `Host` (and `User-Agent` over HTTP/1.1),
    /// e.g. `accept-encoding: gzip`.
    pub headers: Vec<Header>,
    /// A body every request sends, as a POST; none: a GET.
    pub body: Option<RequestBody>,
    /// What a valid answer is.
    pub check: Check,
    /// Per-request limit, connect included (for a paced request, from its send).
    pub timeout: Duration,
    /// The protocol, and TLS.
    pub wire: Wire,
    /// How many requests, how they go out, and when they stop.
    pub work: Work,
}

/// The shape and size of a load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Work {
    /// One request per fresh connection, the clock started before its connect (the ladder,
    /// the original tool's `--disable-keepalive`).
    Fresh {
        /// Connections at once.
        concurrency: usize,
        /// Requests in all.
        requests: usize,
    },
    /// Virtual users, each sending one request after another on its own keep-alive
    /// connection (JMeter threads, siege and ab clients).
    Sessions {
        /// Users.
        users: usize,
        /// When they stop.
        stop: Stop,
        /// Over HTTP/2, users sharing one connection, each with one stream at a time; over
        /// HTTP/1.1 every user has a connection of its own.
        streams: usize,
        /// Requests each user has in flight at once: over HTTP/1.1 written back to back on
        /// its connection before the answers are read (pipelining, as TechEmpower's
        /// plaintext load sends 16 deep); over HTTP/2 as that many streams. 1: one at a time.
        #[serde(default = "one")]
        pipeline: usize,
        /// Requests a user sends on one connection before it closes it and opens another
        /// (short-lived connections: HttpArena's profile closes every 10); none: it keeps
        /// one for the whole load. Over HTTP/2, a connection its users share closes when one
        /// of them has sent this many on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        requests_per_connection: Option<usize>,
    },
    /// Open loop: requests on a schedule (a constant rate, or a ramp) whether or not earlier
    /// ones were answered, each timed from its intended send.
    Paced(Schedule),
}

/// When the virtual users of [`Work::Sessions`] stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stop {
    /// Each user sends this many requests (JMeter's threads × loops).
    Each(usize),
    /// The users send this many requests between them (ab's `-n`).
    Total(usize),
    /// The users start no request after this long (siege's `-t`).
    After(Duration),
}

impl Load {
    /// The request every send of this load makes, built once.
    pub(crate) fn request(&self) -> std::sync::Arc<crate::conn::Request> {
        crate::conn::request(
            self.addr,
            &self.target,
            &self.headers,
            self.body.as_ref(),
            &self.wire,
        )
    }
}

impl Work {
    /// Requests a progress bar can count to, when the work is a number of them.
    pub fn requests(&self) -> Option<u64> {
        match *self {
            Self::Fresh { requests, .. } => Some(requests as u64),
            Self::Sessions {
                users,
                stop: Stop::Each(n),
                ..
            } => Some((n * users) as u64),
            Self::Sessions {
                stop: Stop::Total(n),
                ..
            } => Some(n as u64),
            Self::Sessions {
                stop: Stop::After(_),
                ..
            }
            | Self::Paced(_) => None,
        }
    }

    /// How long it runs, when the work is a duration.
    pub fn duration(&self) -> Option<Duration> {
        match *self {
            Self::Sessions {
                stop: Stop::After(d),
                ..
            } => Some(d),
            Self::Paced(ref s) => Some(s.duration()),
            _ => None,
        }
    }
}

fn one() -> usize {
    1
}
