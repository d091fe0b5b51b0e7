//! A shard as the agent's flags, both ways: written ([`Shard::flags`], what a coordinator
//! passes each agent process; [`Shard::level_flags`], what a cluster's job passes every
//! replica) and read back ([`ShardArgs`], clap's, which `greet-agent` and `greet-bench agent`
//! take, and [`ShardArgs::shard`], or [`BadFlags`] for a set that describes no shard). Agents
//! of one build run under coordinators of another: these flags are a protocol, and a shard
//! written here reads back as the same shard.
//!
//! The values' parsers (a level, a rate, a ramp, `--expect`) are `crate::flags`' and
//! `crate::schedule`'s, which the harness's command line shares.

use std::fmt;
use std::time::{Duration, SystemTime};

use clap::Args;
use greet_cli::parse_duration;
use greet_probe::Protocol;

use crate::expect::Expect;
use crate::flags::{parse_agents, parse_exact_rate, parse_expect, parse_level};
use crate::message::{Header, RequestBody};
use crate::schedule::{parse_ramp, Ramp, Schedule};
use crate::shard::{index_of_slot, unix_ms, Shard};
use crate::work::{Stop, Work};

impl Shard {
    /// The flags that run this shard: [`Shard::level_flags`], its index and its start.
    /// [`ShardArgs`] reads them back as this shard.
    pub fn flags(&self) -> Vec<String> {
        let mut flags = self.level_flags();
        flags.extend([
            "--index".to_owned(),
            self.index.to_string(),
            "--start-at".to_owned(),
            self.start_at_ms.to_string(),
        ]);
        flags
    }

    /// The flags every agent of this level shares: what a cluster's job runs, each replica's
    /// index its own (`JOB_COMPLETION_INDEX`, a swarm task's slot) and no shared start.
    pub fn level_flags(&self) -> Vec<String> {
        let ms = |d: Duration| format!("{}ms", d.as_millis());
        let mut pairs: Vec<(&str, String)> = vec![
            ("--url", self.url.clone()),
            ("--protocol", self.protocol.name().to_owned()),
            ("--agents", self.agents.to_string()),
            ("--timeout", ms(self.timeout)),
        ];
        match self.work {
            Work::Fresh {
                concurrency,
                requests,
            } => pairs.extend([
                ("--concurrency", concurrency.to_string()),
                ("--requests", requests.to_string()),
            ]),
            Work::Sessions {
                users,
                stop,
                streams,
                pipeline,
                requests_per_connection,
            } => {
                pairs.extend([
                    ("--keep-alive", users.to_string()),
                    match stop {
                        Stop::After(d) => ("--duration", ms(d)),
                        Stop::Total(n) => ("--requests", n.to_string()),
                        Stop::Each(n) => ("--each", n.to_string()),
                    },
                    ("--streams", streams.to_string()),
                    ("--pipeline", pipeline.to_string()),
                ]);
                if let Some(n) = requests_per_connection {
                    pairs.push(("--requests-per-connection", n.to_string()));
                }
            }
            Work::Paced(ref s) => {
                match s.constant_rate() {
                    Some(rate) => pairs.extend([
                        ("--rate", rate.to_string()),
                        ("--duration", ms(s.duration())),
                    ]),
                    None => pairs.push(("--ramp", s.ramp_flag())),
                }
                pairs.extend([
                    ("--connections", s.connections.to_string()),
                    ("--streams", s.streams.to_string()),
                ]);
            }
        }
        if let Some(expect) = self.expect.flag() {
            pairs.push(("--expect", expect.to_owned()));
        }
        for header in &self.headers {
            pairs.push(("--header", header.to_string()));
        }
        if let Some(body) = &self.body {
            pairs.push(("--body", body.to_string()));
        }
        let mut flags: Vec<String> = pairs
            .into_iter()
            .flat_map(|(flag, value)| [flag.to_owned(), value])
            .collect();
        if self.tls_resume {
            flags.push("--tls-resume".to_owned());
        }
        if self.websocket {
            flags.push("--websocket".to_owned());
        }
        flags
    }
}

