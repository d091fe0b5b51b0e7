//! One harness run from start to finish, whatever its scenarios: build the servers once, pin
//! the harness to its CPUs, run each scenario in turn on one runtime, write every output file
//! after each step, print the tables at the end. Ctrl-C leaves what was measured on disk.
//!
//! [`Bench`] is what every scenario shares: the CPU split, where binaries and results are,
//! and starting, stopping and watching a server.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::{Common, LadderArgs, LoopsArgs, SoakArgs, SweepArgs};
use crate::compare;
use crate::report;
use crate::results::{Cpus, Flags, Meta, Results};
use crate::scenario;
use crate::server::{self, ServerProcess};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every server was verified and measured in every scenario.
    AllMeasured,
    /// At least one server failed (start-up, contract check, died, unclean exit).
    SomeFailed,
    /// Ctrl-C: results so far are on disk.
    Interrupted,
}

/// One scenario with its settings.
#[derive(Debug, Clone)]
pub enum Scenario {
    /// The original experiment.
    Ladder(LadderArgs),
    /// Fixed-count keep-alive loops.
    Loops(LoopsArgs),
    /// Duration-bounded load counting threads.
    Soak(SoakArgs),
    /// Thread-count grid.
    Sweep(SweepArgs),
}

impl Scenario {
    fn name(&self) -> &'static str {
        match self {
            Self::Ladder(_) => "ladder",
            Self::Loops(_) => "loops",
            Self::Soak(_) => "soak",
            Self::Sweep(_) => "sweep",
        }
    }

    /// The servers (short names) this scenario starts from binaries.
    fn binaries(&self) -> Vec<String> {
        match self {
            Self::Ladder(args) if args.docker => Vec::new(),
            Self::Ladder(args) => match &args.servers {
                Some(specs) => specs.iter().map(|s| s.short.clone()).collect(),
                None if args.targets.is_empty() => scenario::servers(&None),
                None => Vec::new(),
            },
            Self::Loops(args) => scenario::servers(&args.servers),
            Self::Soak(args) => scenario::servers(&args.servers),
            Self::Sweep(args) => scenario::servers(&args.servers),
        }
    }
}

/// What every scenario shares.
pub struct Bench {
    /// The shared flags.
    pub common: Common,
    /// CPUs the servers are pinned to (empty: not pinned).
    pub server_cpus: Vec<usize>,
    /// CPUs the load generator is pinned to (empty: not pinned).
    pub load_cpus: Vec<usize>,
    /// Every CPU the harness may use.
    pub cpus: Vec<usize>,
    /// Where the server binaries are.
    pub bin_dir: PathBuf,
    /// Where results go.
    pub out: PathBuf,
}

impl Bench {
    /// `--workers` when not told otherwise: the CPUs a server runs on.
    pub fn default_workers(&self) -> usize {
        if self.server_cpus.is_empty() {
            self.cpus.len()
        } else {
            self.server_cpus.len()
        }
    }

    /// A status line on stderr, unless quiet.
    pub fn say(&self, who: &str, line: &str) {
        if !self.common.quiet {
            eprintln!("greet-bench: {who}: {line}");
        }
    }

