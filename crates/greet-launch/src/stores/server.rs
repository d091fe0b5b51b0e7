//! A store process, whichever store it is: started with its output to a log in its own
//! directory, waited on until it says it is ready and its port accepts, watched by a watchdog
//! that stops it when this process is gone, stopped with a signal and a deadline, and removed
//! on drop. Apart from `mod.rs`, which knows each store's programs, flags and files.

use std::fs;
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::{io_error, last_line, path_str, run_as, LaunchError};

/// How long a store may take to come up.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a store may take to stop before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// A store process with its directory, port and log.
#[derive(Debug)]
pub(super) struct Server {
    pub(super) dir: PathBuf,
    pub(super) port: u16,
    log: PathBuf,
    child: Option<Child>,
    watchdog: Option<Child>,
    user: Option<(u32, u32)>,
}

impl Server {
    pub(super) fn new(dir: PathBuf, user: Option<(u32, u32)>) -> Self {
        Self {
            log: dir.join("server.log"),
            dir,
            port: 0,
            child: None,
            watchdog: None,
            user,
        }
    }

    pub(super) fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    pub(super) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Starts `cmd` with its output to the log, waits for `ready` in the log and for the
    /// port to accept, and sets a watchdog that sends `stop` when this process is gone.
    pub(super) fn spawn(
        &mut self,
        mut cmd: Command,
        ready: &str,
        stop: Signal,
    ) -> Result<(), LaunchError> {
        let name = cmd.get_program().to_string_lossy().into_owned();
        let log = fs::File::create(&self.log).map_err(io_error(self.log.display().to_string()))?;
        if let Some((uid, _)) = self.user {
            let _ = std::os::unix::fs::chown(&self.log, Some(uid), None);
        }
        let err = log
            .try_clone()
            .map_err(io_error(self.log.display().to_string()))?;
        cmd.stdin(Stdio::null()).stdout(log).stderr(err);
        run_as(&mut cmd, self.user);
        let child = cmd.spawn().map_err(io_error(name.clone()))?;
        let pid = child.id();
        self.child = Some(child);
        // When this process is gone: stop the server, wait for it, remove its directory.
        let watch = "while kill -0 \"$1\" 2>/dev/null; do sleep 0.5; done; kill -\"$3\" \"$2\" 2>/dev/null; \
                     n=0; while kill -0 \"$2\" 2>/dev/null && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done; \
                     kill -9 \"$2\" 2>/dev/null; rm -rf \"$4\"";
        self.watchdog = Command::new("sh")
            .args([
                "-c",
                watch,
                "watchdog",
                &std::process::id().to_string(),
                &pid.to_string(),
                &(stop as i32).to_string(),
                path_str(&self.dir)?,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok();

        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let text = fs::read_to_string(&self.log).unwrap_or_default();
            if text.contains(ready)
                && TcpStream::connect_timeout(&self.addr(), Duration::from_millis(200)).is_ok()
            {
                return Ok(());
            }
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() > deadline {
                self.stop(Signal::SIGKILL);
                let why = if exited.is_some() {
                    "exited"
                } else {
                    "did not come up"
                };
                return Err(LaunchError::Failed {
                    what: format!("{name} {why}"),
                    last: last_line(&text),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub(super) fn stop(&mut self, signal: Signal) {
        if let Some(mut child) = self.child.take() {
            let _ = kill(Pid::from_raw(child.id() as i32), signal);
            let deadline = Instant::now() + STOP_TIMEOUT;
            while child.try_wait().ok().flatten().is_none() {
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        if let Some(mut watchdog) = self.watchdog.take() {
            let _ = watchdog.kill();
            let _ = watchdog.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop(Signal::SIGKILL);
        let _ = fs::remove_dir_all(&self.dir);
    }
}
