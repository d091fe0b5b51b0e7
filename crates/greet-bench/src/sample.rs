//! Sampling a server while a load runs: from /proc (through `greet_probe::procfs`) every 20 ms,
//! CPU %, resident memory and threads (how many live, and which thread ids were seen); and,
//! for a container, from the Docker engine's own stats (about one reading a second), which is
//! all there is of a container on another host.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use greet_probe::procfs::{self, TICKS_PER_SEC};

use crate::results::{RssFrom, Sampled, SampledBy};

/// How often the sampler reads /proc.
pub const INTERVAL: Duration = Duration::from_millis(20);
/// CPU % is measured over windows at least this long: /proc counts CPU time in 10 ms ticks,
/// so a shorter window would swing by whole ticks.
pub const CPU_WINDOW: Duration = Duration::from_millis(200);

/// One reading of a process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// User + system CPU time, in ticks.
    pub cpu_ticks: u64,
    /// Resident memory, KiB.
    pub rss_kib: u64,
    /// The kernel's peak resident memory, KiB.
    pub hwm_kib: u64,
    /// Live threads.
    pub threads: u64,
}

/// Reads the process; `None` once it is gone.
pub fn read(pid: u32) -> Option<Reading> {
    let stat = procfs::stat(pid)?;
    let status = procfs::status(pid)?;
    Some(Reading {
        cpu_ticks: stat.cpu_ticks,
        rss_kib: status.rss_kib,
        hwm_kib: status.hwm_kib,
        threads: status.threads,
    })
}

/// A group's sampler looks for new children every this many readings.
pub const CHILDREN_EVERY: usize = 10;

/// Readings of several processes as one.
fn sum(readings: &[Reading]) -> Reading {
    readings.iter().fold(
        Reading {
            cpu_ticks: 0,
            rss_kib: 0,
            hwm_kib: 0,
            threads: 0,
        },
        |a, r| Reading {
            cpu_ticks: a.cpu_ticks + r.cpu_ticks,
            rss_kib: a.rss_kib + r.rss_kib,
            hwm_kib: a.hwm_kib + r.hwm_kib,
            threads: a.threads + r.threads,
        },
    )
}

/// The maxima a sampler saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Maxima {
    /// Highest CPU use over any [`CPU_WINDOW`], percent of one CPU.
    pub cpu_pct: Option<f64>,
    /// CPU use from the first reading to the last, percent of one CPU.
    pub cpu_avg_pct: Option<f64>,
    /// Highest resident memory, KiB: the kernel's peak counter when it could be reset at the
    /// start, else the highest reading.
    pub rss_kib: Option<u64>,
    /// Where `rss_kib` comes from.
    pub rss_from: Option<RssFrom>,
    /// Most live threads.
    pub threads: Option<u64>,
    /// Live threads at the last reading.
    pub threads_last: Option<u64>,
    /// Every thread id seen under /proc/PID/task: threads started during the sampling show
    /// up here even after they end, if they lived for one [`INTERVAL`] or more.
    pub thread_ids: BTreeSet<u32>,
    /// Readings taken.
    pub samples: usize,
}

/// A thread reading /proc every [`INTERVAL`] until stopped.
#[derive(Debug)]
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Maxima>,
}

impl Sampler {
    /// Resets the process's peak-memory counter, so the peak is this load's, and starts
    /// sampling it. Where the counter cannot be reset (a container's process when not root),
    /// the peak is the highest reading, and the figures say so.
    pub fn start(pid: u32) -> Self {
        Self::start_at(pid, Instant::now())
    }

