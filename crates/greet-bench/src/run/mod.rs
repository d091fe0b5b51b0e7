//! One harness run from plan to report, whatever its scenarios: find (or build) the servers
//! once, split and pin the CPUs, run each scenario in turn on one runtime, write every output
//! file after each step, print the tables at the end. Ctrl-C leaves what was measured on disk.
//! What a run records of itself (machine, commit, time) is `meta`'s.

mod meta;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{bail, Result};
use greet_launch::process::{allowed_cpus, pin_current_thread};
use greet_probe::tls::Trust;
use tokio::signal::unix::{self, SignalKind};

use crate::diff;
use crate::gate;
use crate::harness::Harness;
use crate::scenario::{Agenda, Planned, Results};
use greet_bed::server::{split_cpus, Binaries};
use greet_model::plan::{self, Threshold};
use greet_model::results::Incomplete;
use greet_report as report;

/// Scheduler ticks between looks at the runtime's global queue (tokio's default: 61).
const GLOBAL_QUEUE_INTERVAL: u32 = 4;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Every server was verified and measured in every scenario.
    AllMeasured,
    /// At least one server failed (start-up, contract check, died, unclean exit).
    SomeFailed,
    /// Ctrl-C (SIGINT) or SIGTERM: results so far are on disk, marked incomplete.
    Interrupted(Signal),
    /// Every server measured, and a `--threshold` breached.
    ThresholdBreached,
}

/// Runs `agenda`.
pub(crate) fn run(agenda: Agenda) -> Result<Ending> {
    let Agenda { common, scenarios } = agenda.clone();
    if cfg!(debug_assertions) && !common.quiet {
        eprintln!("greet-bench: warning: built without --release, the load generator may be the bottleneck");
    }
    if scenarios.is_empty() {
        bail!("no scenario to run");
    }
    let binaries = Binaries::prepare(&common.bins, &agenda.binaries(), common.quiet)?;
    let cpus = allowed_cpus();
    let (server_cpus, load_cpus) = if common.pin {
        split_cpus(&cpus)
    } else {
        (Vec::new(), Vec::new())
    };
    if !load_cpus.is_empty() {
        // Before the runtime exists: its threads inherit the main thread's CPUs.
        pin_current_thread(&load_cpus)?;
    }
    let out = common
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(plan::RESULTS_DIR).join(meta::timestamp_dir()));
    let wire = greet_load::Wire::new(common.protocol, &Trust::Any)?.resuming(common.tls_resume);
    let harness = Harness {
        wire,
        common,
        server_cpus,
        load_cpus,
        cpus,
        binaries,
        out,
        machine: Default::default(),
        loads: Default::default(),
    };
    let mut results = Results::new(meta::meta(&harness, &scenarios));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(harness.load_cpu_count())
        // The open-loop schedule is kept by a thread of its own, whose hand-offs land in the
        // runtime's global queue: polled every 61 ticks by default, a busy runtime would send
        // a request scheduled now up to a millisecond late.
        .global_queue_interval(GLOBAL_QUEUE_INTERVAL)
        .enable_all()
        .build()?;
    let started = AtomicUsize::new(0);
    runtime.block_on(async {
        let mut term = unix::signal(SignalKind::terminate())?;
        let signal = tokio::select! {
            verdict = run_all(&harness, &scenarios, &mut results, &started) => return verdict,
            _ = tokio::signal::ctrl_c() => Signal::Int,
            _ = term.recv() => Signal::Term,
        };
        // The run's future is gone, and with it every server it had started: what they
        // measured is marked as cut short, beside what never ran.
        let started = started.load(Ordering::Relaxed);
        let name = |p: &Planned| p.kind().name().to_owned();
        let incomplete = Incomplete {
            signal: signal.name().to_owned(),
            cut_short: started
                .checked_sub(1)
                .and_then(|i| scenarios.get(i))
                .map(name),
            not_run: scenarios.iter().skip(started).map(name).collect(),
        };
        eprintln!("\ngreet-bench: {incomplete}");
        results.incomplete = Some(incomplete);
        if started > 0 {
            harness.save(&mut results)?;
            eprintln!(
                "greet-bench: interrupted; results so far are in {}",
                harness.out.display()
            );
        }
        Ok(Ending::Interrupted(signal))
    })
}

/// A signal that ends a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// Ctrl-C.
    Int,
    /// `kill`, a container's stop.
    Term,
}

impl Signal {
    /// Its name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Int => "SIGINT",
            Self::Term => "SIGTERM",
        }
    }

    /// The exit code a shell gives a process it ended: 128 + its number.
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            Self::Int => 130,
            Self::Term => 143,
        }
    }
}

async fn run_all(
    harness: &Harness,
    scenarios: &[Planned],
    results: &mut Results,
    started: &AtomicUsize,
) -> Result<Ending> {
    // Nothing is written before a scenario has checked its plan: a run refused at once (no
    // Docker engine, nothing to benchmark) leaves no empty results directory behind.
    let mut all_ok = true;
    for scenario in scenarios {
        started.fetch_add(1, Ordering::Relaxed);
        let began = std::time::Instant::now();
        let ok = scenario.run(harness, results).await?;
        all_ok &= ok;
        harness.save(results)?;
        // Where a run is several scenarios, each one's time says where its hour went.
        if scenarios.len() > 1 && !harness.common.quiet {
            let secs = began.elapsed().as_secs();
            let name = scenario.kind().name();
            eprintln!(
                "greet-bench: {name} done in {} min {:02} s",
                secs / 60,
                secs % 60
            );
        }
    }
    print!("{}", report::text(results));
    let (relative, absolute): (Vec<Threshold>, Vec<Threshold>) = harness
        .common
        .thresholds
        .iter()
        .cloned()
        .partition(|t| t.ratio);
    let mut compared = None;
    if let Some(name) = &harness.common.baseline {
        let old = diff::read(&plan::baseline_dir(name))?;
        compared = Some(diff::diff(&old, results, diff::NOISE, &[])?);
    }
    // Held before the comparison prints, so that its rows say which thresholds they breach.
    let by_ratio = gate::check_ratios(&relative, compared.as_mut());
    if let (Some(name), Some(compared)) = (&harness.common.baseline, &compared) {
        print!(
            "\nAgainst baseline {name}: {}",
            diff::render(compared, diff::Format::Text)
        );
    }
    if !(absolute.is_empty() && relative.is_empty()) {
        results.thresholds = gate::check(&absolute, &report::points(results), false);
        results.thresholds.extend(by_ratio);
        for checked in &results.thresholds {
            println!("{checked}");
        }
        harness.save(results)?;
    }
    if let Some(name) = &harness.common.save_baseline {
        // A baseline missing a server would leave its figures unpaired, and unjudged, later.
        if all_ok {
            let dir = plan::baseline_dir(name);
            report::write_all(&dir, results)?;
            eprintln!("greet-bench: baseline {name} saved in {}", dir.display());
        } else {
            eprintln!("greet-bench: baseline {name} not saved: a server failed");
        }
    }
    if !harness.common.quiet {
        let what = if harness.out.join("report.html").is_file() {
            "results, charts and report.html"
        } else {
            "results.json"
        };
        eprintln!("greet-bench: {what} in {}", harness.out.display());
    }
    Ok(if !all_ok {
        Ending::SomeFailed
    } else if results.thresholds.iter().any(|t| !t.held) {
        Ending::ThresholdBreached
    } else {
        Ending::AllMeasured
    })
}
