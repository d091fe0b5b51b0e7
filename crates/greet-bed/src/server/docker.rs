//! The docker CLI, read through its JSON output: each command the harness runs, and the
//! fields it reads of what comes back, as typed values.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::Deserialize;

/// Runs `docker args…`; its stdout, or an error with its stderr.
pub fn docker(args: &[&str]) -> Result<String> {
    let out = Command::new("docker")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context("cannot run docker")?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        bail!("docker {}: {}", args.first().unwrap_or(&""), stderr.trim())
    }
}

/// `docker service logs --raw SERVICE` (or a task's ID), read until what came is `done`, or
/// for `timeout`: what came back by then. The command can stall, before or after its last
/// line (docker/cli#4678, moby/moby#38640; seen here on a job whose tasks had completed), so
/// it is stopped once what the caller waits for is in rather than waited for.
pub fn service_logs_until(
    service: &str,
    done: impl Fn(&str) -> bool,
    timeout: Duration,
) -> Result<String> {
    let mut child = Command::new("docker")
        .args(["service", "logs", "--raw", service])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot run docker")?;
    let pipe = child.stdout.take().context("no pipe from docker")?;
    let (lines, read) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(std::io::Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + timeout;
    let mut text = String::new();
    while !done(&text) {
        let Ok(line) = read.recv_timeout(deadline.saturating_duration_since(Instant::now())) else {
            // Its end, or the time is up: the caller judges what came.
            break;
        };
        text.push_str(&line);
        text.push('\n');
    }
    let _ = child.kill();
    let _ = child.wait();
    Ok(text)
}

/// `docker args…` whose stdout is one JSON value (`inspect`, `--format '{{json .}}'`).
pub fn json<T: DeserializeOwned>(args: &[&str]) -> Result<T> {
    let out = docker(args)?;
    serde_json::from_str(out.trim())
        .with_context(|| format!("docker {}: unexpected output", args.join(" ")))
}

/// `docker args…` whose stdout is a JSON value a line (`--format '{{json .}}'` on a list).
pub fn json_lines<T: DeserializeOwned>(args: &[&str]) -> Result<Vec<T>> {
    docker(args)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .with_context(|| format!("docker {}: unexpected line {l:?}", args.join(" ")))
        })
        .collect()
}

/// The one object `docker inspect …` (or `docker node inspect …`) gives for one name.
pub fn inspect<T: DeserializeOwned>(args: &[&str]) -> Result<T> {
    let mut all: Vec<T> = json(args)?;
    if all.len() != 1 {
        bail!("docker {}: {} objects, not one", args.join(" "), all.len());
    }
    Ok(all.remove(0))
}

/// A container, as `docker inspect` shows it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Container {
    /// Its full ID.
    pub id: String,
    /// Its process.
    pub state: ContainerState,
    /// Its networks.
    pub network_settings: NetworkSettings,
}

/// A container's process.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ContainerState {
    /// Its pid as the engine's host sees it (0 when it is not running).
    pub pid: u32,
    /// Whether it runs.
    pub running: bool,
    /// Its exit code, once it has exited.
    pub exit_code: i64,
}

/// A container's networks.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct NetworkSettings {
    /// Each network by name, with the container's address on it.
    #[serde(default)]
    pub networks: BTreeMap<String, Endpoint>,
}

/// A container's address on one network.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Endpoint {
    /// Its IP address there.
    #[serde(rename = "IPAddress")]
    pub ip_address: String,
}

/// `docker inspect NAME` of a container.
pub fn container(name: &str) -> Result<Container> {
    inspect(&["inspect", "--type", "container", name])
}

/// The engine's swarm, as `docker info` shows it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Swarm {
    /// `inactive`, `pending`, `active`, `error`, `locked`.
    pub local_node_state: String,
    /// Whether this engine manages the swarm.
    pub control_available: bool,
    /// How many nodes it has.
    #[serde(default)]
    pub nodes: u64,
}

/// `docker info`'s swarm.
pub fn swarm() -> Result<Swarm> {
    json(&["info", "--format", "{{json .Swarm}}"])
}

/// A swarm node, as `docker node inspect` shows it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Node {
    /// Its labels.
    pub spec: NodeSpec,
    /// Its host.
    pub description: NodeDescription,
    /// Its address.
    pub status: NodeStatus,
}

/// A node's labels.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct NodeSpec {
    /// `greet.role` among them.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

/// A node's host.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct NodeDescription {
    /// Its host name.
    pub hostname: String,
}

/// A node's state.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct NodeStatus {
    /// `ready`, `down`, `unknown` or `disconnected`, as the managers last heard.
    #[serde(default)]
    pub state: String,
    /// Why, when it is not ready (`heartbeat failure`).
    #[serde(default)]
    pub message: String,
    /// The address the swarm reaches it at.
    pub addr: String,
}

impl Node {
    /// Whether the managers hear from it.
    pub fn ready(&self) -> bool {
        self.status.state == "ready"
    }
}

/// Every node of the swarm.
pub fn nodes() -> Result<Vec<Node>> {
    let ids = docker(&["node", "ls", "--quiet"])?;
    let mut args = vec!["node", "inspect"];
    args.extend(ids.split_whitespace());
    json(&args)
}

/// A node by ID or name.
pub fn node(name: &str) -> Result<Node> {
    inspect(&["node", "inspect", name])
}