    /// [`Sampler::start`] at `at`: a load that starts later (agents given a shared start) is
    /// sampled from its start, not from its agents' start-up. Stopped before `at`, it has seen
    /// nothing.
    pub fn start_at(pid: u32, at: Instant) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            loop {
                let left = at.saturating_duration_since(Instant::now());
                if flag.load(Ordering::Relaxed) {
                    return Maxima::default();
                }
                if left.is_zero() {
                    break;
                }
                std::thread::park_timeout(left);
            }
            let peak_counter = procfs::reset_peak_rss(pid).is_ok();
            let mut tracker = Tracker::new(peak_counter);
            while !flag.load(Ordering::Relaxed) {
                match read(pid) {
                    Some(reading) => tracker.add(Instant::now(), reading),
                    None => break,
                }
                tracker.maxima.thread_ids.extend(procfs::tasks(pid));
                // Woken early by `stop`, so stopping never waits out an interval.
                std::thread::park_timeout(INTERVAL);
            }
            if let Some(reading) = read(pid) {
                tracker.add(Instant::now(), reading);
            }
            tracker.maxima.thread_ids.extend(procfs::tasks(pid));
            tracker.finish()
        });
        Self { stop, thread }
    }

    /// Samples a group of processes as one: each of `roots` and its children (PostgreSQL's
    /// backends are its postmaster's), CPU time, memory and threads summed. Children are
    /// looked for again every [`CHILDREN_EVERY`] readings, as a pool opens connections. The
    /// memory peak is the highest summed reading (each process's own peak counter would
    /// not add up to the group's).
    pub fn start_processes(roots: Vec<u32>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut tracker = Tracker::new(false);
            let mut pids = Vec::new();
            let mut n = 0;
            loop {
                if n % CHILDREN_EVERY == 0 {
                    pids = roots
                        .iter()
                        .flat_map(|&root| std::iter::once(root).chain(procfs::children(root)))
                        .collect();
                }
                n += 1;
                let readings: Vec<Reading> = pids.iter().filter_map(|&pid| read(pid)).collect();
                if readings.is_empty() {
                    break;
                }
                tracker.add(Instant::now(), sum(&readings));
                if flag.load(Ordering::Relaxed) {
                    break;
                }
                std::thread::park_timeout(INTERVAL);
            }
            tracker.finish()
        });
        Self { stop, thread }
    }

    /// Stops sampling and returns what it saw.
    pub fn stop(self) -> Maxima {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.thread().unpark();
        self.thread.join().unwrap_or_default()
    }
}

/// Folds readings into [`Maxima`]; CPU % over sliding windows of at least [`CPU_WINDOW`].
#[derive(Debug)]
pub struct Tracker {
    window: std::collections::VecDeque<(Instant, u64)>,
    first: Option<(Instant, u64)>,
    last: Option<(Instant, u64)>,
    peak_counter: bool,
    /// The maxima so far.
    pub maxima: Maxima,
}

impl Tracker {
    /// A tracker that trusts the kernel's peak counter (`peak_counter`: it was reset when the
    /// load started) or only its own readings.
    pub fn new(peak_counter: bool) -> Self {
        Self {
            window: std::collections::VecDeque::new(),
            first: None,
            last: None,
            peak_counter,
            maxima: Maxima {
                rss_from: Some(if peak_counter {
                    RssFrom::PeakCounter
                } else {
                    RssFrom::Readings
                }),
                ..Maxima::default()
            },
        }
    }

    /// Adds a reading taken at `at`.
    pub fn add(&mut self, at: Instant, reading: Reading) {
        let m = &mut self.maxima;
        m.samples += 1;
        // A peak counter that was not reset counts from the process's start: not this load's.
        let rss = if self.peak_counter {
            reading.rss_kib.max(reading.hwm_kib)
        } else {
            reading.rss_kib
        };
        m.rss_kib = Some(m.rss_kib.map_or(rss, |r| r.max(rss)));
        m.threads = Some(
            m.threads
                .map_or(reading.threads, |t| t.max(reading.threads)),
        );
        m.threads_last = Some(reading.threads);
        self.first.get_or_insert((at, reading.cpu_ticks));
        self.last = Some((at, reading.cpu_ticks));
        self.window.push_back((at, reading.cpu_ticks));
        // Keep the newest reading that is at least a window old as the window's start.
        while self.window.len() > 2 && at.duration_since(self.window[1].0) >= CPU_WINDOW {
            self.window.pop_front();
        }
        let (since, ticks) = self.window[0];
        let span = at.duration_since(since);
        if span >= CPU_WINDOW {
            let used = reading.cpu_ticks.saturating_sub(ticks) as f64 / TICKS_PER_SEC as f64;
            let pct = 100.0 * used / span.as_secs_f64();
            m.cpu_pct = Some(m.cpu_pct.map_or(pct, |c| c.max(pct)));
        }
    }

