//! Server binaries: finding (or building) them, starting one pinned to its CPUs and timing
//! its start-up, stopping it gracefully.

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

/// A server the harness started.
pub struct ServerProcess {
    child: Child,
    addr: SocketAddr,
    startup: Duration,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl ServerProcess {
    /// Starts `bin` with `args` on a free loopback port, pinned to `cpus` (none: not
    /// pinned), and waits for its first 200 on `/health`, polling at most 1 ms apart.
    pub fn start(bin: &Path, args: &[String], cpus: &[usize]) -> Result<Self> {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .context("no free port")?
            .port();
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let mut cmd = Command::new(bin);
        cmd.args(["--host", "127.0.0.1", "--port", &port.to_string()])
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

        let mut server = Self {
            child,
            addr,
            startup: Duration::ZERO,
            stderr,
        };
        loop {
            if let Some(status) = server.child.try_wait()? {
                // Let the stderr reader catch the last words.
                std::thread::sleep(Duration::from_millis(50));
                bail!(
                    "{} exited during start-up ({status}): {}",
                    bin.display(),
                    server.stderr_tail()
                );
            }
            if greet_core::net::probe_health(addr, Duration::from_millis(500)) {
                server.startup = started.elapsed();
                return Ok(server);
            }
            if started.elapsed() > STARTUP_TIMEOUT {
                bail!(
                    "{} did not answer /health within {STARTUP_TIMEOUT:?}",
                    bin.display()
                );
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Spawn → first 200 on `/health`.
    pub fn startup(&self) -> Duration {
        self.startup
    }

    /// The exit status, if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Its last lines on stderr, joined.
    pub fn stderr_tail(&self) -> String {
        let tail = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        tail.iter().cloned().collect::<Vec<_>>().join(" | ")
    }

    /// SIGTERM, then waits up to `grace` for a graceful exit, then SIGKILL.
    pub fn stop(mut self, grace: Duration) -> Result<ExitStatus> {
        self.terminate(grace)
    }

    fn terminate(&mut self, grace: Duration) -> Result<ExitStatus> {
        if let Some(status) = self.child.try_wait()? {
            return Ok(status);
        }
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.child.kill()?;
        Ok(self.child.wait()?)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.terminate(Duration::from_secs(2));
    }
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
