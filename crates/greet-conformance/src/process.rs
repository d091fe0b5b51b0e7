//! Tests of a server *binary*: what only a real process shows (signals, exit codes, the
//! first lines a user sees). Each server crate runs them against its own executable with
//! [`process_tests!`](crate::process_tests).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::kill;
pub use nix::sys::signal::Signal;
use nix::unistd::Pid;

use crate::cases::{self, Outcome};

/// A server binary started as a child process on an ephemeral port.
pub struct ProcessServer {
    child: Child,
    addr: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

impl ProcessServer {
    /// Starts `bin --port 0 <args>` and waits (up to 10 s) for its "listening" log line,
    /// which carries the address it bound.
    pub fn start(bin: &str, args: &[&str]) -> Result<Self, String> {
        let mut child = Command::new(bin)
            .args(["--port", "0"])
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{bin}: {e}"))?;
        let stderr = Arc::new(Mutex::new(String::new()));
        let (found, addr_rx) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().ok_or("no stderr pipe")?;
        let log = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(addr) = listening_addr(&line) {
                    let _ = found.send(addr);
                }
                let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
                log.push_str(&line);
                log.push('\n');
            }
        });
        match addr_rx.recv_timeout(Duration::from_secs(10)) {
            Ok(addr) => Ok(Self {
                child,
                addr,
                stderr,
            }),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(format!(
                    "{bin} did not log its address; stderr: {}",
                    lock(&stderr)
                ))
            }
        }
    }

    /// Where the server listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` to the server.
    pub fn signal(&self, signal: Signal) -> Result<(), String> {
        let pid = i32::try_from(self.child.id()).map_err(|e| e.to_string())?;
        kill(Pid::from_raw(pid), signal).map_err(|e| format!("kill {signal}: {e}"))
    }

    /// Waits up to `timeout` for the process to exit.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<Option<ExitStatus>, String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Ok(Some(status));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Everything the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        lock(&self.stderr)
    }
}

