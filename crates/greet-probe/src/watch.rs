//! The watch task: a container's figures read from its control group ([`crate::cgroup`])
//! every interval by a process beside it on its node, each printed as one [`Usage`] line
//! that whoever follows the task's log reads back ([`Usage::parse_line`]). What `docker
//! stats` shows, for a container on a node the engine in hand cannot see into.

use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::cgroup::Cgroup;

/// What starts a [`Usage`] line.
pub const PREFIX: &str = "greet-watch ";

/// A container's use over one interval, as `docker stats` shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// CPU use over the interval, percent of one CPU.
    pub cpu_pct: f64,
    /// Memory in use less the inactive page cache, KiB.
    pub mem_kib: u64,
    /// Tasks (threads) in the container.
    pub pids: u64,
}

impl Usage {
    /// Its line: `greet-watch CPU% MEM_KIB TASKS`.
    pub fn line(&self) -> String {
        format!("{PREFIX}{:.2} {} {}", self.cpu_pct, self.mem_kib, self.pids)
    }

    /// The usage a [`Usage::line`] holds, wherever it starts in `line` (a log's prefix
    /// before it).
    pub fn parse_line(line: &str) -> Option<Self> {
        let at = line.find(PREFIX)?;
        let mut fields = line[at + PREFIX.len()..].split_whitespace();
        let usage = Self {
            cpu_pct: fields.next()?.parse().ok()?,
            mem_kib: fields.next()?.parse().ok()?,
            pids: fields.next()?.parse().ok()?,
        };
        fields.next().is_none().then_some(usage)
    }
}

/// Why a container cannot be watched.
#[derive(Debug)]
pub enum WatchError {
    /// No group of the container under the hierarchy within the wait.
    NotFound {
        /// The container's ID, as given.
        id: String,
        /// The hierarchy searched.
        root: std::path::PathBuf,
    },
    /// The lines could not be written.
    Write(io::Error),
}

impl std::fmt::Display for WatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotFound { id, root } => write!(
                f,
                "no control group of container {id} under {}",
                root.display()
            ),
            Self::Write(err) => write!(f, "writing the readings: {err}"),
        }
    }
}

impl std::error::Error for WatchError {}

/// Writes a [`Usage`] line of container `id` (its group under the hierarchy at `root`) to
/// `out` every `interval`, CPU % over the interval, until the container's group is gone. The
/// group not found within `wait` is an error.
pub fn watch(
    root: &Path,
    id: &str,
    interval: Duration,
    wait: Duration,
    out: &mut impl Write,
) -> Result<(), WatchError> {
    let deadline = Instant::now() + wait;
    let group = loop {
        if let Some(group) = Cgroup::find(root, id) {
            break group;
        }
        if Instant::now() >= deadline {
            return Err(WatchError::NotFound {
                id: id.to_owned(),
                root: root.to_path_buf(),
            });
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
        let usage = Usage {
            cpu_pct: 100.0 * used / span,
            mem_kib: now.memory_bytes / 1024,
            pids: now.pids,
        };
        writeln!(out, "{}", usage.line())
            .and_then(|()| out.flush())
            .map_err(WatchError::Write)?;
        (last, at) = (now, Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let watching = std::thread::spawn(move || {
            let mut out = Vec::new();
            let interval = Duration::from_millis(100);
            watch(&dir, &short, interval, Duration::from_secs(1), &mut out).map(|()| out)
        });
        std::thread::sleep(Duration::from_millis(150));
        // 50 ms of CPU within an interval of about 100 ms.
        write(1_050_000);
        std::thread::sleep(Duration::from_millis(250));
        std::fs::remove_dir_all(&group).unwrap();
        let out = String::from_utf8(watching.join().unwrap().expect("watched")).unwrap();
        let readings: Vec<Usage> = out.lines().filter_map(Usage::parse_line).collect();
        assert_eq!(readings.len(), out.lines().count(), "{out}");
        assert!(readings.len() >= 2, "{out}");
        assert!(
            readings.iter().all(|r| r.mem_kib == 4096 && r.pids == 5),
            "{out}"
        );
        let busiest = readings.iter().map(|r| r.cpu_pct).fold(0.0, f64::max);
        assert!((20.0..=55.0).contains(&busiest), "{out}");
        let missing = watch(
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
            Usage::parse_line(&format!("watch.1.x@node | {}", readings[0].line())),
            Some(readings[0])
        );
        assert_eq!(Usage::parse_line("greet-watch 1 2 3 4"), None);
    }
}