/// One agent's share of a level.
#[derive(Debug, Clone, Args)]
pub struct ShardArgs {
    /// The server and endpoint, e.g. http://10.0.0.5:8080/greetings (https:// over TLS)
    #[arg(long, value_name = "URL")]
    pub url: String,

    /// The protocol [default: http1 for http://, h2 for https://]
    #[arg(long, value_name = "PROTOCOL")]
    pub protocol: Option<Protocol>,

    /// The whole level's concurrency, one request per fresh connection; this agent takes
    /// its share
    #[arg(long, value_parser = parse_level,
          required_unless_present_any = ["rate", "ramp", "keep_alive"])]
    pub concurrency: Option<usize>,

    /// Keep-alive instead: the whole level's users, each one request after another on its
    /// connection, for --duration, or --requests in all, or --each; this agent takes its
    /// share of the users (and of --requests)
    #[arg(long, value_name = "USERS", value_parser = parse_level,
          conflicts_with_all = ["concurrency", "rate", "ramp"])]
    pub keep_alive: Option<usize>,

    /// Open loop instead: the whole level's requests a second; this agent takes its share
    /// (rate ÷ agents), over its share of --connections, for --duration
    #[arg(long, value_parser = parse_exact_rate, requires_all = ["duration", "connections"],
          conflicts_with = "concurrency")]
    pub rate: Option<f64>,

    /// Open loop on a ramp instead: the whole level's target rate over time, as a start rate
    /// then `rate:duration` stages (`0,1k:10s,50k:30s`); this agent takes its share
    #[arg(long, value_parser = parse_ramp, requires = "connections",
          conflicts_with_all = ["concurrency", "rate", "duration"])]
    pub ramp: Option<Ramp>,

    /// Open loop and keep-alive: how long the load runs
    #[arg(long, value_parser = parse_duration, conflicts_with = "concurrency")]
    pub duration: Option<Duration>,

    /// Open loop: keep-alive connections, all agents together
    #[arg(long, value_parser = parse_level, conflicts_with_all = ["concurrency", "keep_alive"])]
    pub connections: Option<usize>,

    /// The whole level's requests: one per fresh connection [default: the concurrency], or
    /// with --keep-alive the users' requests between them
    #[arg(long, value_parser = parse_level, conflicts_with_all = ["rate", "ramp"])]
    pub requests: Option<usize>,

    /// Keep-alive: requests each user sends
    #[arg(long, value_parser = parse_level, requires = "keep_alive",
          conflicts_with_all = ["duration", "requests"])]
    pub each: Option<usize>,

    /// Over HTTP/2: keep-alive users, or open-loop connections' slots, sharing one
    /// connection
    #[arg(long, value_parser = parse_level, default_value_t = 1)]
    pub streams: usize,

    /// Keep-alive: requests each user has in flight, written back to back over HTTP/1.1
    /// (pipelining), as that many streams over HTTP/2
    #[arg(long, value_parser = parse_level, default_value_t = 1, requires = "keep_alive")]
    pub pipeline: usize,

    /// Keep-alive: requests a user sends on one connection before it closes it and opens
    /// another (short-lived connections) [default: one connection for the whole load]
    #[arg(long, value_name = "N", value_parser = parse_level, requires = "keep_alive")]
    pub requests_per_connection: Option<usize>,

    /// Over TLS: each handshake after the first resumes a session an earlier one left, as
    /// real clients do [default: every handshake full]
    #[arg(long)]
    pub tls_resume: bool,

    /// Each connection a WebSocket on the URL's path, each request one message (the
    /// --body: text:… a text message, size:N a binary one) and its echo; keep-alive or
    /// fresh connections, over http1 or https
    #[arg(long, conflicts_with_all = ["rate", "ramp"])]
    pub websocket: bool,

    /// Agents in all
    #[arg(long, value_name = "N", value_parser = parse_agents, default_value_t = 1)]
    pub agents: usize,

    /// This agent's number, from 0 (a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX)
    #[arg(
        long,
        value_name = "I",
        env = "JOB_COMPLETION_INDEX",
        default_value_t = 0
    )]
    pub index: usize,

    /// A swarm task's slot, instead of --index: the agents' replicated service numbers its
    /// tasks from 1, so slot S is agent S-1
    #[arg(
        long,
        value_name = "SLOT",
        env = "GREET_AGENT_SLOT",
        conflicts_with = "index"
    )]
    pub slot: Option<String>,

    /// When every agent starts, in milliseconds since the Unix epoch [default: at once]
    #[arg(long, value_name = "UNIX_MS")]
    pub start_at: Option<u64>,

    /// Per-request limit, connect included
    #[arg(long, value_parser = parse_duration, default_value = "30s")]
    pub timeout: Duration,

    /// Before the start, wait up to this long for the server's /health to answer (a cluster
    /// starts the agents beside the server) [default: no wait]
    #[arg(long, value_parser = parse_duration)]
    pub wait: Option<Duration>,

    /// What a valid answer's body must match: a regular expression, or `any` [default: the
    /// Greetings API's greeting]
    #[arg(long, value_name = "REGEX|any", value_parser = parse_expect)]
    pub expect: Option<Expect>,

    /// A header field each request carries, e.g. 'accept-encoding: gzip' (repeatable)
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<Header>,

    /// POST this body with each request: text:… (sent as given), size:N (N bytes; 20M,
    /// 64k) or chunked:N/K (N bytes in chunks of K)
    #[arg(long, value_name = "text:…|size:N|chunked:N/K")]
    pub body: Option<RequestBody>,
}

