//! The one supervisor of server processes in the workspace: the binaries' own tests and the
//! harness start servers through it.
//!
//! A server is started with `--port 0` and its address is read from its start-up log line
//! (`… listening addr=127.0.0.1:PORT …`), so the kernel picks the port and nobody races for
//! it: binding a free port, releasing it and handing the number on lets another process take
//! it in between.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use nix::sched::{sched_setaffinity, CpuSet};
use nix::sys::signal::kill;
pub use nix::sys::signal::Signal;
use nix::unistd::Pid;

/// Lines of a server's stderr kept for error messages.
const KEPT_LINES: usize = 200;

/// How long a process that has exited may take to have its last lines read: the pipe stays
/// open past that only if a process it started still holds it.
const LAST_WORDS: Duration = Duration::from_secs(2);

/// How to start a server binary.
#[derive(Debug, Clone)]
pub struct Launch {
    program: PathBuf,
    leading: Vec<String>,
    args: Vec<String>,
    envs: Vec<(String, String)>,
    cleared: Vec<String>,
    cpus: Vec<usize>,
    nofile: Option<u64>,
    timeout: Duration,
    at: Option<SocketAddr>,
}

impl Launch {
    /// `program --port 0`, logging at `info` (the start-up line is an `info` record), given
    /// 10 s to say where it listens.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            leading: Vec::new(),
            args: vec!["--port".into(), "0".into()],
            envs: vec![("RUST_LOG".into(), "info".into())],
            cleared: Vec::new(),
            cpus: Vec::new(),
            nofile: None,
            timeout: Duration::from_secs(10),
            at: None,
        }
    }

    /// A program that listens where its own configuration says (nginx cannot take port 0
    /// and log where it listens): no `--port 0`, and no start-up line is waited for; the
    /// caller waits for its first answer.
    pub fn listening_at(mut self, addr: SocketAddr) -> Self {
        if self
            .args
            .starts_with(&["--port".to_owned(), "0".to_owned()])
        {
            self.args.drain(..2);
        }
        self.at = Some(addr);
        self
    }

    /// Arguments before `--port 0`: what a program needs to become the server, such as
    /// `java -cp … Main`.
    pub fn before<S: Into<String>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.leading.extend(args.into_iter().map(Into::into));
        self
    }

    /// Adds arguments after `--port 0`.
    pub fn args<S: Into<String>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// Leaves `key` out of the environment the server inherits.
    pub fn without_env(mut self, key: &str) -> Self {
        self.cleared.push(key.into());
        self
    }

    /// Pins the server to `cpus` (empty: not pinned).
    pub fn cpus(mut self, cpus: &[usize]) -> Self {
        self.cpus = cpus.to_vec();
        self
    }

    /// Starts the server with at most `nofile` open file descriptors.
    pub fn nofile(mut self, nofile: u64) -> Self {
        self.nofile = Some(nofile);
        self
    }

    /// How long the server may take to log its address.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Starts the server and waits for its address; an error says why it did not come up,
    /// with its last words.
    pub fn start(&self) -> io::Result<ServerProcess> {
        let mut command = match self.nofile {
            // The shell sets the limit, then becomes the server: the pid is the server's.
            Some(nofile) => {
                let mut shell = Command::new("sh");
                shell.args(["-c", &format!("ulimit -n {nofile} && exec \"$0\" \"$@\"")]);
                shell.arg(&self.program);
                shell
            }
            None => Command::new(&self.program),
        };
        for key in &self.cleared {
            command.env_remove(key);
        }
        command
            .args(&self.leading)
            .args(&self.args)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let what = self.program.display().to_string();
        let (mut child, spawned) = spawn_pinned(&mut command, &self.cpus)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot start {what}: {e}")))?;
        let pipe = child
            .stderr
            .take()
            .ok_or_else(|| io::Error::other("no stderr pipe"))?;
        let (log, addresses) = Log::watch(pipe);
        if let Some(addr) = self.at {
            return Ok(ServerProcess {
                child,
                addr,
                spawned,
                log,
            });
        }
        let deadline = spawned + self.timeout;
        loop {
            match addresses.recv_timeout(Duration::from_millis(2)) {
                Ok(addr) => {
                    return Ok(ServerProcess {
                        child,
                        addr,
                        spawned,
                        log,
                    })
                }
                Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                Err(RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    log.wait_closed(LAST_WORDS);
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "{what} did not log its address within {:?}: {}",
                            self.timeout,
                            log.tail(5)
                        ),
                    ));
                }
                // The pipe closed: the server exited before listening.
                Err(RecvTimeoutError::Disconnected) => {
                    let status = child.wait()?;
                    return Err(io::Error::other(format!(
                        "{what} exited during start-up ({status}): {}",
                        log.tail(5)
                    )));
                }
            }
        }
    }
}

