//! One agent's share of a level, and the level again from every agent's report.
//!
//! - [`Shard`]: one agent's part of a level: its index among `agents` and its share of the
//!   level's [`Work`] ([`Shard::own`]), a shared start instant, a time limit.
//! - [`run_shard`] (after [`reach`]): the agent's side: wait for the start, run its share,
//!   and hand back one [`Report`] (printed as a line of JSON after [`REPORT_PREFIX`]: a
//!   process's output, a container's log).
//! - [`gather_reports`]: every agent's report in a level's output, checked to be one whole
//!   level; [`merge`]: their tallies as one, exactly (every request counted once, latencies
//!   from the agents' histograms, not from their percentiles), each agent's figures beside.
//!
//! A shard is the same wherever it runs: a local process, a replica of a swarm job, or an
//! Indexed Job's pod (whose index comes from `JOB_COMPLETION_INDEX`).

use std::fmt;
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use greet_probe::Protocol;
use serde::{Deserialize, Serialize};

use crate::conn::{check_once, Wire};
use crate::count::Tally;
use crate::expect::{Check, Expect};
use crate::figures::AgentRun;
use crate::paced::{merge_windows, PacedTally};
use crate::run::{run, Counted};
use crate::work::{Load, Stop, Work};

/// What starts an agent's report line on its stdout.
pub const REPORT_PREFIX: &str = "greet-load-report ";

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
    /// The protocol.
    pub protocol: Protocol,
    /// Over TLS, handshakes resume the sessions earlier ones left.
    pub tls_resume: bool,
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
            } => Work::Sessions {
                users: part(users),
                stop: match stop {
                    Stop::Total(n) => Stop::Total(part(n)),
                    each_or_time => each_or_time,
                },
                streams,
                pipeline,
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

    /// The flags that run this shard: [`Shard::level_flags`], its index and its start.
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
            } => pairs.extend([
                ("--keep-alive", users.to_string()),
                match stop {
                    Stop::After(d) => ("--duration", ms(d)),
                    Stop::Total(n) => ("--requests", n.to_string()),
                    Stop::Each(n) => ("--each", n.to_string()),
                },
                ("--streams", streams.to_string()),
                ("--pipeline", pipeline.to_string()),
            ]),
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
        let mut flags: Vec<String> = pairs
            .into_iter()
            .flat_map(|(flag, value)| [flag.to_owned(), value])
            .collect();
        if self.tls_resume {
            flags.push("--tls-resume".to_owned());
        }
        flags
    }
}

/// What an agent hands back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// Its number.
    pub index: usize,
    /// Agents in all, as it was told.
    pub agents: usize,
    /// Its connections at once (fresh), users (keep-alive) or connections (open loop).
    pub concurrency: usize,
    /// Its requests: its share (fresh), or those it sent (keep-alive; 0 for open loop).
    pub requests: usize,
    /// Its first request's start after the shared start, seconds.
    pub start_skew_s: f64,
    /// When it started, seconds since the Unix epoch: agents not given one start instant
    /// (pods started as they are scheduled) are still laid on one time line.
    pub started_s: f64,
    /// CPU the agent process used in all, seconds.
    pub cpu_s: f64,
    /// Everything it counted.
    pub counted: Counted,
}

impl Report {
    /// Its line on the agent's stdout: [`REPORT_PREFIX`], then the report as JSON.
    pub fn line(&self) -> String {
        // A report is plain numbers and maps: it always serializes.
        let json = serde_json::to_string(self).unwrap_or_default();
        format!("{REPORT_PREFIX}{json}")
    }
}

/// Why an agent could not run its shard.
#[derive(Debug)]
pub enum ShardError {
    /// `--index` not below `--agents`.
    Index {
        /// The index given.
        index: usize,
        /// The agents given.
        agents: usize,
    },
    /// The TLS client could not be made.
    Tls(rustls::Error),
    /// The server never answered, or its name never resolved.
    Unreachable {
        /// Its URL.
        url: String,
        /// The last failure.
        why: Box<dyn std::error::Error + Send + Sync>,
        /// How long the agent waited.
        wait: Duration,
    },
}

impl fmt::Display for ShardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Index { index, agents } => {
                write!(f, "--index {index} is not below --agents {agents}")
            }
            Self::Tls(err) => write!(f, "the TLS client: {err}"),
            Self::Unreachable { url, why, wait } => write!(f, "{url}: {why} (waited {wait:?})"),
        }
    }
}

impl std::error::Error for ShardError {}

