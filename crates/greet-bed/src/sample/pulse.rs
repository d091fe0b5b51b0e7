//! The machine's pace while a load runs: how much CPU time a fixed piece of kernel work takes
//! on each of its CPUs, a few times a second.
//!
//! A shared machine's speed drifts over minutes with nothing the harness otherwise sees: no
//! steal, no other program, yet a server's capacity in one round of a run was a fifth under
//! the round before, and every server's alike. Its CPU time per request rose with it, and so
//! did the time this unit of work took (500 one-byte round trips through a pipe: system calls
//! and a wake-up's worth of scheduler, as a server's requests are), while a loop of plain
//! arithmetic hardly moved. The unit is timed on the thread's own CPU clock, so a CPU busy
//! with the load (the thread waiting its turn) does not count, and a CPU that is slower does.
//!
//! Each CPU's thread is pinned to it and runs a unit every `EVERY`: about 0.4 ms of a 250 ms
//! period, under 0.2% of each CPU.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::time::{clock_gettime, ClockId};
use nix::unistd::Pid;

/// The unit: this many one-byte round trips through a pipe.
const ROUND_TRIPS: usize = 500;

/// How often each CPU runs a unit.
const EVERY: Duration = Duration::from_millis(250);

/// The threads timing the unit, one per CPU this process may run on.
#[derive(Debug)]
pub struct Pulse {
    threads: Vec<(mpsc::Sender<()>, JoinHandle<Vec<f64>>)>,
    /// The CPU time its units took so far, nanoseconds: the harness's own CPU, which is not
    /// the load generator's.
    spent_ns: Arc<AtomicU64>,
}

impl Pulse {
    /// Starts a thread on each CPU this process may run on; none where the affinity cannot be
    /// read or set.
    pub fn start() -> Self {
        let spent_ns = Arc::new(AtomicU64::new(0));
        let Ok(allowed) = sched_getaffinity(Pid::from_raw(0)) else {
            return Self {
                threads: Vec::new(),
                spent_ns,
            };
        };
        let threads = (0..CpuSet::count())
            .filter(|&cpu| allowed.is_set(cpu).unwrap_or(false))
            .filter_map(|cpu| {
                let (stop, stopped) = mpsc::channel();
                let spent = Arc::clone(&spent_ns);
                let thread = std::thread::Builder::new()
                    .name(format!("pulse-{cpu}"))
                    .spawn(move || beat(cpu, &stopped, &spent))
                    .ok()?;
                Some((stop, thread))
            })
            .collect();
        Self { threads, spent_ns }
    }

    /// The CPU time its units took so far, seconds.
    pub fn spent_s(&self) -> f64 {
        self.spent_ns.load(Ordering::Relaxed) as f64 / 1e9
    }

    /// Stops: the median time the unit took over every CPU, microseconds (none when no unit
    /// was timed).
    pub fn stop(self) -> Option<f64> {
        let mut all: Vec<f64> = Vec::new();
        for (stop, thread) in self.threads {
            let _ = stop.send(());
            all.extend(thread.join().unwrap_or_default());
        }
        (!all.is_empty()).then(|| greet_stats::median(&all))
    }
}

/// On `cpu`, a unit every [`EVERY`] until told to stop: each unit's CPU time, microseconds,
/// also added to `spent` (nanoseconds).
fn beat(cpu: usize, stopped: &mpsc::Receiver<()>, spent: &AtomicU64) -> Vec<f64> {
    let mut on = CpuSet::new();
    if on.set(cpu).is_err() || sched_setaffinity(Pid::from_raw(0), &on).is_err() {
        return Vec::new();
    }
    let Ok((mut reader, mut writer)) = std::io::pipe() else {
        return Vec::new();
    };
    let mut took = Vec::new();
    loop {
        if let Some(us) = unit(&mut reader, &mut writer) {
            spent.fetch_add((us * 1e3) as u64, Ordering::Relaxed);
            took.push(us);
        }
        match stopped.recv_timeout(EVERY) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => return took,
        }
    }
}

/// One unit, timed on the thread's CPU clock: microseconds, or none when a write or read
/// failed.
fn unit(reader: &mut impl Read, writer: &mut impl Write) -> Option<f64> {
    let cpu_time = || {
        clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
            .ok()
            .map(|t| t.tv_sec() as f64 * 1e6 + t.tv_nsec() as f64 / 1e3)
    };
    let from = cpu_time()?;
    let mut byte = [0u8; 1];
    for _ in 0..ROUND_TRIPS {
        writer.write_all(&byte).ok()?;
        reader.read_exact(&mut byte).ok()?;
    }
    Some(cpu_time()? - from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each CPU times a unit at once, then every 250 ms: stopped at once, a pulse has one
    /// reading of a few hundred microseconds; a unit of kernel work is never free.
    #[test]
    fn a_pulse_times_the_unit_on_every_cpu() {
        let pulse = Pulse::start();
        assert!(!pulse.threads.is_empty(), "a thread per CPU");
        std::thread::sleep(Duration::from_millis(50));
        let spent = pulse.spent_s();
        assert!(spent > 0.0 && spent < 0.1, "{spent} s");
        let us = pulse.stop().expect("timed");
        assert!(us > 10.0 && us < 100_000.0, "{us} µs");
    }
}
