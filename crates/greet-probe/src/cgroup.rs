//! A container's CPU time, memory and tasks from its control group, read as the Docker
//! engine's stats read them, for a sampler that runs beside a container on its node (the
//! engine's stats of another node's container cannot be had from a swarm manager).
//!
//! Both hierarchies: cgroup v2 (one tree: `cpu.stat`, `memory.current`, `pids.current`) and
//! v1 (a tree per controller: `cpuacct`, `memory`, `pids`). The container's group is found
//! by its ID in the group's name, which covers the engine's `cgroupfs` driver
//! (`docker/<id>`) and `systemd`'s (`system.slice/docker-<id>.scope`).

use std::fs;
use std::path::{Path, PathBuf};

/// How deep under a hierarchy's root a container's group is looked for.
const DEPTH: usize = 4;

/// Where a container's figures are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cgroup {
    /// cgroup v2: the group's directory.
    V2(PathBuf),
    /// cgroup v1: the group's directory in each controller's hierarchy.
    V1 {
        /// Under `cpuacct` (or `cpu,cpuacct`).
        cpuacct: PathBuf,
        /// Under `memory`.
        memory: PathBuf,
        /// Under `pids`.
        pids: PathBuf,
    },
}

/// One reading of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// CPU time used since the group began, microseconds.
    pub cpu_usec: u64,
    /// Memory in use less the inactive page cache, bytes: what `docker stats` shows.
    pub memory_bytes: u64,
    /// Tasks (threads) in the group.
    pub pids: u64,
}

impl Cgroup {
    /// The group of container `id` (its full ID, or a prefix of 12 or more characters) under
    /// the hierarchy mounted at `root` (`/sys/fs/cgroup` on the host).
    pub fn find(root: &Path, id: &str) -> Option<Self> {
        if id.len() < 12 || !id.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        if root.join("cgroup.controllers").exists() {
            return search(root, id).map(Self::V2);
        }
        let cpuacct = ["cpuacct", "cpu,cpuacct", "cpuacct,cpu"]
            .iter()
            .find_map(|c| search(&root.join(c), id))?;
        Some(Self::V1 {
            cpuacct,
            memory: search(&root.join("memory"), id)?,
            pids: search(&root.join("pids"), id)?,
        })
    }

    /// Its figures now; `None` once the group is gone (the container ended).
    pub fn read(&self) -> Option<Reading> {
        match self {
            Self::V2(dir) => {
                let cpu = fs::read_to_string(dir.join("cpu.stat")).ok()?;
                let stat = fs::read_to_string(dir.join("memory.stat")).ok()?;
                let current = number(&dir.join("memory.current"))?;
                Some(Reading {
                    cpu_usec: field(&cpu, "usage_usec")?,
                    memory_bytes: current.saturating_sub(field(&stat, "inactive_file")?),
                    pids: number(&dir.join("pids.current"))?,
                })
            }
            Self::V1 {
                cpuacct,
                memory,
                pids,
            } => {
                let stat = fs::read_to_string(memory.join("memory.stat")).ok()?;
                let usage = number(&memory.join("memory.usage_in_bytes"))?;
                Some(Reading {
                    cpu_usec: number(&cpuacct.join("cpuacct.usage"))? / 1000,
                    memory_bytes: usage.saturating_sub(field(&stat, "total_inactive_file")?),
                    pids: number(&pids.join("pids.current"))?,
                })
            }
        }
    }
}

/// The directory under `root`, breadth first and at most [`DEPTH`] deep, whose name holds
/// `id`.
fn search(root: &Path, id: &str) -> Option<PathBuf> {
    let mut level = vec![root.to_path_buf()];
    for _ in 0..DEPTH {
        let mut next = Vec::new();
        for dir in &level {
            let Ok(entries) = fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                if entry.file_name().to_string_lossy().contains(id) {
                    return Some(entry.path());
                }
                next.push(entry.path());
            }
        }
        level = next;
    }
    None
}

/// A file holding one number.
fn number(path: &Path) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The value of `key` in a `key value` per line file (`cpu.stat`, `memory.stat`).
fn field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "4f1c2a9be0d3774f1c2a9be0d3774f1c2a9be0d3774f1c2a9be0d3774f1c2a9b";

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("greet-cgroup-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_v2_group_under_systemd_reads_as_docker_stats_does() {
        let root = scratch("v2");
        write(&root.join("cgroup.controllers"), "cpu memory pids\n");
        let group = root.join(format!("system.slice/docker-{ID}.scope"));
        write(
            &root.join("system.slice/other.service/cpu.stat"),
            "usage_usec 1\n",
        );
        write(
            &group.join("cpu.stat"),
            "usage_usec 2500000\nuser_usec 2000000\n",
        );
        write(&group.join("memory.current"), "52428800\n");
        write(
            &group.join("memory.stat"),
            "anon 1\nactive_file 9\ninactive_file 10485760\n",
        );
        write(&group.join("pids.current"), "7\n");
        let cgroup = Cgroup::find(&root, &ID[..12]).expect("found by its short ID");
        assert_eq!(cgroup, Cgroup::V2(group.clone()));
        let reading = cgroup.read().expect("reads");
        assert_eq!(
            reading,
            Reading {
                cpu_usec: 2_500_000,
                memory_bytes: 41_943_040,
                pids: 7
            }
        );
        fs::remove_dir_all(&group).unwrap();
        assert_eq!(cgroup.read(), None, "a group gone reads as gone");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_v1_group_is_found_in_each_controller() {
        let root = scratch("v1");
        let at = |controller: &str| root.join(controller).join("docker").join(ID);
        write(&at("cpu,cpuacct").join("cpuacct.usage"), "3000000000\n");
        write(&at("memory").join("memory.usage_in_bytes"), "20971520\n");
        write(
            &at("memory").join("memory.stat"),
            "inactive_file 1\ntotal_inactive_file 4194304\n",
        );
        write(&at("pids").join("pids.current"), "3\n");
        let cgroup = Cgroup::find(&root, ID).expect("found");
        let reading = cgroup.read().expect("reads");
        assert_eq!(reading.cpu_usec, 3_000_000);
        assert_eq!(reading.memory_bytes, 16_777_216);
        assert_eq!(reading.pids, 3);
        assert_eq!(
            Cgroup::find(&root, "4f1c"),
            None,
            "too short an ID to be sure"
        );
        assert_eq!(Cgroup::find(&root, "../../etc/passwd"), None);
        fs::remove_dir_all(&root).unwrap();
    }
}
