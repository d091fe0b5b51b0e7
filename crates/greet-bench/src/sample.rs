//! Sampling a server process from /proc while a level runs: CPU %, resident memory, threads
//! (how many live, and which thread ids were seen).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the sampler reads /proc.
pub const INTERVAL: Duration = Duration::from_millis(20);
/// CPU % is measured over windows at least this long: /proc counts CPU time in 10 ms ticks,
/// so a shorter window would swing by whole ticks.
pub const CPU_WINDOW: Duration = Duration::from_millis(200);
/// `USER_HZ`: the unit of /proc/PID/stat's CPU times, fixed at 100 in the kernel's ABI.
const TICKS_PER_SEC: f64 = 100.0;

/// One reading of a process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// User + system CPU time, in ticks.
    pub cpu_ticks: u64,
    /// Resident memory, KiB.
    pub rss_kib: u64,
    /// Peak resident memory since start (or since [`reset_peak_rss`]), KiB.
    pub hwm_kib: u64,
    /// Live threads.
    pub threads: u64,
}

/// Reads /proc/PID/stat and /proc/PID/status; `None` once the process is gone.
pub fn read(pid: u32) -> Option<Reading> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: count fields after it.
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of stat (utime, stime) are the 12th and 13th after the name.
    let cpu_ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some(Reading {
        cpu_ticks,
        rss_kib: field("VmRSS:").unwrap_or(0),
        hwm_kib: field("VmHWM:").unwrap_or(0),
        threads: field("Threads:").unwrap_or(0),
    })
}

/// The ids of the process's live threads (/proc/PID/task), empty once it is gone.
pub fn task_ids(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Resets the process's peak-RSS counter (VmHWM), so a level's peak is its own. Needs the
/// right to write /proc/PID/clear_refs (the process's owner, or root).
pub fn reset_peak_rss(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// The maxima a sampler saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Maxima {
    /// Highest CPU use over any [`CPU_WINDOW`], percent of one CPU.
    pub cpu_pct: Option<f64>,
    /// CPU use from the first reading to the last, percent of one CPU.
    pub cpu_avg_pct: Option<f64>,
    /// Highest resident memory, KiB (the larger of the sampled RSS and the kernel's peak).
    pub rss_kib: Option<u64>,
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
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Maxima>,
}

impl Sampler {
    /// Starts sampling `pid`.
    pub fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut tracker = Tracker::default();
            while !flag.load(Ordering::Relaxed) {
                match read(pid) {
                    Some(reading) => tracker.add(Instant::now(), reading),
                    None => break,
                }
                tracker.maxima.thread_ids.extend(task_ids(pid));
                // Woken early by `stop`, so stopping never waits out an interval.
                std::thread::park_timeout(INTERVAL);
            }
            if let Some(reading) = read(pid) {
                tracker.add(Instant::now(), reading);
            }
            tracker.maxima.thread_ids.extend(task_ids(pid));
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
#[derive(Default)]
pub struct Tracker {
    window: std::collections::VecDeque<(Instant, u64)>,
    first: Option<(Instant, u64)>,
    last: Option<(Instant, u64)>,
    /// The maxima so far.
    pub maxima: Maxima,
}

impl Tracker {
    /// Adds a reading taken at `at`.
    pub fn add(&mut self, at: Instant, reading: Reading) {
        let m = &mut self.maxima;
        m.samples += 1;
        let rss = reading.rss_kib.max(reading.hwm_kib);
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
            let used = reading.cpu_ticks.saturating_sub(ticks) as f64 / TICKS_PER_SEC;
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
                let used = c1.saturating_sub(c0) as f64 / TICKS_PER_SEC;
                let avg = 100.0 * used / span;
                self.maxima.cpu_avg_pct = Some(avg);
                self.maxima.cpu_pct.get_or_insert(avg);
            }
        }
        self.maxima
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let me = read(std::process::id()).expect("own /proc entry");
        assert!(me.rss_kib > 0 && me.hwm_kib >= me.rss_kib && me.threads >= 1);
        let ids = task_ids(std::process::id());
        assert!(ids.contains(&std::process::id()), "{ids:?}");
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
        let mut tracker = Tracker::default();
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
    fn a_short_span_gets_its_average() {
        let t0 = Instant::now();
        let mut tracker = Tracker::default();
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
