//! The agent's command line: one shard of a level as flags ([`ShardArgs`], which
//! `greet-bench agent` takes too, flattened; they read back what [`Shard::flags`] writes), and
//! the programs behind them: [`load`], one shard run and its report printed, and
//! `greet-agent`'s [`main`], which also runs the watch task (`greet-agent watch`,
//! `greet_probe::watch`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use clap::{Args, Parser, Subcommand};
use greet_cli::parse_duration;
use greet_probe::Protocol;

use crate::expect::Expect;
use crate::flags::{parse_agents, parse_exact_rate, parse_expect, parse_level};
use crate::schedule::{parse_ramp, Ramp, Schedule};
use crate::shard::{index_of_slot, reach, run_shard, unix_ms, Shard};
use crate::work::{Stop, Work};

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

    /// Over TLS: each handshake after the first resumes a session an earlier one left, as
    /// real clients do [default: every handshake full]
    #[arg(long)]
    pub tls_resume: bool,

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

    /// A swarm job's task slot, instead of --index: a job's slots are 0 to N-1, and swarm
    /// writes slot 0 as the node's ID, so anything but a number is agent 0
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
}

impl ShardArgs {
    /// The shard these flags describe, or the one-line reason they do not describe one.
    pub fn shard(&self) -> Result<Shard, String> {
        let tls = self.url.starts_with("https://");
        let protocol = self.protocol.unwrap_or(Protocol::of_url(&self.url));
        if protocol.tls() != tls {
            return Err(format!(
                "--protocol {protocol} does not go with {}: https:// needs https or h2, \
                 http:// http1 or h2c",
                self.url
            ));
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
                    _ => {
                        return Err("--keep-alive needs one of --duration, --requests and \
                                    --each: when the users stop"
                            .to_owned())
                    }
                },
                streams: self.streams,
                pipeline: self.pipeline,
            },
            (None, None, None) => Work::Fresh {
                concurrency: self.concurrency.unwrap_or(1),
                requests: self.requests.or(self.concurrency).unwrap_or(1),
            },
        };
        Ok(Shard {
            url: self.url.clone(),
            expect: self.expect.clone().unwrap_or_default(),
            protocol,
            tls_resume: self.tls_resume,
            timeout: self.timeout,
            work,
            index: self.slot.as_deref().map_or(self.index, index_of_slot),
            agents: self.agents,
            start_at_ms: self.start_at.unwrap_or_else(|| unix_ms(SystemTime::now())),
        })
    }
}

/// Runs the shard `args` describe and prints its report on stdout (exit 0 however many
/// requests failed); `program` names it in its one-line errors: exit 2 for flags that
/// describe no shard, 1 when it cannot run (the server's name does not resolve, a bad
/// index).
pub fn load(program: &str, args: &ShardArgs) -> ExitCode {
    let shard = match args.shard() {
        Ok(shard) => shard,
        Err(why) => {
            eprintln!("{program}: error: {why}");
            return ExitCode::from(2);
        }
    };
    let wait = args.wait.unwrap_or_default();
    let run = async {
        let addr = reach(&shard.url, shard.protocol, wait).await?;
        run_shard(&shard, addr).await
    };
    let report = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(run),
        Err(err) => {
            eprintln!("{program}: error: no runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match report {
        Ok(report) => {
            println!("{}", report.line());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("{program}: error: {err}");
            ExitCode::FAILURE
        }
    }
}

const ABOUT: &str = "\
A load agent: runs its share of one level against a server (fresh connections, keep-alive \
users, or an open-loop rate), starting at a shared instant, and prints everything it counted \
as one line of JSON for the coordinator to merge; or, with `watch`, prints a container's CPU, \
memory and tasks from its control group.";

/// `greet-agent`'s command line.
#[derive(Debug, Parser)]
#[command(
    name = "greet-agent",
    version,
    about = ABOUT,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    shard: Option<ShardArgs>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Watch a container from beside it: its CPU %, memory and tasks from its control group,
    /// one line every interval until it ends (what a swarm runs on a server's node, the
    /// host's /sys/fs/cgroup mounted read-only)
    Watch {
        /// The container's ID (12 hex digits or more)
        #[arg(long, value_name = "ID")]
        container: String,
        /// Where the host's cgroup hierarchy is mounted
        #[arg(long, value_name = "DIR", default_value = "/sys/fs/cgroup")]
        cgroups: PathBuf,
        /// How often to read it
        #[arg(long, value_parser = parse_duration, default_value = "500ms")]
        interval: Duration,
    },
}

