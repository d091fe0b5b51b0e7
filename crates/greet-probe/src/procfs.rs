//! The one reader of Linux's /proc in the workspace: a process's CPU time, memory and threads
//! (what the harness samples and the robustness tests check), its parent (what tests use to
//! find a server a harness started), the machine's CPU time (its steal: what else ran), and the
//! machine's facts a report names.

use std::io;

/// `USER_HZ`: the unit of the CPU times in /proc/PID/stat, fixed at 100 in the kernel's ABI.
pub const TICKS_PER_SEC: u64 = 100;

/// The fields of /proc/PID/stat this workspace reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// The command name (at most 15 bytes, as the kernel keeps it).
    pub comm: String,
    /// The parent's pid.
    pub ppid: u32,
    /// User + system CPU time, in ticks of [`TICKS_PER_SEC`].
    pub cpu_ticks: u64,
}

impl Stat {
    /// CPU time used, in seconds.
    pub fn cpu_seconds(&self) -> f64 {
        self.cpu_ticks as f64 / TICKS_PER_SEC as f64
    }
}

/// Reads /proc/PID/stat; `None` once the process is gone.
pub fn stat(pid: u32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn parse_stat(text: &str) -> Option<Stat> {
    // The command name is in parentheses and may hold spaces and parentheses: it ends at
    // the last `)`.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_owned();
    let fields: Vec<&str> = text.get(close + 2..)?.split_whitespace().collect();
    // After the name: state (0), ppid (1), … utime (11), stime (12).
    let number = |i: usize| fields.get(i)?.parse::<u64>().ok();
    Some(Stat {
        comm,
        ppid: u32::try_from(number(1)?).ok()?,
        cpu_ticks: number(11)? + number(12)?,
    })
}

/// The machine's CPU time since boot, all CPUs together, from the first line of /proc/stat,
/// in ticks of [`TICKS_PER_SEC`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MachineTicks {
    /// Running anything: user (guests included), nice, system, irq, softirq.
    pub busy: u64,
    /// Idle, or waiting on I/O.
    pub idle: u64,
    /// Stolen: the hypervisor ran another machine while this one had work.
    pub steal: u64,
    /// The CPUs counted.
    pub cpus: usize,
}

impl MachineTicks {
    /// Every tick counted.
    pub fn total(&self) -> u64 {
        self.busy + self.idle + self.steal
    }
}

/// Reads the machine's CPU time from /proc/stat.
pub fn machine_ticks() -> Option<MachineTicks> {
    parse_machine(&std::fs::read_to_string("/proc/stat").ok()?)
}

fn parse_machine(text: &str) -> Option<MachineTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let n: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice]: guests are already
    // counted in user and nice.
    let at = |i: usize| n.get(i).copied().unwrap_or(0);
    Some(MachineTicks {
        busy: at(0) + at(1) + at(2) + at(5) + at(6),
        idle: at(3) + at(4),
        steal: at(7),
        cpus: text
            .lines()
            .filter(|l| {
                l.strip_prefix("cpu")
                    .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
            })
            .count(),
    })
}

/// The fields of /proc/PID/status this workspace reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Status {
    /// Resident memory, KiB.
    pub rss_kib: u64,
    /// Peak resident memory since start, or since [`reset_peak_rss`], KiB.
    pub hwm_kib: u64,
    /// Live threads.
    pub threads: u64,
}

/// Reads /proc/PID/status; `None` once the process is gone.
pub fn status(pid: u32) -> Option<Status> {
    Some(parse_status(
        &std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?,
    ))
}

fn parse_status(text: &str) -> Status {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Status {
        rss_kib: field("VmRSS:"),
        hwm_kib: field("VmHWM:"),
        threads: field("Threads:"),
    }
}

/// The syscalls of /proc/PID/io: those of the read and the write class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Io {
    /// Read-class syscalls (read, recvfrom, …).
    pub syscr: u64,
    /// Write-class syscalls (write, sendto, …).
    pub syscw: u64,
}

/// Reads /proc/PID/io; `None` once the process is gone, or where it may not be read (another
/// user's process).
pub fn io(pid: u32) -> Option<Io> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    Some(Io {
        syscr: field("syscr:")?,
        syscw: field("syscw:")?,
    })
}

