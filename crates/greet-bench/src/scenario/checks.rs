//! What a whole run is checked for before anything starts: a transport it cannot honour, a
//! flag no scenario of it takes, a reference where the scenario cannot take it; each refused
//! in one line. A server named twice is measured twice everywhere (an A/A check).

use greet_model::plan::{Common, Target};

use super::kit::About;

/// One scenario of a run, as the checks read it.
#[derive(Debug)]
pub(super) struct Entry<'a> {
    /// What it says of itself.
    pub(super) about: &'static About,
    /// The servers it starts from binaries.
    pub(super) binaries: Vec<String>,
    /// The servers it loads that the harness does not start.
    pub(super) targets: &'a [Target],
}

/// The first thing `each` scenario of a run, all sharing `common`, cannot honour; `every`
/// is what every scenario says of itself, to name those that would.
pub(super) fn transport(
    common: &Common,
    each: &[Entry<'_>],
    every: &[&About],
) -> Result<(), TransportError> {
    let protocol = common.protocol;
    // `a, b and c`, or with `separator` "and" between each: `a and b`.
    let takers = |property: fn(&About) -> bool, separator: &str| {
        let names: Vec<&str> = every
            .iter()
            .filter(|a| property(a))
            .map(|a| a.name)
            .collect();
        match names.split_last() {
            Some((last, rest)) if rest.len() > 1 && separator == " and " => {
                format!("{} and {last}", rest.join(", "))
            }
            _ => names.join(separator),
        }
    };
    let any = |property: fn(&About) -> bool| each.iter().any(|e| property(e.about));
    // A scenario that measures each protocol itself takes any of them.
    let varied = any(|a| a.own_protocols);
    if common.streams_each.len() > 1 {
        let list = common
            .streams_each
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",");
        if !each.iter().all(|e| e.about.streams_list) {
            return Err(TransportError::StreamsList {
                list,
                takers: takers(|a| a.streams_list, " and "),
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
        if !any(|a| a.keep_alive) {
            return Err(TransportError::NoKeepAlive {
                n,
                takers: takers(|a| a.keep_alive, ", "),
            });
        }
    }
    if common.pipeline > 1 && !any(|a| a.keep_alive) {
        return Err(TransportError::NoPipeline {
            n: common.pipeline,
            takers: takers(|a| a.keep_alive, ", "),
        });
    }
    let targets = each.iter().flat_map(|e| e.targets);
    if let Some(t) = targets
        .into_iter()
        .find(|t| t.url.starts_with("https://") != protocol.tls())
    {
        return Err(TransportError::TargetScheme(t.clone(), protocol));
    }
    let mut shorts: Vec<&String> = each.iter().flat_map(|e| &e.binaries).collect();
    shorts.sort_unstable();
    shorts.dedup();
    if protocol != greet_model::plan::Protocol::Http1 {
        if let Some(peer) = shorts
            .iter()
            .find(|s| greet_model::plan::is_peer(s) || greet_model::plan::is_reference(s))
        {
            return Err(TransportError::PeerCleartext((*peer).clone(), protocol));
        }
    }
    let targets = each.iter().any(|e| !e.targets.is_empty());
    if !targets && !shorts.is_empty() && shorts.iter().all(|s| greet_model::plan::is_reference(s)) {
        let names: Vec<&str> = shorts.iter().map(|s| s.as_str()).collect();
        return Err(TransportError::NoContender(names.join(",")));
    }
    for entry in each {
        let shorts = &entry.binaries;
        let reference = shorts.iter().find(|s| greet_model::plan::is_reference(s));
        if let Some(reference) = reference.filter(|_| !entry.about.references) {
            return Err(TransportError::NoReferences {
                reference: reference.clone(),
                scenario: entry.about.name,
                takers: takers(|a| a.references, ", "),
            });
        }
    }
    Ok(())
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
        protocol: greet_model::plan::Protocol,
    },
    /// `--tls-resume` in cleartext.
    ResumeNeedsTls(greet_model::plan::Protocol),
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
    TargetScheme(Target, greet_model::plan::Protocol),
    /// A JVM peer over anything but HTTP/1.1 in cleartext.
    PeerCleartext(String, greet_model::plan::Protocol),
    /// Only reference servers, nothing to measure against them.
    NoContender(String),
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
