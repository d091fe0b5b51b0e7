//! Servers the harness runs, and the stores beside them: `binaries` finds (or builds) them,
//! `process` starts one as a child process and `container` as a container of its image, each
//! pinned to its CPUs, `swarm` as a Docker Swarm stack (from `stack`'s typed stack files);
//! [`Server`] is what each gives back: its address, its start-up time (spawn, `docker run` or
//! `docker stack deploy` → first 200 on `/health`), and a graceful stop. `stores` says how
//! PostgreSQL and Redis run beside the servers, and `provision` readies them for a scenario:
//! started here, given by URL, or deployed as a stack of their own. `docker` is the docker
//! CLI, read through its JSON.

mod binaries;
mod container;
pub mod docker;
pub mod job;
pub mod jvm;
pub mod nginx;
mod process;
pub mod provision;
mod stack;
pub mod stores;
pub mod swarm;

pub use binaries::build_command;
pub use binaries::{
    build_args, dependencies, stripped_size, without_cargo_run_env, workspace_root, Binaries,
    Program,
};
pub use container::check_docker;
pub use process::Wrap;
pub use stack::{yaml, SERVER_HOST};

use std::net::SocketAddr;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use greet_launch::process::ServerProcess;
use greet_probe::http1;
use greet_probe::tls::Trust;
use greet_server::ServerFlag;

use crate::sample::EngineStats;

use container::Container;

/// How long a server may take to answer its first `/health`.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// How a server ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// Exit code 0.
    pub success: bool,
    /// The status as people read it, e.g. `exit status: 0` or `signal: 9 (SIGKILL)`.
    pub text: String,
}

impl From<ExitStatus> for Exit {
    fn from(status: ExitStatus) -> Self {
        Self {
            success: status.success(),
            text: status.to_string(),
        }
    }
}

/// What the harness started.
#[derive(Debug)]
enum Handle {
    /// A child process.
    Process(ServerProcess),
    /// A container.
    Container(Container),
    /// The server of a swarm stack.
    Swarm(swarm::Deployed),
}

/// A server the harness started: a process, or a container running the server's image.
#[derive(Debug)]
pub struct Server {
    handle: Handle,
    addr: SocketAddr,
    startup: Duration,
    /// How many times slower than itself it runs (under an instrument): 1 but there.
    slowdown: u32,
    /// Its process is an instrument that runs the server as its child (`perf stat`).
    forked: bool,
}

