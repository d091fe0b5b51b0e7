//! A load's shard handed to agents where the [`Placement`] puts them: processes of this
//! program on this machine (`greet-bench agent`, `greet_load::local`), or the replicas of a
//! run-once service on a Docker Swarm (`greet_bed::server::job`).
//! Either way they start at one instant and their reports come back whole, or the load fails.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};
use greet_load::local::{self, AgentCommand, START_LEAD};
use greet_load::shard::url_of;
use greet_load::{merge, AgentRun, Counted, Report, Shard};

use greet_bed::server::job;
use greet_bed::server::swarm::Nodes;
use greet_bed::server::SERVER_HOST;
use greet_model::plan::{Placement, Protocol};

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

/// The URL the agents load: `path` on the server at `addr`, or, on a swarm, on the stack's
/// server by its name on the stack's network.
pub(super) fn url(place: Placement, addr: SocketAddr, path: &str, protocol: Protocol) -> String {
    match place {
        Placement::Swarm(_) => url_of(format!("{SERVER_HOST}:8080"), path, protocol),
        _ => url_of(addr, path, protocol),
    }
}

/// Runs `shard` over `place`'s agents, starting at its `start_at_ms`.
pub(super) async fn run(place: Placement, shard: &Shard) -> Result<Ran> {
    match place {
        Placement::Swarm(agents) => {
            let constraint = Nodes::read()?.constraint("load");
            let (reports, nodes) = job::run(shard, agents.get(), constraint.as_deref()).await?;
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
