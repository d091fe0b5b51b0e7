//! The scenarios, one module each. Each `run` appends its figures to [`crate::results::Results`]
//! (saving after every step) and returns false when a server failed: a failed server is
//! recorded and the scenario goes on with the next one.

pub mod ladder;
pub mod loops;
pub mod soak;
pub mod sweep;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use crate::load::{self, Sessions, Stop, Tally};
use crate::results::LoadRun;
use crate::runner::Bench;
use crate::sample::{Maxima, Sampler};
use crate::server::ServerProcess;

/// Runs keep-alive load against `process` while sampling it, with a progress bar named
/// `label`. The load's figures, and what the sampler saw.
pub async fn keep_alive(
    bench: &Bench,
    process: &ServerProcess,
    sessions: &Sessions,
    label: String,
) -> (LoadRun, Maxima) {
    let sampler = Sampler::start(process.pid());
    let done = Arc::new(AtomicUsize::new(0));
    let len = match sessions.stop {
        Stop::Each(n) => (n * sessions.users) as u64,
        Stop::Total(n) => n as u64,
        // No count to reach: the bar shows requests against an open end.
        Stop::After(_) => 0,
    };
    let bar = bench.progress(label, len, Arc::clone(&done));
    let tally = load::sessions(sessions, done).await;
    bar.finish();
    let maxima = sampler.stop();
    (load_run(&tally, maxima.cpu_avg_pct), maxima)
}

/// The figures of one keep-alive load.
pub fn load_run(tally: &Tally, cpu_avg_pct: Option<f64>) -> LoadRun {
    LoadRun {
        requests: tally.requests(),
        success_rate: tally.success_rate(),
        elapsed_s: tally.elapsed.as_secs_f64(),
        requests_per_s: tally.requests_per_s(),
        average_ms: tally.average_ms(),
        p99_ms: tally.quantile_ms(0.99),
        connects: tally.connects,
        errors: tally.errors.clone(),
        cpu_avg_pct,
    }
}

/// The servers a scenario runs, as short names.
pub fn servers(chosen: &Option<Vec<String>>) -> Vec<String> {
    chosen.clone().unwrap_or_else(|| {
        crate::server::KNOWN
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    })
}

/// Verifies a freshly started server against the contract.
pub async fn check(process: &ServerProcess) -> anyhow::Result<()> {
    use anyhow::Context as _;
    greet_conformance::check(&format!("http://{}", process.addr()))
        .await
        .context("contract check failed")
}

/// Says on stderr that `who` failed in `scenario`, and the record of it for `results.json`.
pub fn failure(scenario: &str, who: String, err: &anyhow::Error) -> crate::results::Failure {
    let error = format!("{err:#}");
    eprintln!("greet-bench: {scenario}: {who}: {error}");
    crate::results::Failure { server: who, error }
}

/// Lets the last load's connections close before the next one starts.
pub async fn settle() {
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
}
