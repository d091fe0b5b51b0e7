//! Agents on this machine: one process per shard, all told one start instant, each report
//! read from its stdout. An agent that fails, dies, is late or does not report fails the
//! level, named.

use std::fmt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

use tokio::io::AsyncReadExt;

use crate::shard::{parse_report, unix_ms, Report, Shard, START_LATE};

/// How long after the call the agents start: time for every process to be up and waiting,
/// so that none starts late.
pub const START_LEAD: Duration = Duration::from_millis(700);

/// The command that runs one agent: a program and the arguments before a shard's flags
/// (`greet-agent`, or `greet-bench agent`).
#[derive(Debug, Clone)]
pub struct AgentCommand<'a> {
    /// The program.
    pub program: &'a Path,
    /// Its arguments before the shard's flags.
    pub leading: &'a [&'a str],
}

/// Why an agent failed its level.
#[derive(Debug)]
pub struct AgentFailed {
    /// Its number.
    pub index: usize,
    /// Agents in all.
    pub agents: usize,
    /// What happened.
    pub why: Failure,
}

/// What happened to an agent.
#[derive(Debug)]
pub enum Failure {
    /// It could not be started, or its output read.
    Io(std::io::Error),
    /// It exited with an error, or was killed: how, and its last words on stderr.
    Exited {
        /// `exited with 1`, `killed by signal 9`.
        how: String,
        /// Its last line on stderr.
        last: String,
    },
    /// It exited 0 with no report (or one that does not parse).
    NoReport {
        /// Its last line on stderr.
        last: String,
    },
    /// It was not done within the level's time.
    TimedOut(Duration),
    /// It reported as another agent.
    Misreported {
        /// The index it reported.
        index: usize,
        /// The agents it reported.
        agents: usize,
    },
    /// It started this long after the shared start.
    Late(Duration),
}

impl fmt::Display for AgentFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (index, agents) = (self.index, self.agents);
        let tail = |last: &str| {
            if last.is_empty() {
                String::new()
            } else {
                format!(": {last}")
            }
        };
        match &self.why {
            Failure::Io(err) => write!(f, "agent {index} of {agents}: {err}"),
            Failure::Exited { how, last } => {
                write!(f, "agent {index} of {agents}: {how}{}", tail(last))
            }
            Failure::NoReport { last } => write!(
                f,
                "agent {index} of {agents}: exited 0 without a report{}",
                tail(last)
            ),
            Failure::TimedOut(left) => {
                write!(f, "agent {index} of {agents}: not done within {left:.1?}")
            }
            Failure::Misreported {
                index: i,
                agents: n,
            } => write!(f, "agent {index} of {agents} reported as {i} of {n}"),
            Failure::Late(by) => write!(
                f,
                "agent {index} of {agents} started {:.0} ms late: its load did not overlap \
                 the others'",
                by.as_secs_f64() * 1000.0
            ),
        }
    }
}

impl std::error::Error for AgentFailed {}

impl AgentFailed {
    /// Agent `index` of `agents` that started `skew_s` seconds after the shared start, when
    /// that is too late for its load to overlap the others'.
    pub fn late(index: usize, agents: usize, skew_s: f64) -> Option<Self> {
        (skew_s > START_LATE.as_secs_f64()).then(|| Self {
            index,
            agents,
            why: Failure::Late(Duration::from_secs_f64(skew_s)),
        })
    }
}

/// Runs `shard` (its index ignored) as `agents` processes of `command` starting together at
/// its start, and returns their reports in index order.
pub async fn run(
    command: &AgentCommand<'_>,
    shard: &Shard,
    agents: usize,
) -> Result<Vec<Report>, AgentFailed> {
    let start_at_ms = shard.start_at_ms;
    let lead = Duration::from_millis(start_at_ms.saturating_sub(unix_ms(SystemTime::now())));
    let failed = |index, why| AgentFailed { index, agents, why };
    let mut children = Vec::new();
    for index in 0..agents {
        let shard = Shard {
            index,
            agents,
            start_at_ms,
            ..shard.clone()
        };
        let child = tokio::process::Command::new(command.program)
            .args(command.leading)
            .args(shard.flags())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| failed(index, Failure::Io(e)))?;
        children.push(child);
    }
    let deadline = Instant::now() + lead + START_LATE + shard.time_limit();
    let mut reports = Vec::new();
    for (index, child) in children.into_iter().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        let report = tokio::time::timeout(left, collect(child))
            .await
            .map_err(|_| Failure::TimedOut(left))
            .and_then(|r| r)
            .map_err(|why| failed(index, why))?;
        if report.index != index || report.agents != agents {
            let why = Failure::Misreported {
                index: report.index,
                agents: report.agents,
            };
            return Err(failed(index, why));
        }
        if let Some(late) = AgentFailed::late(index, agents, report.start_skew_s) {
            return Err(late);
        }
        reports.push(report);
    }
    Ok(reports)
}

/// One agent's report, once it has exited.
async fn collect(mut child: tokio::process::Child) -> Result<Report, Failure> {
    let (mut out, mut err) = (String::new(), String::new());
    let pipes = (child.stdout.take(), child.stderr.take());
    let (Some(mut stdout), Some(mut stderr)) = pipes else {
        return Err(Failure::Io(std::io::Error::other("no pipe from the agent")));
    };
    let (read_out, read_err, status) = tokio::join!(
        stdout.read_to_string(&mut out),
        stderr.read_to_string(&mut err),
        child.wait()
    );
    read_out.and(read_err).map_err(Failure::Io)?;
    let status = status.map_err(Failure::Io)?;
    let last = err.lines().last().unwrap_or("").to_owned();
    if !status.success() {
        return Err(Failure::Exited {
            how: exit_text(status),
            last,
        });
    }
    match parse_report(&out) {
        Some(Ok(report)) => Ok(report),
        _ => Err(Failure::NoReport { last }),
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