/// The agent's side: waits for the shard's start, runs its share of the level on the server
/// at `addr` (its URL resolved), and returns what it counted.
pub async fn run_shard(shard: &Shard, addr: SocketAddr) -> Result<Report, ShardError> {
    if shard.index >= shard.agents {
        return Err(ShardError::Index {
            index: shard.index,
            agents: shard.agents,
        });
    }
    let wire = Wire::new(shard.protocol, &greet_probe::tls::Trust::Any)
        .map_err(ShardError::Tls)?
        .resuming(shard.tls_resume);
    let work = shard.own();
    let start_at = UNIX_EPOCH + Duration::from_millis(shard.start_at_ms);
    if let Ok(wait) = start_at.duration_since(SystemTime::now()) {
        tokio::time::sleep(wait).await;
    }
    let start_skew_s = since(start_at);
    let started_s = since(UNIX_EPOCH);
    let target = shard.target();
    let load = Load {
        addr,
        check: Check::for_target(&target, &shard.expect),
        target,
        timeout: shard.timeout,
        wire,
        work: work.clone(),
    };
    let counted = run(&load, Default::default()).await;
    let (concurrency, requests) = match work {
        Work::Fresh {
            concurrency,
            requests,
        } => (concurrency, requests),
        Work::Sessions { users, .. } => (
            users,
            usize::try_from(counted.tally().requests()).unwrap_or(usize::MAX),
        ),
        Work::Paced(ref s) => (s.connections, 0),
    };
    let cpu_s = greet_probe::procfs::stat(std::process::id())
        .map(|s| s.cpu_seconds())
        .unwrap_or(0.0);
    Ok(Report {
        index: shard.index,
        agents: shard.agents,
        concurrency,
        requests,
        start_skew_s,
        started_s,
        cpu_s,
        counted,
    })
}

/// The server at `url`: its address, once it resolves and, when `wait` is not zero, once its
/// `/health` answers `ok` over `protocol`, tried every half second for up to `wait` (a
/// cluster starts the agents beside the server, not after it).
pub async fn reach(
    url: &str,
    protocol: Protocol,
    wait: Duration,
) -> Result<SocketAddr, ShardError> {
    let deadline = Instant::now() + wait;
    let wire = Wire::new(protocol, &greet_probe::tls::Trust::Any).map_err(ShardError::Tls)?;
    let health = greet_core::paths::HEALTH;
    let check = Check::for_target(health, &Expect::Greeting);
    loop {
        let tried: Result<SocketAddr, Box<dyn std::error::Error + Send + Sync>> =
            match greet_probe::resolve(url).await {
                Ok(addr) if wait.is_zero() => return Ok(addr),
                Ok(addr) => check_once(addr, &wire, health, &check, Duration::from_secs(2))
                    .await
                    .map(|()| addr)
                    .map_err(Into::into),
                Err(why) => Err(why.into()),
            };
        match tried {
            Ok(addr) => return Ok(addr),
            Err(why) if Instant::now() >= deadline => {
                return Err(ShardError::Unreachable {
                    url: url.to_owned(),
                    why,
                    wait,
                })
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}

/// Why reports are not one whole level.
#[derive(Debug)]
pub enum ReportsError {
    /// A report line that does not parse.
    Unreadable {
        /// Its line number in the output, from 1.
        line: usize,
        /// What the JSON reader said.
        source: serde_json::Error,
    },
    /// No report at all.
    None,
    /// Two agents told different numbers of agents.
    TwoLevels {
        /// The agent that differs.
        index: usize,
        /// What it was told.
        told: usize,
        /// What the first was told.
        agents: usize,
    },
    /// An agent with no report.
    Missing {
        /// The agent.
        index: usize,
        /// Agents in all.
        agents: usize,
    },
    /// An agent with several.
    Repeated {
        /// The agent.
        index: usize,
        /// Agents in all.
        agents: usize,
        /// Its reports.
        times: usize,
    },
    /// A report from an agent beyond the level's.
    Stranger {
        /// The agent.
        index: usize,
        /// Agents in all.
        agents: usize,
    },
}

impl fmt::Display for ReportsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreadable { line, source } => {
                write!(
                    f,
                    "line {line}: a report line that does not parse ({source})"
                )
            }
            Self::None => write!(f, "no agent report (lines starting {REPORT_PREFIX:?})"),
            Self::TwoLevels {
                index,
                told,
                agents,
            } => write!(
                f,
                "agent {index} says {told} agents, another {agents}: reports of two levels"
            ),
            Self::Missing { index, agents } => write!(
                f,
                "agent {index} of {agents} did not report: the level is incomplete, not merged"
            ),
            Self::Repeated {
                index,
                agents,
                times,
            } => write!(f, "agent {index} of {agents} reported {times} times"),
            Self::Stranger { index, agents } => {
                write!(f, "agent {index} of {agents}: no such agent")
            }
        }
    }
}

impl std::error::Error for ReportsError {}