    /// The maxima and the average; a span shorter than one window gets its average CPU % as
    /// its maximum too.
    pub fn finish(mut self) -> Maxima {
        if let (Some((t0, c0)), Some((t1, c1))) = (self.first, self.last) {
            let span = t1.duration_since(t0).as_secs_f64();
            if span > 0.0 {
                let used = c1.saturating_sub(c0) as f64 / TICKS_PER_SEC as f64;
                let avg = 100.0 * used / span;
                self.maxima.cpu_avg_pct = Some(avg);
                self.maxima.cpu_pct.get_or_insert(avg);
            }
        }
        self.maxima
    }
}

impl Maxima {
    /// The figures of a run.
    pub fn sampled(&self) -> Sampled {
        if self.samples == 0 {
            return Sampled::default();
        }
        Sampled {
            from: Some(SampledBy::Proc),
            cpu_max_pct: self.cpu_pct,
            cpu_avg_pct: self.cpu_avg_pct,
            rss_max_mib: self.rss_kib.map(mib),
            rss_max_from: self.rss_kib.and(self.rss_from),
            threads_max: self.threads,
            threads_last: self.threads_last,
        }
    }
}

/// `at` on the monotonic clock the samplers use: now, for a time already past.
pub fn instant_at(at: std::time::SystemTime) -> Instant {
    let ahead = at
        .duration_since(std::time::SystemTime::now())
        .unwrap_or_default();
    Instant::now() + ahead
}

/// One reading of the Docker engine's stats of a container.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EngineReading {
    /// CPU use over the engine's last interval, percent of one CPU.
    pub cpu_pct: f64,
    /// Memory use as the engine counts it (the cgroup's, less its page cache), KiB.
    pub mem_kib: u64,
    /// Tasks (threads) in the container.
    pub pids: u64,
}

/// The engine's stats of one container, streamed by `docker stats` for as long as it lives:
/// the original tool's figures, and the way to see a container on another host.
#[derive(Debug)]
pub struct EngineStats {
    child: Child,
    readings: Arc<Mutex<Vec<(Instant, EngineReading)>>>,
    by: SampledBy,
}

impl EngineStats {
    /// Starts streaming the stats of container `name`.
    pub fn start(name: &str) -> std::io::Result<Self> {
        let format = "{{.CPUPerc}}\t{{.MemUsage}}\t{{.PIDs}}";
        let args = ["stats", "--format", format, name];
        Self::stream(&args, parse_engine_line, SampledBy::DockerStats)
    }

    /// The readings `docker ARGS` prints, a line each, as `parse` reads them.
    fn stream(
        args: &[&str],
        parse: fn(&str) -> Option<EngineReading>,
        by: SampledBy,
    ) -> std::io::Result<Self> {
        let mut child = Command::new("docker")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let readings = Arc::new(Mutex::new(Vec::new()));
        let pipe = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no pipe"))?;
        let sink = Arc::clone(&readings);
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(reading) = parse(&line) {
                    sink.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((Instant::now(), reading));
                }
            }
        });
        Ok(Self {
            child,
            readings,
            by,
        })
    }

    /// The newest reading.
    pub fn latest(&self) -> Option<EngineReading> {
        self.lock().last().map(|(_, r)| *r)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Instant, EngineReading)>> {
        self.readings.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a reading has arrived after `to`.
    pub fn has_after(&self, to: Instant) -> bool {
        self.lock().iter().any(|(at, _)| *at > to)
    }

    /// [`EngineStats::window`] once the reading that covers the load's end has arrived, waited
    /// for up to 2.5 s after `to` (the engine reads about once a second, a watch task every
    /// 500 ms).
    pub async fn window_covered(&self, from: Instant, to: Instant) -> Sampled {
        let deadline = to + Duration::from_millis(2500);
        while !self.has_after(to) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.window(from, to)
    }

    /// The figures of a load from `from` to `to`: the readings that arrived in between and the
    /// first one after, which covers the load's last second (wait for it with
    /// [`EngineStats::has_after`]).
    pub fn window(&self, from: Instant, to: Instant) -> Sampled {
        let readings = self.lock();
        let after = readings.iter().find(|(at, _)| *at > to).map(|(_, r)| *r);
        let during: Vec<EngineReading> = readings
            .iter()
            .filter(|(at, _)| *at >= from && *at <= to)
            .map(|(_, r)| *r)
            .chain(after)
            .collect();
        if during.is_empty() {
            return Sampled::default();
        }
        let cpu: Vec<f64> = during.iter().map(|r| r.cpu_pct).collect();
        Sampled {
            from: Some(self.by),
            cpu_max_pct: cpu.iter().copied().reduce(f64::max),
            cpu_avg_pct: Some(cpu.iter().sum::<f64>() / cpu.len() as f64),
            rss_max_mib: during.iter().map(|r| r.mem_kib).max().map(mib),
            rss_max_from: Some(RssFrom::Readings),
            threads_max: during.iter().map(|r| r.pids).max(),
            threads_last: during.last().map(|r| r.pids),
        }
    }
}

