//! A container sampled from outside it, as a stream of readings about a second apart: the
//! Docker engine's own stats (`docker stats`, read through its JSON), which is all there is of
//! a container on another host, or the log of a watch task beside it on its node
//! (`greet-agent watch`, `greet_probe::watch`), for a container the engine in hand cannot
//! see into.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use greet_probe::watch::Usage;
use serde::Deserialize;

use greet_model::results::{RssFrom, Sampled, SampledBy};

use super::mib;

/// A container's readings, streamed by a child (`docker stats`, `docker service logs`) for
/// as long as it lives.
#[derive(Debug)]
pub struct EngineStats {
    child: Child,
    readings: Arc<Mutex<Vec<(Instant, Usage)>>>,
    by: SampledBy,
}

impl EngineStats {
    /// Starts streaming the engine's stats of container `name`.
    pub fn start(name: &str) -> std::io::Result<Self> {
        let args = ["stats", "--format", "{{json .}}", name];
        Self::stream(&args, parse_stats_line, SampledBy::DockerStats)
    }

    /// Follows the log of `service`, a swarm service whose task runs the watch task beside a
    /// container on its node: the same readings as `docker stats`, wherever the node is.
    pub fn follow_service(service: &str) -> std::io::Result<Self> {
        let args = ["service", "logs", "--follow", "--raw", service];
        Self::stream(&args, Usage::parse_line, SampledBy::Watch)
    }

    /// The readings `docker ARGS` prints, a line each, as `parse` reads them.
    fn stream(
        args: &[&str],
        parse: fn(&str) -> Option<Usage>,
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
    pub fn latest(&self) -> Option<Usage> {
        self.lock().last().map(|(_, r)| *r)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Instant, Usage)>> {
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
        let during: Vec<Usage> = readings
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

impl Drop for EngineStats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fields of `docker stats --format '{{json .}}'` read here.
#[derive(Deserialize)]
struct StatsLine {
    #[serde(rename = "CPUPerc")]
    cpu: String,
    #[serde(rename = "MemUsage")]
    memory: String,
    #[serde(rename = "PIDs")]
    pids: String,
}

/// One line of `docker stats --format '{{json .}}'`, with the terminal escapes it clears the
/// screen with: `\x1b[H{"CPUPerc":"12.5%","MemUsage":"41.5MiB / 256MiB","PIDs":"3",…}`.
fn parse_stats_line(line: &str) -> Option<Usage> {
    let at = line.find('{')?;
    let end = line.rfind('}')?;
    let stats: StatsLine = serde_json::from_str(line.get(at..=end)?).ok()?;
    Some(Usage {
        cpu_pct: stats.cpu.trim().strip_suffix('%')?.parse().ok()?,
        mem_kib: kib(stats.memory.split('/').next()?.trim())?,
        pids: stats.pids.trim().parse().ok()?,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_engines_stats_lines() {
        let line = |cpu: &str, mem: &str, pids: &str| {
            format!(
                r#"{{"BlockIO":"0B / 0B","CPUPerc":"{cpu}","Container":"c","ID":"1","MemPerc":"1%","MemUsage":"{mem}","Name":"n","NetIO":"0B / 0B","PIDs":"{pids}"}}"#
            )
        };
        let r = parse_stats_line(&format!(
            "\x1b[J\x1b[H{}\x1b[K",
            line("12.50%", "41.5MiB / 256MiB", "3")
        ))
        .unwrap();
        assert_eq!((r.cpu_pct, r.mem_kib, r.pids), (12.5, 42_496, 3));
        let r = parse_stats_line(&line("0.00%", "876KiB / 23.54GiB", "200")).unwrap();
        assert_eq!((r.mem_kib, r.pids), (876, 200));
        assert_eq!(parse_stats_line(" \x1b[K"), None);
        assert_eq!(parse_stats_line(&line("--", "-- / --", "--")), None);
        assert_eq!(kib("1GiB"), Some(1024 * 1024));
    }
}
