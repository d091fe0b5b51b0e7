//! A server as the one service of a Docker Swarm stack (`--swarm`): deployed with
//! `docker stack deploy` from a stack file made here (compose.yaml's limits, the image's own
//! health check off so it does not probe mid-level), on an overlay network the load's agents
//! join, its port published on its node (mode host: no routing mesh between the harness's
//! checks and the server), and removed with `docker stack rm` however the run ends.
//!
//! It is watched from beside it: a `greet-bench watch` task on its node reads its
//! container's control group (CPU, memory, tasks: what `docker stats` shows), and the harness
//! follows that task's log, wherever the node is. /proc is read too where its process is
//! this host's.
//!
//! The agents reach it by name with `endpoint_mode: dnsrr`: the name resolves to the task's
//! own address, with no virtual IP and IPVS between them and the server (where the kernel
//! has no IPVS, as on this project's machine, a virtual IP does not even answer: "No route
//! to host").

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::sample::EngineStats;

use super::container::{docker, visible, CONTAINER_MEMORY};
use super::{Exit, Handle, Server};

/// The stack's name: one at a time per swarm.
pub const STACK: &str = "greet-bench";
/// The stack's overlay network, which the agents' job joins.
pub const NETWORK: &str = "greet-bench_net";
/// The server's service, by which the agents reach it on [`NETWORK`].
pub const SERVICE: &str = "greet-bench_server";
/// The task beside the server that watches its container (`greet-bench watch`).
pub const WATCH: &str = "greet-bench_watch";
/// The server's name on [`NETWORK`].
pub const SERVER_HOST: &str = "server";
/// The agents' image, as docker/build-offline.sh tags it.
pub const AGENT_IMAGE: &str = "greet-bench:latest";

/// How long a stack may take to have its server task running: scheduling, and on another
/// node the image's first start.
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
        let ids = docker(&["node", "ls", "--quiet"])?;
        let mut labelled = Vec::new();
        for id in ids.split_whitespace() {
            let line = docker(&[
                "node",
                "inspect",
                "--format",
                "{{.Description.Hostname}} {{index .Spec.Labels \"greet.role\"}}",
                id,
            ])?;
            let mut parts = line.split_whitespace();
            if let (Some(host), Some(role)) = (parts.next(), parts.next()) {
                labelled.push((host.to_owned(), role.to_owned()));
            }
        }
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

/// Checks, for a run of servers `shorts` (and `targets` given or not), that the engine
/// manages a swarm, that the servers' and the agents' images are there, and that no stack of
/// ours is deployed: each a one-line error saying what to do.
pub fn preflight(shorts: &[&str], targets: bool) -> Result<()> {
    if targets {
        bail!("--swarm deploys the servers it loads: a --target cannot be loaded from the swarm");
    }
    let mut images: Vec<String> = shorts.iter().map(|s| super::image(s)).collect();
    images.dedup();
    images.push(AGENT_IMAGE.to_owned());
    let state = docker(&[
        "info",
        "--format",
        "{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}",
    ])
    .context("no Docker engine answers (`docker info` failed); --swarm needs one")?;
    if state.trim() != "active true" {
        bail!(
            "--swarm: this engine is not a swarm manager ({}): `docker swarm init`, or point \
             DOCKER_HOST at a manager",
            state.trim()
        );
    }
    for image in &images {
        if docker(&["image", "inspect", "--format", "{{.Id}}", image]).is_err() {
            bail!("image {image} not found: build the images with docker/build-offline.sh");
        }
    }
    let ours = docker(&[
        "service",
        "ls",
        "--quiet",
        "--filter",
        &format!("label=com.docker.stack.namespace={STACK}"),
    ])?;
    if !ours.trim().is_empty() || docker(&["network", "inspect", NETWORK]).is_ok() {
        bail!(
            "a stack named {STACK} is already deployed: remove it with `docker stack rm {STACK}` \
             (another run may be using it)"
        );
    }
    Ok(())
}

