//! Load from several agents: a level split into shards, each run by a `greet-bench agent`
//! process that starts at one shared instant and hands back its whole [`Tally`], which the
//! coordinator merges exactly (every request counted once, latencies from the agents'
//! histograms, not from their percentiles).
//!
//! - [`Shard`]: one agent's part of a level (its index among `agents`, its share of the
//!   level's [`Work`]: fresh connections, keep-alive users, or an open-loop [`Schedule`]),
//!   and [`Shard::flags`], the command line that runs it.
//! - [`run_shard`] (after [`reach`]): the agent's side: wait for the start, run, and print one
//!   [`Report`] as a line of JSON after [`REPORT_PREFIX`] on stdout (a process's output, a
//!   container's log).
//! - [`run`]: the coordinator's side, over [`local`] (one agent process per shard on this
//!   machine) or [`swarm`] (a replicated job on a Docker Swarm); an agent that fails, dies,
//!   is late or does not report fails the level. [`Ran`] merges what they counted
//!   ([`merge`], [`merge_paced`]); [`gather_reports`] checks a level's reports are whole.
//!
//! A shard is the same flags wherever it runs: a local process, a replica of a swarm job, or
//! an Indexed Job's pod (whose index comes from `JOB_COMPLETION_INDEX`; `crate::kube`).

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncReadExt;

use crate::load::{self, Expect, Level, Stop, Tally, Wire};
use crate::plan::{self, Protocol};
use crate::results::AgentRun;

/// What starts an agent's report line on its stdout.
pub const REPORT_PREFIX: &str = "greet-bench-shard ";

/// How long after the coordinator's call the agents start: time for every process to be up
/// and waiting, so that none starts late.
const START_LEAD: Duration = Duration::from_millis(700);

/// An agent later than this after the shared start is not waited for: its level fails.
const START_LATE: Duration = Duration::from_secs(2);

/// One agent's part of a ladder level.
#[derive(Debug, Clone, PartialEq)]
pub struct Shard {
    /// The server and endpoint, as the agents reach it: `http://10.0.0.5:8080/greetings`, or
    /// by a name the agents' network resolves.
    pub url: String,
    /// What a valid answer is.
    pub expect: plan::Expect,
    /// The protocol.
    pub protocol: Protocol,
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

/// A whole level's load, all agents together.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Work {
    /// One request per fresh connection (the ladder): each agent a share of the concurrency
    /// and of the requests.
    Fresh {
        /// Connections at once.
        concurrency: usize,
        /// Requests in all.
        requests: usize,
    },
    /// Keep-alive users (soak): each agent a share of the users, and of the requests when
    /// the level is a count.
    Sessions {
        /// Users, each one request after another on its connection.
        users: usize,
        /// When they stop.
        stop: Stop,
        /// Over HTTP/2, users sharing one connection.
        streams: usize,
    },
    /// Open loop (rate): each agent a share of the rate and of the connections.
    Paced(Schedule),
}

/// An open-loop level's schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// Requests a second, all agents together.
    pub rate: f64,
    /// How long.
    pub duration: Duration,
    /// Keep-alive connections, all agents together.
    pub connections: usize,
}

