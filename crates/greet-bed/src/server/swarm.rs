//! A server as the one service of a Docker Swarm stack: deployed with `docker stack deploy`
//! from a stack file made here (`stack`), on an overlay network the load's agents
//! join, its port published on its node, and removed with `docker stack rm` however the run
//! ends. The stores' stack, for store-bound scenarios, is deployed the same way.
//!
//! Each container is watched from beside it: a watch task (`greet-agent watch`) on its node
//! reads its control group (CPU, memory, tasks: what `docker stats` shows), and the harness
//! follows that task's log, wherever the node is. /proc is read too where its process is
//! this host's.
//!
//! The agents reach the server by name with `endpoint_mode: dnsrr`: the name resolves to the
//! task's own address, with no virtual IP and IPVS between them and the server (where the
//! kernel has no IPVS, as on this project's machine, a virtual IP does not even answer: "No
//! route to host").

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::sample::EngineStats;
use greet_model::results::StoreNode;

use super::container::visible;
use super::docker::{self, docker};
use super::stack::{StackFile, STORE_IMAGES};
use super::{Exit, Handle, Server};

/// The stack's name: one at a time per swarm.
pub const STACK: &str = "greet-bench";
/// The stack's overlay network, which the agents' job joins.
pub const NETWORK: &str = "greet-bench_net";
/// The server's service.
pub const SERVICE: &str = "greet-bench_server";
/// The task beside the server that watches its container.
pub const WATCH: &str = "greet-bench_watch";
/// The agents' image (`greet-agent`, which also runs the watch tasks), as
/// docker/build-offline.sh tags it.
pub const AGENT_IMAGE: &str = "greet-agent:latest";
/// The stores' stack (the database routes on a swarm): PostgreSQL and Redis, deployed once
/// per run.
pub const STORES_STACK: &str = "greet-bench-stores";
/// Its overlay network, which the servers' stacks join.
pub const STORES_NETWORK: &str = "greet-bench-stores_net";

/// How long a stack may take to have its task running: scheduling, and on another node the
/// image's first start.
const SCHEDULE_TIMEOUT: Duration = Duration::from_secs(60);

/// The swarm's nodes as the run used them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Nodes {
    /// Nodes labelled `greet.role=ROLE`, for ROLE server, store and load: where each kind of
    /// task is constrained to go when any node has the label.
    pub labelled: Vec<(String, String)>,
}

impl Nodes {
    /// The swarm's nodes and their `greet.role` labels.
    pub fn read() -> Result<Self> {
        let labelled = docker::nodes()?
            .into_iter()
            .filter_map(|node| {
                let role = node.spec.labels.get("greet.role")?.clone();
                Some((node.description.hostname, role))
            })
            .collect();
        Ok(Self { labelled })
    }

    /// The placement constraint of tasks of `role`: its label where a node has it, none (any
    /// node) otherwise.
    pub fn constraint(&self, role: &str) -> Option<String> {
        self.labelled
            .iter()
            .any(|(_, r)| r == role)
            .then(|| format!("node.labels.greet.role=={role}"))
    }
}

/// The nodes a load depends on, and what of the run's each holds: the stacks' tasks (the
/// server, the stores, their watches) as the load starts, and the load's agents as they go.
#[derive(Debug, Default)]
pub struct InUse {
    /// Each running task's node and name.
    tasks: Vec<(String, String)>,
}

impl InUse {
    /// The tasks of the server's and the stores' stacks, now.
    pub fn now() -> Self {
        let tasks = [STACK, STORES_STACK]
            .into_iter()
            .flat_map(|stack| docker::stack_tasks(stack, true))
            .map(|t| (t.node, t.name))
            .collect();
        Self { tasks }
    }

