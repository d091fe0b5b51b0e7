//! Server binaries and images: finding (or building) them, starting one, as a process or a
//! container, pinned to its CPUs and timing its start-up, stopping it gracefully.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use nix::sched::{sched_setaffinity, CpuSet};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// The server crates the harness knows, by short name.
pub const KNOWN: [&str; 3] = ["axum", "actix", "hyper"];

/// How long a server may take to answer its first `/health`.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// The package (and binary) name of server `short`: `axum` → `greet-axum`.
pub fn package(short: &str) -> String {
    format!("greet-{short}")
}

/// Where the release server binaries are: `--bin-dir`, or `target/release` of the target
/// directory this harness was built into.
pub fn default_bin_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find the harness's own executable")?;
    let profile_dir = exe.parent().context("executable without a directory")?;
    let target = profile_dir
        .parent()
        .context("executable outside a target directory")?;
    Ok(target.join("release"))
}

/// The workspace this harness was built from, if it is still there.
fn workspace_root() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join("Cargo.toml").is_file().then_some(root)
}

/// Builds the release binaries of `shorts` with cargo (a no-op when they are fresh); cargo's
/// own progress goes to stderr.
pub fn build(shorts: &[&str], quiet: bool) -> Result<()> {
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

/// The path of server `short` in `dir`, or an error that says how to build it.
pub fn locate(dir: &Path, short: &str) -> Result<PathBuf> {
    let path = dir.join(package(short));
    if path.is_file() {
        Ok(path)
    } else {
        bail!(
            "{} not found in {}: build it with `cargo build --release -p {}`",
            package(short),
            dir.display(),
            package(short)
        )
    }
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
    Process(Child),
    /// A container, by name; `pid` is its server's process as the host sees it.
    Container {
        name: String,
        pid: u32,
        stopped: bool,
    },
}

/// A server the harness started: a process, or a container running the server's image.
pub struct ServerProcess {
    handle: Handle,
    addr: SocketAddr,
    startup: Duration,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl ServerProcess {
    /// Starts `bin` with `args` on a free loopback port, pinned to `cpus` (none: not
    /// pinned), and waits for its first 200 on `/health`, polling at most 1 ms apart.
    pub fn start(bin: &Path, args: &[String], cpus: &[usize]) -> Result<Self> {
        let addr = free_addr()?;
        let mut cmd = Command::new(bin);
        cmd.args(["--host", "127.0.0.1", "--port", &addr.port().to_string()])
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let cpus = cpus.to_vec();
        // The child inherits the affinity of the thread that forks it: fork from a thread of
        // its own, pinned to the server's CPUs, so the harness's threads stay where they are.
        let (mut child, started) = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    if !cpus.is_empty() {
                        pin_current_thread(&cpus)?;
                    }
                    let started = Instant::now();
                    let child = cmd
                        .spawn()
                        .with_context(|| format!("cannot start {}", bin.display()))?;
                    Ok::<_, anyhow::Error>((child, started))
                })
                .join()
                .map_err(|_| anyhow::anyhow!("spawning thread panicked"))?
        })?;

        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(pipe) = child.stderr.take() {
            let tail = Arc::clone(&stderr);
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
                    if tail.len() == 20 {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            });
        }
        let server = Self {
            handle: Handle::Process(child),
            addr,
            startup: Duration::ZERO,
            stderr,
        };
        server.await_health(started, &bin.display().to_string())
    }

    /// Starts `image` with `args` in a container on the host's network (loopback only: no
    /// port proxy in the path), with compose.yaml's limits and pinned to `cpus`, and waits for
    /// its first 200 on `/health`. Start-up counts from `docker run`.
    pub fn start_container(image: &str, args: &[String], cpus: &[usize]) -> Result<Self> {
        let addr = free_addr()?;
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
        for env in [
            "HOST=127.0.0.1".to_owned(),
            format!("PORT={}", addr.port()),
            "RUST_LOG=warn".to_owned(),
        ] {
            run.extend(["--env".to_owned(), env]);
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
        let server = Self {
            handle: Handle::Container {
                name,
                pid,
                stopped: false,
            },
            addr,
            startup: Duration::ZERO,
            stderr: Arc::new(Mutex::new(VecDeque::new())),
        };
        server.await_health(started, image)
    }

    /// Polls `/health` at most 1 ms apart until it answers 200: start-up ends there.
    fn await_health(mut self, started: Instant, what: &str) -> Result<Self> {
        for attempt in 0u64.. {
            // Asking docker whether a container is still up costs tens of milliseconds.
            if attempt % 100 == 0 || matches!(self.handle, Handle::Process(_)) {
                if let Some(exit) = self.exited() {
                    std::thread::sleep(Duration::from_millis(50));
                    bail!(
                        "{what} exited during start-up ({}): {}",
                        exit.text,
                        self.stderr_tail()
                    );
                }
            }
            if greet_core::net::probe_health(self.addr, Duration::from_millis(500)) {
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

    /// Its process id (for a container, its server's process as the host sees it).
    pub fn pid(&self) -> u32 {
        match &self.handle {
            Handle::Process(child) => child.id(),
            Handle::Container { pid, .. } => *pid,
        }
    }

    /// Spawn (or `docker run`) → first 200 on `/health`.
    pub fn startup(&self) -> Duration {
        self.startup
    }

    /// How it ended, if it has.
    pub fn exited(&mut self) -> Option<Exit> {
        match &mut self.handle {
            Handle::Process(child) => child.try_wait().ok().flatten().map(Exit::from),
            Handle::Container { name, .. } => {
                let state = docker(&[
                    "inspect",
                    "--format",
                    "{{.State.Running}} {{.State.ExitCode}}",
                    name,
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
        if let Handle::Container { name, .. } = &self.handle {
            return docker_output(&["logs", "--tail", "20", name])
                .map(|text| text.lines().collect::<Vec<_>>().join(" | "))
                .unwrap_or_default();
        }
        let tail = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        tail.iter().cloned().collect::<Vec<_>>().join(" | ")
    }

    /// SIGTERM, then waits up to `grace` for a graceful exit, then SIGKILL.
    pub fn stop(mut self, grace: Duration) -> Result<Exit> {
        self.terminate(grace)
    }

    fn terminate(&mut self, grace: Duration) -> Result<Exit> {
        match &mut self.handle {
            Handle::Process(child) => {
                if let Some(status) = child.try_wait()? {
                    return Ok(status.into());
                }
                if let Ok(pid) = i32::try_from(child.id()) {
                    let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
                }
                let deadline = Instant::now() + grace;
                while Instant::now() < deadline {
                    if let Some(status) = child.try_wait()? {
                        return Ok(status.into());
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                child.kill()?;
                Ok(child.wait()?.into())
            }
            Handle::Container { name, stopped, .. } => {
                if *stopped {
                    bail!("container {name} already removed");
                }
                // `docker stop` sends SIGTERM, then SIGKILL after the grace period.
                let secs = grace.as_secs().max(1).to_string();
                let _ = docker(&["stop", "--time", &secs, name]);
                let code = docker(&["inspect", "--format", "{{.State.ExitCode}}", name])?;
                let _ = docker(&["rm", "-f", name]);
                *stopped = true;
                let code = code.trim().to_owned();
                Ok(Exit {
                    success: code == "0",
                    text: format!("container exit code {code}"),
                })
            }
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        match &self.handle {
            Handle::Container {
                name,
                stopped: false,
                ..
            } => {
                let _ = docker(&["rm", "-f", name]);
            }
            Handle::Container { .. } => {}
            Handle::Process(_) => {
                let _ = self.terminate(Duration::from_secs(2));
            }
        }
    }
}

/// A free loopback address: bound, read, released.
fn free_addr() -> Result<SocketAddr> {
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .context("no free port")?
        .port();
    Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
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

/// Runs `docker args…` and returns stdout and stderr together (what `docker logs` prints).
fn docker_output(args: &[&str]) -> Result<String> {
    let out = Command::new("docker")
        .args(args)
        .stdin(Stdio::null())
        .output()?;
    Ok(format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
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

/// Pins the calling thread (and the threads and processes it creates after) to `cpus`.
pub fn pin_current_thread(cpus: &[usize]) -> Result<()> {
    let mut set = CpuSet::new();
    for &cpu in cpus {
        set.set(cpu).with_context(|| format!("no CPU {cpu}"))?;
    }
    sched_setaffinity(Pid::from_raw(0), &set).context("cannot set CPU affinity")
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    match nix::sched::sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
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
    fn a_missing_binary_says_how_to_build_it() {
        let err = locate(Path::new("/nonexistent"), "axum")
            .unwrap_err()
            .to_string();
        assert!(err.contains("cargo build --release -p greet-axum"), "{err}");
    }
}