/// Why a set of the agent's flags, each well formed, describes no shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadFlags {
    /// A protocol over TLS for an `http://` URL, or one in cleartext for an `https://` URL.
    ProtocolAndScheme {
        /// The protocol named.
        protocol: Protocol,
        /// The URL.
        url: String,
    },
    /// `--keep-alive` with none, or more than one, of `--duration`, `--requests` and
    /// `--each`.
    KeepAliveStop,
    /// `--websocket` over HTTP/2 (RFC 8441's extended CONNECT is not spoken).
    WebSocketOverHttp2(Protocol),
    /// A `--slot` that is not a number from 1.
    Slot(String),
}

impl fmt::Display for BadFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ProtocolAndScheme { protocol, url } => write!(
                f,
                "--protocol {protocol} does not go with {url}: https:// needs https or h2, \
                 http:// http1 or h2c"
            ),
            Self::WebSocketOverHttp2(protocol) => write!(
                f,
                "--websocket does not go with --protocol {protocol}: a WebSocket opens over \
                 http1 or https"
            ),
            Self::Slot(slot) => write!(
                f,
                "--slot {slot:?} is not a swarm task's slot: a number from 1"
            ),
            Self::KeepAliveStop => f.write_str(
                "--keep-alive needs one of --duration, --requests and --each: when the users \
                 stop",
            ),
        }
    }
}

impl std::error::Error for BadFlags {}