    /// An error naming the first node, among those holding the stacks' tasks or `agents`,
    /// that the managers no longer hear from, and what of the run's was on it.
    pub fn check(&self, agents: &[docker::Task]) -> Result<()> {
        let held: Vec<(&str, &str)> = self
            .tasks
            .iter()
            .map(|(node, task)| (node.as_str(), task.as_str()))
            .chain(agents.iter().map(|t| (t.node.as_str(), t.name.as_str())))
            .collect();
        for node in docker::nodes()? {
            let name = &node.description.hostname;
            let on: Vec<&str> = held
                .iter()
                .filter(|(n, _)| n == name)
                .map(|&(_, task)| task)
                .collect();
            if !node.ready() && !on.is_empty() {
                bail!(
                    "node {name} was lost mid-load ({}: {}), with {} on it",
                    node.status.state,
                    node.status.message,
                    on.join(", ")
                );
            }
        }
        Ok(())
    }
}

/// Checks, for a run of servers `shorts` (and `targets` given or not), that the engine
/// manages a swarm, that the servers' and the agents' images are there, and that no stack of
/// ours is deployed: each a one-line error saying what to do.
pub fn preflight(shorts: &[&str], targets: bool) -> Result<()> {
    if targets {
        bail!("--swarm deploys the servers it loads: a --target cannot be loaded from the swarm");
    }
    let swarm = docker::swarm()
        .context("no Docker engine answers (`docker info` failed); --swarm needs one")?;
    if !(swarm.local_node_state == "active" && swarm.control_available) {
        bail!(
            "--swarm: this engine is not a swarm manager ({} {}): `docker swarm init`, or \
             point DOCKER_HOST at a manager",
            swarm.local_node_state,
            swarm.control_available
        );
    }
    let mut images: Vec<String> = shorts.iter().map(|s| super::image(s)).collect();
    images.dedup();
    images.push(AGENT_IMAGE.to_owned());
    check_free(STACK, NETWORK, &images)
}

/// Checks, for a run that deploys the stores, that their images are there and that no
/// stores' stack is deployed ([`preflight`] has checked the swarm).
pub fn preflight_stores() -> Result<()> {
    check_free(
        STORES_STACK,
        STORES_NETWORK,
        &STORE_IMAGES.map(String::from),
    )
}

/// `images` are there, and stack `stack` (with its `network`) is not. Only a one-node
/// swarm's images are this engine's: on a larger one each node holds its own (or pulls them),
/// and a task whose image its node lacks fails, naming that node.
fn check_free(stack: &str, network: &str, images: &[String]) -> Result<()> {
    let one_node = docker::swarm().map_or(true, |s| s.nodes <= 1);
    if let Some(image) = images.iter().find(|i| one_node && !docker::has_image(i)) {
        bail!("image {image} not found: build the images with docker/build-offline.sh");
    }
    if docker::stack_has_services(stack)? || docker::has_network(network) {
        bail!(
            "a stack named {stack} is already deployed: remove it with `docker stack rm {stack}` \
             (another run may be using it)"
        );
    }
    Ok(())
}

/// The stores' stack, deployed: each store watched from beside it. Removed when dropped
/// (the run's end, a failure, Ctrl-C).
#[derive(Debug)]
pub struct Stores {
    /// Each store's service and node, and its watch.
    pub watched: Vec<(StoreNode, EngineStats)>,
}

impl Stores {
    /// Deploys the stores' stack and waits until both are healthy.
    pub fn deploy(nodes: &Nodes) -> Result<Self> {
        let constraint = nodes.constraint("store");
        let started = Instant::now();
        let mut stores = Self {
            watched: Vec::new(),
        };
        deploy(STORES_STACK, &StackFile::stores(constraint.as_deref()))?;
        for name in ["postgres", "redis"] {
            let service = format!("{STORES_STACK}_{name}");
            let task = running_task(&service, name, started)?;
            let watch = format!("{STORES_STACK}_watch-{name}");
            let stats = watch_beside(STORES_STACK, &watch, &task)?;
            let placed = StoreNode {
                service: name.to_owned(),
                node: task.node,
            };
            stores.watched.push((placed, stats));
        }
        Ok(stores)
    }

    /// Where each store runs, PostgreSQL first.
    pub fn nodes(&self) -> Vec<StoreNode> {
        self.watched.iter().map(|(n, _)| n.clone()).collect()
    }
}

