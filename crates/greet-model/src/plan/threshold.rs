//! `--threshold`: a condition a run's figures must hold, as k6's thresholds are.
//! `[server:]figure OP value[unit]`, e.g. `p99<5ms`, `axum:total<1.2s`, `rss<64MiB`,
//! `throughput>50000/s`, `success>=100%`; on `compare`, ratios of new to old: `p99<1.10x`,
//! `throughput>0.95x`. A threshold holds a figure's median over its runs, or with
//! `max(total)<1.8s` / `min(throughput)>2k/s` every run. What each figure is: [`Metric`].

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a figure measures, in the unit thresholds and tables use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// First request to last response of a load, seconds.
    Total,
    /// Valid responses a second.
    Throughput,
    /// Median latency, ms.
    P50,
    /// 99th percentile latency, ms.
    P99,
    /// 99.9th percentile latency, ms.
    P999,
    /// Spawn to first 200 on `/health`, ms.
    Startup,
    /// Peak resident memory, MiB.
    Rss,
    /// Peak CPU, percent of one CPU.
    Cpu,
    /// Valid responses, percent of the requests.
    Success,
    /// The server's CPU (user and system) per request, microseconds.
    CpuPerRequest,
    /// User-space instructions per request (callgrind), counted.
    Instructions,
    /// Cycles per request, estimated from callgrind's cache model.
    Cycles,
    /// Heap allocations per request (DHAT), counted.
    Allocations,
    /// Bytes those allocations asked for, per request.
    AllocBytes,
    /// Syscalls per request, counted under real load (perf's tracepoint, the waits left out).
    Syscalls,
    /// Read- and write-class syscalls per request under real load, from the process's own
    /// counters (`/proc/PID/io`) where perf cannot count: another count than [`Self::Syscalls`],
    /// so the two are never paired or gated against each other.
    RwSyscalls,
    /// Context switches per request under real load.
    Switches,
    /// The server's binary, stripped, MiB.
    Binary,
    /// Crates its binary depends on (normal dependencies, the workspace's own left out).
    Dependencies,
    /// Resident memory an idle keep-alive connection holds, KiB.
    IdleMemory,
    /// A clean release build of the server, seconds (this machine's).
    Build,
    /// Its rebuild after one handler is touched, seconds (this machine's).
    Rebuild,
    /// The contract's rows a server fails (knobs): none at its defaults, so with knobs on,
    /// what they give up.
    ContractRows,
}

impl Metric {
    /// Every metric, in table order.
    pub const ALL: [Metric; 23] = [
        Self::Total,
        Self::Throughput,
        Self::P50,
        Self::P99,
        Self::P999,
        Self::Startup,
        Self::Rss,
        Self::Cpu,
        Self::Success,
        Self::CpuPerRequest,
        Self::Instructions,
        Self::Cycles,
        Self::Allocations,
        Self::AllocBytes,
        Self::Syscalls,
        Self::RwSyscalls,
        Self::Switches,
        Self::Binary,
        Self::Dependencies,
        Self::IdleMemory,
        Self::Build,
        Self::Rebuild,
        Self::ContractRows,
    ];