impl Drop for ProcessServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lock(text: &Mutex<String>) -> String {
    text.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The address in the start-up line `... listening addr=127.0.0.1:PORT ...`.
fn listening_addr(line: &str) -> Option<SocketAddr> {
    if !line.contains("listening") {
        return None;
    }
    line.split_whitespace()
        .find_map(|word| word.strip_prefix("addr="))
        .and_then(|addr| addr.parse().ok())
}

/// A signal with `in_flight` requests under way at a 1 s delay: every one is answered 200,
/// new connections are refused, and the process exits 0 within the delay plus 1 s.
pub async fn signal_drains_in_flight(bin: &str, signal: Signal, in_flight: usize) -> Outcome {
    let mut server =
        ProcessServer::start(bin, &["--delay-ms", "1000", "--shutdown-timeout-secs", "5"])?;
    let addr = server.addr();
    let requests = tokio::spawn(cases::concurrent_greetings(addr, "/greetings", in_flight));
    // Let every request reach the server and start its delay.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let signalled = Instant::now();
    server.signal(signal)?;

    tokio::time::sleep(Duration::from_millis(200)).await;
    let refused = tokio::net::TcpStream::connect(addr).await.is_err();

    let answered = requests.await.map_err(|e| e.to_string())?;
    let status = tokio::task::spawn_blocking(move || {
        let status = server.wait_timeout(Duration::from_secs(5));
        (status, server.stderr())
    })
    .await
    .map_err(|e| e.to_string())?;
    let (status, stderr) = (status.0?, status.1);
    let elapsed = signalled.elapsed();

    answered.map_err(|e| format!("in-flight requests after {signal}: {e}"))?;
    if !refused {
        return Err(format!("still accepting connections 200 ms after {signal}"));
    }
    match status {
        Some(status) if status.success() && elapsed < Duration::from_secs(2) => Ok(()),
        Some(status) => Err(format!(
            "after {signal}: {status} in {elapsed:?}; stderr: {stderr}"
        )),
        None => Err(format!(
            "still running 5 s after {signal}; stderr: {stderr}"
        )),
    }
}

/// A port already in use: one line on stderr, a non-zero exit, no panic.
pub fn port_in_use_is_one_line(bin: &str) -> Outcome {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = taken
        .local_addr()
        .map_err(|e| e.to_string())?
        .port()
        .to_string();
    expect_one_line_failure(bin, &["--port", &port], "cannot listen")
}

/// Bad flag values and unknown flags: one line on stderr, exit code 2, no panic.
pub fn bad_flags_are_one_line(bin: &str) -> Outcome {
    for args in [
        &["--port", "abc"][..],
        &["--port", "70000"],
        &["--workers", "0"],
        &["--blocking-threads", "0"],
        &["--delay-ms", "-5"],
        &["--host", "not-an-ip"],
        &["--bogus"],
    ] {
        expect_one_line_failure(bin, args, "error")?;
    }
    Ok(())
}

fn expect_one_line_failure(bin: &str, args: &[&str], expected: &str) -> Outcome {
    let out = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{bin}: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<_> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    // A log line may precede the error (logging starts before binding); the error itself
    // must be the last line, and the only one that is not a log record.
    let errors: Vec<_> = lines.iter().filter(|l| !l.contains(" INFO ")).collect();
    if out.status.success() || out.status.code().is_none() {
        return Err(format!("{args:?}: exit {}", out.status));
    }
    if errors.len() != 1 || !errors[0].contains(expected) || stderr.contains("panicked") {
        return Err(format!(
            "{args:?}: want one line with {expected:?}, got {stderr:?}"
        ));
    }
    Ok(())
}

/// `--health-check` exits 0 against a running server and 1 against a closed port.
pub fn health_check_flag(bin: &str) -> Outcome {
    let server = ProcessServer::start(bin, &[])?;
    let probe = |port: u16| {
        Command::new(bin)
            .args(["--health-check", "--port", &port.to_string()])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())
    };
    let up = probe(server.addr().port())?;
    if up.status.code() != Some(0) {
        return Err(format!(
            "--health-check against a live server: {}",
            up.status
        ));
    }
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let down = probe(closed)?;
    if down.status.code() != Some(1) {
        return Err(format!(
            "--health-check against a closed port: {}",
            down.status
        ));
    }
    Ok(())
}

/// `--help` lists every flag and exits 0.
pub fn help_lists_flags(bin: &str) -> Outcome {
    let out = Command::new(bin)
        .arg("--help")
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--host",
        "--port",
        "--delay-ms",
        "--workers",
        "--blocking-threads",
        "--backlog",
        "--shutdown-timeout-secs",
        "--health-check",
    ] {
        if !text.contains(flag) {
            return Err(format!("--help does not mention {flag}"));
        }
    }
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("--help: {}", out.status))
    }
}

/// Process-level tests for one server binary: put
/// `greet_conformance::process_tests!(env!("CARGO_BIN_EXE_<name>"));` in the crate's
/// `tests/` directory.
#[macro_export]
macro_rules! process_tests {
    ($bin:expr) => {
        fn ok(outcome: $crate::cases::Outcome) {
            if let Err(why) = outcome {
                panic!("{why}");
            }
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn sigterm_drains_50_in_flight_and_exits_0() {
            let signal = $crate::process::Signal::SIGTERM;
            ok($crate::process::signal_drains_in_flight($bin, signal, 50).await);
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn ctrl_c_drains_like_sigterm() {
            let signal = $crate::process::Signal::SIGINT;
            ok($crate::process::signal_drains_in_flight($bin, signal, 10).await);
        }

        #[test]
        fn port_in_use_is_one_line() {
            ok($crate::process::port_in_use_is_one_line($bin));
        }

        #[test]
        fn bad_flags_are_one_line() {
            ok($crate::process::bad_flags_are_one_line($bin));
        }

        #[test]
        fn health_check_flag() {
            ok($crate::process::health_check_flag($bin));
        }

        #[test]
        fn help_lists_flags() {
            ok($crate::process::help_lists_flags($bin));
        }
    };
}