impl Drop for Stores {
    fn drop(&mut self) {
        self.watched.clear();
        remove(STORES_STACK, STORES_NETWORK);
    }
}

/// The deployed stack: its server's task, where it runs, and how it is sampled.
#[derive(Debug)]
pub(super) struct Deployed {
    /// The node the server's task runs on.
    pub(super) node: String,
    /// Its server's process as the engine's host sees it (0: not on this engine).
    pub(super) pid: u32,
    /// That process is this host's.
    pub(super) visible: bool,
    /// Its watch task's readings.
    pub(super) stats: Option<EngineStats>,
    removed: bool,
}

impl Deployed {
    /// How the server's task ended, if it has.
    pub(super) fn exited(&self) -> Option<Exit> {
        let task = docker::tasks(SERVICE).ok()?.into_iter().next()?;
        (task.state() != "Running").then(|| Exit {
            success: task.state() == "Complete",
            text: format!("task {} {}", task.current_state, task.error)
                .trim_end()
                .to_owned(),
        })
    }

    /// The server's last log lines.
    pub(super) fn tail(&self) -> String {
        docker(&["service", "logs", "--raw", "--tail", "20", SERVICE])
            .map(|out| out.lines().collect::<Vec<_>>().join(" / "))
            .unwrap_or_default()
    }

    /// Removes the stack (once).
    pub(super) fn remove(&mut self) {
        if self.removed {
            return;
        }
        self.removed = true;
        self.stats = None;
        remove_stack();
    }
}

/// Removes the server's stack and waits up to 30 s for its network to be gone.
pub fn remove_stack() {
    remove(STACK, NETWORK);
}