/// Checks, for a run that deploys the stores, that their images are there and that no
/// stores' stack is deployed ([`preflight`] has checked the swarm).
pub fn preflight_stores() -> Result<()> {
    for image in STORE_IMAGES {
        if docker(&["image", "inspect", "--format", "{{.Id}}", image]).is_err() {
            bail!("image {image} not found: build the images with docker/build-offline.sh");
        }
    }
    if docker(&["network", "inspect", STORES_NETWORK]).is_ok()
        || !docker(&[
            "service",
            "ls",
            "--quiet",
            "--filter",
            &format!("label=com.docker.stack.namespace={STORES_STACK}"),
        ])?
        .trim()
        .is_empty()
    {
        bail!(
            "a stack named {STORES_STACK} is already deployed: remove it with `docker stack rm \
             {STORES_STACK}` (another run may be using it)"
        );
    }
    Ok(())
}

/// The stack file of a server: `image` run with `args`, published on `port` of its node,
/// on the stack's network and, when given, the stores' (`join`).
pub fn stack_file(
    image: &str,
    args: &[String],
    port: u16,
    (constraint, join): (Option<&str>, Option<&str>),
) -> String {
    let command: Vec<String> = args
        .iter()
        .map(|a| serde_json::to_string(a).expect("a string"))
        .collect();
    let placement = constraint.map_or(String::new(), |c| {
        format!("      placement:\n        constraints: [\"{c}\"]\n")
    });
    let (networks, external) = match join {
        Some(network) => (
            "[net, stores]",
            format!("  stores:\n    external: true\n    name: {network}\n"),
        ),
        None => ("[net]", String::new()),
    };
    format!(
        "version: \"3.8\"
services:
  {SERVER_HOST}:
    image: {image}
    command: [{command}]
    environment:
      HOST: 0.0.0.0
      PORT: \"8080\"
      RUST_LOG: info
    healthcheck:
      disable: true
    ports:
      - target: 8080
        published: {port}
        protocol: tcp
        mode: host
    networks: {networks}
    deploy:
      replicas: 1
      endpoint_mode: dnsrr
      restart_policy:
        condition: none
{placement}      resources:
        limits:
          cpus: \"1\"
          memory: {memory}
networks:
  net:
    driver: overlay
    attachable: true
{external}",
        command = command.join(", "),
        memory = CONTAINER_MEMORY.to_uppercase().trim_end_matches('B'),
    )
}

/// The stores' stack (business on a swarm): PostgreSQL and Redis, deployed once per run and
/// removed with its end.
pub const STORES_STACK: &str = "greet-bench-stores";
/// Its overlay network, which the servers' stacks join.
pub const STORES_NETWORK: &str = "greet-bench-stores_net";
/// The stores' images, as docker/build-offline.sh tags them.
pub const STORE_IMAGES: [&str; 2] = ["postgres:15", "redis:7"];

/// The stores' stack file: PostgreSQL and Redis as compose.yaml runs them (on nodes labelled
/// `greet.role=store` when `constraint` says so), each ready once its health check passes.
pub fn stores_stack_file(constraint: Option<&str>) -> String {
    let quoted = |items: &[&str]| {
        let items: Vec<String> = items
            .iter()
            .map(|a| serde_json::to_string(a).expect("a string"))
            .collect();
        format!("[{}]", items.join(", "))
    };
    let environment: String = super::stores::POSTGRES_ENV
        .iter()
        .map(|(k, v)| format!("      {k}: \"{v}\"\n"))
        .collect();
    let deploy = format!(
        "    networks: [net]
    deploy:
      replicas: 1
      endpoint_mode: dnsrr
      restart_policy:
        condition: none
{}",
        constraint.map_or(String::new(), |c| format!(
            "      placement:\n        constraints: [\"{c}\"]\n"
        ))
    );
    let health = |test: &[&str]| {
        format!(
            "    healthcheck:
      test: {}
      interval: 250ms
      timeout: 2s
      retries: 240
",
            quoted(test)
        )
    };
    format!(
        "version: \"3.8\"
services:
  postgres:
    image: {postgres}
    environment:
{environment}{postgres_health}{deploy}  redis:
    image: {redis}
    command: {redis_args}
{redis_health}{deploy}networks:
  net:
    driver: overlay
    attachable: true
",
        postgres = STORE_IMAGES[0],
        redis = STORE_IMAGES[1],
        postgres_health = health(&["CMD", "pg_isready", "-U", "greet", "-d", "greet"]),
        redis_health = health(&["CMD", "redis-cli", "ping"]),
        redis_args = quoted(&super::stores::REDIS_ARGS),
    )
}

