//! A load as one value ([`Load`]: whom, what, how answers are checked, and its [`Work`]):
//! what every loop takes, and what an agent's shard carries a share of.

use std::net::SocketAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::conn::Wire;
use crate::expect::Check;
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

/// The body a load's requests send (each one the same): text as given (a JSON document), or
/// `size` bytes of a repeating pattern (an upload). Written as a flag's value, `text:…` or
/// `size:N`, so that an agent makes the same body from a short command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestBody {
    /// These bytes.
    Text(String),
    /// This many bytes of `0..=250` repeated (no run a transport would shorten).
    Size(u64),
}

impl RequestBody {
    /// The bytes sent.
    pub fn bytes(&self) -> bytes::Bytes {
        match self {
            Self::Text(text) => bytes::Bytes::from(text.clone().into_bytes()),
            Self::Size(n) => (0..*n).map(|i| (i % 251) as u8).collect(),
        }
    }
}

impl std::str::FromStr for RequestBody {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.split_once(':') {
            Some(("text", body)) => Ok(Self::Text(body.to_owned())),
            Some(("size", n)) => {
                let n = n
                    .trim()
                    .parse()
                    .map_err(|_| format!("{n:?} is not a size in bytes"))?;
                Ok(Self::Size(n))
            }
            _ => Err(format!("{text:?} is no body: text:… or size:N")),
        }
    }
}

impl std::fmt::Display for RequestBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Text(text) => write!(f, "text:{text}"),
            Self::Size(n) => write!(f, "size:{n}"),
        }
    }
}

/// A header field a load's requests carry: a lowercase name (HTTP/2 has no other) and a
/// value of visible ASCII, spaces and tabs, read from and written as `name: value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    name: String,
    value: String,
}

impl Header {
    /// The name, lowercase.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The value, as given (outer spaces trimmed).
    pub fn value(&self) -> &str {
        &self.value
    }
}

/// Header fields a load may not set: the connection's own, and `Host` (each request names
/// its server).
const RESERVED: [&str; 8] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "proxy-connection",
];

impl std::str::FromStr for Header {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let Some((name, value)) = text.split_once(':') else {
            return Err(format!("{text:?} is not a header field (NAME: VALUE)"));
        };
        // RFC 9110's token characters.
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(token) {
            return Err(format!("{name:?} is not a header name"));
        }
        let name = name.to_ascii_lowercase();
        if RESERVED.contains(&name.as_str()) {
            return Err(format!("{name} is the connection's own and cannot be set"));
        }
        let value = value.trim_matches([' ', '\t']);
        if !value
            .chars()
            .all(|c| c == ' ' || c == '\t' || c.is_ascii_graphic())
        {
            return Err(format!("the value of {name} is not visible ASCII"));
        }
        Ok(Self {
            name,
            value: value.to_owned(),
        })
    }
}

impl std::fmt::Display for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.name, self.value)
    }
}

fn one() -> usize {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_read_and_write_back() {
        for body in [
            RequestBody::Text(r#"{"name":"Ana: x"}"#.into()),
            RequestBody::Size(300),
        ] {
            assert_eq!(body.to_string().parse::<RequestBody>(), Ok(body));
        }
        let bytes = RequestBody::Size(300).bytes();
        assert_eq!((bytes.len(), bytes[250], bytes[251]), (300, 250, 0));
        for bad in ["", "json:{}", "size:x", "size:-1"] {
            assert!(bad.parse::<RequestBody>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn header_fields_read_and_write_back() {
        let header: Header = "Accept-Encoding:  gzip, br ".parse().unwrap();
        assert_eq!(
            (header.name(), header.value()),
            ("accept-encoding", "gzip, br")
        );
        assert_eq!(header.to_string().parse::<Header>(), Ok(header));
        assert!("x-empty:".parse::<Header>().is_ok());
        for bad in [
            "no colon",
            ": v",
            "bad name: v",
            "host: x",
            "Content-Length: 3",
            "x: a\r\nb",
            "x: é",
        ] {
            assert!(bad.parse::<Header>().is_err(), "{bad:?}");
        }
    }
}