impl EngineStats {
    /// Follows the log of `service`, a swarm service whose task runs [`watch_container`]
    /// beside a container on its node: the same readings as `docker stats`, for a container
    /// the engine the harness talks to cannot see.
    pub fn follow_service(service: &str) -> std::io::Result<Self> {
        let args = ["service", "logs", "--follow", "--raw", service];
        Self::stream(&args, parse_watch_line, SampledBy::Watch)
    }
}

/// What starts a line of [`watch_container`].
pub const WATCH_PREFIX: &str = "greet-bench-watch ";

/// A line of [`watch_container`]: `greet-bench-watch CPU% MEM_KIB TASKS`.
pub fn watch_line(reading: &EngineReading) -> String {
    format!(
        "{WATCH_PREFIX}{:.2} {} {}",
        reading.cpu_pct, reading.mem_kib, reading.pids
    )
}

/// A line [`watch_line`] wrote, wherever it is in `line` (a log's prefix before it).
pub fn parse_watch_line(line: &str) -> Option<EngineReading> {
    let at = line.find(WATCH_PREFIX)?;
    let mut fields = line[at + WATCH_PREFIX.len()..].split_whitespace();
    let reading = EngineReading {
        cpu_pct: fields.next()?.parse().ok()?,
        mem_kib: fields.next()?.parse().ok()?,
        pids: fields.next()?.parse().ok()?,
    };
    fields.next().is_none().then_some(reading)
}