/// The context switches, voluntary and not, of every live thread of the process; `None`
/// once it is gone.
pub fn context_switches(pid: u32) -> Option<u64> {
    let threads = tasks(pid);
    if threads.is_empty() {
        return None;
    }
    let each = threads.iter().filter_map(|tid| {
        let text = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
        Some(parse_switches(&text))
    });
    Some(each.sum())
}

fn parse_switches(text: &str) -> u64 {
    ["voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"]
        .iter()
        .filter_map(|name| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))?
                .trim()
                .parse::<u64>()
                .ok()
        })
        .sum()
}

/// The ids of the process's live threads (/proc/PID/task); empty once it is gone.
pub fn tasks(pid: u32) -> Vec<u32> {
    numbered_entries(&format!("/proc/{pid}/task"))
}

/// The pids of the live children of `parent`.
pub fn children(parent: u32) -> Vec<u32> {
    numbered_entries("/proc")
        .into_iter()
        .filter(|&pid| stat(pid).is_some_and(|s| s.ppid == parent))
        .collect()
}

fn numbered_entries(dir: &str) -> Vec<u32> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Resets the process's peak-RSS counter (VmHWM), so that a peak read later is the peak since
/// now. Needs the right to write /proc/PID/clear_refs (the process's owner, or root): where
/// it fails, VmHWM still counts from the process's start.
pub fn reset_peak_rss(pid: u32) -> io::Result<()> {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5")
}

/// The processor model, from /proc/cpuinfo (empty where it says none).
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_default()
}

/// The host name and the kernel release, from /proc/sys/kernel.
pub fn host_and_kernel() -> (String, String) {
    let read = |name: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    };
    (read("hostname"), read("osrelease"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_an_awkward_name() {
        let line = "4242 (a) b (c)) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 3 0";
        let stat = parse_stat(line).unwrap();
        assert_eq!(stat.comm, "a) b (c)");
        assert_eq!((stat.ppid, stat.cpu_ticks), (17, 281));
        assert!((stat.cpu_seconds() - 2.81).abs() < 1e-9);
        assert_eq!(parse_stat("4242 (x) S 1"), None);
    }

    #[test]
    fn parses_status() {
        let text = "Name:\tx\nVmHWM:\t   2048 kB\nVmRSS:\t    1024 kB\nThreads:\t3\n";
        let s = parse_status(text);
        assert_eq!((s.rss_kib, s.hwm_kib, s.threads), (1024, 2048, 3));
    }

    #[test]
    fn reads_this_process() {
        let me = std::process::id();
        let stat = stat(me).expect("own stat");
        assert_eq!(stat.ppid, std::os::unix::process::parent_id());
        let status = status(me).expect("own status");
        assert!(status.rss_kib > 0 && status.hwm_kib >= status.rss_kib && status.threads >= 1);
        assert!(tasks(me).contains(&me));
        assert!(children(stat.ppid).contains(&me));
        assert!(reset_peak_rss(me).is_ok());
        let io = io(me).expect("own io");
        assert!(io.syscr > 0, "{io:?}");
        assert!(context_switches(me).is_some());
        assert_eq!(
            parse_switches("voluntary_ctxt_switches:\t7\nnonvoluntary_ctxt_switches:\t2\n"),
            9
        );
        assert!(super::stat(u32::MAX).is_none() && super::status(u32::MAX).is_none());
        assert!(reset_peak_rss(u32::MAX).is_err());
    }

    #[test]
    fn the_machine_line_splits_busy_idle_and_steal() {
        let text = "cpu  100 5 50 1000 20 3 2 40 7 0\ncpu0 50 2 25 500 10 1 1 20 3 0\n";
        let ticks = parse_machine(text).unwrap();
        assert_eq!(
            ticks,
            MachineTicks {
                busy: 160,
                idle: 1020,
                steal: 40,
                cpus: 1
            }
        );
        assert_eq!(ticks.total(), 1220);
        assert!(parse_machine("cpu0 1 2 3\n").is_none());
        assert!(machine_ticks().is_some_and(|t| t.total() > 0));
    }
}