/// `total` split over `agents` as evenly as whole numbers go: the first `total % agents`
/// agents take one more.
pub fn share(total: usize, agents: usize, index: usize) -> usize {
    let agents = agents.max(1);
    total / agents + usize::from(index < total % agents)
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
            } => Work::Sessions {
                users: part(users),
                stop: match stop {
                    Stop::Total(n) => Stop::Total(part(n)),
                    each_or_time => each_or_time,
                },
                streams,
            },
            Work::Paced(s) => Work::Paced(Schedule {
                rate: s.rate / self.agents.max(1) as f64,
                duration: s.duration,
                connections: part(s.connections).max(1),
            }),
        }
    }

    /// The URL of `target` on the server at `addr`, over `protocol`.
    pub fn url_of(addr: SocketAddr, target: &str, protocol: Protocol) -> String {
        let scheme = if protocol.tls() { "https" } else { "http" };
        format!("{scheme}://{addr}{target}")
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
            }
            | Work::Paced(Schedule { duration: d, .. }) => d + self.timeout * 2,
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

    /// The `greet-bench agent` flags that run this shard.
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
    /// index its own (`JOB_COMPLETION_INDEX`) and no shared start.
    pub fn level_flags(&self) -> Vec<String> {
        let mut flags = vec![
            "agent".to_owned(),
            "--url".to_owned(),
            self.url.clone(),
            "--protocol".to_owned(),
            self.protocol.name().to_owned(),
            "--agents".to_owned(),
            self.agents.to_string(),
            "--timeout".to_owned(),
            format!("{}ms", self.timeout.as_millis()),
        ];
        let ms = |d: Duration| format!("{}ms", d.as_millis());
        let pairs: Vec<(&str, String)> = match self.work {
            Work::Fresh {
                concurrency,
                requests,
            } => vec![
                ("--concurrency", concurrency.to_string()),
                ("--requests", requests.to_string()),
            ],
            Work::Sessions {
                users,
                stop,
                streams,
            } => vec![
                ("--keep-alive", users.to_string()),
                match stop {
                    Stop::After(d) => ("--duration", ms(d)),
                    Stop::Total(n) => ("--requests", n.to_string()),
                    Stop::Each(n) => ("--each", n.to_string()),
                },
                ("--streams", streams.to_string()),
            ],
            Work::Paced(s) => vec![
                ("--rate", s.rate.to_string()),
                ("--duration", ms(s.duration)),
                ("--connections", s.connections.to_string()),
            ],
        };
        flags.extend(
            pairs
                .into_iter()
                .flat_map(|(flag, value)| [flag.to_owned(), value]),
        );
        match &self.expect {
            plan::Expect::Greeting => {}
            plan::Expect::Any => flags.extend(["--expect".to_owned(), "any".to_owned()]),
            plan::Expect::Pattern(regex) => flags.extend(["--expect".to_owned(), regex.clone()]),
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
    /// Everything it counted (open loop: its corrected latencies).
    pub tally: Tally,
    /// Open loop: the whole of what its schedule counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced: Option<load::PacedTally>,
}

/// The agent's side: waits for the shard's start, runs its share of the level on fresh
/// connections to the server at `addr` (its URL resolved), and returns what it counted.
pub async fn run_shard(shard: &Shard, addr: SocketAddr) -> Result<Report> {
    if shard.index >= shard.agents {
        bail!(
            "--index {} is not below --agents {}",
            shard.index,
            shard.agents
        );
    }
    let wire =
        Wire::new(shard.protocol, &greet_probe::tls::Trust::Any).map_err(anyhow::Error::msg)?;
    let own = shard.own();
    let start_at = UNIX_EPOCH + Duration::from_millis(shard.start_at_ms);
    if let Ok(wait) = start_at.duration_since(SystemTime::now()) {
        tokio::time::sleep(wait).await;
    }
    let start_skew_s = since(start_at);
    let started_s = since(UNIX_EPOCH);
    let (target, timeout) = (shard.target(), shard.timeout);
    let expect = Expect::for_target(&target, &shard.expect);
    let (tally, paced, concurrency, requests) = match own {
        Work::Fresh {
            concurrency,
            requests,
        } => {
            let level = Level {
                addr,
                target,
                expect,
                concurrency,
                requests,
                timeout,
                wire,
            };
            let tally = load::fresh(&level, Default::default()).await;
            (tally, None, concurrency, requests)
        }
        Work::Sessions {
            users,
            stop,
            streams,
        } => {
            let sessions = load::Sessions {
                addr,
                target,
                expect,
                users,
                stop,
                timeout,
                wire,
                streams,
            };
            let tally = load::sessions(&sessions, Default::default()).await;
            let requests = usize::try_from(tally.requests()).unwrap_or(usize::MAX);
            (tally, None, users, requests)
        }
        Work::Paced(s) => {
            let paced = load::Paced {
                addr,
                target,
                expect,
                rate: s.rate,
                duration: s.duration,
                connections: s.connections,
                timeout,
                wire,
            };
            let tally = load::paced(&paced, Default::default()).await;
            (tally.corrected.clone(), Some(tally), s.connections, 0)
        }
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
        tally,
        paced,
    })
}