impl Server {
    /// Polls `/health` at most 1 ms apart until it answers 200: start-up ends there. Over TLS
    /// when `args` turn it on (any certificate: the server made its own).
    fn await_health(
        mut self,
        started: Instant,
        what: &str,
        args: &[String],
        limit: Duration,
    ) -> Result<Self> {
        let tls_flag = ServerFlag::TlsSelfSigned.args();
        let tls = if args.iter().any(|arg| tls_flag.contains(arg)) {
            let config = greet_probe::tls::client_config(&Trust::Any, &[b"http/1.1"])
                .context("TLS client")?;
            Some(config)
        } else {
            None
        };
        for attempt in 0u64.. {
            // Asking docker whether a container is still up costs tens of milliseconds.
            if attempt % 100 == 0 || matches!(self.handle, Handle::Process(_)) {
                if let Some(exit) = self.exited() {
                    bail!(
                        "{what} exited during start-up ({}): {}",
                        exit.text,
                        self.stderr_tail()
                    );
                }
            }
            // As much longer a try as it runs slower: a TLS handshake under valgrind can
            // outlast 500 ms, and one given up on is still paid for by the server, as many
            // times as the machine's speed asks, in a count that should not follow it.
            let answer = http1::get_blocking(
                self.addr,
                "/health",
                Duration::from_millis(500) * self.slowdown,
                tls.clone(),
            );
            if answer.is_ok_and(|res| res.status() == 200) {
                self.startup = started.elapsed();
                return Ok(self);
            }
            if started.elapsed() > limit {
                bail!("{what} did not answer /health within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        unreachable!("the loop only ends by returning")
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://addr`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Its process id (for a container, its server's process as the host sees it).
    pub fn pid(&self) -> u32 {
        match &self.handle {
            Handle::Process(process) => process.pid(),
            Handle::Container(c) => c.pid,
            Handle::Swarm(d) => d.pid,
        }
    }

    /// Whether its process is this host's, for /proc to sample.
    pub fn visible(&self) -> bool {
        match &self.handle {
            Handle::Process(_) => true,
            Handle::Container(c) => c.visible,
            Handle::Swarm(d) => d.visible,
        }
    }

    /// The Docker engine's stats of a container.
    pub fn engine(&self) -> Option<&EngineStats> {
        match &self.handle {
            Handle::Process(_) => None,
            Handle::Container(c) => c.stats.as_ref(),
            Handle::Swarm(d) => d.stats.as_ref(),
        }
    }

    /// Spawn (or `docker run`) → first 200 on `/health`.
    pub fn startup(&self) -> Duration {
        self.startup
    }

    /// How many times slower than itself it runs: what its drain is given more time by.
    pub fn slowdown(&self) -> u32 {
        self.slowdown
    }

    /// How it ended, if it has.
    pub fn exited(&mut self) -> Option<Exit> {
        match &mut self.handle {
            Handle::Process(process) => process.exited().map(Exit::from),
            Handle::Container(c) => c.exited(),
            Handle::Swarm(d) => d.exited(),
        }
    }

    /// Its last lines on stderr, joined.
    pub fn stderr_tail(&self) -> String {
        match &self.handle {
            Handle::Process(process) => process.stderr_tail(20),
            Handle::Container(c) => c.log.tail(20),
            Handle::Swarm(d) => d.tail(),
        }
    }

    /// SIGTERM, then up to `grace` for a graceful exit, then SIGKILL. Under an instrument
    /// that runs it as its child, the SIGTERM goes to that child, and the instrument, which
    /// writes its totals once its child has exited, ends with the child's status.
    pub fn stop(mut self, grace: Duration) -> Result<Exit> {
        let forked = self.forked;
        match &mut self.handle {
            Handle::Process(process) if forked => {
                let child = greet_probe::procfs::children(process.pid())
                    .into_iter()
                    .next();
                if let Some(child) = child.and_then(|c| i32::try_from(c).ok()) {
                    let child = nix::unistd::Pid::from_raw(child);
                    let _ = nix::sys::signal::kill(child, nix::sys::signal::Signal::SIGTERM);
                    if let Some(status) = process.wait_timeout(grace)? {
                        return Ok(status.into());
                    }
                }
                Ok(process.stop(grace)?.into())
            }
            Handle::Process(process) => Ok(process.stop(grace)?.into()),
            Handle::Container(c) => c.stop(grace),
            Handle::Swarm(d) => {
                let exit = d.exited();
                d.remove();
                Ok(exit.unwrap_or(Exit {
                    success: true,
                    text: format!("stack {} removed", swarm::STACK),
                }))
            }
        }
    }
}

/// The children of process `pid` (an instrument's server).
fn children(pid: u32) -> Vec<nix::unistd::Pid> {
    greet_probe::procfs::children(pid)
        .into_iter()
        .filter_map(|c| i32::try_from(c).ok())
        .map(nix::unistd::Pid::from_raw)
        .collect()
}

fn signal_all(pids: &[nix::unistd::Pid], signal: nix::sys::signal::Signal) {
    for &pid in pids {
        let _ = nix::sys::signal::kill(pid, signal);
    }
}

impl Drop for Server {
    /// A process is stopped by its supervisor (an instrument's child killed first, which its
    /// supervisor does not know); a container is removed, and a stack.
    fn drop(&mut self) {
        match &mut self.handle {
            Handle::Process(process) if self.forked => {
                signal_all(&children(process.pid()), nix::sys::signal::Signal::SIGKILL);
            }
            Handle::Process(_) => {}
            Handle::Container(c) => c.remove(),
            Handle::Swarm(d) => d.remove(),
        }
    }
}

/// The image of server `short`, as docker/build-offline.sh and compose.yaml name it.
pub fn image(short: &str) -> String {
    format!("{}:latest", greet_model::plan::binary(short))
}

/// Splits `cpus` between the server (the first half, at least one) and the load generator
/// (the rest); with one CPU there is nothing to split.
pub fn split_cpus(cpus: &[usize]) -> (Vec<usize>, Vec<usize>) {
    if cpus.len() < 2 {
        return (Vec::new(), Vec::new());
    }
    let half = cpus.len() / 2;
    (cpus[..half].to_vec(), cpus[half..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_cpus() {
        assert_eq!(split_cpus(&[0]), (vec![], vec![]));
        assert_eq!(split_cpus(&[0, 1]), (vec![0], vec![1]));
        assert_eq!(split_cpus(&[0, 1, 2, 3, 4]), (vec![0, 1], vec![2, 3, 4]));
    }
}
