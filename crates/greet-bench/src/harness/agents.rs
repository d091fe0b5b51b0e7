//! A load's shard handed to agents where the [`Placement`] puts them: processes of this
//! program on this machine (`greet-bench agent`, `greet_load::local`), or the replicas of a
//! replicated job on a Docker Swarm, of the agents' image, on the server's stack's network.
//! Either way they start at one instant and their reports come back whole, or the load fails.

use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Context, Result};
use greet_load::local::{self, AgentCommand, AgentFailed, START_LEAD};
use greet_load::shard::{gather_reports, index_of_slot, unix_ms, url_of, START_LATE};
use greet_load::{merge, AgentRun, Counted, Report, Shard};

use crate::plan::{Placement, Protocol};
use crate::server::docker::{self, docker};
use crate::server::swarm::{Nodes, AGENT_IMAGE, NETWORK, STACK};
use crate::server::SERVER_HOST;

/// The swarm job's service, removed after each load (and with the stack).
const JOB: &str = "greet-bench_load";

/// How long after the job is created its agents start: time for the swarm to schedule and
/// start every task.
const SWARM_LEAD: Duration = Duration::from_secs(5);

/// What a load's agents handed back, and the swarm node each ran on (none: this host).
#[derive(Debug)]
pub(super) struct Ran {
    /// Their reports, in index order.
    pub(super) reports: Vec<Report>,
    nodes: Vec<String>,
}

impl Ran {
    /// Their counts as one, and each agent's own figures with its node.
    pub(super) fn merged(&self) -> (Counted, Vec<AgentRun>) {
        let (counted, mut runs) = merge(&self.reports);
        for (run, node) in runs.iter_mut().zip(&self.nodes) {
            run.node = Some(node.clone());
        }
        (counted, runs)
    }

    /// CPU the agents used in all, seconds.
    pub(super) fn cpu_s(&self) -> f64 {
        self.reports.iter().map(|r| r.cpu_s).sum()
    }
}

/// When agents told to start now start: far enough ahead for every one to be up and waiting
/// (processes here, or a swarm's tasks, which take seconds to schedule).
pub(super) fn start_instant(place: Placement) -> SystemTime {
    SystemTime::now()
        + match place {
            Placement::Swarm(_) => SWARM_LEAD,
            _ => START_LEAD,
        }
}

/// The URL the agents load: `target` on the server at `addr`, or, on a swarm, on the stack's
/// server by its name on the stack's network.
pub(super) fn url(place: Placement, addr: SocketAddr, target: &str, protocol: Protocol) -> String {
    match place {
        Placement::Swarm(_) => url_of(format!("{SERVER_HOST}:8080"), target, protocol),
        _ => url_of(addr, target, protocol),
    }
}

/// Runs `shard` over `place`'s agents, starting at its `start_at_ms`.
pub(super) async fn run(place: Placement, shard: &Shard) -> Result<Ran> {
    match place {
        Placement::Swarm(agents) => {
            let constraint = Nodes::read()?.constraint("load");
            let (reports, nodes) = on_swarm(shard, agents.get(), constraint.as_deref()).await?;
            Ok(Ran { reports, nodes })
        }
        Placement::Local(agents) => {
            let program = std::env::current_exe().context("this program's path")?;
            let command = AgentCommand {
                program: &program,
                leading: &["agent"],
            };
            let reports = local::run(&command, shard, agents.get()).await?;
            Ok(Ran {
                reports,
                nodes: Vec::new(),
            })
        }
        Placement::Harness => bail!("no agents: the harness loads itself"),
    }
}

/// Runs `shard` (its index ignored) as a replicated job of `agents` tasks of the agents' image
/// on the stack's network (constrained to `constraint`'s nodes when given), starting together
/// at its start; returns their reports in index order and the node each ran on. A task that
/// fails, is rejected, or is not done in time, and a report missing or late, fail the load,
/// named. The job is removed however this ends.
async fn on_swarm(
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
    let label = format!("com.docker.stack.namespace={STACK}");
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
        NETWORK,
        "--label",
        &label,
        // Each task's slot is its index (see `index_of_slot`).
        "--env",
        "GREET_AGENT_SLOT={{.Task.Slot}}",
    ];
    if let Some(constraint) = constraint {
        create.extend(["--constraint", constraint]);
    }
    create.push(AGENT_IMAGE);
    let mut flags = shard.level_flags();
    flags.extend(["--start-at".to_owned(), start_at_ms.to_string()]);
    create.extend(flags.iter().map(String::as_str));
    let _job = Job;
    docker(&create).context("cannot create the agents' job")?;
    let deadline = Instant::now() + lead + START_LATE + shard.time_limit();
    let nodes = loop {
        let tasks = docker::tasks(JOB)?;
        if let Some(t) = tasks.iter().find(|t| t.failed()) {
            bail!(
                "agent task {} on {}: {} {}",
                t.name,
                t.node,
                t.current_state,
                t.error
            );
        }
        let complete = tasks.iter().filter(|t| t.state() == "Complete").count();
        if complete == agents {
            // Task `greet-bench_load.SLOT` is agent `index_of_slot(SLOT)`.
            let mut nodes = vec![String::new(); agents];
            for t in &tasks {
                let slot = t.name.rsplit('.').next().unwrap_or_default();
                if let Some(node) = nodes.get_mut(index_of_slot(slot)) {
                    node.clone_from(&t.node);
                }
            }
            break nodes;
        }
        if Instant::now() > deadline {
            bail!("{complete} of {agents} agents done when the load's time was up");
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
    if let Some(late) = reports
        .iter()
        .find_map(|r| AgentFailed::late(r.index, agents, r.start_skew_s))
    {
        return Err(late.into());
    }
    Ok((reports, nodes))
}

/// Removes the job when dropped: after its load, on failure, on Ctrl-C.
struct Job;

impl Drop for Job {
    fn drop(&mut self) {
        let _ = docker(&["service", "rm", JOB]);
    }
}
