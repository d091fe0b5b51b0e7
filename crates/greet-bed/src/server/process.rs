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
    /// apart. Start-up counts from the spawn. A program under an instrument (`wrap`) is given
    /// as much longer to start, and to stop, as it runs slower.
    pub fn start(program: &Program, args: &[String], cpus: &[usize], wrap: &Wrap) -> Result<Self> {
        let slowdown = wrap.slowdown.max(1);
        let bin = &program.path;
        let launch = Launch::new(bin).before(program.leading.iter().cloned());
        let launch = match program.at {
            // Its configuration says where it listens, and it takes none of the server flags.
            Some(at) => launch.listening_at(at),
            // A server's knobs are its name's (`hyper+pipeline-flush`), never the shell's.
            None => launch
                .without_env("KNOBS")
                .args(["--host", "127.0.0.1"])
                .args(args.iter().cloned()),
        };
        let patience = STARTUP_TIMEOUT * slowdown;
        let process = launch.cpus(cpus).timeout(patience).start()?;
        let (addr, spawned) = (process.addr(), process.spawned_at());
        Self {
            handle: Handle::Process(process),
            addr,
            startup: Duration::ZERO,
            slowdown,
            forked: wrap.forks,
        }
        .await_health(spawned, &bin.display().to_string(), args, patience)
    }
}

/// A measured server process run under an instrument: the command before it, and how many
/// times slower than itself it runs (its start-up and drain are given that much longer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrap {
    /// `valgrind --tool=… `, `perf stat … --`.
    pub prefix: Vec<String>,
    /// How many times slower.
    pub slowdown: u32,
    /// The command runs the server as a child of its own (`perf stat`): the stop goes to
    /// that child, and the command ends when it does, with its totals written.
    pub forks: bool,
}

impl Wrap {
    /// No instrument: the server as itself.
    pub const NONE: Wrap = Wrap {
        prefix: Vec::new(),
        slowdown: 1,
        forks: false,
    };
}