    /// Its name in tables and thresholds.
    pub fn name(self) -> &'static str {
        match self {
            Self::Total => "total",
            Self::Throughput => "throughput",
            Self::P50 => "p50",
            Self::P99 => "p99",
            Self::P999 => "p99.9",
            Self::Startup => "startup",
            Self::Rss => "rss",
            Self::Cpu => "cpu",
            Self::Success => "success",
            Self::CpuPerRequest => "cpu_per_req",
            Self::Instructions => "instructions",
            Self::Cycles => "cycles",
            Self::Allocations => "allocations",
            Self::AllocBytes => "alloc_bytes",
            Self::Syscalls => "syscalls",
            Self::RwSyscalls => "rw_syscalls",
            Self::Switches => "switches",
            Self::Binary => "binary",
            Self::Dependencies => "dependencies",
            Self::IdleMemory => "idle_memory",
            Self::Build => "build",
            Self::Rebuild => "rebuild",
            Self::ContractRows => "contract_rows",
        }
    }

    /// Its unit as printed.
    pub fn unit(self) -> &'static str {
        match self {
            Self::Total => "s",
            Self::Throughput => "/s",
            Self::P50 | Self::P99 | Self::P999 | Self::Startup => "ms",
            Self::Rss => "MiB",
            Self::Cpu | Self::Success => "%",
            Self::CpuPerRequest => "µs",
            Self::Instructions
            | Self::Cycles
            | Self::Allocations
            | Self::Syscalls
            | Self::RwSyscalls
            | Self::Switches
            | Self::Dependencies
            | Self::ContractRows => "",
            Self::AllocBytes => "B",
            Self::Binary => "MiB",
            Self::IdleMemory => "KiB",
            Self::Build | Self::Rebuild => "s",
        }
    }

    /// Whether more of it is better (throughput, success), rather than less.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Self::Throughput | Self::Success)
    }

    /// A counted figure's band: two counts closer than this share of each other are one
    /// count (they repeat to well under it from run to run), further apart they differ. No
    /// band: a timed figure, judged on its runs' spread.
    pub fn band(self) -> Option<f64> {
        match self {
            Self::Instructions
            | Self::Cycles
            | Self::Allocations
            | Self::AllocBytes
            | Self::Binary
            | Self::Dependencies => Some(0.02),
            // A row answers or not: one more is a difference.
            Self::ContractRows => Some(0.0),
            // Counted under real load: batching moves them a little from run to run.
            Self::Syscalls | Self::RwSyscalls => Some(0.05),
            _ => None,
        }
    }

    /// The least difference per request a count can show apart from its band: a few events
    /// over a load's thousand requests (a buffer grown once more, one more read of a body
    /// that arrived in pieces) follow the load's timing, not the code. Near zero a share of
    /// each other means nothing: 2 allocations against 7 over 1024 WebSocket messages are
    /// a ratio of 3.5 and the same code. Instructions: what the harness's own work costs the
    /// two loads unevenly (some 50,000 instructions over the default 1024 requests), the
    /// floor's 1,300 a request moved by 3-4% with it.
    pub fn grain(self) -> f64 {
        match self {
            Self::Allocations | Self::Syscalls | Self::RwSyscalls => 0.05,
            Self::AllocBytes => 8.0,
            Self::Instructions | Self::Cycles => 50.0,
            _ => 0.0,
        }
    }

    /// Whether two counts of this figure are one count: within its band of each other, or
    /// within its grain. None for a timed figure, judged on its runs instead.
    pub fn same_count(self, a: f64, b: f64) -> Option<bool> {
        let band = self.band()?;
        let apart = (a - b).abs();
        Some(apart <= band * a.abs().max(b.abs()) || apart <= self.grain())
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Op {
    /// Whether `value` holds against `limit`.
    pub fn holds(self, value: f64, limit: f64) -> bool {
        match self {
            Self::Lt => value < limit,
            Self::Le => value <= limit,
            Self::Gt => value > limit,
            Self::Ge => value >= limit,
        }
    }

    /// Whether larger values are the ones that breach it.
    pub fn is_upper_bound(self) -> bool {
        matches!(self, Self::Lt | Self::Le)
    }
}

/// One parsed `--threshold`.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// As typed.
    pub text: String,
    /// The server it is about (`axum` also names `greet-axum`), or every server.
    pub server: Option<String>,
    /// The figure.
    pub metric: Metric,
    /// Which of a figure's runs it holds: their median, or each run (`max(total)<1.8s`).
    pub of_runs: OfRuns,
    /// The comparison.
    pub op: Op,
    /// The limit, in the metric's unit (or a ratio).
    pub limit: f64,
    /// A ratio of new to old (`1.10x`): for `compare` only.
    pub ratio: bool,
}

