//! A server as a child process: started through the workspace's one supervisor
//! (`greet_launch::process`) with `--port 0`, its address read from its start-up line (or, for
//! nginx, where its configuration puts it), pinned to its CPUs.

use std::time::Duration;

use anyhow::Result;
use greet_launch::process::Launch;

use super::binaries::Program;
use super::{Handle, Server, STARTUP_TIMEOUT};

impl Server {
    /// Starts `bin` with `args` on a port of its own choosing on loopback, pinned to `cpus`
    /// (none: not pinned), and waits for its first 200 on `/health`, polling at most 1 ms
    /// apart. Start-up counts from the spawn.
    pub(crate) fn start(program: &Program, args: &[String], cpus: &[usize]) -> Result<Self> {
        let bin = &program.path;
        let launch = Launch::new(bin).before(program.leading.iter().cloned());
        let launch = match program.at {
            // Its configuration says where it listens, and it takes none of the server flags.
            Some(at) => launch.listening_at(at),
            None => launch
                .args(["--host", "127.0.0.1"])
                .args(args.iter().cloned()),
        };
        let process = launch.cpus(cpus).timeout(STARTUP_TIMEOUT).start()?;
        let (addr, spawned) = (process.addr(), process.spawned_at());
        Self {
            handle: Handle::Process(process),
            addr,
            startup: Duration::ZERO,
        }
        .await_health(spawned, &bin.display().to_string(), args, STARTUP_TIMEOUT)
    }
}
