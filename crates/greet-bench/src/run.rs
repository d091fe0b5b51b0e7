//! One harness run from plan to report, whatever its scenarios: find (or build) the servers
//! once, split and pin the CPUs, run each scenario in turn on one runtime, write every output
//! file after each step, print the tables at the end. Ctrl-C leaves what was measured on disk.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{bail, Result};
use greet_launch::process::{allowed_cpus, pin_current_thread};
use greet_probe::procfs;
use greet_probe::tls::Trust;

use crate::compare;
use crate::gate;
use crate::harness::Harness;
use crate::plan::{self, Plan, Scenario, Threshold};
use crate::points;
use crate::report;
use crate::results::{Cpus, Meta, Results};
use crate::scenario;
use crate::server::{split_cpus, workspace_root, Binaries};
use crate::stats::mann_whitney;

/// Scheduler ticks between looks at the runtime's global queue (tokio's default: 61).
const GLOBAL_QUEUE_INTERVAL: u32 = 4;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Every server was verified and measured in every scenario.
    AllMeasured,
    /// At least one server failed (start-up, contract check, died, unclean exit).
    SomeFailed,
    /// Ctrl-C: results so far are on disk.
    Interrupted,
    /// Every server measured, and a `--threshold` breached.
    ThresholdBreached,
}

/// Runs `plan`.
pub(crate) fn run(plan: Plan) -> Result<Verdict> {
    let Plan { common, scenarios } = plan.clone();
    if cfg!(debug_assertions) && !common.quiet {
        eprintln!("greet-bench: warning: built without --release, the load generator may be the bottleneck");
    }
    if scenarios.is_empty() {
        bail!("no scenario to run");
    }
    let binaries = Binaries::prepare(&common.bins, &plan.binaries(), common.quiet)?;
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
        .unwrap_or_else(|| PathBuf::from(plan::RESULTS_DIR).join(timestamp_dir()));
    let wire = greet_load::Wire::new(common.protocol, &Trust::Any)?.resuming(common.tls_resume);
    let harness = Harness {
        wire,
        common,
        server_cpus,
        load_cpus,
        cpus,
        binaries,
        out,
    };
    let mut results = Results::new(meta(&harness, &scenarios));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(harness.load_cpu_count())
        // The open-loop schedule is kept by a thread of its own, whose hand-offs land in the
        // runtime's global queue: polled every 61 ticks by default, a busy runtime would send
        // a request scheduled now up to a millisecond late.
        .global_queue_interval(GLOBAL_QUEUE_INTERVAL)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        tokio::select! {
            verdict = run_all(&harness, &scenarios, &mut results) => verdict,
            _ = tokio::signal::ctrl_c() => {
                eprintln!("\ngreet-bench: interrupted; results so far are in {}", harness.out.display());
                Ok(Verdict::Interrupted)
            }
        }
    })
}

async fn run_all(
    harness: &Harness,
    scenarios: &[Scenario],
    results: &mut Results,
) -> Result<Verdict> {
    // Nothing is written before a scenario has checked its plan: a run refused at once (no
    // Docker engine, nothing to benchmark) leaves no empty results directory behind.
    let mut all_ok = true;
    for scenario in scenarios {
        let ok = match scenario {
            Scenario::Ladder(plan) => scenario::ladder::run(harness, plan, results).await?,
            Scenario::Loops(plan) => scenario::loops::run(harness, plan, results).await?,
            Scenario::Soak(plan) => scenario::soak::run(harness, plan, results).await?,
            Scenario::Sweep(plan) => scenario::sweep::run(harness, plan, results).await?,
            Scenario::Business(plan) => scenario::business::run(harness, plan, results).await?,
            Scenario::Rate(plan) => scenario::rate::run(harness, plan, results).await?,
            Scenario::Capacity(plan) => scenario::capacity::run(harness, plan, results).await?,
            Scenario::Protocols(plan) => scenario::protocols::run(harness, plan, results).await?,
            Scenario::TechEmpower(plan) => {
                scenario::techempower::run(harness, plan, results).await?
            }
        };
        all_ok &= ok;
        harness.save(results)?;
    }
    print!("{}", report::text(results));
    let mut compared = None;
    if let Some(name) = &harness.common.baseline {
        let old = compare::read(&plan::baseline_dir(name))?;
        let diff = compare::diff(&old, results, compare::NOISE, &[])?;
        print!(
            "\nAgainst baseline {name}: {}",
            report::comparison::render(&diff, report::comparison::Format::Text)
        );
        compared = Some(diff);
    }
    let (relative, absolute): (Vec<Threshold>, Vec<Threshold>) = harness
        .common
        .thresholds
        .iter()
        .cloned()
        .partition(|t| t.ratio);
    if !(absolute.is_empty() && relative.is_empty()) {
        results.thresholds = gate::check(&absolute, &points::points(results), false);
        results
            .thresholds
            .extend(gate::check_ratios(&relative, compared.as_ref()));
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
        eprintln!(
            "greet-bench: results, charts and report.html in {}",
            harness.out.display()
        );
    }
    Ok(if !all_ok {
        Verdict::SomeFailed
    } else if results.thresholds.iter().any(|t| !t.held) {
        Verdict::ThresholdBreached
    } else {
        Verdict::AllMeasured
    })
}

fn meta(harness: &Harness, scenarios: &[Scenario]) -> Meta {
    let (machine, kernel) = procfs::host_and_kernel();
    let crate_versions: BTreeMap<String, String> = env!("GREET_CRATE_VERSIONS")
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    Meta {
        machine,
        cpus: Cpus {
            count: harness.cpus.len(),
            model: procfs::cpu_model(),
            server: harness.server_cpus.clone(),
            load: harness.load_cpus.clone(),
            stores: harness.store_cpus().to_vec(),
        },
        kernel,
        crate_versions,
        scenarios: scenarios.iter().map(|s| s.name().to_owned()).collect(),
        comparison_method: mann_whitney::METHOD.to_owned(),
        started_at: rfc3339(SystemTime::now()),
        commit: commit(),
        rustc: Some(env!("GREET_RUSTC").to_owned()).filter(|v| !v.is_empty()),
    }
}

/// `git rev-parse --short HEAD` of the workspace this harness was built from, `+dirty` with
/// uncommitted changes; none without git or the workspace.
fn commit() -> Option<String> {
    let root = workspace_root()?;
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(args)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let head = git(&["rev-parse", "--short", "HEAD"]).filter(|h| !h.is_empty())?;
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{head}+dirty") } else { head })
}

/// `YYYY-MM-DDTHH:MM:SSZ` for `t`.
pub(crate) fn rfc3339(t: SystemTime) -> String {
    let (date, secs) = civil(t);
    format!(
        "{date}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// `YYYYMMDDTHHMMSSZ` for now: the default results directory.
fn timestamp_dir() -> String {
    let (date, secs) = civil(SystemTime::now());
    format!(
        "{}T{:02}{:02}{:02}Z",
        date.replace('-', ""),
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The UTC date `YYYY-MM-DD` and seconds into that day (Howard Hinnant's civil-from-days).
fn civil(t: SystemTime) -> (String, u64) {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (format!("{year:04}-{month:02}-{day:02}"), secs % 86_400)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_utc_times() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_796_003_633);
        assert_eq!(rfc3339(t), "2026-11-30T01:53:53Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00Z");
    }
}