impl ShardArgs {
    /// The shard these flags describe, or why they do not describe one.
    pub fn shard(&self) -> Result<Shard, BadFlags> {
        let tls = self.url.starts_with("https://");
        let protocol = self.protocol.unwrap_or(Protocol::of_url(&self.url));
        if protocol.tls() != tls {
            return Err(BadFlags::ProtocolAndScheme {
                protocol,
                url: self.url.clone(),
            });
        }
        if self.websocket && protocol.http2() {
            return Err(BadFlags::WebSocketOverHttp2(protocol));
        }
        let connections = self.connections.unwrap_or(1);
        let work = match (self.rate, &self.ramp, self.keep_alive) {
            (Some(rate), _, _) => Work::Paced(
                Schedule::constant(rate, self.duration.unwrap_or_default(), connections)
                    .with_streams(self.streams),
            ),
            (None, Some(Ramp { start, stages }), _) => {
                Work::Paced(Schedule::ramp(*start, stages, connections).with_streams(self.streams))
            }
            (None, None, Some(users)) => Work::Sessions {
                users,
                stop: match (self.duration, self.requests, self.each) {
                    (Some(d), None, None) => Stop::After(d),
                    (None, Some(n), None) => Stop::Total(n),
                    (None, None, Some(n)) => Stop::Each(n),
                    _ => return Err(BadFlags::KeepAliveStop),
                },
                streams: self.streams,
                pipeline: self.pipeline,
                requests_per_connection: self.requests_per_connection,
            },
            (None, None, None) => Work::Fresh {
                concurrency: self.concurrency.unwrap_or(1),
                requests: self.requests.or(self.concurrency).unwrap_or(1),
            },
        };
        Ok(Shard {
            url: self.url.clone(),
            expect: self.expect.clone().unwrap_or_default(),
            headers: self.headers.clone(),
            body: self.body.clone(),
            protocol,
            tls_resume: self.tls_resume,
            websocket: self.websocket,
            timeout: self.timeout,
            work,
            index: match self.slot.as_deref() {
                Some(slot) => index_of_slot(slot).ok_or_else(|| BadFlags::Slot(slot.to_owned()))?,
                None => self.index,
            },
            agents: self.agents,
            start_at_ms: self.start_at.unwrap_or_else(|| unix_ms(SystemTime::now())),
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::agent::Cli;

    fn owned(flags: &[&str]) -> Vec<String> {
        flags.iter().map(|f| (*f).to_owned()).collect()
    }

    /// `flags` as `greet-agent` reads them: what they describe, or clap's one-line refusal.
    fn read(flags: &[String]) -> Result<Result<Shard, BadFlags>, String> {
        let args = std::iter::once("greet-agent".to_owned()).chain(flags.iter().cloned());
        match Cli::try_parse_from(args) {
            Ok(cli) => Ok(cli.shard.expect("a shard's flags").shard()),
            Err(err) => Err(greet_cli::one_line(&err)),
        }
    }

    fn parse(flags: &[String]) -> Shard {
        read(flags)
            .unwrap_or_else(|err| panic!("{flags:?}: {err}"))
            .unwrap_or_else(|err| panic!("{flags:?}: {err}"))
    }

    /// A coordinator's flags read back as the shard it meant: every shape of work (fresh
    /// connections, keep-alive users by each way they stop and on short-lived connections, a
    /// constant open-loop rate, a ramp), over every protocol, with every kind of answer expected, TLS sessions resumed
    /// or not, and agents from one to the most.
    #[test]
    fn a_shard_survives_its_flags() {
        let works = [
            Work::Fresh {
                concurrency: 2700,
                requests: 2700,
            },
            Work::Fresh {
                concurrency: 100,
                requests: 2701,
            },
            Work::Sessions {
                users: 50,
                stop: Stop::After(Duration::from_millis(2500)),
                streams: 10,
                pipeline: 1,
                requests_per_connection: None,
            },
            Work::Sessions {
                users: 20,
                stop: Stop::Total(2001),
                streams: 1,
                pipeline: 16,
                requests_per_connection: None,
            },
            Work::Sessions {
                users: 5,
                stop: Stop::Each(7),
                streams: 4,
                pipeline: 2,
                requests_per_connection: None,
            },
            // Short-lived connections: HttpArena's ten requests each.
            Work::Sessions {
                users: 64,
                stop: Stop::After(Duration::from_secs(5)),
                streams: 1,
                pipeline: 1,
                requests_per_connection: Some(10),
            },
            Work::Paced(Schedule::constant(1234.5, Duration::from_secs(3), 64).with_streams(10)),
            Work::Paced(Schedule::constant(20_000.0, Duration::from_millis(1500), 1)),
            Work::Paced(Schedule::ramp(
                0.0,
                &[
                    (1000.5, Duration::from_millis(1500)),
                    (10.0, Duration::from_secs(2)),
                ],
                64,
            )),
            // A start rate, a jump and a climb, slots sharing HTTP/2 connections.
            Work::Paced(
                Schedule::ramp(
                    5000.0,
                    &[(500.0, Duration::ZERO), (50_000.0, Duration::from_secs(30))],
                    128,
                )
                .with_streams(8),
            ),
        ];
        let expects = [
            Expect::Greeting,
            Expect::Any,
            Expect::Pattern("^Ol. ".into()),
        ];
        let splits = [(0, 1), (1, 3), (63, 64)];
        let timeouts = [Duration::from_millis(1500), Duration::from_secs(30)];
        // Every work over every protocol, the other fields varied case by case.
        for (w, work) in works.iter().enumerate() {
            for (p, protocol) in Protocol::ALL.into_iter().enumerate() {
                let n = w * Protocol::ALL.len() + p;
                let url = if protocol.tls() {
                    "https://server:8443/greetings?name=Ana"
                } else {
                    "http://server:8080/greetings?name=Ana"
                };
                let (index, agents) = splits[(n / 3) % splits.len()];
                let headers = ["accept-encoding: gzip, br", "x-trace: a:b c"][..n % 3]
                    .iter()
                    .map(|h| h.parse().expect("a header"))
                    .collect();
                let bodies = [
                    None,
                    Some("text:{\"name\":\"Ana\"}"),
                    Some("size:1048576"),
                    Some("chunked:20000000/65536"),
                ];
                let shard = Shard {
                    url: url.to_owned(),
                    expect: expects[n % expects.len()].clone(),
                    headers,
                    body: bodies[n % bodies.len()].map(|b| b.parse().expect("a body")),
                    protocol,
                    tls_resume: (n / 2) % 2 == 1,
                    websocket: !protocol.http2()
                        && !matches!(work, Work::Paced(_))
                        && n.is_multiple_of(2),
                    timeout: timeouts[n % timeouts.len()],
                    work: work.clone(),
                    index,
                    agents,
                    start_at_ms: 1_700_000_000_123 + n as u64,
                };
                assert_eq!(parse(&shard.flags()), shard);
            }
        }
    }

    /// A cluster's replicas share the level's flags and find their own index: a swarm task
    /// from its slot, numbered from 1; anything else is refused.
    #[test]
    fn a_replica_finds_its_index_in_its_slot() {
        let shard = Shard {
            url: "http://greet-server:8080/greetings".into(),
            expect: Expect::Greeting,
            headers: Vec::new(),
            body: None,
            protocol: Protocol::Http1,
            tls_resume: false,
            websocket: false,
            timeout: Duration::from_secs(30),
            work: Work::Paced(Schedule::constant(900.0, Duration::from_secs(10), 30)),
            index: 2,
            agents: 3,
            start_at_ms: 1_700_000_000_000,
        };
        for (slot, index) in [("3", 2), ("1", 0)] {
            let mut flags = shard.level_flags();
            let start_at = shard.start_at_ms.to_string();
            flags.extend(owned(&["--slot", slot, "--start-at", start_at.as_str()]));
            let replica = Shard {
                index,
                ..shard.clone()
            };
            assert_eq!(parse(&flags), replica);
        }
        for slot in ["0", "x7k3q9node", ""] {
            let mut flags = shard.level_flags();
            flags.extend(owned(&["--slot", slot]));
            assert_eq!(read(&flags), Ok(Err(BadFlags::Slot(slot.to_owned()))));
        }
    }

    #[test]
    fn flags_that_describe_no_shard_are_refused() {
        let given = |flags: &[&str]| read(&owned(flags));
        let no_stop: Result<Result<Shard, BadFlags>, String> = Ok(Err(BadFlags::KeepAliveStop));
        assert_eq!(
            given(&["--url", "http://h:1/", "--keep-alive", "4"]),
            no_stop
        );
        let two_stops = [
            "--url",
            "http://h:1/",
            "--keep-alive",
            "4",
            "--duration",
            "1s",
            "--requests",
            "10",
        ];
        assert_eq!(given(&two_stops), no_stop);
        assert_eq!(
            BadFlags::KeepAliveStop.to_string(),
            "--keep-alive needs one of --duration, --requests and --each: when the users stop"
        );
        let cleartext_over_tls = [
            "--url",
            "https://h:1/",
            "--concurrency",
            "4",
            "--protocol",
            "h2c",
        ];
        let bad = BadFlags::ProtocolAndScheme {
            protocol: Protocol::H2c,
            url: "https://h:1/".into(),
        };
        assert_eq!(given(&cleartext_over_tls), Ok(Err(bad.clone())));
        assert_eq!(
            bad.to_string(),
            "--protocol h2c does not go with https://h:1/: https:// needs https or h2, \
             http:// http1 or h2c"
        );
        let said = given(&["--url", "http://h:1/", "--rate", "100"]).expect_err("clap refuses");
        assert!(said.contains("--duration"), "{said}");
    }
}