/// Removes stack `stack` and waits up to 30 s for its network `network` to be gone and its
/// tasks with it. The removal is asynchronous: a stack deployed again too soon finds the
/// network still there, and on another node its server waits for the old tasks to stop
/// before it starts, which counted as its start-up (4.5 s on the bed against 1.2 s on one
/// node). Tasks on a node the managers no longer hear from are not waited for: they go when
/// it is back.
fn remove(stack: &str, network: &str) {
    let _ = docker(&["stack", "rm", stack]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline && (docker::has_network(network) || tasks_left(stack)) {
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Whether stack `stack` still has a task on a node the managers hear from.
fn tasks_left(stack: &str) -> bool {
    let tasks = docker::stack_tasks(stack, false);
    if tasks.is_empty() {
        return false;
    }
    let ready: Vec<String> = docker::nodes()
        .unwrap_or_default()
        .into_iter()
        .filter(docker::Node::ready)
        .map(|n| n.description.hostname)
        .collect();
    tasks.iter().any(|t| ready.contains(&t.node))
}

/// Deploys `file` as stack `stack`.
fn deploy(stack: &str, file: &StackFile) -> Result<()> {
    let path = std::env::temp_dir().join(format!("{stack}-{}.yaml", std::process::id()));
    std::fs::write(&path, file.yaml()).context("cannot write the stack file")?;
    // The images are the nodes' own: asking a registry for each would only wait on it.
    let deployed = docker(&[
        "stack",
        "deploy",
        "--resolve-image",
        "never",
        "--compose-file",
        &path.to_string_lossy(),
        stack,
    ]);
    let _ = std::fs::remove_file(&path);
    deployed.with_context(|| format!("cannot deploy stack {stack}"))?;
    Ok(())
}

/// A service's one task, running.
#[derive(Debug)]
struct Running {
    /// Its node's name.
    node: String,
    /// Its node's ID.
    node_id: String,
    /// Its container's ID.
    container: String,
}

/// Where a service's one task runs once it is running (a task with a health check runs once
/// healthy). Failed, rejected or not running within [`SCHEDULE_TIMEOUT`] of `started` is an
/// error naming `what`.
fn running_task(service: &str, what: &str, started: Instant) -> Result<Running> {
    let task = loop {
        let task = docker::tasks(service)?.into_iter().next();
        match task {
            Some(task) if task.state() == "Running" => break task,
            Some(task) if task.state() == "Failed" || task.state() == "Rejected" => bail!(
                "{what}'s task on node {}: {}: {}",
                task.node,
                task.current_state,
                task.error
            ),
            seen if started.elapsed() > SCHEDULE_TIMEOUT => bail!(
                "{what}'s task not running within {SCHEDULE_TIMEOUT:?} ({})",
                seen.map_or("no task".to_owned(), |t| format!(
                    "{} {}",
                    t.current_state, t.error
                ))
            ),
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    let placed = docker::placed(&task.id)?;
    let container = placed
        .status
        .container_status
        .map(|c| c.container_id)
        .unwrap_or_default();
    if placed.node_id.is_empty() || container.is_empty() {
        bail!("{what}'s task {} has no node or container", task.id);
    }
    Ok(Running {
        node: task.node,
        node_id: placed.node_id,
        container,
    })
}

/// Starts service `name` of stack `stack`: a watch task of the agents' image on `task`'s node
/// (by ID, so beside its container wherever it runs) that prints the container's figures from
/// the host's control groups, and follows its log. Labelled as the stack's, it goes with
/// `docker stack rm`.
fn watch_beside(stack: &str, name: &str, task: &Running) -> Result<EngineStats> {
    let label = format!("com.docker.stack.namespace={stack}");
    let constraint = format!("node.id=={}", task.node_id);
    docker(&[
        "service",
        "create",
        "--detach",
        "--no-resolve-image",
        "--name",
        name,
        "--restart-condition",
        "none",
        "--label",
        &label,
        "--constraint",
        &constraint,
        "--mount",
        "type=bind,source=/sys/fs/cgroup,target=/host/cgroup,readonly",
        AGENT_IMAGE,
        "watch",
        "--container",
        &task.container,
        "--cgroups",
        "/host/cgroup",
    ])
    .with_context(|| format!("cannot start the watch task {name}"))?;
    EngineStats::follow_service(name).with_context(|| format!("cannot follow {name}'s log"))
}

/// A port free on this host now, for the server's published port.
fn free_port() -> Result<u16> {
    let socket = std::net::TcpListener::bind("127.0.0.1:0").context("no free port")?;
    Ok(socket.local_addr()?.port())
}

impl Server {
    /// Deploys `image` with `args` as the stack's server (on a node labelled
    /// `greet.role=server` when there is one, on the stores' network too when `join` names
    /// it) and waits for its first 200 on `/health`, at its node's address; start-up counts
    /// from `docker stack deploy`.
    pub fn start_swarm(
        image: &str,
        args: &[String],
        nodes: &Nodes,
        join: Option<&str>,
    ) -> Result<Self> {
        let port = free_port()?;
        let constraint = nodes.constraint("server");
        let file = StackFile::server(image, args, port, (constraint.as_deref(), join));
        let started = Instant::now();
        let deployed = deploy(STACK, &file);
        let mut server = Self {
            handle: Handle::Swarm(Deployed {
                node: String::new(),
                pid: 0,
                visible: false,
                stats: None,
                removed: false,
            }),
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            startup: Duration::ZERO,
            slowdown: 1,
            forked: false,
        };
        deployed?;
        let task = running_task(SERVICE, image, started)?;
        let node = docker::node(&task.node_id)?;
        let ip = node.status.addr.parse().with_context(|| {
            format!("node {} has no address: {:?}", task.node, node.status.addr)
        })?;
        server.addr = SocketAddr::new(ip, port);
        let stats = watch_beside(STACK, WATCH, &task)?;
        if let Handle::Swarm(deployed) = &mut server.handle {
            // Its process, where its node is this engine's.
            if let Ok(container) = docker::container(&task.container) {
                deployed.pid = container.state.pid;
                deployed.visible = visible(container.state.pid, &container.id);
            }
            deployed.node = task.node;
            deployed.stats = Some(stats);
        }
        server.await_health(started, image, args, SCHEDULE_TIMEOUT)
    }

    /// The swarm node a stack's server runs on.
    pub fn node(&self) -> Option<&str> {
        match &self.handle {
            Handle::Swarm(d) => Some(&d.node),
            _ => None,
        }
    }
}