/// Every agent's report in `output` (agents' logs, in any order, other lines between), checked
/// to be one whole level: agents 0 to N-1 each exactly once, all told the same N. A missing
/// or repeated agent is an error: merging the rest would count a smaller level as whole.
pub fn gather_reports(output: &str) -> Result<Vec<Report>, ReportsError> {
    let mut reports: Vec<Report> = Vec::new();
    for (n, line) in output.lines().enumerate() {
        // `docker service logs` and `kubectl logs --prefix` put a source before the line.
        let Some(at) = line.find(REPORT_PREFIX) else {
            continue;
        };
        let json = &line[at + REPORT_PREFIX.len()..];
        let report = serde_json::from_str(json).map_err(|source| ReportsError::Unreadable {
            line: n + 1,
            source,
        })?;
        reports.push(report);
    }
    let Some(agents) = reports.first().map(|r| r.agents) else {
        return Err(ReportsError::None);
    };
    reports.sort_by_key(|r| r.index);
    if let Some(r) = reports.iter().find(|r| r.agents != agents) {
        return Err(ReportsError::TwoLevels {
            index: r.index,
            told: r.agents,
            agents,
        });
    }
    for index in 0..agents {
        match reports.iter().filter(|r| r.index == index).count() {
            1 => {}
            0 => return Err(ReportsError::Missing { index, agents }),
            times => {
                return Err(ReportsError::Repeated {
                    index,
                    agents,
                    times,
                })
            }
        }
    }
    if let Some(r) = reports.iter().find(|r| r.index >= agents) {
        return Err(ReportsError::Stranger {
            index: r.index,
            agents,
        });
    }
    Ok(reports)
}

/// The report in one agent's output: the last line that starts with [`REPORT_PREFIX`].
pub fn parse_report(output: &str) -> Option<Result<Report, serde_json::Error>> {
    let line = output
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(REPORT_PREFIX))?;
    Some(serde_json::from_str(line))
}

/// The shards' counts as one, and each agent's own figures beside: every count summed, the
/// latencies merged, and the elapsed time from the first agent's start to the last one's
/// last answer (by the wall clock: on other machines, as good as their clocks agree). An
/// open loop's schedules merge as one: requests sent late summed, the connections busy at
/// once summed (each agent's are its own).
pub fn merge(reports: &[Report]) -> (Counted, Vec<AgentRun>) {
    let agents = reports.iter().map(agent_run).collect();
    let first = reports
        .iter()
        .map(|r| r.started_s)
        .fold(f64::INFINITY, f64::min);
    let span = |end: fn(&Report) -> f64| {
        let last = reports.iter().map(end).fold(f64::NEG_INFINITY, f64::max);
        Duration::from_secs_f64((last - first).max(0.0))
    };
    let paced: Vec<&PacedTally> = reports.iter().filter_map(|r| r.counted.paced()).collect();
    if paced.is_empty() || paced.len() != reports.len() {
        let mut tally = Tally::default();
        for report in reports {
            tally.merge(report.counted.tally());
        }
        if !reports.is_empty() {
            tally.elapsed = span(|r| r.started_s + r.counted.tally().elapsed.as_secs_f64());
        }
        return (Counted::Closed(tally), agents);
    }
    let mut merged = PacedTally::default();
    for p in &paced {
        merged.corrected.merge(&p.corrected);
        merged.service.merge(&p.service);
        merged.lag.merge(&p.lag);
        merged.late += p.late;
        merged.busy_max += p.busy_max;
        merge_windows(&mut merged.windows, &p.windows);
    }
    merged.span = span(|r| r.started_s + r.counted.paced().map_or(0.0, |p| p.span.as_secs_f64()));
    merged.corrected.elapsed = merged.span;
    merged.service.elapsed = merged.span;
    (Counted::Paced(merged), agents)
}

/// One agent's own figures.
fn agent_run(r: &Report) -> AgentRun {
    let f = r.counted.tally().figures();
    AgentRun {
        index: r.index,
        concurrency: r.concurrency,
        requests: f.requests,
        success_rate: f.success_rate,
        requests_per_s: f.requests_per_s,
        total_s: f.total_s,
        start_skew_ms: r.start_skew_s * 1000.0,
        cpu_s: r.cpu_s,
        node: None,
    }
}

/// `t` in milliseconds since the Unix epoch, as `--start-at` takes it.
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Seconds since `then` (negative when it is still ahead).
fn since(then: SystemTime) -> f64 {
    match SystemTime::now().duration_since(then) {
        Ok(after) => after.as_secs_f64(),
        Err(before) => -before.duration().as_secs_f64(),
    }
}