/// The stores' stack, deployed: each store watched from beside it. Removed when dropped
/// (the run's end, a failure, Ctrl-C).
#[derive(Debug)]
pub struct Stores {
    /// Each store's watch, and the node it runs on.
    pub watched: Vec<(String, EngineStats)>,
}

impl Stores {
    /// Deploys the stores' stack and waits until both are healthy.
    pub fn deploy(nodes: &Nodes) -> Result<Self> {
        let constraint = nodes.constraint("store");
        let started = Instant::now();
        let mut stores = Self {
            watched: Vec::new(),
        };
        deploy(STORES_STACK, &stores_stack_file(constraint.as_deref()))?;
        for name in ["postgres", "redis"] {
            let service = format!("{STORES_STACK}_{name}");
            let (node, node_id, container) = running_task(&service, name, started)?;
            let stats = watch(
                STORES_STACK,
                &format!("{STORES_STACK}_watch-{name}"),
                (&node_id, &container),
            )?;
            stores.watched.push((node, stats));
        }
        Ok(stores)
    }

    /// The nodes the stores run on, PostgreSQL's first.
    pub fn nodes(&self) -> Vec<&str> {
        self.watched.iter().map(|(n, _)| n.as_str()).collect()
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
        let state = docker(&[
            "service",
            "ps",
            "--no-trunc",
            "--format",
            "{{.CurrentState}}|{{.Error}}",
            SERVICE,
        ])
        .ok()?;
        let line = state.lines().next()?.to_owned();
        (!line.starts_with("Running")).then(|| Exit {
            success: line.starts_with("Complete"),
            text: format!("task {}", line.trim_end_matches('|')),
        })
    }

    /// The server's last log lines.
    pub(super) fn tail(&self) -> String {
        docker(&["service", "logs", "--raw", "--tail", "20", SERVICE])
            .map(|out| out.lines().collect::<Vec<_>>().join(" / "))
            .unwrap_or_default()
    }

