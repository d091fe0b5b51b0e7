//! [`Harness`]: what every scenario shares, one job a file:
//! - this file: the harness's settings, the CPU split, status lines, saving;
//! - `bring_up`: a server started (where the [`Placement`] says), verified and stopped, or a
//!   target checked ([`Subject`], [`Start`], [`Up`]);
//! - `load`: one load handed to where the [`Placement`] runs it, the server observed
//!   throughout, and the merged result back ([`Loaded`]);
//! - `agents`: a load's shard given to agents, as processes here or a swarm job;
//! - `progress`: progress bars.

mod agents;
mod bring_up;
mod load;
mod progress;

pub(crate) use bring_up::{mode, Start, Subject, Up};
pub(crate) use greet_bed::server::Wrap;
pub(crate) use load::{Ask, QUIET};

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use anyhow::Result;
use greet_load::{Stop, Wire, Work};
use greet_server::ServerFlag;

use serde::Serialize;

use greet_bed::server::Binaries;
use greet_model::plan::{Common, Placement, ServerSettings};
use greet_model::results::{Machine, Noise, Results, Transport};
use greet_report::{self as report, Sections};

/// What every scenario shares.
#[derive(Debug)]
pub(crate) struct Harness {
    /// The shared settings.
    pub(crate) common: Common,
    /// CPUs the servers are pinned to (empty: not pinned).
    pub(crate) server_cpus: Vec<usize>,
    /// CPUs the load generator is pinned to (empty: not pinned).
    pub(crate) load_cpus: Vec<usize>,
    /// Every CPU the harness may use.
    pub(crate) cpus: Vec<usize>,
    /// Where the server binaries are.
    pub(crate) binaries: Binaries,
    /// Where results go.
    pub(crate) out: PathBuf,
    /// What the load goes over (`--protocol`): over TLS, any certificate is trusted (the
    /// servers make their own; a `--target`'s is its owner's), signatures still checked.
    pub(crate) wire: Wire,
    /// What the machine did during each load so far, by the load's label.
    pub(crate) machine: Mutex<Vec<(String, Machine)>>,
    /// Loads run so far: the next one's place in the run ([`Trial::seq`]).
    ///
    /// [`Trial::seq`]: greet_model::results::Trial::seq
    pub(crate) loads: AtomicU64,
}

impl Harness {
    /// `--workers` for a server: `chosen`, or the CPUs a server runs on.
    pub(crate) fn workers(&self, chosen: Option<usize>) -> usize {
        chosen.unwrap_or(self.server_cpu_count())
    }

    /// The flags of servers started with `settings`, and the workers among them.
    pub(crate) fn server_args(&self, settings: &ServerSettings) -> (Vec<String>, usize) {
        let workers = self.workers(settings.workers);
        let args = server_args(settings.delay_ms, workers, settings.blocking_threads);
        (args, workers)
    }

    /// The CPUs the stores the harness starts are pinned to: the load generator's (on two
    /// cores there is no third place; the server's own CPUs stay its alone).
    pub(crate) fn store_cpus(&self) -> &[usize] {
        &self.load_cpus
    }

    /// Closed-loop keep-alive users, `users` of them until `stop`, with the run's streams,
    /// pipelining and requests per connection.
    pub(crate) fn sessions(&self, users: usize, stop: Stop) -> Work {
        Work::Sessions {
            users,
            stop,
            streams: self.common.streams,
            pipeline: self.common.pipeline,
            requests_per_connection: self.common.requests_per_connection,
        }
    }

    /// The CPUs a server runs on.
    pub(crate) fn server_cpu_count(&self) -> usize {
        if self.server_cpus.is_empty() {
            self.cpus.len().max(1)
        } else {
            self.server_cpus.len()
        }
    }

    /// The CPUs the load generator runs on.
    pub(crate) fn load_cpu_count(&self) -> usize {
        if self.load_cpus.is_empty() {
            self.cpus.len().max(1)
        } else {
            self.load_cpus.len()
        }
    }

    /// Whether the load generator shares this machine's load CPUs wherever `place` runs it:
    /// its probe's CPU then bounds what it can send. A swarm's agents pace on their own nodes.
    pub(crate) fn loads_here(place: Placement) -> bool {
        !matches!(place, Placement::Swarm(_))
    }

    /// A status line on stderr, unless quiet.
    pub(crate) fn say(&self, who: &str, line: &str) {
        if !self.common.quiet {
            eprintln!("greet-bench: {who}: {line}");
        }
    }

    /// The band every verdict of the run is judged against: `--band`, or ±5%.
    pub(crate) fn band(&self) -> f64 {
        self.common.band.unwrap_or(greet_stats::paired::BAND)
    }

    /// The per-request timeout.
    pub(crate) fn timeout(&self) -> Duration {
        self.common.timeout
    }

    /// The protocol a scenario's section records.
    pub(crate) fn transport(&self) -> Transport {
        Transport {
            protocol: self.common.protocol,
            streams: self.common.streams,
            pipeline: self.common.pipeline,
            requests_per_connection: self.common.requests_per_connection,
            headers: self
                .common
                .headers
                .iter()
                .map(ToString::to_string)
                .collect(),
            body: self.common.body.as_ref().map(ToString::to_string),
            tls_resume: self.wire.resumes(),
        }
    }

    /// Writes every output file.
    pub(crate) fn save<S: Sections + Serialize>(&self, results: &mut Results<S>) -> Result<()> {
        results.noise = Noise::of(&self.machine.lock().unwrap_or_else(PoisonError::into_inner));
        report::write_all(&self.out, results)
    }
}

/// The server flags every scenario passes: the delay and the thread counts.
pub(crate) fn server_args(delay_ms: u64, workers: usize, blocking_threads: usize) -> Vec<String> {
    ServerFlag::command_line(&[
        ServerFlag::DelayMs(delay_ms),
        ServerFlag::Workers(workers),
        ServerFlag::BlockingThreads(blocking_threads),
    ])
}