/// A service's task, as `docker service ps` lists it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Task {
    /// Its ID.
    #[serde(rename = "ID")]
    pub id: String,
    /// `SERVICE.SLOT` (a job's slot is its index).
    pub name: String,
    /// The node it runs on.
    pub node: String,
    /// `Running 3 seconds ago`, `Complete 1 second ago`, `Failed …`.
    pub current_state: String,
    /// Why it failed, if it did.
    #[serde(default)]
    pub error: String,
}

impl Task {
    /// Its state's first word: `Running`, `Complete`, `Failed`, `Rejected`, …
    pub fn state(&self) -> &str {
        self.current_state.split_whitespace().next().unwrap_or("")
    }

    /// Whether it has ended without completing.
    pub fn failed(&self) -> bool {
        ["Failed", "Rejected", "Shutdown", "Orphaned"].contains(&self.state())
    }
}

/// The tasks of `service`, newest first.
pub fn tasks(service: &str) -> Result<Vec<Task>> {
    json_lines(&[
        "service",
        "ps",
        "--no-trunc",
        "--format",
        "{{json .}}",
        service,
    ])
}

/// The tasks of stack `stack` the managers still hold, those meant to be running only when
/// `running` (none when it is not deployed).
pub fn stack_tasks(stack: &str, running: bool) -> Vec<Task> {
    let mut args = vec!["stack", "ps", "--no-trunc", "--format", "{{json .}}"];
    if running {
        args.extend(["--filter", "desired-state=running"]);
    }
    args.push(stack);
    json_lines(&args).unwrap_or_default()
}

/// Where a service's task runs, as `docker inspect TASK` shows it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Placed {
    /// Its node's ID.
    #[serde(rename = "NodeID", default)]
    pub node_id: String,
    /// Its container.
    pub status: PlacedStatus,
}

/// A task's container.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PlacedStatus {
    /// Its container, once it has one.
    #[serde(default)]
    pub container_status: Option<ContainerStatus>,
}

/// A task's container's ID.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ContainerStatus {
    /// The container's ID.
    #[serde(rename = "ContainerID", default)]
    pub container_id: String,
}

/// `docker inspect TASK` of a task.
pub fn placed(task: &str) -> Result<Placed> {
    inspect(&["inspect", "--type", "task", task])
}

/// Whether any service carries the label of stack `stack`.
pub fn stack_has_services(stack: &str) -> Result<bool> {
    let label = format!("label=com.docker.stack.namespace={stack}");
    Ok(!docker(&["service", "ls", "--quiet", "--filter", &label])?
        .trim()
        .is_empty())
}

/// Whether `image` is on the engine.
pub fn has_image(image: &str) -> bool {
    docker(&["image", "inspect", "--format", "{{.Id}}", image]).is_ok()
}

/// Whether network `name` exists.
pub fn has_network(name: &str) -> bool {
    docker(&["network", "inspect", "--format", "{{.Id}}", name]).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields read off what `docker` prints (Engine 28's shapes, trimmed).
    #[test]
    fn reads_the_engines_json() {
        let task: Task = serde_json::from_str(
            r#"{"CurrentState":"Complete 2 seconds ago","DesiredState":"Complete","Error":"","ID":"x1","Image":"greet-agent:latest","Name":"greet-bench_load.1","Node":"n1","Ports":""}"#,
        )
        .unwrap();
        assert_eq!((task.state(), task.failed()), ("Complete", false));
        let failed: Task = serde_json::from_str(
            r#"{"CurrentState":"Failed 1 second ago","Error":"task: non-zero exit (1)","ID":"x2","Name":"s.2","Node":"n1"}"#,
        )
        .unwrap();
        assert!(failed.failed() && failed.error.contains("non-zero"));
        let container: Vec<Container> = serde_json::from_str(
            r#"[{"Id":"abc","State":{"Status":"running","Running":true,"Pid":42,"ExitCode":0},"NetworkSettings":{"Networks":{"greet":{"IPAddress":"172.18.0.2"}}}}]"#,
        )
        .unwrap();
        assert_eq!(container[0].state.pid, 42);
        assert_eq!(
            container[0].network_settings.networks["greet"].ip_address,
            "172.18.0.2"
        );
        let node: Node = serde_json::from_str(
            r#"{"ID":"n1","Spec":{"Labels":{"greet.role":"server"},"Role":"manager"},"Description":{"Hostname":"h"},"Status":{"State":"ready","Addr":"127.0.0.1"}}"#,
        )
        .unwrap();
        assert_eq!(node.spec.labels["greet.role"], "server");
        assert!(node.ready());
        let lost: Node = serde_json::from_str(
            r#"{"ID":"n2","Spec":{"Labels":{}},"Description":{"Hostname":"node2"},"Status":{"State":"down","Message":"heartbeat failure","Addr":"198.18.0.12"}}"#,
        )
        .unwrap();
        assert!(!lost.ready() && lost.status.message == "heartbeat failure");
        let placed: Placed = serde_json::from_str(
            r#"{"ID":"t","NodeID":"n1","Status":{"State":"running","ContainerStatus":{"ContainerID":"c1","PID":7}}}"#,
        )
        .unwrap();
        assert_eq!(placed.status.container_status.unwrap().container_id, "c1");
        let swarm: Swarm = serde_json::from_str(
            r#"{"NodeID":"","LocalNodeState":"inactive","ControlAvailable":false}"#,
        )
        .unwrap();
        assert_eq!(swarm.local_node_state, "inactive");
    }
}