    /// `docker stack rm`, then waits for the stack's network to go (the removal is
    /// asynchronous; a stack deployed again too soon finds it still there).
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

/// Removes stack `stack` and waits up to 30 s for its network `network` to be gone (the
/// removal is asynchronous; a stack deployed again too soon finds it still there).
fn remove(stack: &str, network: &str) {
    let _ = docker(&["stack", "rm", stack]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline && docker(&["network", "inspect", network]).is_ok() {
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Deploys `file` as stack `stack`.
fn deploy(stack: &str, file: &str) -> Result<()> {
    let path = std::env::temp_dir().join(format!("{stack}-{}.yaml", std::process::id()));
    std::fs::write(&path, file).context("cannot write the stack file")?;
    let deployed = docker(&[
        "stack",
        "deploy",
        "--compose-file",
        &path.to_string_lossy(),
        stack,
    ]);
    let _ = std::fs::remove_file(&path);
    deployed.with_context(|| format!("cannot deploy stack {stack}"))?;
    Ok(())
}

/// Where a service's one task runs once it is running (a task with a health check runs once
/// healthy): its node's name, node ID and container ID. Failed, rejected or not running
/// within [`SCHEDULE_TIMEOUT`] of `started` is an error naming `what`.
fn running_task(service: &str, what: &str, started: Instant) -> Result<(String, String, String)> {
    let (node, task) = loop {
        let tasks = docker(&[
            "service",
            "ps",
            "--no-trunc",
            "--format",
            "{{.ID}}|{{.Node}}|{{.CurrentState}}|{{.Error}}",
            service,
        ])?;
        let line = tasks.lines().next().unwrap_or_default().to_owned();
        let mut parts = line.split('|');
        let (task, node, state, error) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        if state.starts_with("Running") {
            break (node.to_owned(), task.to_owned());
        }
        if state.starts_with("Failed") || state.starts_with("Rejected") {
            bail!("{what}'s task {state}: {error}");
        }
        if started.elapsed() > SCHEDULE_TIMEOUT {
            bail!("{what}'s task not running within {SCHEDULE_TIMEOUT:?} ({state} {error})");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let placed = docker(&[
        "inspect",
        "--format",
        "{{.NodeID}} {{.Status.ContainerStatus.ContainerID}}",
        &task,
    ])?;
    match placed.trim().split_once(' ') {
        Some((node_id, container)) if !node_id.is_empty() && !container.is_empty() => {
            Ok((node, node_id.to_owned(), container.to_owned()))
        }
        _ => bail!("{what}'s task {task} has no node or container: {placed:?}"),
    }
}

/// Starts service `name` of stack `stack`: a task of the agents' image on node `node_id` (by
/// ID, so beside the container wherever it runs) that prints container `container_id`'s
/// figures from the host's control groups (`greet-bench watch`), and follows its log.
/// Labelled as the stack's, it goes with `docker stack rm`.
fn watch(stack: &str, name: &str, (node_id, container_id): (&str, &str)) -> Result<EngineStats> {
    let label = format!("com.docker.stack.namespace={stack}");
    let constraint = format!("node.id=={node_id}");
    docker(&[
        "service",
        "create",
        "--detach",
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
        container_id,
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
        let file = stack_file(image, args, port, (constraint.as_deref(), join));
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
        };
        deployed?;
        let (node, node_id, container_id) = running_task(SERVICE, image, started)?;
        let ip = docker(&["node", "inspect", "--format", "{{.Status.Addr}}", &node])?;
        let ip = ip
            .trim()
            .parse()
            .with_context(|| format!("node {node} has no address: {ip:?}"))?;
        server.addr = SocketAddr::new(ip, port);
        let stats = watch(STACK, WATCH, (&node_id, &container_id))?;
        if let Handle::Swarm(deployed) = &mut server.handle {
            deployed.node = node;
            deployed.stats = Some(stats);
            // Its process, where its node is this engine's.
            if let Ok(pid) = docker(&["inspect", "--format", "{{.State.Pid}}", &container_id]) {
                deployed.pid = pid.trim().parse().unwrap_or(0);
                deployed.visible = visible(deployed.pid, &container_id);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_file_places_and_publishes_the_server() {
        let file = stack_file(
            "greet-hyper:latest",
            &["--delay-ms".to_owned(), "1000".to_owned()],
            18080,
            (Some("node.labels.greet.role==server"), None),
        );
        assert!(
            file.contains(r#"command: ["--delay-ms", "1000"]"#),
            "{file}"
        );
        assert!(
            file.contains("published: 18080") && file.contains("mode: host"),
            "{file}"
        );
        assert!(file.contains(r#"constraints: ["node.labels.greet.role==server"]"#));
        assert!(file.contains("memory: 256M\n"), "{file}");
        assert!(file.contains("networks: [net]\n"), "{file}");
        let anywhere = stack_file("greet-hyper:latest", &[], 1, (None, Some(STORES_NETWORK)));
        assert!(!anywhere.contains("placement"), "{anywhere}");
        assert!(
            anywhere.contains("networks: [net, stores]")
                && anywhere.contains("external: true\n    name: greet-bench-stores_net"),
            "{anywhere}"
        );
    }

    #[test]
    fn the_stores_stack_runs_them_as_compose_does() {
        let file = stores_stack_file(Some("node.labels.greet.role==store"));
        for wanted in [
            "image: postgres:15",
            "POSTGRES_PASSWORD: \"greet\"",
            "test: [\"CMD\", \"pg_isready\", \"-U\", \"greet\", \"-d\", \"greet\"]",
            "image: redis:7",
            "\"--maxmemory-policy\", \"allkeys-lru\"",
            "endpoint_mode: dnsrr",
            "constraints: [\"node.labels.greet.role==store\"]",
        ] {
            assert!(file.contains(wanted), "{wanted} not in\n{file}");
        }
        // The servers' URLs name these services.
        assert!(crate::server::stores::DATABASE_URL.contains("@postgres:5432/"));
        assert!(crate::server::stores::REDIS_URL.starts_with("redis://redis:"));
    }
}