/// Spawns `command` from a thread pinned to `cpus`: a child inherits the affinity of the
/// thread that forks it, and the caller's own threads stay where they are.
fn spawn_pinned(command: &mut Command, cpus: &[usize]) -> io::Result<(Child, Instant)> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                if !cpus.is_empty() {
                    pin_current_thread(cpus)?;
                }
                let spawned = Instant::now();
                Ok((command.spawn()?, spawned))
            })
            .join()
            .map_err(|_| io::Error::other("the spawning thread panicked"))?
    })
}

/// The program `name` in the first of `dirs`, then of the directories on `PATH`, that has it.
pub fn which(name: &str, dirs: impl IntoIterator<Item = PathBuf>) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    dirs.into_iter()
        .chain(path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Pins the calling thread (and the threads and processes it creates after) to `cpus`.
pub fn pin_current_thread(cpus: &[usize]) -> io::Result<()> {
    let mut set = CpuSet::new();
    for &cpu in cpus {
        set.set(cpu)
            .map_err(|_| io::Error::other(format!("no CPU {cpu}")))?;
    }
    sched_setaffinity(Pid::from_raw(0), &set).map_err(io::Error::from)
}

/// Pins process `pid`, its threads and the children it has now, to `cpus`; the children it
/// forks later inherit it (PostgreSQL's backends, from its postmaster).
pub fn pin_process_tree(pid: u32, cpus: &[usize]) -> io::Result<()> {
    let mut set = CpuSet::new();
    for &cpu in cpus {
        set.set(cpu)
            .map_err(|_| io::Error::other(format!("no CPU {cpu}")))?;
    }
    let mut pids = vec![pid];
    let mut at = 0;
    while at < pids.len() {
        let parent = pids[at];
        at += 1;
        let tasks = std::fs::read_dir(format!("/proc/{parent}/task"))?;
        for task in tasks.flatten() {
            let tid = task.file_name().to_string_lossy().parse::<i32>().ok();
            if let Some(tid) = tid {
                // A thread that ended meanwhile is nothing to pin.
                let _ = sched_setaffinity(Pid::from_raw(tid), &set);
            }
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            pids.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    Ok(())
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

/// A server running as a child process.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    addr: SocketAddr,
    spawned: Instant,
    log: Log,
}

impl ServerProcess {
    /// Where it listens, as its log line said.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://addr`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// When it was spawned (start-up times count from here).
    pub fn spawned_at(&self) -> Instant {
        self.spawned
    }

    /// Sends `signal`.
    pub fn signal(&self, signal: Signal) -> io::Result<()> {
        let pid = i32::try_from(self.child.id()).map_err(io::Error::other)?;
        kill(Pid::from_raw(pid), signal).map_err(io::Error::from)
    }

    /// How it ended, if it has.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        let status = self.child.try_wait().ok().flatten();
        if status.is_some() {
            self.log.wait_closed(LAST_WORDS);
        }
        status
    }

    /// Waits up to `timeout` for it to exit.
    pub fn wait_timeout(&mut self, timeout: Duration) -> io::Result<Option<ExitStatus>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                self.log.wait_closed(LAST_WORDS);
                return Ok(Some(status));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// SIGTERM, then up to `grace` for a graceful exit, then SIGKILL.
    pub fn stop(&mut self, grace: Duration) -> io::Result<ExitStatus> {
        if let Some(status) = self.exited() {
            return Ok(status);
        }
        let _ = self.signal(Signal::SIGTERM);
        if let Some(status) = self.wait_timeout(grace)? {
            return Ok(status);
        }
        self.child.kill()?;
        let status = self.child.wait()?;
        self.log.wait_closed(LAST_WORDS);
        Ok(status)
    }

    /// Every line it wrote to stderr (the last 200), one per line.
    pub fn stderr(&self) -> String {
        self.log.all()
    }

    /// Its last `lines` lines on stderr, joined with ` | `.
    pub fn stderr_tail(&self, lines: usize) -> String {
        self.log.tail(lines)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.stop(Duration::from_secs(2));
    }
}

/// The last lines a server wrote, collected by a thread of their own.
#[derive(Debug, Clone, Default)]
pub struct Log(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    lines: Mutex<Lines>,
    /// Told when the pipe closes.
    closed: Condvar,
}

#[derive(Debug, Default)]
struct Lines {
    kept: VecDeque<String>,
    /// The pipe reached its end: every line is in.
    closed: bool,
}

impl Log {
    /// Reads `pipe` line by line until it closes, keeping the last lines and sending every
    /// address a start-up line names.
    pub fn watch(pipe: impl Read + Send + 'static) -> (Self, Receiver<SocketAddr>) {
        let log = Self::default();
        let (found, addresses) = mpsc::channel();
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let addr = listening_addr(&line);
                {
                    let kept = &mut lines.lock().kept;
                    if kept.len() == KEPT_LINES {
                        kept.pop_front();
                    }
                    kept.push_back(line);
                }
                if let Some(addr) = addr {
                    let _ = found.send(addr);
                }
            }
            lines.lock().closed = true;
            lines.0.closed.notify_all();
        });
        (log, addresses)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Lines> {
        self.0.lines.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits up to `timeout` for the pipe to close, so that a process that has exited has
    /// had its last lines read: its exit status can be seen before they are.
    pub fn wait_closed(&self, timeout: Duration) {
        let lines = self.lock();
        let _ = self
            .0
            .closed
            .wait_timeout_while(lines, timeout, |lines| !lines.closed);
    }

    /// Every kept line, one per line.
    pub fn all(&self) -> String {
        self.lock().kept.iter().map(|l| format!("{l}\n")).collect()
    }

    /// The last `lines` lines, joined with ` | `.
    pub fn tail(&self, lines: usize) -> String {
        let kept = &self.lock().kept;
        let skip = kept.len().saturating_sub(lines);
        kept.iter()
            .skip(skip)
            .cloned()
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

/// The address in a server's start-up line, `… listening addr=127.0.0.1:PORT …`.
pub fn listening_addr(line: &str) -> Option<SocketAddr> {
    if !line.contains("listening") {
        return None;
    }
    line.split_whitespace()
        .find_map(|word| word.strip_prefix("addr="))
        .and_then(|addr| addr.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process and the child it has already forked both end up on the CPUs asked for.
    #[test]
    fn a_pinned_process_takes_its_children_along() {
        let cpu = *allowed_cpus().last().expect("a CPU");
        let mut parent = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & wait"])
            .spawn()
            .expect("sh runs");
        let pid = parent.id();
        let children = format!("/proc/{pid}/task/{pid}/children");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let child = loop {
            let text = std::fs::read_to_string(&children).unwrap_or_default();
            if let Some(child) = text.split_whitespace().next() {
                break child.to_owned();
            }
            assert!(std::time::Instant::now() < deadline, "no child forked");
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        pin_process_tree(pid, &[cpu]).expect("pinned");
        for p in [pid.to_string(), child] {
            let status = std::fs::read_to_string(format!("/proc/{p}/status")).unwrap();
            let allowed = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(str::trim);
            assert_eq!(allowed, Some(cpu.to_string().as_str()), "process {p}");
        }
        let _ = parent.kill();
        let _ = parent.wait();
    }

    #[test]
    fn finds_programs_in_the_given_directories_then_on_path() {
        assert!(which("sh", []).is_some(), "sh is on PATH");
        let dir = script("exits").parent().unwrap().to_path_buf();
        assert_eq!(which("exits", [dir.clone()]), Some(dir.join("exits")));
        assert_eq!(which("no-such-program-here", [dir]), None);
    }

    #[test]
    fn reads_the_address_from_the_start_up_line() {
        let line = "2026-11-30T07:00:00Z  INFO greet_server::cli: greet-hyper listening addr=127.0.0.1:43121 workers=2";
        assert_eq!(
            listening_addr(line),
            Some("127.0.0.1:43121".parse().unwrap())
        );
        assert_eq!(listening_addr("greet-hyper stopped addr=127.0.0.1:1"), None);
        assert_eq!(listening_addr("listening addr=nowhere"), None);
    }

    /// Shell scripts standing in for server binaries (called with `--port 0`). All are
    /// written before any is run: a script still open for writing in one test while another
    /// test forks cannot be executed (ETXTBSY).
    fn script(name: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
        let dir = DIR.get_or_init(|| {
            let dir = std::env::temp_dir().join(format!("greet-launch-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            for (name, body) in [
                ("exits", "echo $1 >&2; echo \"$2 $3\" >&2; exit 3"),
                (
                    "listens",
                    "echo \"x listening addr=127.0.0.1:9\" >&2; exec sleep 30",
                ),
                ("silent", "exec sleep 5"),
                (
                    "talks-then-exits",
                    "echo \"x listening addr=127.0.0.1:9\" >&2; sleep 0.1; \
                     seq 1 100000 >&2; echo last words >&2; exit 3",
                ),
            ] {
                let path = dir.join(name);
                std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
            dir
        });
        dir.join(name)
    }

    #[test]
    fn a_program_that_never_listens_is_reported_with_its_last_words() {
        let bin = script("exits");
        let err = Launch::new(&bin)
            .before(["one"])
            .start()
            .expect_err("never listens");
        let text = err.to_string();
        assert!(text.contains("exited during start-up"), "{text}");
        assert!(text.contains("one | --port 0"), "{text}");
    }

    #[test]
    fn a_program_that_logs_an_address_is_supervised() {
        let bin = script("listens");
        let mut server = Launch::new(&bin)
            .cpus(&allowed_cpus()[..1])
            .start()
            .expect("starts");
        assert_eq!(server.addr().port(), 9);
        assert!(server.exited().is_none());
        assert!(server.stderr().contains("listening"));
        let status = server.stop(Duration::from_secs(2)).expect("stops");
        assert!(!status.success(), "sleep dies of SIGTERM: {status}");
    }

    /// A process can be seen to have exited while the pipe still holds what it wrote last
    /// (here up to a pipe's 64 KiB of numbers): its last words are read before its end is
    /// told.
    #[test]
    fn a_program_that_exits_is_told_with_its_last_words() {
        let bin = script("talks-then-exits");
        for _ in 0..3 {
            let mut server = Launch::new(&bin).start().expect("starts");
            let status = server
                .wait_timeout(Duration::from_secs(10))
                .unwrap()
                .expect("it exits");
            assert_eq!(status.code(), Some(3));
            assert!(
                server.stderr_tail(1).contains("last words"),
                "{}",
                server.stderr_tail(2)
            );
        }
    }

    #[test]
    fn a_silent_program_times_out() {
        let bin = script("silent");
        let err = Launch::new(&bin)
            .timeout(Duration::from_millis(100))
            .start()
            .expect_err("never listens");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err}");
    }
}
