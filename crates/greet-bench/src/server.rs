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
use greet_probe::process::{which, Launch, Log, ServerProcess};

use crate::jvm::Peers;
use crate::plan::{is_peer, package, Bins};
use crate::sample::EngineStats;

/// How long a server may take to answer its first `/health`.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Where server binaries are looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    /// In this directory.
    Dir(PathBuf),
    /// Beside the harness, then on `PATH` (an installed harness).
    Search,
}

/// A program that becomes a server when given the server flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The executable.
    pub path: PathBuf,
    /// Arguments before the server flags (`-cp … Main` for a JVM peer).
    pub leading: Vec<String>,
}

/// Where the servers of a run come from: the workspace's binaries, and the JVM peers when
/// the run has any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binaries {
    /// The workspace's server binaries.
    pub rust: Where,
    /// The compiled JVM peers, or why there are none.
    pub peers: Result<Peers, String>,
}

impl Binaries {
    /// Where the binaries of `shorts` are, building them first when `bins` says so and the
    /// harness runs from its workspace's target directory; the JVM peers among `shorts` are
    /// compiled with the machine's JDK.
    pub fn prepare(bins: &Bins, shorts: &[String], quiet: bool) -> Result<Self> {
        let (peers, rust): (Vec<String>, Vec<String>) =
            shorts.iter().cloned().partition(|s| is_peer(s));
        let peers = if peers.is_empty() {
            Err("no JVM peer was asked for".to_owned())
        } else {
            build_peers()
        };
        let rust = match (bins, workspace_target_dir()) {
            (Bins::Dir(dir), _) => Where::Dir(dir.clone()),
            (_, None) => Where::Search,
            (bins, Some(target)) => {
                if *bins == Bins::Build && !rust.is_empty() {
                    if !quiet {
                        eprintln!(
                            "greet-bench: building the release servers ({})",
                            rust.join(", ")
                        );
                    }
                    build(&rust, quiet)?;
                }
                Where::Dir(target.join("release"))
            }
        };
        Ok(Self { rust, peers })
    }

    /// How to start server `short`, or an error that says how to get it.
    pub fn locate(&self, short: &str) -> Result<Program> {
        if is_peer(short) {
            let peers = self
                .peers
                .as_ref()
                .map_err(|why| anyhow::anyhow!("skipped: {why}"))?;
            let (path, leading) = peers
                .launch(short)
                .with_context(|| format!("{} cannot be launched", package(short)))?;
            return Ok(Program { path, leading });
        }
        self.rust.locate(short).map(|path| Program {
            path,
            leading: Vec::new(),
        })
    }
}

/// Compiles the JVM peers from the workspace's `peers/jvm` into its target directory.
fn build_peers() -> Result<Peers, String> {
    let root = workspace_root().ok_or_else(|| {
        "the JVM peers are compiled from the workspace's peers/jvm: run greet-bench from the \
         workspace"
            .to_owned()
    })?;
    let out = workspace_target_dir()
        .unwrap_or_else(|| root.join("target"))
        .join("jvm");
    Peers::build(&root.join("peers/jvm/src"), &out)
}

impl Where {
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
                which(&name, beside).with_context(|| {
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
/// own progress goes to stderr. The harness is named too: the same selection as
/// `cargo run -p greet-bench` resolves the same features, so nothing it compiled is compiled
/// again (the harness depends on the servers' libraries for that).
fn build(shorts: &[String], quiet: bool) -> Result<()> {
    let Some(root) = workspace_root() else {
        return Ok(());
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "--release", "-p", env!("CARGO_PKG_NAME")]);
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

/// A container of a server's image, the `docker logs --follow` that reads its stderr, and
/// the engine's stats of it.
struct Container {
    name: String,
    /// Its server's process as the engine's host sees it.
    pid: u32,
    /// That process is this host's: /proc can sample it.
    visible: bool,
    logs: Child,
    log: Log,
    stats: Option<EngineStats>,
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
    pub fn start(program: &Program, args: &[String], cpus: &[usize]) -> Result<Self> {
        let bin = &program.path;
        let process = Launch::new(bin)
            .before(program.leading.iter().cloned())
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
        let state = docker(&["inspect", "--format", "{{.State.Pid}} {{.Id}}", &name])?;
        let (pid, id) = state
            .trim()
            .split_once(' ')
            .context("container without a process")?;
        let pid = pid.parse::<u32>().context("container without a process")?;
        let visible = visible(pid, id);
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
        };
        let logged = addresses.recv_timeout(STARTUP_TIMEOUT).map_err(|_| {
            anyhow::anyhow!("{image} did not log its address: {}", server.stderr_tail())
        })?;
        server.addr = match network {
            None => logged,
            Some(network) => {
                let format =
                    format!("{{{{(index .NetworkSettings.Networks \"{network}\").IPAddress}}}}");
                let ip = docker(&["inspect", "--format", &format, &name])?;
                let ip = ip
                    .trim()
                    .parse()
                    .with_context(|| format!("no address of {name} on network {network}"))?;
                SocketAddr::new(ip, logged.port())
            }
        };
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

    /// Whether its process is this host's, for /proc to sample.
    pub fn visible(&self) -> bool {
        match &self.handle {
            Handle::Process(_) => true,
            Handle::Container(c) => c.visible,
        }
    }

    /// The Docker engine's stats of a container.
    pub fn engine(&self) -> Option<&EngineStats> {
        match &self.handle {
            Handle::Process(_) => None,
            Handle::Container(c) => c.stats.as_ref(),
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
            self.stats = None;
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

/// Whether the engine's `pid` of container `id` is a process of this host: it is only if that
/// process's cgroup is the container's. With a remote engine (`DOCKER_HOST=ssh://…`,
/// `tcp://…`) the pid is the other host's, and this host's process of that number, if any,
/// is another.
fn visible(pid: u32, id: &str) -> bool {
    !id.is_empty()
        && std::fs::read_to_string(format!("/proc/{pid}/cgroup")).is_ok_and(|c| c.contains(id))
}

/// Checks that a Docker engine answers, that `images` exist, saying how to get them, and that
/// `network` does.
pub fn check_docker(images: &[String], network: Option<&str>) -> Result<()> {
    docker(&["info", "--format", "{{.ServerVersion}}"])
        .context("no Docker engine answers (`docker info` failed); --docker needs one")?;
    if let Some(network) = network {
        if docker(&["network", "inspect", "--format", "{{.Name}}", network]).is_err() {
            bail!("no Docker network {network}: create it with `docker network create {network}`");
        }
    }
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

    #[test]
    fn a_missing_binary_says_how_to_get_it() {
        let err = Where::Dir(PathBuf::from("/nonexistent"))
            .locate("axum")
            .unwrap_err()
            .to_string();
        assert!(err.contains("cargo build --release -p greet-axum"), "{err}");
        let err = Where::Search
            .locate("no-such-server")
            .unwrap_err()
            .to_string();
        assert!(err.contains("--bin-dir") && err.contains("PATH"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let none = Binaries {
            rust: Where::Search,
            peers: Err("no JDK".into()),
        };
        let err = none.locate("tomcat").unwrap_err().to_string();
        assert_eq!(err, "skipped: no JDK");
    }
}
