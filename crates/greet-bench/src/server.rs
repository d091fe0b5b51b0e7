//! Server binaries and images: finding (or building) them, starting one as a process or as a
//! container, pinned to its CPUs, and timing its start-up; stopping it gracefully. Processes
//! go through the workspace's one supervisor (`greet_probe::process`): started with
//! `--port 0`, their address read from their start-up line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use greet_probe::http1;
use greet_probe::process::{Launch, Log, ServerProcess};

use crate::plan::{package, Bins};

/// How long a server may take to answer its first `/health`.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Where server binaries are looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binaries {
    /// In this directory.
    Dir(PathBuf),
    /// Beside the harness, then on `PATH` (an installed harness).
    Search,
}

impl Binaries {
    /// Where the binaries of `shorts` are, building them first when `bins` says so and the
    /// harness runs from its workspace's target directory.
    pub fn prepare(bins: &Bins, shorts: &[String], quiet: bool) -> Result<Self> {
        if let Bins::Dir(dir) = bins {
            return Ok(Self::Dir(dir.clone()));
        }
        let Some(target) = workspace_target_dir() else {
            return Ok(Self::Search);
        };
        if *bins == Bins::Build && !shorts.is_empty() {
            if !quiet {
                eprintln!(
                    "greet-bench: building the release servers ({})",
                    shorts.join(", ")
                );
            }
            build(shorts, quiet)?;
        }
        Ok(Self::Dir(target.join("release")))
    }

    /// The path of server `short`'s binary, or an error that says how to get it.
    pub fn locate(&self, short: &str) -> Result<PathBuf> {
        let name = package(short);
        match self {
            Self::Dir(dir) => {
                let path = dir.join(&name);
                if path.is_file() {
                    Ok(path)
                } else {
                    bail!(
                        "{name} not found in {}: build it with `cargo build --release -p {name}`",
                        dir.display()
                    )
                }
            }
            Self::Search => {
                let beside = std::env::current_exe()
                    .ok()
                    .and_then(|exe| exe.parent().map(Path::to_path_buf));
                let path_dirs = std::env::var_os("PATH")
                    .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
                    .unwrap_or_default();
                beside
                    .into_iter()
                    .chain(path_dirs)
                    .map(|dir| dir.join(&name))
                    .find(|path| path.is_file())
                    .with_context(|| {
                        format!(
                            "{name} is neither beside greet-bench nor on PATH: install it \
                             (`cargo install --path crates/{name}`) or pass --bin-dir DIR"
                        )
                    })
            }
        }
    }
}

/// The target directory the harness was built into, when it runs from there and its
/// workspace is still where it was built: cargo marks a target directory with CACHEDIR.TAG.
fn workspace_target_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let target = exe.parent()?.parent()?;
    (target.join("CACHEDIR.TAG").is_file() && workspace_root().is_some())
        .then(|| target.to_path_buf())
}

/// The workspace this harness was built from, if it is still there.
fn workspace_root() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join("Cargo.toml").is_file().then_some(root)
}

/// Builds the release binaries of `shorts` with cargo (a no-op when they are fresh); cargo's
/// own progress goes to stderr.
fn build(shorts: &[String], quiet: bool) -> Result<()> {
    let Some(root) = workspace_root() else {
        return Ok(());
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root).args(["build", "--release"]);
    if quiet {
        cmd.arg("--quiet");
    }
    for short in shorts {
        cmd.args(["-p", &package(short)]);
    }
    let status = cmd
        .status()
        .context("cannot run cargo to build the servers")?;
    if !status.success() {
        bail!("building the servers failed ({status})");
    }
    Ok(())
}

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

/// The limits every container runs with, as in compose.yaml.
pub const CONTAINER_MEMORY: &str = "256m";
/// `ulimit -n` in containers, as in compose.yaml.
pub const CONTAINER_NOFILE: &str = "16384:16384";

/// What the harness started.
enum Handle {
    /// A child process.
    Process(ServerProcess),
    /// A container.
    Container(Container),
}

/// A container of a server's image, and the `docker logs --follow` that reads its stderr.
struct Container {
    name: String,
    /// Its server's process as the host sees it.
    pid: u32,
    logs: Child,
    log: Log,
    stopped: bool,
}

/// A server the harness started: a process, or a container running the server's image.
pub struct Server {
    handle: Handle,
    addr: SocketAddr,
    startup: Duration,
}

impl Server {
    /// Starts `bin` with `args` on a port of its own choosing on loopback, pinned to `cpus`
    /// (none: not pinned), and waits for its first 200 on `/health`, polling at most 1 ms
    /// apart. Start-up counts from the spawn.
    pub fn start(bin: &Path, args: &[String], cpus: &[usize]) -> Result<Self> {
        let process = Launch::new(bin)
            .args(["--host", "127.0.0.1"])
            .args(args.iter().cloned())
            .cpus(cpus)
            .timeout(STARTUP_TIMEOUT)
            .start()?;
        let (addr, spawned) = (process.addr(), process.spawned_at());
        Self {
            handle: Handle::Process(process),
            addr,
            startup: Duration::ZERO,
        }
        .await_health(spawned, &bin.display().to_string())
    }