/// The server at `url`: its address, once it resolves and, when `wait` is not zero, once its
/// `/health` answers `ok` over `protocol`, tried every half second for up to `wait` (a
/// cluster starts the agents beside the server, not after it).
pub async fn reach(url: &str, protocol: Protocol, wait: Duration) -> Result<SocketAddr> {
    let deadline = Instant::now() + wait;
    let wire = Wire::new(protocol, &greet_probe::tls::Trust::Any).map_err(anyhow::Error::msg)?;
    let health = greet_core::paths::HEALTH;
    let expect = Expect::for_target(health, &plan::Expect::Greeting);
    loop {
        let tried = match greet_conformance::resolve(url).await {
            Ok(addr) if wait.is_zero() => return Ok(addr),
            Ok(addr) => load::check_once(addr, &wire, health, &expect, Duration::from_secs(2))
                .await
                .map(|()| addr),
            Err(why) => Err(why),
        };
        match tried {
            Ok(addr) => return Ok(addr),
            Err(why) if Instant::now() >= deadline => {
                bail!("{url}: {why} (waited {wait:?})")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}

/// The URL the agents load: `target` on the server at `addr`, or, on a swarm, on the stack's
/// server by its name on the stack's network.
pub fn url_for(swarm: bool, addr: SocketAddr, target: &str, protocol: Protocol) -> String {
    if swarm {
        let scheme = if protocol.tls() { "https" } else { "http" };
        let host = crate::server::swarm::SERVER_HOST;
        format!("{scheme}://{host}:8080{target}")
    } else {
        Shard::url_of(addr, target, protocol)
    }
}

/// What a level's agents handed back, and the swarm node each ran on (none: this host).
#[derive(Debug)]
pub struct Ran {
    /// Their reports, in index order.
    pub reports: Vec<Report>,
    nodes: Vec<String>,
}

impl Ran {
    /// Each agent's figures, with its node.
    fn with_nodes(&self, mut runs: Vec<AgentRun>) -> Vec<AgentRun> {
        for (run, node) in runs.iter_mut().zip(&self.nodes) {
            run.node = Some(node.clone());
        }
        runs
    }

    /// [`merge`], each agent's node filled in.
    pub fn merged(&self) -> (Tally, Vec<AgentRun>) {
        let (tally, runs) = merge(&self.reports);
        (tally, self.with_nodes(runs))
    }

    /// [`merge_paced`], each agent's node filled in.
    pub fn merged_paced(&self) -> (load::PacedTally, Vec<AgentRun>) {
        let (tally, runs) = merge_paced(&self.reports);
        (tally, self.with_nodes(runs))
    }
}

/// Where a scenario's load runs: `agents` agents (0: in the harness itself), as processes on
/// this machine or as a swarm job (`swarm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Spread {
    /// Agents per level (0: none, the harness loads).
    pub agents: usize,
    /// On a Docker Swarm.
    pub swarm: bool,
}

/// When agents told to start now start: far enough ahead for every one to be up and waiting
/// (processes here, or a swarm's tasks, which take seconds to schedule). Give it to
/// [`Shard::start_at_ms`] (through [`unix_ms`]), and start watching the server then.
pub fn start_instant(on_swarm: bool) -> SystemTime {
    SystemTime::now() + if on_swarm { swarm::LEAD } else { START_LEAD }
}

/// Runs `shard` over `agents` agents, starting at its `start_at_ms` ([`start_instant`]):
/// processes of this program on this machine, or a job on the swarm (on `greet.role=load`
/// nodes when labelled).
pub async fn run(shard: &Shard, agents: usize, on_swarm: bool) -> Result<Ran> {
    if on_swarm {
        let constraint = crate::server::swarm::Nodes::read()?.constraint("load");
        let (reports, nodes) = swarm::run(shard, agents, constraint.as_deref()).await?;
        Ok(Ran { reports, nodes })
    } else {
        let program = std::env::current_exe().context("this program's path")?;
        let reports = local::run(&program, shard, agents).await?;
        Ok(Ran {
            reports,
            nodes: Vec::new(),
        })
    }
}

/// Open-loop shards as one schedule: every tally merged, requests sent late summed, the
/// connections busy at once summed (each agent's are its own), and the span from the first
/// agent's start to the last one's last answer. With each agent's own figures beside (its
/// rate achieved as its requests a second).
pub fn merge_paced(reports: &[Report]) -> (load::PacedTally, Vec<AgentRun>) {
    let mut merged = load::PacedTally::default();
    let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
    for report in reports {
        let Some(p) = &report.paced else { continue };
        merged.corrected.merge(&p.corrected);
        merged.service.merge(&p.service);
        merged.lag.merge(&p.lag);
        merged.late += p.late;
        merged.busy_max += p.busy_max;
        first = first.min(report.started_s);
        last = last.max(report.started_s + p.span.as_secs_f64());
    }
    if first.is_finite() {
        merged.span = Duration::from_secs_f64((last - first).max(0.0));
        merged.corrected.elapsed = merged.span;
        merged.service.elapsed = merged.span;
    }
    let (_, agents) = merge(reports);
    (merged, agents)
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

/// The shards' tallies as one: every count summed, the latencies merged, and the elapsed
/// time from the first agent's start to the last one's last answer (by the wall clock: on
/// other machines, as good as their clocks agree). With each agent's own figures beside.
pub fn merge(reports: &[Report]) -> (Tally, Vec<AgentRun>) {
    let mut tally = Tally::default();
    for report in reports {
        tally.merge(&report.tally);
    }
    let first = reports
        .iter()
        .map(|r| r.started_s)
        .fold(f64::INFINITY, f64::min);
    let last = reports
        .iter()
        .map(|r| r.started_s + r.tally.elapsed.as_secs_f64())
        .fold(f64::NEG_INFINITY, f64::max);
    if reports.is_empty() {
        return (tally, Vec::new());
    }
    tally.elapsed = Duration::from_secs_f64((last - first).max(0.0));
    let agents = reports
        .iter()
        .map(|r| {
            let f = r.tally.figures();
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
        })
        .collect();
    (tally, agents)
}

/// The coordinator on this machine: one `greet-bench agent` process per shard.
pub mod local {
    use super::*;

    /// Runs `shard` (its index ignored) as `agents` processes of `program` (a greet-bench
    /// binary) starting together at its start, and returns their reports in index order. Any
    /// agent that exits non-zero, dies, prints no report or is not done within the level's
    /// time is the level's failure, named.
    pub async fn run(program: &Path, shard: &Shard, agents: usize) -> Result<Vec<Report>> {
        let start_at_ms = shard.start_at_ms;
        let lead = Duration::from_millis(start_at_ms.saturating_sub(unix_ms(SystemTime::now())));
        let mut children = Vec::new();
        for index in 0..agents {
            let shard = Shard {
                index,
                agents,
                start_at_ms,
                ..shard.clone()
            };
            let child = tokio::process::Command::new(program)
                .args(shard.flags())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .with_context(|| format!("agent {index}: cannot start {}", program.display()))?;
            children.push(child);
        }
        let deadline = Instant::now() + lead + START_LATE + shard.time_limit();
        let mut reports = Vec::new();
        for (index, child) in children.into_iter().enumerate() {
            let left = deadline.saturating_duration_since(Instant::now());
            let report = tokio::time::timeout(left, collect(child))
                .await
                .map_err(|_| anyhow::anyhow!("not done within {left:.1?}"))
                .and_then(|r| r)
                .with_context(|| format!("agent {index} of {agents}"))?;
            if report.index != index || report.agents != agents {
                bail!(
                    "agent {index} of {agents} reported as {} of {}",
                    report.index,
                    report.agents
                );
            }
            if report.start_skew_s > START_LATE.as_secs_f64() {
                bail!(
                    "agent {index} of {agents} started {:.0} ms late: its load did not overlap \
                     the others'",
                    report.start_skew_s * 1000.0
                );
            }
            reports.push(report);
        }
        Ok(reports)
    }

    /// One agent's report, once it has exited.
    async fn collect(mut child: tokio::process::Child) -> Result<Report> {
        let (mut out, mut err) = (String::new(), String::new());
        let (mut stdout, mut stderr) = (
            child.stdout.take().context("no stdout")?,
            child.stderr.take().context("no stderr")?,
        );
        let (read_out, read_err, status) = tokio::join!(
            stdout.read_to_string(&mut out),
            stderr.read_to_string(&mut err),
            child.wait()
        );
        read_out.and(read_err).context("reading its output")?;
        let status = status.context("waiting for it")?;
        let last = err.lines().last().unwrap_or("").to_owned();
        if !status.success() {
            bail!("{}{}", exit_text(status), tail(&last));
        }
        parse_report(&out).with_context(|| format!("exited 0 without a report{}", tail(&last)))
    }

    fn tail(line: &str) -> String {
        if line.is_empty() {
            String::new()
        } else {
            format!(": {line}")
        }
    }

    fn exit_text(status: std::process::ExitStatus) -> String {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (_, Some(signal)) => format!("killed by signal {signal}"),
            (Some(code), _) => format!("exited with {code}"),
            (None, None) => "ended".to_owned(),
        }
    }
}

/// Every agent's report in `output` (agents' logs, in any order, other lines between), checked
/// to be one whole level: agents 0 to N-1 each exactly once, all told the same N. A missing
/// or repeated agent is an error: merging the rest would count a smaller level as whole.
pub fn gather_reports(output: &str) -> Result<Vec<Report>> {
    let mut reports: Vec<Report> = Vec::new();
    for (n, line) in output.lines().enumerate() {
        // `docker service logs` and `kubectl logs --prefix` put a source before the line.
        let Some(at) = line.find(REPORT_PREFIX) else {
            continue;
        };
        let json = &line[at + REPORT_PREFIX.len()..];
        let report: Report = serde_json::from_str(json)
            .with_context(|| format!("line {}: a report line that does not parse", n + 1))?;
        reports.push(report);
    }
    let Some(agents) = reports.first().map(|r| r.agents) else {
        bail!("no agent report (lines starting {REPORT_PREFIX:?})");
    };
    reports.sort_by_key(|r| r.index);
    if let Some(r) = reports.iter().find(|r| r.agents != agents) {
        bail!(
            "agent {} says {} agents, another {agents}: reports of two levels",
            r.index,
            r.agents
        );
    }
    for index in 0..agents {
        match reports.iter().filter(|r| r.index == index).count() {
            1 => {}
            0 => bail!(
                "agent {index} of {agents} did not report: the level is incomplete, not merged"
            ),
            n => bail!("agent {index} of {agents} reported {n} times"),
        }
    }
    if let Some(r) = reports.iter().find(|r| r.index >= agents) {
        bail!("agent {} of {agents}: no such agent", r.index);
    }
    Ok(reports)
}

/// The coordinator on a Docker Swarm: the agents as the replicas of a replicated job.
pub mod swarm {
    use super::*;
    use crate::server::{docker, swarm as stack};

    /// The job's service, removed after each level (and with the stack).
    pub const JOB: &str = "greet-bench_load";

    /// How long after the job is created its agents start: time for the swarm to schedule
    /// and start every task.
    pub(super) const LEAD: Duration = Duration::from_secs(5);

    /// Runs `shard` (its index ignored) as a replicated job of `agents` tasks of the agents'
    /// image on the stack's network (constrained to `constraint`'s nodes when given),
    /// starting together at its start; returns their reports in index order and the node
    /// each ran on.
    /// A task that fails, is rejected, or is not done in time, and a report missing or late,
    /// fail the level, named. The job is removed however this ends.
    pub async fn run(
        shard: &Shard,
        agents: usize,
        constraint: Option<&str>,
    ) -> Result<(Vec<Report>, Vec<String>)> {
        let start_at_ms = shard.start_at_ms;
        let lead = Duration::from_millis(start_at_ms.saturating_sub(unix_ms(SystemTime::now())));
        let shard = Shard {
            agents,
            ..shard.clone()
        };
        let replicas = agents.to_string();
        let label = format!("com.docker.stack.namespace={}", stack::STACK);
        let mut create: Vec<&str> = vec![
            "service",
            "create",
            "--detach",
            "--name",
            JOB,
            "--mode",
            "replicated-job",
            "--replicas",
            &replicas,
            "--max-concurrent",
            &replicas,
            "--restart-condition",
            "none",
            "--network",
            stack::NETWORK,
            "--label",
            &label,
            // Each task's slot is its index (see `index_of_slot`).
            "--env",
            "GREET_AGENT_SLOT={{.Task.Slot}}",
        ];
        if let Some(constraint) = constraint {
            create.extend(["--constraint", constraint]);
        }
        create.push(stack::AGENT_IMAGE);
        let mut flags = shard.level_flags();
        flags.extend(["--start-at".to_owned(), start_at_ms.to_string()]);
        create.extend(flags.iter().map(String::as_str));
        let _job = Job;
        docker(&create).context("cannot create the agents' job")?;
        let deadline = Instant::now() + lead + START_LATE + shard.time_limit();
        let nodes = loop {
            let tasks = docker(&[
                "service",
                "ps",
                "--no-trunc",
                "--format",
                "{{.Name}}|{{.Node}}|{{.CurrentState}}|{{.Error}}",
                JOB,
            ])?;
            let tasks: Vec<Vec<&str>> = tasks.lines().map(|l| l.split('|').collect()).collect();
            if let Some(t) = tasks.iter().find(|t| {
                let state = t.get(2).copied().unwrap_or_default();
                ["Failed", "Rejected", "Shutdown", "Orphaned"]
                    .iter()
                    .any(|s| state.starts_with(s))
            }) {
                bail!(
                    "agent task {} on {}: {} {}",
                    t.first().copied().unwrap_or_default(),
                    t.get(1).copied().unwrap_or_default(),
                    t.get(2).copied().unwrap_or_default(),
                    t.get(3).copied().unwrap_or_default()
                );
            }
            let complete = tasks
                .iter()
                .filter(|t| t.get(2).is_some_and(|s| s.starts_with("Complete")))
                .count();
            if complete == agents {
                // Task `greet-bench_load.SLOT` is agent `index_of_slot(SLOT)`.
                let mut nodes = vec![String::new(); agents];
                for t in &tasks {
                    let slot = t.first().and_then(|name| name.rsplit('.').next());
                    if let Some(node) = slot.and_then(|s| nodes.get_mut(index_of_slot(s))) {
                        *node = t.get(1).copied().unwrap_or_default().to_owned();
                    }
                }
                break nodes;
            }
            if Instant::now() > deadline {
                bail!("{complete} of {agents} agents done when the level's time was up");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let logs = docker(&["service", "logs", "--raw", JOB]).context("the agents' logs")?;
        let reports = gather_reports(&logs)?;
        if let Some(r) = reports.iter().find(|r| r.agents != agents) {
            bail!(
                "agent {} was told {} agents, not {agents}",
                r.index,
                r.agents
            );
        }
        if let Some(r) = reports
            .iter()
            .find(|r| r.start_skew_s > START_LATE.as_secs_f64())
        {
            bail!(
                "agent {} of {agents} started {:.0} ms late: its load did not overlap the \
                 others'",
                r.index,
                r.start_skew_s * 1000.0
            );
        }
        Ok((reports, nodes))
    }

    /// The agent index of a replicated job's task slot: a job's slots are 0 to N-1 (a
    /// replicated service's start at 1), and swarm writes slot 0 in templates and task names
    /// as the node's ID (seen on Engine 20.10): a number is its index, anything else 0.
    pub fn index_of_slot(slot: &str) -> usize {
        slot.trim().parse().unwrap_or(0)
    }

    /// Removes the job when dropped: after its level, on failure, on Ctrl-C.
    struct Job;

    impl Drop for Job {
        fn drop(&mut self) {
            let _ = docker(&["service", "rm", JOB]);
        }
    }
}

/// The report in an agent's output: the last line that starts with [`REPORT_PREFIX`].
pub fn parse_report(output: &str) -> Result<Report> {
    let line = output
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(REPORT_PREFIX))
        .context("no report line")?;
    serde_json::from_str(line).context("a report line that does not parse")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report_line(index: usize, agents: usize) -> String {
        let report = Report {
            index,
            agents,
            concurrency: 1,
            requests: 0,
            start_skew_s: 0.0,
            started_s: 1_700_000_000.0,
            cpu_s: 0.0,
            tally: Tally::default(),
            paced: None,
        };
        format!("{REPORT_PREFIX}{}", serde_json::to_string(&report).unwrap())
    }

    #[test]
    fn a_level_is_merged_whole_or_not_at_all() {
        let logs = format!(
            "greet_load.2.x@node | {}\nnoise\ngreet_load.1.y@node | {}\n",
            report_line(1, 2),
            report_line(0, 2)
        );
        let reports = gather_reports(&logs).expect("both agents");
        assert_eq!(reports.iter().map(|r| r.index).collect::<Vec<_>>(), [0, 1]);
        let missing = gather_reports(&report_line(0, 3)).unwrap_err().to_string();
        assert!(missing.contains("agent 1 of 3 did not report"), "{missing}");
        let twice = format!("{}\n{}", report_line(0, 1), report_line(0, 1));
        assert!(gather_reports(&twice)
            .unwrap_err()
            .to_string()
            .contains("2 times"));
        let mixed = format!("{}\n{}", report_line(0, 2), report_line(1, 3));
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
            tally.push(load::Outcome::Ok {
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
                tally,
                paced: None,
            }
        };
        let (tally, agents) = merge(&[report(0, 0.002, 1000), report(1, 0.001, 1200)]);
        assert_eq!(tally.requests(), 2);
        // From agent 1's start (1 ms) to its last answer (1201 ms), to a microsecond.
        let elapsed = tally.elapsed.as_secs_f64();
        assert!((elapsed - 1.2).abs() < 1e-6, "{elapsed}");
        assert_eq!(agents.len(), 2);
        assert!((agents[1].start_skew_ms - 1.0).abs() < 1e-9);
        let text = format!(
            "{REPORT_PREFIX}{}\n",
            serde_json::to_string(&report(1, 0.0, 9)).unwrap()
        );
        let parsed = parse_report(&format!("noise\n{text}")).expect("parses");
        assert_eq!((parsed.index, parsed.tally.requests()), (1, 1));
        assert!(parse_report("nothing here").is_err());
    }
}
