//! What a whole run is checked for before anything starts: a transport it cannot honour, a
//! flag no scenario of it takes, a reference or a server named twice where the scenario
//! cannot take it; each refused in one line.

use crate::plan::Target;

use super::{Kind, Plan, Planned};

impl Plan {
    /// A `--protocol`, `--streams` or `--tls-resume` the run cannot honour, or a target it
    /// cannot reach over the protocol, as one line.
    pub fn check_transport(&self) -> Result<(), TransportError> {
        let common = &self.common;
        let protocol = common.protocol;
        // A scenario that measures each protocol itself takes any of them.
        let varied = self.scenarios.iter().any(Planned::own_protocols);
        if common.streams_each.len() > 1 {
            let list = common
                .streams_each
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",");
            if !self.scenarios.iter().all(Planned::streams_list) {
                return Err(TransportError::StreamsList {
                    list,
                    takers: takers(Planned::streams_list, " and "),
                });
            }
            if !protocol.http2() && !varied {
                return Err(TransportError::StreamsNeedHttp2 {
                    streams: list,
                    protocol,
                });
            }
        }
        if common.streams > 1 && !protocol.http2() && !varied {
            return Err(TransportError::StreamsNeedHttp2 {
                streams: common.streams.to_string(),
                protocol,
            });
        }
        if common.tls_resume && !protocol.tls() && !varied {
            return Err(TransportError::ResumeNeedsTls(protocol));
        }
        if let Some(n) = common.requests_per_connection {
            if !self.scenarios.iter().any(Planned::keep_alive) {
                return Err(TransportError::NoKeepAlive {
                    n,
                    takers: takers(Planned::keep_alive, ", "),
                });
            }
        }
        if common.pipeline > 1 && !self.scenarios.iter().any(Planned::keep_alive) {
            return Err(TransportError::NoPipeline {
                n: common.pipeline,
                takers: takers(Planned::keep_alive, ", "),
            });
        }
        let targets = self.scenarios.iter().flat_map(Planned::targets);
        if let Some(t) = targets
            .into_iter()
            .find(|t| t.url.starts_with("https://") != protocol.tls())
        {
            return Err(TransportError::TargetScheme(t.clone(), protocol));
        }
        if protocol != crate::plan::Protocol::Http1 {
            if let Some(peer) = self
                .binaries()
                .into_iter()
                .find(|s| crate::plan::is_peer(s) || crate::plan::is_reference(s))
            {
                return Err(TransportError::PeerCleartext(peer, protocol));
            }
        }
        let targets = self.scenarios.iter().any(|p| !p.targets().is_empty());
        let shorts = self.binaries();
        if !targets && !shorts.is_empty() && shorts.iter().all(|s| crate::plan::is_reference(s)) {
            return Err(TransportError::NoContender(shorts.join(",")));
        }
        for planned in &self.scenarios {
            let shorts = planned.binaries();
            let twice = shorts
                .iter()
                .enumerate()
                .find(|&(i, short)| shorts[..i].contains(short));
            if let Some((_, server)) = twice.filter(|_| !planned.again()) {
                return Err(TransportError::Twice {
                    server: server.clone(),
                    scenario: planned.kind().name(),
                    takers: takers(Planned::again, " and "),
                });
            }
            let reference = planned
                .binaries()
                .into_iter()
                .find(|s| crate::plan::is_reference(s));
            if let Some(reference) = reference.filter(|_| !planned.references()) {
                return Err(TransportError::NoReferences {
                    reference,
                    scenario: planned.kind().name(),
                    takers: takers(Planned::references, ", "),
                });
            }
        }
        Ok(())
    }
}

/// The scenarios that have `property`, by name, joined with `separator`: who takes a flag
/// another scenario refused.
fn takers(property: fn(&Planned) -> bool, separator: &str) -> String {
    let names: Vec<&str> = Kind::ALL
        .iter()
        .filter(|k| property(&k.defaults(true)))
        .map(|k| k.name())
        .collect();
    names.join(separator)
}