/// Prints a [`watch_line`] of container `id` (under the cgroup hierarchy at `root`) to `out`
/// every `interval`, CPU % over the interval, until the container's group is gone. The group
/// not found within `wait` is an error.
pub fn watch_container(
    root: &std::path::Path,
    id: &str,
    interval: Duration,
    wait: Duration,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    let deadline = Instant::now() + wait;
    let group = loop {
        if let Some(group) = greet_probe::cgroup::Cgroup::find(root, id) {
            break group;
        }
        if Instant::now() >= deadline {
            return Err(std::io::Error::other(format!(
                "no control group of container {id} under {}",
                root.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let Some(mut last) = group.read() else {
        return Ok(());
    };
    let mut at = Instant::now();
    loop {
        std::thread::sleep(interval);
        let Some(now) = group.read() else {
            return Ok(());
        };
        let span = at.elapsed().as_secs_f64().max(1e-9);
        let used = now.cpu_usec.saturating_sub(last.cpu_usec) as f64 / 1e6;
        let reading = EngineReading {
            cpu_pct: 100.0 * used / span,
            mem_kib: now.memory_bytes / 1024,
            pids: now.pids,
        };
        writeln!(out, "{}", watch_line(&reading))?;
        out.flush()?;
        (last, at) = (now, Instant::now());
    }
}

impl Drop for EngineStats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One line of `docker stats --format '{{.CPUPerc}}\t{{.MemUsage}}\t{{.PIDs}}'`, terminal
/// escapes and all: `\x1b[H12.5%\t41.5MiB / 256MiB\t3\x1b[K`.
pub fn parse_engine_line(line: &str) -> Option<EngineReading> {
    let mut clean = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ parameters… final letter.
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            clean.push(c);
        }
    }
    let mut fields = clean.trim().split('\t');
    let cpu = fields
        .next()?
        .trim()
        .strip_suffix('%')?
        .parse::<f64>()
        .ok()?;
    let usage = fields.next()?.split('/').next()?.trim();
    let pids = fields.next()?.trim().parse::<u64>().ok()?;
    Some(EngineReading {
        cpu_pct: cpu,
        mem_kib: kib(usage)?,
        pids,
    })
}

/// `41.5MiB`, `876KiB`, `1.2GiB`, `512B` (and the decimal `kB`, `MB`, `GB`) in KiB.
fn kib(size: &str) -> Option<u64> {
    let split = size.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = size.split_at(split);
    let number: f64 = number.trim().parse().ok()?;
    let bytes = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        _ => return None,
    };
    Some((number * bytes / 1024.0).round() as u64)
}

/// Resident memory in MiB from KiB.
pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let me = read(std::process::id()).expect("own /proc entry");
        assert!(me.rss_kib > 0 && me.hwm_kib >= me.rss_kib && me.threads >= 1);
    }

    #[test]
    fn a_sampler_stopped_before_its_start_has_seen_nothing() {
        let later = Sampler::start_at(std::process::id(), Instant::now() + Duration::from_secs(30));
        let stopped = Instant::now();
        assert_eq!(later.stop(), Maxima::default());
        assert!(stopped.elapsed() < Duration::from_secs(1), "not waited out");
        let now = Sampler::start_at(std::process::id(), Instant::now());
        std::thread::sleep(INTERVAL * 3);
        assert!(now.stop().samples > 0);
    }

    #[test]
    fn a_watch_prints_a_containers_group_until_it_ends() {
        let root = std::env::temp_dir().join(format!("greet-watch-{}", std::process::id()));
        let id = "0123456789abcdef0123456789abcdef";
        let group = root.join(format!("docker/{id}"));
        std::fs::create_dir_all(&group).unwrap();
        std::fs::write(root.join("cgroup.controllers"), "cpu memory pids\n").unwrap();
        let write = |usec: u64| {
            std::fs::write(group.join("cpu.stat"), format!("usage_usec {usec}\n")).unwrap();
        };
        write(1_000_000);
        std::fs::write(group.join("memory.current"), "8388608\n").unwrap();
        std::fs::write(group.join("memory.stat"), "inactive_file 4194304\n").unwrap();
        std::fs::write(group.join("pids.current"), "5\n").unwrap();
        let (dir, short) = (root.clone(), id[..12].to_owned());
        let watch = std::thread::spawn(move || {
            let mut out = Vec::new();
            let interval = Duration::from_millis(100);
            watch_container(&dir, &short, interval, Duration::from_secs(1), &mut out).map(|()| out)
        });
        std::thread::sleep(Duration::from_millis(150));
        // 50 ms of CPU within an interval of about 100 ms.
        write(1_050_000);
        std::thread::sleep(Duration::from_millis(250));
        std::fs::remove_dir_all(&group).unwrap();
        let out = String::from_utf8(watch.join().unwrap().expect("watched")).unwrap();
        let readings: Vec<EngineReading> = out.lines().filter_map(parse_watch_line).collect();
        assert_eq!(readings.len(), out.lines().count(), "{out}");
        assert!(readings.len() >= 2, "{out}");
        assert!(
            readings.iter().all(|r| r.mem_kib == 4096 && r.pids == 5),
            "{out}"
        );
        let busiest = readings.iter().map(|r| r.cpu_pct).fold(0.0, f64::max);
        assert!((20.0..=55.0).contains(&busiest), "{out}");
        let missing = watch_container(
            &root,
            "ffffffffffffffff",
            Duration::from_millis(10),
            Duration::ZERO,
            &mut Vec::new(),
        );
        assert!(missing
            .unwrap_err()
            .to_string()
            .contains("no control group"));
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            parse_watch_line(&format!("watch.1.x@node | {}", watch_line(&readings[0]))),
            Some(readings[0])
        );
    }

    #[test]
    fn sees_a_thread_started_while_sampling() {
        let sampler = Sampler::start(std::process::id());
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let _ = rx.recv();
            // /proc/thread-self links to PID/task/TID.
            let link = std::fs::read_link("/proc/thread-self").unwrap();
            link.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .parse::<u32>()
                .unwrap()
        });
        std::thread::sleep(INTERVAL * 4);
        let _ = tx.send(());
        let tid = thread.join().unwrap();
        let maxima = sampler.stop();
        assert!(
            maxima.thread_ids.contains(&tid),
            "{tid} not in {:?}",
            maxima.thread_ids
        );
        assert!(maxima.threads_last.is_some());
    }

    #[test]
    fn cpu_percent_over_windows() {
        let t0 = Instant::now();
        let mut tracker = Tracker::new(true);
        let at = |ms| t0 + Duration::from_millis(ms);
        let reading = |ticks, rss| Reading {
            cpu_ticks: ticks,
            rss_kib: rss,
            hwm_kib: 0,
            threads: 3,
        };
        tracker.add(at(0), reading(0, 100));
        tracker.add(at(100), reading(10, 300));
        assert_eq!(tracker.maxima.cpu_pct, None, "no full window yet");
        // 20 ticks (0.2 s of CPU) in 0.2 s: one full CPU.
        tracker.add(at(200), reading(20, 200));
        assert!((tracker.maxima.cpu_pct.unwrap() - 100.0).abs() < 1e-9);
        // Then half a CPU: the maximum stays.
        tracker.add(at(400), reading(30, 200));
        tracker.add(at(600), reading(40, 200));
        assert!((tracker.maxima.cpu_pct.unwrap() - 100.0).abs() < 1e-9);
        assert_eq!(tracker.maxima.rss_kib, Some(300));
        assert_eq!(tracker.maxima.threads, Some(3));
        assert_eq!(tracker.maxima.samples, 5);
    }

    #[test]
    fn a_peak_counter_that_was_not_reset_is_not_believed() {
        let t0 = Instant::now();
        let reading = |rss, hwm| Reading {
            cpu_ticks: 0,
            rss_kib: rss,
            hwm_kib: hwm,
            threads: 1,
        };
        // The counter still holds a peak from before the load: 900 MiB at start-up.
        let mut stale = Tracker::new(false);
        stale.add(t0, reading(100, 900));
        stale.add(t0 + INTERVAL, reading(300, 900));
        let sampled = stale.finish().sampled();
        assert_eq!(sampled.rss_max_mib, Some(300.0 / 1024.0));
        assert_eq!(sampled.rss_max_from, Some(RssFrom::Readings));
        let mut reset = Tracker::new(true);
        reset.add(t0, reading(100, 400));
        let sampled = reset.finish().sampled();
        assert_eq!(sampled.rss_max_mib, Some(400.0 / 1024.0));
        assert_eq!(sampled.rss_max_from, Some(RssFrom::PeakCounter));
    }

    #[test]
    fn a_process_gone_before_sampling_says_nothing() {
        // No such process: no reset, no reading, no figure claimed.
        let maxima = Sampler::start(u32::MAX).stop();
        assert_eq!(maxima.samples, 0);
        assert_eq!(maxima.sampled().rss_max_from, None);
    }

    #[test]
    fn reads_the_engines_stats_lines() {
        let r = parse_engine_line("\x1b[J\x1b[H12.50%\t41.5MiB / 256MiB\t3\x1b[K").unwrap();
        assert_eq!((r.cpu_pct, r.mem_kib, r.pids), (12.5, 42_496, 3));
        let r = parse_engine_line("0.00%\t876KiB / 23.54GiB\t200").unwrap();
        assert_eq!((r.mem_kib, r.pids), (876, 200));
        assert_eq!(parse_engine_line(" \x1b[K"), None);
        assert_eq!(parse_engine_line("--\t-- / --\t--"), None);
        assert_eq!(kib("1GiB"), Some(1024 * 1024));
    }

    #[test]
    fn a_short_span_gets_its_average() {
        let t0 = Instant::now();
        let mut tracker = Tracker::new(true);
        let reading = |ticks| Reading {
            cpu_ticks: ticks,
            rss_kib: 1,
            hwm_kib: 0,
            threads: 1,
        };
        tracker.add(t0, reading(0));
        tracker.add(t0 + Duration::from_millis(100), reading(5));
        let maxima = tracker.finish();
        let pct = maxima.cpu_pct.unwrap();
        assert!((pct - 50.0).abs() < 1e-9, "{pct}");
        assert_eq!(maxima.cpu_avg_pct, maxima.cpu_pct);
    }
}
