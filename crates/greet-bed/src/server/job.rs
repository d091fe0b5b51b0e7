//! The load's agents as a job on a Docker Swarm: a replicated service of the agents' image on
//! the stack's network that never restarts a task, its tasks polled until every one is done,
//! their reports read from their logs, and the service removed however the load ends.
//!
//! Not a `replicated-job`: on Engine 20.10 removing one leaves its tasks running to their end
//! and their containers behind (moby/moby#42789, #44312), which then hold the stack's network,
//! so that a run cut short (Ctrl-C, a failed agent, a lost node) could not remove its stack.

use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Context, Result};
use greet_load::local::AgentFailed;
use greet_load::shard::{gather_reports, index_of_slot, report_in, unix_ms, START_LATE};
use greet_load::{Report, Shard};

use super::docker::{self, docker};
use super::swarm::{InUse, AGENT_IMAGE, NETWORK, STACK};

/// The swarm job's service, removed after each load (and with the stack).
const JOB: &str = "greet-bench_load";
/// How long the job's logs may take to bring every report once its tasks are done.
const REPORTS_TIMEOUT: Duration = Duration::from_secs(30);
/// The nodes' states are read once in this many looks at the tasks (200 ms apart).
const NODES_EVERY: u32 = 5;

/// Runs `shard` (its index ignored) as a run-once service of `agents` tasks of the agents' image
/// on the stack's network (constrained to `constraint`'s nodes when given), starting together
/// at its start; returns their reports in index order and the node each ran on. A task that
/// fails, is rejected, or is not done in time, a node holding the run's tasks that the
/// managers lose, and a report missing or late, fail the load, named. The job is removed
/// however this ends.
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
    let label = format!("com.docker.stack.namespace={STACK}");
    let mut create: Vec<&str> = vec![
        "service",
        "create",
        "--detach",
        "--no-resolve-image",
        "--name",
        JOB,
        "--mode",
        "replicated",
        "--replicas",
        &replicas,
        "--restart-condition",
        "none",
        "--network",
        NETWORK,
        "--label",
        &label,
        // Each task's slot, from 1, is its index (see `index_of_slot`).
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
    let in_use = InUse::now();
    let _job = Job;
    docker(&create).context("cannot create the agents' job")?;
    let deadline = Instant::now() + lead + START_LATE + shard.time_limit();
    let mut looks = 0u32;
    let (nodes, logs) = loop {
        let tasks = docker::tasks(JOB)?;
        looks += 1;
        if looks.is_multiple_of(NODES_EVERY) {
            // A lost node's tasks may still say Running: only its state tells.
            in_use.check(&tasks)?;
        }
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
            let mut logs = String::new();
            for t in &tasks {
                let slot = t.name.rsplit('.').next().unwrap_or_default();
                let index = index_of_slot(slot)
                    .with_context(|| format!("agent task {} has no slot", t.name))?;
                if let Some(node) = nodes.get_mut(index) {
                    node.clone_from(&t.node);
                }
                // Task by task: a whole job's logs stall more often (moby/moby#38640).
                logs += &docker::service_logs_until(
                    &t.id,
                    |logs| report_in(logs, index),
                    REPORTS_TIMEOUT,
                )
                .context("the agents' logs")?;
            }
            break (nodes, logs);
        }
        if Instant::now() > deadline {
            bail!("{complete} of {agents} agents done when the load's time was up");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
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
