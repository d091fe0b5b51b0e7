//! The agent's command line and its programs: [`load`], one shard run and its report
//! printed, and `greet-agent`'s [`main`], which also runs the watch task (`greet-agent watch`,
//! `greet_probe::watch`).
//!
//! A shard's flags are written and read in one file, `agent/flags.rs`: [`Shard::flags`] and
//! [`Shard::level_flags`] write them (for `local`'s processes, a swarm job, a Kubernetes Job);
//! [`ShardArgs`], which `greet-bench agent` takes too, flattened, reads them back
//! ([`ShardArgs::shard`]), or says why they describe no shard ([`BadFlags`]).
//!
//! [`Shard::flags`]: crate::Shard::flags
//! [`Shard::level_flags`]: crate::Shard::level_flags

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use greet_cli::parse_duration;

use crate::shard::{reach, run_shard};

mod flags;

pub use flags::{BadFlags, ShardArgs};

/// Runs the shard `args` describe and prints its report on stdout (exit 0 however many
/// requests failed); `program` names it in its one-line errors: exit 2 for flags that
/// describe no shard, 1 when it cannot run (the server's name does not resolve, a bad
/// index).
pub fn load(program: &str, args: &ShardArgs) -> ExitCode {
    let shard = match args.shard() {
        Ok(shard) => shard,
        Err(why) => {
            eprintln!("{program}: error: {why}");
            return ExitCode::from(2);
        }
    };
    let wait = args.wait.unwrap_or_default();
    let run = async {
        let addr = reach(&shard.url, shard.protocol, wait).await?;
        run_shard(&shard, addr).await
    };
    let report = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(run),
        Err(err) => {
            eprintln!("{program}: error: no runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match report {
        Ok(report) => {
            println!("{}", report.lines());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("{program}: error: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Ends the process at once on SIGTERM or SIGINT, with 128 + its number. A container's first
/// process has no default action for either: without this, `docker stop`, or the removal of
/// the service an agent or watch task belongs to, waits out the grace period (10 s) and kills.
/// Called before any other thread starts, so that every thread inherits the blocked set and
/// only the waiting one takes them.
fn exit_on_signals() {
    use nix::sys::signal::{SigSet, Signal};
    let mut set = SigSet::empty();
    set.add(Signal::SIGTERM);
    set.add(Signal::SIGINT);
    if set.thread_block().is_err() {
        return;
    }
    std::thread::spawn(move || {
        if let Ok(signal) = set.wait() {
            std::process::exit(128 + signal as i32);
        }
    });
}

const ABOUT: &str = "\
A load agent: runs its share of one level against a server (fresh connections, keep-alive \
users, or an open-loop rate), starting at a shared instant, and prints everything it counted \
as JSON (lines of at most 4 KiB) for the coordinator to merge; or, with `watch`, prints a container's CPU, \
memory and tasks from its control group.";

/// `greet-agent`'s command line.
#[derive(Debug, Parser)]
#[command(
    name = "greet-agent",
    version,
    about = ABOUT,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    shard: Option<ShardArgs>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Watch a container from beside it: its CPU %, memory and tasks from its control group,
    /// one line every interval until it ends (what a swarm runs on a server's node, the
    /// host's /sys/fs/cgroup mounted read-only)
    Watch {
        /// The container's ID (12 hex digits or more)
        #[arg(long, value_name = "ID")]
        container: String,
        /// Where the host's cgroup hierarchy is mounted
        #[arg(long, value_name = "DIR", default_value = "/sys/fs/cgroup")]
        cgroups: PathBuf,
        /// How often to read it
        #[arg(long, value_parser = parse_duration, default_value = "500ms")]
        interval: Duration,
    },
}

/// `greet-agent`: one shard of a level (its flags, no subcommand), or `watch`.
pub fn main() -> ExitCode {
    const PROGRAM: &str = "greet-agent";
    let cli: Cli = match greet_cli::parse_args(PROGRAM) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    exit_on_signals();
    match (cli.command, cli.shard) {
        (
            Some(Command::Watch {
                container,
                cgroups,
                interval,
            }),
            _,
        ) => {
            let mut out = std::io::stdout().lock();
            let wait = Duration::from_secs(10);
            match greet_probe::watch::watch(&cgroups, &container, interval, wait, &mut out) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("{PROGRAM} watch: error: {err}");
                    ExitCode::FAILURE
                }
            }
        }
        (None, Some(shard)) => load(PROGRAM, &shard),
        (None, None) => {
            eprintln!("{PROGRAM}: error: --url is required (see --help)");
            ExitCode::from(2)
        }
    }
}