/// A transport a run cannot honour.
#[derive(Debug, Clone, PartialEq)]
pub enum TransportError {
    /// A list of `--streams` given to a scenario that takes one count.
    StreamsList {
        /// The list as given.
        list: String,
        /// The scenarios that take a list.
        takers: String,
    },
    /// Streams shared over a protocol that is not HTTP/2.
    StreamsNeedHttp2 {
        /// `--streams` as given.
        streams: String,
        /// `--protocol`.
        protocol: crate::plan::Protocol,
    },
    /// `--tls-resume` in cleartext.
    ResumeNeedsTls(crate::plan::Protocol),
    /// `--requests-per-connection` where no scenario has keep-alive users.
    NoKeepAlive {
        /// `--requests-per-connection` as given.
        n: usize,
        /// The scenarios whose users keep connections alive.
        takers: String,
    },
    /// `--pipeline` where no scenario has keep-alive users.
    NoPipeline {
        /// `--pipeline` as given.
        n: usize,
        /// The scenarios whose users keep connections alive.
        takers: String,
    },
    /// A target whose scheme is not the protocol's.
    TargetScheme(Target, crate::plan::Protocol),
    /// A JVM peer over anything but HTTP/1.1 in cleartext.
    PeerCleartext(String, crate::plan::Protocol),
    /// Only reference servers, nothing to measure against them.
    NoContender(String),
    /// A server named twice where the scenario measures each server once.
    Twice {
        /// Its short name.
        server: String,
        /// The scenario.
        scenario: &'static str,
        /// The scenarios that measure a server named twice as two.
        takers: String,
    },
    /// A reference server in a scenario it cannot join.
    NoReferences {
        /// Its short name.
        reference: String,
        /// The scenario.
        scenario: &'static str,
        /// The scenarios it can join.
        takers: String,
    },
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::StreamsList { list, takers } => write!(
                f,
                "--streams {list}: only {takers} take a list of streams; give the others one"
            ),
            Self::StreamsNeedHttp2 { streams, protocol } => write!(
                f,
                "--streams {streams} shares HTTP/2 connections: use it with --protocol h2c or \
                 h2, not {protocol}"
            ),
            Self::ResumeNeedsTls(protocol) => write!(
                f,
                "--tls-resume resumes TLS sessions: use it with --protocol https or h2, not \
                 {protocol}"
            ),
            Self::NoKeepAlive { n, takers } => write!(
                f,
                "--requests-per-connection {n} makes keep-alive users reconnect: only {takers} \
                 have them (the ladder opens a connection per request, rate and capacity keep \
                 theirs open)"
            ),
            Self::NoPipeline { n, takers } => write!(
                f,
                "--pipeline {n} pipelines keep-alive users' requests: only {takers} have them"
            ),
            Self::TargetScheme(t, protocol) => write!(
                f,
                "--target {}={}: the load goes over --protocol {protocol}; an https:// target \
                 needs https or h2, an http:// one http1 or h2c",
                t.name, t.url
            ),
            Self::PeerCleartext(peer, protocol) => write!(
                f,
                "--protocol {protocol}: {peer} serves HTTP/1.1 in cleartext only; leave it out \
                 or use --protocol http1"
            ),
            Self::NoContender(references) => write!(
                f,
                "--servers {references}: the reference servers are measured against; name a \
                 server (axum, actix, hyper) or a --target beside them"
            ),
            Self::Twice {
                server,
                scenario,
                takers,
            } => write!(
                f,
                "--servers names {server} twice: only {takers} measure a server against itself \
                 (an A/A check), not {scenario}"
            ),
            Self::NoReferences {
                reference,
                scenario,
                takers,
            } => write!(
                f,
                "{reference} is a reference server: it joins {takers}, not {scenario} (it serves \
                 /health, /plaintext, /json and an instant /greetings only)"
            ),
        }
    }
}

impl std::error::Error for TransportError {}