    /// Starts `image` with `args` in a container on the host's network (loopback only: no
    /// port proxy in the path), with compose.yaml's limits and pinned to `cpus`, learns its
    /// port from its logs, and waits for its first 200 on `/health`. Start-up counts from
    /// `docker run`.
    pub fn start_container(image: &str, args: &[String], cpus: &[usize]) -> Result<Self> {
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
            "host",
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
        for env in ["HOST=127.0.0.1", "PORT=0", "RUST_LOG=info"] {
            run.extend(["--env".to_owned(), env.to_owned()]);
        }
        run.push(image.to_owned());
        run.extend(args.iter().cloned());
        let started = Instant::now();
        let run: Vec<&str> = run.iter().map(String::as_str).collect();
        docker(&run).with_context(|| format!("cannot start a container of {image}"))?;
        let pid = docker(&["inspect", "--format", "{{.State.Pid}}", &name])?
            .trim()
            .parse::<u32>()
            .context("container without a process")?;
        let mut logs = Command::new("docker")
            .args(["logs", "--follow", &name])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot follow the container's logs")?;
        let pipe = logs.stderr.take().context("no pipe from docker logs")?;
        let (log, addresses) = Log::watch(pipe);
        let mut server = Self {
            handle: Handle::Container(Container {
                name,
                pid,
                logs,
                log,
                stopped: false,
            }),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            startup: Duration::ZERO,
        };
        server.addr = addresses.recv_timeout(STARTUP_TIMEOUT).map_err(|_| {
            anyhow::anyhow!("{image} did not log its address: {}", server.stderr_tail())
        })?;
        server.await_health(started, image)
    }

    /// Polls `/health` at most 1 ms apart until it answers 200: start-up ends there.
    fn await_health(mut self, started: Instant, what: &str) -> Result<Self> {
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
            let answer = http1::get_blocking(self.addr, "/health", Duration::from_millis(500));
            if answer.is_ok_and(|res| res.status() == 200) {
                self.startup = started.elapsed();
                return Ok(self);
            }
            if started.elapsed() > STARTUP_TIMEOUT {
                bail!("{what} did not answer /health within {STARTUP_TIMEOUT:?}");
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
        }
    }

    /// Spawn (or `docker run`) → first 200 on `/health`.
    pub fn startup(&self) -> Duration {
        self.startup
    }

    /// How it ended, if it has.
    pub fn exited(&mut self) -> Option<Exit> {
        match &mut self.handle {
            Handle::Process(process) => process.exited().map(Exit::from),
            Handle::Container(c) => {
                let state = docker(&[
                    "inspect",
                    "--format",
                    "{{.State.Running}} {{.State.ExitCode}}",
                    &c.name,
                ])
                .ok()?;
                let (running, code) = state.trim().split_once(' ')?;
                (running == "false").then(|| Exit {
                    success: code == "0",
                    text: format!("container exit code {code}"),
                })
            }
        }
    }

    /// Its last lines on stderr, joined.
    pub fn stderr_tail(&self) -> String {
        match &self.handle {
            Handle::Process(process) => process.stderr_tail(20),
            Handle::Container(c) => c.log.tail(20),
        }
    }

    /// SIGTERM, then up to `grace` for a graceful exit, then SIGKILL.
    pub fn stop(mut self, grace: Duration) -> Result<Exit> {
        self.terminate(grace)
    }

    fn terminate(&mut self, grace: Duration) -> Result<Exit> {
        match &mut self.handle {
            Handle::Process(process) => Ok(process.stop(grace)?.into()),
            Handle::Container(c) => {
                if c.stopped {
                    bail!("container {} already removed", c.name);
                }
                // `docker stop` sends SIGTERM, then SIGKILL after the grace period.
                let secs = grace.as_secs().max(1).to_string();
                let _ = docker(&["stop", "--time", &secs, &c.name]);
                let code = docker(&["inspect", "--format", "{{.State.ExitCode}}", &c.name])?;
                c.remove();
                let code = code.trim().to_owned();
                Ok(Exit {
                    success: code == "0",
                    text: format!("container exit code {code}"),
                })
            }
        }
    }
}

impl Container {
    fn remove(&mut self) {
        if !self.stopped {
            let _ = docker(&["rm", "-f", &self.name]);
            let _ = self.logs.kill();
            let _ = self.logs.wait();
            self.stopped = true;
        }
    }
}

impl Drop for Server {
    /// A process is stopped by its supervisor; a container is removed.
    fn drop(&mut self) {
        if let Handle::Container(c) = &mut self.handle {
            c.remove();
        }
    }
}

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

/// Checks that a Docker engine answers and that `images` exist, saying how to get them.
pub fn check_docker(images: &[String]) -> Result<()> {
    docker(&["info", "--format", "{{.ServerVersion}}"])
        .context("no Docker engine answers (`docker info` failed); --docker needs one")?;
    for image in images {
        if docker(&["image", "inspect", "--format", "{{.Id}}", image]).is_err() {
            bail!("image {image} not found: build the images with docker/build-offline.sh");
        }
    }
    Ok(())
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

    #[test]
    fn a_missing_binary_says_how_to_get_it() {
        let err = Binaries::Dir(PathBuf::from("/nonexistent"))
            .locate("axum")
            .unwrap_err()
            .to_string();
        assert!(err.contains("cargo build --release -p greet-axum"), "{err}");
        let err = Binaries::Search
            .locate("no-such-server")
            .unwrap_err()
            .to_string();
        assert!(err.contains("--bin-dir") && err.contains("PATH"), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }
}
