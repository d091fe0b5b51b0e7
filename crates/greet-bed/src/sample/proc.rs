//! A process sampled from /proc (through `greet_probe::procfs`) every 20 ms while a load
//! runs: CPU %, resident memory and threads (how many live, and which thread ids were seen),
//! of one process or of a group (a database's processes).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use greet_probe::procfs::{self, TICKS_PER_SEC};

use greet_model::results::{RssFrom, Sampled, SampledBy};

use super::mib;

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
    /// Resets the process's peak-memory counter at `at`, so the peak is that load's, and
    /// samples it from then: a load that starts later (agents given a shared start) is
    /// sampled from its start, not from its agents' start-up. Stopped before `at`, it has seen
    /// nothing. Where the counter cannot be reset (a container's process when not root), the
    /// peak is the highest reading, and the figures say so.
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
            let span = t1.duration_since(t0);
            if !span.is_zero() {
                let span = span.as_secs_f64();
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
    fn sees_a_thread_started_while_sampling() {
        let sampler = Sampler::start_at(std::process::id(), Instant::now());
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
        let maxima = Sampler::start_at(u32::MAX, Instant::now()).stop();
        assert_eq!(maxima.samples, 0);
        assert_eq!(maxima.sampled().rss_max_from, None);
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