/// The agent index of a replicated job's task slot: a job's slots are 0 to N-1 (a
/// replicated service's start at 1), and swarm writes slot 0 in templates and task names
/// as the node's ID (seen on Engine 20.10): a number is its index, anything else 0.
pub fn index_of_slot(slot: &str) -> usize {
    slot.trim().parse().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::count::Outcome;

    fn report(index: usize, agents: usize) -> Report {
        Report {
            index,
            agents,
            concurrency: 1,
            requests: 0,
            start_skew_s: 0.0,
            started_s: 1_700_000_000.0,
            cpu_s: 0.0,
            counted: Counted::Closed(Tally::default()),
        }
    }

    #[test]
    fn a_level_is_merged_whole_or_not_at_all() {
        let logs = format!(
            "greet_load.2.x@node | {}\nnoise\ngreet_load.1.y@node | {}\n",
            report(1, 2).line(),
            report(0, 2).line()
        );
        let reports = gather_reports(&logs).expect("both agents");
        assert_eq!(reports.iter().map(|r| r.index).collect::<Vec<_>>(), [0, 1]);
        let missing = gather_reports(&report(0, 3).line())
            .unwrap_err()
            .to_string();
        assert!(missing.contains("agent 1 of 3 did not report"), "{missing}");
        let twice = format!("{}\n{}", report(0, 1).line(), report(0, 1).line());
        assert!(gather_reports(&twice)
            .unwrap_err()
            .to_string()
            .contains("2 times"));
        let mixed = format!("{}\n{}", report(0, 2).line(), report(1, 3).line());
        assert!(gather_reports(&mixed).is_err());
        assert!(gather_reports("nothing").is_err());
    }

    #[test]
    fn shares_add_up_to_the_whole() {
        for (total, agents) in [(2700, 2), (2701, 2), (100, 3), (1, 4), (0, 2)] {
            let shares: Vec<usize> = (0..agents).map(|i| share(total, agents, i)).collect();
            assert_eq!(shares.iter().sum::<usize>(), total, "{total} over {agents}");
            let (lo, hi) = (shares.iter().min(), shares.iter().max());
            assert!(hi.unwrap() - lo.unwrap() <= 1, "{shares:?}");
        }
    }

    #[test]
    fn merged_elapsed_runs_from_the_first_start_to_the_last_answer() {
        let report = |index, skew, elapsed_ms| {
            let mut tally = Tally::default();
            tally.push(Outcome::Ok {
                latency: Duration::from_millis(5),
                connect: None,
            });
            tally.elapsed = Duration::from_millis(elapsed_ms);
            Report {
                index,
                agents: 2,
                concurrency: 1,
                requests: 1,
                start_skew_s: skew,
                started_s: 1_700_000_000.0 + skew,
                cpu_s: 0.1,
                counted: Counted::Closed(tally),
            }
        };
        let (counted, agents) = merge(&[report(0, 0.002, 1000), report(1, 0.001, 1200)]);
        assert_eq!(counted.tally().requests(), 2);
        // From agent 1's start (1 ms) to its last answer (1201 ms), to a microsecond.
        let elapsed = counted.tally().elapsed.as_secs_f64();
        assert!((elapsed - 1.2).abs() < 1e-6, "{elapsed}");
        assert_eq!(agents.len(), 2);
        assert!((agents[1].start_skew_ms - 1.0).abs() < 1e-9);
        let text = format!("{}\n", report(1, 0.0, 9).line());
        let parsed = parse_report(&format!("noise\n{text}"))
            .expect("a report line")
            .expect("parses");
        assert_eq!((parsed.index, parsed.counted.tally().requests()), (1, 1));
        assert!(parse_report("nothing here").is_none());
    }

    #[test]
    fn paced_shards_merge_as_one_schedule() {
        let paced = |index: usize, late: u64, busy: usize, span_ms: u64| {
            let mut p = PacedTally::default();
            for _ in 0..10 {
                p.corrected.push(Outcome::Ok {
                    latency: Duration::from_millis(2),
                    connect: None,
                });
            }
            (p.late, p.busy_max, p.span) = (late, busy, Duration::from_millis(span_ms));
            Report {
                counted: Counted::Paced(p),
                started_s: 1_700_000_000.0 + index as f64 * 0.01,
                ..report(index, 2)
            }
        };
        let (counted, agents) = merge(&[paced(0, 3, 4, 1000), paced(1, 2, 5, 1000)]);
        let merged = counted.paced().expect("an open loop's");
        assert_eq!((merged.late, merged.busy_max), (5, 9));
        assert_eq!(merged.corrected.requests(), 20);
        assert!(
            (merged.span.as_secs_f64() - 1.01).abs() < 1e-6,
            "{:?}",
            merged.span
        );
        assert_eq!(agents.len(), 2);
    }
}