/// Which of a figure's per-run values a threshold holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfRuns {
    /// Their median: `total<1.2s`.
    Median,
    /// The highest: `max(total)<1.8s`, every run under the limit.
    Max,
    /// The lowest: `min(throughput)>2000/s`, every run over the limit.
    Min,
}

impl FromStr for Threshold {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let (server, rest) = match compact.split_once(':') {
            Some((server, rest)) if !server.is_empty() => (Some(server.to_owned()), rest),
            Some(_) => return Err(format!("{text:?}: an empty server before ':'")),
            None => (None, compact.as_str()),
        };
        let at = rest
            .find(['<', '>'])
            .ok_or_else(|| format!("{text:?} is not FIGURE<VALUE or FIGURE>VALUE"))?;
        let (name, rest) = rest.split_at(at);
        let (op, value) = if let Some(v) = rest.strip_prefix("<=") {
            (Op::Le, v)
        } else if let Some(v) = rest.strip_prefix(">=") {
            (Op::Ge, v)
        } else if let Some(v) = rest.strip_prefix('<') {
            (Op::Lt, v)
        } else {
            (Op::Gt, &rest[1..])
        };
        let (of_runs, name) = match name.strip_suffix(')') {
            Some(inner) => match inner.split_once('(') {
                Some(("max", figure)) => (OfRuns::Max, figure),
                Some(("min", figure)) => (OfRuns::Min, figure),
                _ => {
                    return Err(format!(
                        "{text:?}: max(FIGURE) or min(FIGURE), or FIGURE alone"
                    ))
                }
            },
            None => (OfRuns::Median, name),
        };
        let metric = Metric::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
                format!(
                    "{text:?}: unknown figure {name:?} (one of {})",
                    names.join(", ")
                )
            })?;
        let (limit, ratio) = limit(metric, value).map_err(|why| format!("{text:?}: {why}"))?;
        // max() and min() hold every run: the highest under an upper bound, the lowest over
        // a lower one. As ratios they set NEW's slowest (or lowest) run against OLD's.
        match (of_runs, op, ratio) {
            (OfRuns::Median, ..) => {}
            (OfRuns::Max, Op::Gt | Op::Ge, _) => {
                return Err(format!(
                    "{text:?}: every run over a limit is min({}) > …",
                    metric
                ))
            }
            (OfRuns::Min, Op::Lt | Op::Le, _) => {
                return Err(format!(
                    "{text:?}: every run under a limit is max({}) < …",
                    metric
                ))
            }
            _ => {}
        }
        Ok(Self {
            text: text.to_owned(),
            server,
            metric,
            of_runs,
            op,
            limit,
            ratio,
        })
    }
}