    /// The per-request timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.common.timeout_secs)
    }

    /// Starts server `short` with `args`, pinned, and waits until it answers.
    pub async fn start(&self, short: &str, args: Vec<String>) -> Result<ServerProcess> {
        let bin = server::locate(&self.bin_dir, short)?;
        let cpus = self.server_cpus.clone();
        tokio::task::spawn_blocking(move || ServerProcess::start(&bin, &args, &cpus))
            .await
            .context("start-up task failed")?
    }

    /// Stops `process` with SIGTERM; an unclean exit is an error.
    pub async fn stop(&self, process: ServerProcess) -> Result<()> {
        let grace = Duration::from_secs(12);
        let exit = tokio::task::spawn_blocking(move || process.stop(grace))
            .await
            .context("stop task failed")??;
        if !exit.success {
            bail!("did not exit cleanly on SIGTERM ({})", exit.text);
        }
        Ok(())
    }

    /// An error if `process` has exited, with its last words.
    pub fn ensure_alive(&self, process: &mut ServerProcess) -> Result<()> {
        if let Some(exit) = process.exited() {
            bail!(
                "server exited mid-run ({}); stderr: {}",
                exit.text,
                process.stderr_tail()
            );
        }
        Ok(())
    }

    /// Writes every output file.
    pub fn save(&self, results: &Results) -> Result<()> {
        report::write_all(&self.out, results)
    }

    /// A progress bar of `len` steps on stderr fed from `done`, unless quiet (indicatif draws
    /// nothing when stderr is not a terminal). Stop it with [`Progress::finish`].
    pub fn progress(&self, prefix: String, len: u64, done: Arc<AtomicUsize>) -> Progress {
        if self.common.quiet {
            return Progress(None);
        }
        let bar = ProgressBar::new(len);
        bar.set_style(
            ProgressStyle::with_template("{prefix:>28} {bar:40} {pos}/{len} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_prefix(prefix);
        let feed = bar.clone();
        let ticker = tokio::spawn(async move {
            loop {
                feed.set_position(done.load(Ordering::Relaxed) as u64);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Progress(Some((bar, ticker)))
    }
}

/// A progress bar and the task feeding it.
pub struct Progress(Option<(ProgressBar, tokio::task::JoinHandle<()>)>);

impl Progress {
    /// Removes the bar.
    pub fn finish(self) {
        if let Some((bar, ticker)) = self.0 {
            ticker.abort();
            bar.finish_and_clear();
        }
    }
}

/// The server flags every scenario passes: the delay and the thread counts.
pub fn server_args(delay_ms: u64, workers: usize, blocking_threads: usize) -> Vec<String> {
    vec![
        "--delay-ms".into(),
        delay_ms.to_string(),
        "--workers".into(),
        workers.to_string(),
        "--blocking-threads".into(),
        blocking_threads.to_string(),
    ]
}

/// Runs `scenarios` in order with the `common` settings.
pub fn run(common: Common, scenarios: Vec<Scenario>) -> Result<Verdict> {
    if cfg!(debug_assertions) && !common.quiet {
        eprintln!("greet-bench: warning: built without --release, the load generator may be the bottleneck");
    }
    if scenarios.is_empty() {
        bail!("no scenario to run");
    }
    let mut shorts: Vec<String> = scenarios.iter().flat_map(Scenario::binaries).collect();
    shorts.sort_unstable();
    shorts.dedup();
    let bin_dir = match &common.bin_dir {
        Some(dir) => dir.clone(),
        None => {
            if !common.no_build && !shorts.is_empty() {
                if !common.quiet {
                    eprintln!(
                        "greet-bench: building the release servers ({})",
                        shorts.join(", ")
                    );
                }
                let shorts: Vec<&str> = shorts.iter().map(String::as_str).collect();
                server::build(&shorts, common.quiet)?;
            }
            if shorts.is_empty() {
                PathBuf::new()
            } else {
                server::default_bin_dir()?
            }
        }
    };
    let cpus = server::allowed_cpus();
    let (server_cpus, load_cpus) = if common.no_pin {
        (Vec::new(), Vec::new())
    } else {
        server::split_cpus(&cpus)
    };
    if !load_cpus.is_empty() {
        // Before the runtime exists: its threads inherit the main thread's CPUs.
        server::pin_current_thread(&load_cpus)?;
    }
    let load_threads = if load_cpus.is_empty() {
        cpus.len()
    } else {
        load_cpus.len()
    };
    let out = common
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(timestamp_dir()));
    let bench = Bench {
        common,
        server_cpus,
        load_cpus,
        cpus,
        bin_dir,
        out,
    };
    let mut results = Results {
        meta: meta(&bench, &scenarios),
        servers: Vec::new(),
        ladder_comparisons: Vec::new(),
        loops: None,
        soak: None,
        sweep: None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(load_threads.max(1))
        .enable_all()
        .build()?;
    runtime.block_on(async {
        tokio::select! {
            verdict = run_all(&bench, &scenarios, &mut results) => verdict,
            _ = tokio::signal::ctrl_c() => {
                eprintln!("\ngreet-bench: interrupted; results so far are in {}", bench.out.display());
                Ok(Verdict::Interrupted)
            }
        }
    })
}

async fn run_all(bench: &Bench, scenarios: &[Scenario], results: &mut Results) -> Result<Verdict> {
    // Nothing is written before a scenario has checked its plan: a run refused at once (no
    // Docker engine, nothing to benchmark) leaves no empty results directory behind.
    let mut all_ok = true;
    for scenario in scenarios {
        let ok = match scenario {
            Scenario::Ladder(args) => scenario::ladder::run(bench, args, results).await?,
            Scenario::Loops(args) => scenario::loops::run(bench, args, results).await?,
            Scenario::Soak(args) => scenario::soak::run(bench, args, results).await?,
            Scenario::Sweep(args) => scenario::sweep::run(bench, args, results).await?,
        };
        all_ok &= ok;
        bench.save(results)?;
    }
    print!("{}", report::text(results));
    if !bench.common.quiet {
        eprintln!(
            "greet-bench: results, charts and report.html in {}",
            bench.out.display()
        );
    }
    Ok(if all_ok {
        Verdict::AllMeasured
    } else {
        Verdict::SomeFailed
    })
}

/// Resident memory in MiB from KiB.
pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn meta(bench: &Bench, scenarios: &[Scenario]) -> Meta {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    };
    let model = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_default();
    let crate_versions: BTreeMap<String, String> = env!("GREET_CRATE_VERSIONS")
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let ladder = scenarios.iter().find_map(|s| match s {
        Scenario::Ladder(args) => Some(args),
        _ => None,
    });
    Meta {
        machine: read("/proc/sys/kernel/hostname"),
        cpus: Cpus {
            count: bench.cpus.len(),
            model,
            server: bench.server_cpus.clone(),
            load: bench.load_cpus.clone(),
        },
        kernel: read("/proc/sys/kernel/osrelease"),
        crate_versions,
        scenarios: scenarios.iter().map(|s| s.name().to_owned()).collect(),
        flags: ladder.map(|args| Flags {
            delay_ms: args.delay(),
            workers: args
                .workers
                .map_or_else(|| bench.default_workers(), |w| w.get()),
            blocking_threads: args.blocking_threads.get(),
            concurrency: args.levels(),
            repeats: args.repeats.get(),
            timeout_s: bench.common.timeout_secs as f64,
        }),
        comparison_method: compare::METHOD.to_owned(),
        started_at: rfc3339(SystemTime::now()),
        mode: if ladder.is_some_and(|a| a.docker) {
            "docker"
        } else {
            "process"
        }
        .to_owned(),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` for `t`.
pub fn rfc3339(t: SystemTime) -> String {
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

    #[test]
    fn formats_utc_times() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_796_003_633);
        assert_eq!(rfc3339(t), "2026-11-30T01:53:53Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00Z");
    }
}
