//! A server as a container of its image, with compose.yaml's limits.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use greet_launch::process::Log;

use crate::sample::EngineStats;

use super::docker::{self, docker};
use super::{Exit, Handle, Server, STARTUP_TIMEOUT};

/// The limits every container runs with, as in compose.yaml.
pub(crate) const CONTAINER_MEMORY: &str = "256m";
/// `ulimit -n` in containers, as in compose.yaml.
pub(crate) const CONTAINER_NOFILE: &str = "16384:16384";

/// A container of a server's image, the `docker logs --follow` that reads its stderr, and
/// the engine's stats of it.
#[derive(Debug)]
pub(super) struct Container {
    name: String,
    /// Its server's process as the engine's host sees it.
    pub(super) pid: u32,
    /// That process is this host's: /proc can sample it.
    pub(super) visible: bool,
    logs: Child,
    pub(super) log: Log,
    pub(super) stats: Option<EngineStats>,
    stopped: bool,
}

impl Container {
    /// How it ended, if it has.
    pub(super) fn exited(&self) -> Option<Exit> {
        let state = docker::container(&self.name).ok()?.state;
        (!state.running).then(|| Exit {
            success: state.exit_code == 0,
            text: format!("container exit code {}", state.exit_code),
        })
    }

    /// `docker stop`: SIGTERM, then SIGKILL after `grace`; then removed.
    pub(super) fn stop(&mut self, grace: Duration) -> Result<Exit> {
        if self.stopped {
            bail!("container {} already removed", self.name);
        }
        let secs = grace.as_secs().max(1).to_string();
        let _ = docker(&["stop", "--time", &secs, &self.name]);
        let code = docker::container(&self.name)?.state.exit_code;
        self.remove();
        Ok(Exit {
            success: code == 0,
            text: format!("container exit code {code}"),
        })
    }

    pub(super) fn remove(&mut self) {
        if !self.stopped {
            self.stats = None;
            let _ = docker(&["rm", "-f", &self.name]);
            let _ = self.logs.kill();
            let _ = self.logs.wait();
            self.stopped = true;
        }
    }
}

impl Server {
    /// Starts `image` with `args` in a container with compose.yaml's limits, pinned to
    /// `cpus`, learns its address from its logs, and waits for its first 200 on `/health`.
    /// Start-up counts from `docker run`. Without a `network`, on the host's network (loopback
    /// only: no port proxy in the path, the port its own choice); on a named one, at its
    /// address there, port 8080.
    pub fn start_container(
        image: &str,
        args: &[String],
        cpus: &[usize],
        network: Option<&str>,
    ) -> Result<Self> {
        let name = format!(
            "greet-bench-{}-{}",
            image.split(':').next().unwrap_or(image),
            std::process::id()
        );
        let _ = docker(&["rm", "-f", &name]);
        let quota = if cpus.is_empty() {
            "1".to_owned()
        } else {
            cpus.len().to_string()
        };
        let mut run: Vec<String> = [
            "run",
            "--detach",
            "--name",
            &name,
            "--network",
            network.unwrap_or("host"),
            "--cpus",
            &quota,
            // The image's health check would probe the server every second mid-level.
            "--no-healthcheck",
            "--memory",
            CONTAINER_MEMORY,
            "--ulimit",
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        run.push(format!("nofile={CONTAINER_NOFILE}"));
        if !cpus.is_empty() {
            let list: Vec<String> = cpus.iter().map(ToString::to_string).collect();
            run.extend(["--cpuset-cpus".to_owned(), list.join(",")]);
        }
        let env = match network {
            None => ["HOST=127.0.0.1", "PORT=0", "RUST_LOG=info"],
            Some(_) => ["HOST=0.0.0.0", "PORT=8080", "RUST_LOG=info"],
        };
        for env in env {
            run.extend(["--env".to_owned(), env.to_owned()]);
        }
        run.push(image.to_owned());
        run.extend(args.iter().cloned());
        let started = Instant::now();
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        docker(&run).with_context(|| format!("cannot start a container of {image}"))?;
        let inspected = docker::container(&name)?;
        let pid = inspected.state.pid;
        if pid == 0 {
            bail!("container {name} without a process");
        }
        let visible = visible(pid, &inspected.id);
        let mut logs = Command::new("docker")
            .args(["logs", "--follow", &name])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot follow the container's logs")?;
        let pipe = logs.stderr.take().context("no pipe from docker logs")?;
        let (log, addresses) = Log::watch(pipe);
        let stats = EngineStats::start(&name).ok();
        let mut server = Self {
            handle: Handle::Container(Container {
                name: name.clone(),
                pid,
                visible,
                logs,
                log,
                stats,
                stopped: false,
            }),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            startup: Duration::ZERO,
            slowdown: 1,
            forked: false,
        };
        let logged = addresses.recv_timeout(STARTUP_TIMEOUT).map_err(|_| {
            anyhow::anyhow!("{image} did not log its address: {}", server.stderr_tail())
        })?;
        server.addr = match network {
            None => logged,
            Some(network) => {
                let inspected = docker::container(&name)?;
                let ip = inspected
                    .network_settings
                    .networks
                    .get(network)
                    .and_then(|n| n.ip_address.parse().ok())
                    .with_context(|| format!("no address of {name} on network {network}"))?;
                SocketAddr::new(ip, logged.port())
            }
        };
        server.await_health(started, image, args, STARTUP_TIMEOUT)
    }
}

/// Whether the engine's `pid` of container `id` is a process of this host: it is only if that
/// process's cgroup is the container's. With a remote engine (`DOCKER_HOST=ssh://…`,
/// `tcp://…`) the pid is the other host's, and this host's process of that number, if any,
/// is another.
pub(super) fn visible(pid: u32, id: &str) -> bool {
    !id.is_empty()
        && std::fs::read_to_string(format!("/proc/{pid}/cgroup")).is_ok_and(|c| c.contains(id))
}

/// Checks that a Docker engine answers, that `images` exist, saying how to get them, and that
/// `network` does.
pub fn check_docker(images: &[String], network: Option<&str>) -> Result<()> {
    docker(&["info", "--format", "{{.ServerVersion}}"])
        .context("no Docker engine answers (`docker info` failed); --docker needs one")?;
    if let Some(network) = network.filter(|n| !docker::has_network(n)) {
        bail!("no Docker network {network}: create it with `docker network create {network}`");
    }
    if let Some(image) = images.iter().find(|i| !docker::has_image(i)) {
        bail!("image {image} not found: build the images with docker/build-offline.sh");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pid_is_a_containers_only_in_its_cgroup() {
        let me = std::process::id();
        let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        let mine = cgroup.lines().next().unwrap().rsplit('/').next().unwrap();
        assert_eq!(visible(me, mine), !mine.is_empty());
        assert!(!visible(
            me,
            "fa3ff81ffd535ae530bf3d6aec384e9e8740b1ccf5688593268a28f373b449b4"
        ));
        assert!(!visible(u32::MAX, "anything"));
    }
}