/// `value` in `metric`'s unit, or as a ratio (`x`).
fn limit(metric: Metric, value: &str) -> Result<(f64, bool), String> {
    let split = value
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{value:?} does not start with a number"))?;
    if unit == "x" {
        return Ok((number, true));
    }
    let scale = match (metric, unit) {
        // A time without its unit is refused: `p99<5` read as milliseconds by one tool and
        // seconds by another is a bound a thousand times off.
        (Metric::Total | Metric::P50 | Metric::P99 | Metric::P999 | Metric::Startup, "") => {
            return Err(format!(
                "the time needs a unit, ms or s (e.g. {metric}<5{})",
                metric.unit()
            ))
        }
        (Metric::Total, "s") => 1.0,
        (Metric::Total, "ms") => 1e-3,
        (Metric::P50 | Metric::P99 | Metric::P999 | Metric::Startup, "ms") => 1.0,
        (Metric::P50 | Metric::P99 | Metric::P999 | Metric::Startup, "s") => 1e3,
        (Metric::P50 | Metric::P99 | Metric::P999 | Metric::Startup, "us" | "µs") => 1e-3,
        (Metric::Rss, "MiB" | "") => 1.0,
        (Metric::Rss, "KiB") => 1.0 / 1024.0,
        (Metric::Rss, "GiB") => 1024.0,
        (Metric::Throughput, "/s" | "") => 1.0,
        (Metric::Throughput, "k/s" | "k") => 1e3,
        (Metric::Cpu | Metric::Success, "%" | "") => 1.0,
        (Metric::CpuPerRequest, "us" | "µs") => 1.0,
        (Metric::CpuPerRequest, "ms") => 1e3,
        (
            Metric::Instructions
            | Metric::Cycles
            | Metric::Allocations
            | Metric::Syscalls
            | Metric::RwSyscalls
            | Metric::Switches
            | Metric::Dependencies
            | Metric::ContractRows,
            "",
        ) => 1.0,
        (Metric::Instructions | Metric::Cycles, "k") => 1e3,
        (Metric::AllocBytes, "B" | "") => 1.0,
        (Metric::AllocBytes, "KiB") => 1024.0,
        (Metric::Binary, "MiB" | "") => 1.0,
        (Metric::Binary, "KiB") => 1.0 / 1024.0,
        (Metric::IdleMemory, "KiB" | "") => 1.0,
        (Metric::Build | Metric::Rebuild, "s") => 1.0,
        (Metric::Build | Metric::Rebuild, "m" | "min") => 60.0,
        _ => {
            return Err(format!(
                "{unit:?} is not a unit of {metric} (its unit is {}, or x for a ratio)",
                metric.unit()
            ))
        }
    };
    Ok((number * scale, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_read_as_typed_in_their_units() {
        let t: Threshold = "axum:total<1.2s".parse().unwrap();
        assert_eq!(
            (t.server.as_deref(), t.metric, t.op, t.limit, t.ratio),
            (Some("axum"), Metric::Total, Op::Lt, 1.2, false)
        );
        let ms = |s: &str| s.parse::<Threshold>().unwrap().limit;
        assert_eq!(ms("p99<5ms"), 5.0);
        assert_eq!(ms("p99 < 0.5s"), 500.0);
        assert_eq!(ms("total<900ms"), 0.9);
        assert_eq!(ms("rss<1GiB"), 1024.0);
        assert_eq!(ms("throughput>50k/s"), 50_000.0);
        let max: Threshold = "axum:max(total)<1.8s".parse().unwrap();
        assert_eq!(
            (max.of_runs, max.metric, max.limit),
            (OfRuns::Max, Metric::Total, 1.8)
        );
        assert_eq!(
            "p99<5ms".parse::<Threshold>().unwrap().of_runs,
            OfRuns::Median
        );
        let ratio: Threshold = "throughput>=0.95x".parse().unwrap();
        assert_eq!((ratio.op, ratio.limit, ratio.ratio), (Op::Ge, 0.95, true));
        assert_eq!(ms("instructions<25k"), 25_000.0);
        let counted: Threshold = "hyper:instructions<1.01x".parse().unwrap();
        assert_eq!(
            (counted.metric, counted.ratio),
            (Metric::Instructions, true)
        );
        let slowest: Threshold = "max(total)<1.5x".parse().unwrap();
        assert_eq!((slowest.of_runs, slowest.ratio), (OfRuns::Max, true));
        for bad in [
            "p98<5ms",
            "p99=5ms",
            "p99<fast",
            "rss<5ms",
            ":p99<5ms",
            "total<",
            "total<2",
            "p99<5",
            "avg(total)<1s",
            "max(throughput)>2k/s",
            "min(p99)<5ms",
            "max(total)>1.1x",
        ] {
            let err = bad.parse::<Threshold>().unwrap_err();
            assert!(
                err.starts_with(&format!("{bad:?}")) && !err.contains('\n'),
                "{err}"
            );
        }
    }
}