/// `greet-agent`: one shard of a level (its flags, no subcommand), or `watch`.
pub fn main() -> ExitCode {
    const PROGRAM: &str = "greet-agent";
    let cli: Cli = match greet_cli::parse_args(PROGRAM) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match (cli.command, cli.shard) {
        (
            Some(Command::Watch {
                container,
                cgroups,
                interval,
            }),
            _,
        ) => {
            let mut out = std::io::stdout().lock();
            let wait = Duration::from_secs(10);
            match greet_probe::watch::watch(&cgroups, &container, interval, wait, &mut out) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("{PROGRAM} watch: error: {err}");
                    ExitCode::FAILURE
                }
            }
        }
        (None, Some(shard)) => load(PROGRAM, &shard),
        (None, None) => {
            eprintln!("{PROGRAM}: error: --url is required (see --help)");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(flags: &[String]) -> Shard {
        let args = std::iter::once("greet-agent".to_owned()).chain(flags.iter().cloned());
        Cli::try_parse_from(args)
            .expect("flags parse")
            .shard
            .expect("a shard's flags")
            .shard()
            .expect("a shard")
    }

    /// A coordinator's flags read back as the shard it meant, for every shape of work.
    #[test]
    fn a_shard_survives_its_flags() {
        let base = Shard {
            url: "http://server:8080/greetings?name=Ana".into(),
            expect: Expect::Greeting,
            protocol: Protocol::H2c,
            tls_resume: false,
            timeout: Duration::from_millis(1500),
            work: Work::Fresh {
                concurrency: 2700,
                requests: 2700,
            },
            index: 1,
            agents: 3,
            start_at_ms: 1_700_000_000_123,
        };
        let works = [
            base.work.clone(),
            Work::Sessions {
                users: 50,
                stop: Stop::After(Duration::from_millis(2500)),
                streams: 10,
                pipeline: 1,
            },
            Work::Sessions {
                users: 20,
                stop: Stop::Total(2001),
                streams: 1,
                pipeline: 16,
            },
            Work::Sessions {
                users: 5,
                stop: Stop::Each(7),
                streams: 1,
                pipeline: 1,
            },
            Work::Paced(Schedule::constant(1234.5, Duration::from_secs(3), 64).with_streams(10)),
            Work::Paced(Schedule::ramp(
                0.0,
                &[
                    (1000.5, Duration::from_millis(1500)),
                    (10.0, Duration::from_secs(2)),
                ],
                64,
            )),
        ];
        for (work, expect) in works.into_iter().zip([
            Expect::Greeting,
            Expect::Any,
            Expect::Pattern("^Ol. ".into()),
            Expect::Greeting,
            Expect::Any,
            Expect::Pattern("^Ol. ".into()),
        ]) {
            let shard = Shard {
                tls_resume: matches!(expect, Expect::Any),
                work,
                expect,
                ..base.clone()
            };
            assert_eq!(parse(&shard.flags()), shard);
        }
    }

    #[test]
    fn flags_that_describe_no_shard_are_refused() {
        let refused = |flags: &[&str]| {
            let flags: Vec<String> = flags.iter().map(|f| (*f).to_owned()).collect();
            let args = std::iter::once("greet-agent".to_owned()).chain(flags);
            match Cli::try_parse_from(args) {
                Ok(cli) => cli
                    .shard
                    .expect("shard flags")
                    .shard()
                    .expect_err("refused"),
                Err(err) => greet_cli::one_line(&err),
            }
        };
        let said = refused(&["--url", "http://h:1/", "--keep-alive", "4"]);
        assert!(said.contains("--keep-alive needs one of"), "{said}");
        let said = refused(&[
            "--url",
            "https://h:1/",
            "--concurrency",
            "4",
            "--protocol",
            "h2c",
        ]);
        assert!(said.contains("does not go with"), "{said}");
        let said = refused(&["--url", "http://h:1/", "--rate", "100"]);
        assert!(said.contains("--duration"), "{said}");
    }
}
