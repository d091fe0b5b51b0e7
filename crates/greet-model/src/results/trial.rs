//! What one load measured ([`Trial`]: [`Figures`] and [`Sampled`]), repeats of it, and the gain
//! of one setting over another.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use greet_load::figures::percent;
use greet_stats::paired::{Comparison, Figure};
use greet_stats::{max_of, median, Summary};

use super::Cores;

pub use greet_load::{AgentRun, Connect, Figures, Handshakes, Latency};

/// What the sampler saw of the server during one load: nothing for a server the harness did
/// not start.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Sampled {
    /// Where the figures come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<SampledBy>,
    /// Highest CPU use over any 200 ms window (an engine interval, from Docker's stats),
    /// percent of one CPU.
    pub cpu_max_pct: Option<f64>,
    /// CPU use over the whole load, percent of one CPU.
    pub cpu_avg_pct: Option<f64>,
    /// Highest resident memory, MiB.
    pub rss_max_mib: Option<f64>,
    /// How `rss_max_mib` was measured.
    pub rss_max_from: Option<RssFrom>,
    /// Most live threads.
    pub threads_max: Option<u64>,
    /// Live threads at the end.
    pub threads_last: Option<u64>,
}

impl Sampled {
    /// Repeated runs' samples as one: the maxima the maxima, mean CPU the median, threads at
    /// the end the last run's; a memory peak read off readings in any run makes the maximum a
    /// sampled one.
    pub fn over(runs: &[&Sampled]) -> Sampled {
        let max_f = |f: fn(&Sampled) -> Option<f64>| runs.iter().copied().map(f).fold(None, max_of);
        let cpu: Vec<f64> = runs.iter().filter_map(|s| s.cpu_avg_pct).collect();
        Sampled {
            from: runs.first().and_then(|s| s.from),
            cpu_max_pct: max_f(|s| s.cpu_max_pct),
            cpu_avg_pct: (!cpu.is_empty()).then(|| median(&cpu)),
            rss_max_mib: max_f(|s| s.rss_max_mib),
            rss_max_from: runs.iter().filter_map(|s| s.rss_max_from).reduce(|a, b| {
                if a == RssFrom::Readings {
                    a
                } else {
                    b
                }
            }),
            threads_max: runs.iter().filter_map(|s| s.threads_max).max(),
            threads_last: runs.last().and_then(|s| s.threads_last),
        }
    }
}

impl Sampled {
    /// Several containers' figures over one load as one group's (PostgreSQL and Redis): CPU,
    /// memory and threads added up. The peaks are each one's, added: at most the group's.
    pub fn together(parts: &[Sampled]) -> Sampled {
        let add_f = |f: fn(&Sampled) -> Option<f64>| parts.iter().map(f).sum::<Option<f64>>();
        let add_u = |f: fn(&Sampled) -> Option<u64>| parts.iter().map(f).sum::<Option<u64>>();
        Sampled {
            from: parts.first().and_then(|s| s.from),
            cpu_max_pct: add_f(|s| s.cpu_max_pct),
            cpu_avg_pct: add_f(|s| s.cpu_avg_pct),
            rss_max_mib: add_f(|s| s.rss_max_mib),
            rss_max_from: Some(RssFrom::Readings),
            threads_max: add_u(|s| s.threads_max),
            threads_last: add_u(|s| s.threads_last),
        }
    }
}

/// What watched the server.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SampledBy {
    /// The server's /proc entry, every 20 ms: the harness and the server share a machine.
    Proc,
    /// The Docker engine's stats, about once a second: a container (on this host or another);
    /// memory is the engine's count (the cgroup's, less its page cache), threads its tasks.
    DockerStats,
    /// The same figures read from the container's control group by a watch task
    /// (`greet-agent watch`) beside it on its node, every 500 ms: a swarm's server, on
    /// whichever node it runs.
    Watch,
}

/// Where a peak resident-memory figure comes from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RssFrom {
    /// The kernel's peak counter (VmHWM), reset when the load started: exact.
    PeakCounter,
    /// The counter could not be reset (no right to the process's clear_refs): the highest of
    /// the readings taken every 20 ms, which can miss a shorter peak.
    Readings,
}

/// What the machine did while a load ran, all its CPUs together (/proc/stat): the noise a
/// shared machine adds to every figure.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct Machine {
    /// Its CPUs.
    pub cpus: usize,
    /// Time the hypervisor gave its CPUs to other machines while they had work, percent of
    /// all their time.
    pub steal_pct: f64,
    /// Time its CPUs were busy, percent of all their time: the server, the load generator
    /// and anything else.
    pub busy_pct: f64,
    /// Of that, what neither the server nor the load generator used, percent of all their
    /// time, where both were measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_pct: Option<f64>,
    /// Its pace: the CPU time a fixed piece of kernel work took on its CPUs, median over the
    /// load, microseconds: 500 one-byte round trips through a pipe, every 250 ms on each
    /// CPU. Higher is slower.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace_us: Option<f64>,
}

impl Machine {
    /// Steal from this share up marks a level as run on a disturbed machine: a tenth of every
    /// CPU's time taken away is more than the run-to-run noise the verdicts allow for.
    pub const HEAVY_STEAL_PCT: f64 = 10.0;

    /// Other programs' CPU from this share up marks a level as run on a busy machine: the
    /// harness's own sampling and the kernel stay under 7% here, a build takes 60%.
    pub const BUSY_OTHERS_PCT: f64 = 10.0;

    /// Whether the hypervisor took enough to disturb the level.
    pub fn heavy_steal(&self) -> bool {
        self.steal_pct >= Self::HEAVY_STEAL_PCT
    }

    /// What disturbed the level, if anything did: heavy steal, or other programs busy on the
    /// machine's CPUs beside the server and the load generator.
    pub fn disturbance(&self) -> Option<String> {
        if self.heavy_steal() {
            return Some(format!(
                "the hypervisor took {:.0}% of the CPUs",
                self.steal_pct
            ));
        }
        self.others_pct
            .filter(|&others| others >= Self::BUSY_OTHERS_PCT)
            .map(|others| format!("other programs used {others:.0}% of the CPUs"))
    }

    /// With what neither the server (`server_pct`, percent of one CPU) nor the load
    /// generator (`client_pct`, percent of one CPU) used.
    pub fn with_others(self, server_pct: Option<f64>, client_pct: f64) -> Self {
        let others = server_pct.map(|server| {
            (self.busy_pct - (server + client_pct) / self.cpus.max(1) as f64).max(0.0)
        });
        Self {
            others_pct: others,
            ..self
        }
    }

    /// The most disturbed of `levels`: the highest steal.
    pub fn worst<'a>(levels: impl IntoIterator<Item = &'a Machine>) -> Option<Machine> {
        levels
            .into_iter()
            .copied()
            .reduce(|a, b| if b.steal_pct > a.steal_pct { b } else { a })
    }
}

/// What the machine did over a whole run, from every load's [`Machine`]: the noise behind
/// its figures.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Noise {
    /// Loads measured (warm-ups and probes included).
    pub loads: usize,
    /// Steal, the mean over the loads, percent.
    pub steal_mean_pct: f64,
    /// Steal, the most any load saw, percent.
    pub steal_max_pct: f64,
    /// The most CPU neither a server nor the load generator used, percent of all the CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_max_pct: Option<f64>,
    /// The loads run under heavy steal ([`Machine::HEAVY_STEAL_PCT`]), by label.
    pub heavy: Vec<String>,
    /// The loads measured again because heavy steal disturbed the first ([`Noise::AGAIN`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub again: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Noise {
    /// The mark after the label of a load measured again, because heavy steal disturbed the
    /// first: a paired comparison takes the second in its place.
    pub const AGAIN: &str = "(again)";

    /// Over `loads`, each labelled; none without one.
    pub fn of(loads: &[(String, Machine)]) -> Option<Noise> {
        if loads.is_empty() {
            return None;
        }
        let steal: Vec<f64> = loads.iter().map(|(_, m)| m.steal_pct).collect();
        Some(Noise {
            loads: loads.len(),
            steal_mean_pct: steal.iter().sum::<f64>() / steal.len() as f64,
            steal_max_pct: steal.iter().copied().fold(0.0, f64::max),
            others_max_pct: loads
                .iter()
                .filter_map(|(_, m)| m.others_pct)
                .reduce(f64::max),
            heavy: loads
                .iter()
                .filter(|(_, m)| m.heavy_steal())
                .map(|(label, _)| label.clone())
                .collect(),
            again: loads
                .iter()
                .filter(|(label, _)| label.ends_with(Self::AGAIN))
                .count(),
        })
    }

    /// One line for the terminal and the report.
    pub fn line(&self) -> String {
        let others = self.others_max_pct.map_or(String::new(), |o| {
            format!("; other programs used at most {o:.1}% of the CPUs")
        });
        // The first few by name (results.json has them all): a bad day has dozens.
        const NAMED: usize = 6;
        let named = self.heavy[..self.heavy.len().min(NAMED)].join(", ");
        let bound = Machine::HEAVY_STEAL_PCT;
        let heavy = match self.heavy.len() {
            0 => format!("none under heavy steal (>= {bound:.0}%)"),
            n if n <= NAMED => format!("{n} under heavy steal (>= {bound:.0}%): {named}"),
            n => format!(
                "{n} under heavy steal (>= {bound:.0}%): {named} and {} more",
                n - NAMED
            ),
        };
        // Every load measured again follows one under heavy steal, named above.
        let again = match self.again {
            0 => String::new(),
            n => format!("; {n} of those measured again, the second in the first's place"),
        };
        format!(
            "the hypervisor's steal averaged {:.1}% and peaked at {:.1}% over {} loads, \
             {heavy}{again}{others}",
            self.steal_mean_pct, self.steal_max_pct, self.loads
        )
    }
}

/// One load against one server: the unit of every scenario.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Trial {
    /// What the load generator saw.
    #[serde(flatten)]
    pub load: Figures,
    /// What the sampler saw of the server.
    #[serde(flatten)]
    pub server: Sampled,
    /// A container's figures as the Docker engine's stats gave them, beside /proc's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<Sampled>,
    /// Each agent's own figures, when the load came from several (`--agents`); the figures
    /// above are their merged tallies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentRun>,
    /// What else the machine did meanwhile, where the harness's host ran the load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<Machine>,
    /// How busy the load generator's CPUs and the server's were: whether the figure is the
    /// client's limit ([`Cores::client_bound`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<Cores>,
    /// The load's place in the run: how many loads the harness had run before it (from 0).
    /// A block's order, and which load came before which, read back from it; none in a file
    /// from before it was written, and for a figure made of several loads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

impl Trial {
    /// The server's CPU per request, microseconds: its mean CPU over the load, times the
    /// load's length, over its requests.
    pub fn server_us_per_request(&self) -> Option<f64> {
        let pct = self.server.cpu_avg_pct?;
        per_request_us(pct / 100.0 * self.load.total_s, self.load.requests)
    }

    /// Whether the machine disturbed this load ([`Machine::disturbance`]): its block is left
    /// out of every comparison with it ([`block_throughputs`]).
    pub fn disturbed(&self) -> bool {
        self.machine.is_some_and(|m| m.disturbance().is_some())
    }

    /// Whether the load generator, not the server, set this load's figure
    /// ([`Cores::client_bound`]).
    pub fn client_bound(&self) -> bool {
        self.cores.is_some_and(|c| c.client_bound())
    }

    /// Whether its block is left out of every comparison with it: the machine disturbed it,
    /// or the client bound it (a ratio of the client's limit to a server's figure says
    /// nothing of the servers).
    pub fn left_out(&self) -> bool {
        self.disturbed() || self.client_bound()
    }

    /// Repeated runs of one load as one: every figure the median over the runs, errors summed
    /// (and the requests with them), resource maxima the maxima.
    pub fn median_of(runs: &[Trial]) -> Trial {
        if runs.len() <= 1 {
            return runs.first().cloned().unwrap_or_default();
        }
        let med = |f: fn(&Trial) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
        let mut errors = BTreeMap::new();
        for run in runs {
            for (kind, n) in &run.load.errors {
                *errors.entry(kind.clone()).or_insert(0) += n;
            }
        }
        let requests: u64 = runs.iter().map(|r| r.load.requests).sum();
        let failed: u64 = errors.values().sum();
        Trial {
            load: Figures {
                requests: requests / runs.len() as u64,
                success_rate: percent(requests - failed.min(requests), requests),
                total_s: med(|r| r.load.total_s),
                requests_per_s: med(|r| r.load.requests_per_s),
                fastest_s: med(|r| r.load.fastest_s),
                slowest_s: med(|r| r.load.slowest_s),
                average_s: med(|r| r.load.average_s),
                latency_ms: Latency {
                    p50: med(|r| r.load.latency_ms.p50),
                    p90: med(|r| r.load.latency_ms.p90),
                    p99: med(|r| r.load.latency_ms.p99),
                    p999: med(|r| r.load.latency_ms.p999),
                    max: med(|r| r.load.latency_ms.max),
                },
                connects: runs.iter().map(|r| r.load.connects).sum::<u64>() / runs.len() as u64,
                connect_ms: Connect {
                    avg: med(|r| r.load.connect_ms.avg),
                    max: med(|r| r.load.connect_ms.max),
                },
                handshake_ms: runs.iter().all(|r| r.load.handshake_ms.is_some()).then(|| {
                    let of = |f: fn(&Handshakes) -> f64| {
                        let each = runs.iter().filter_map(|r| r.load.handshake_ms.as_ref());
                        median(&each.map(f).collect::<Vec<_>>())
                    };
                    let mean = |f: fn(&Handshakes) -> u64| {
                        let each = runs.iter().filter_map(|r| r.load.handshake_ms.as_ref());
                        each.map(f).sum::<u64>() / runs.len() as u64
                    };
                    Handshakes {
                        count: mean(|h| h.count),
                        resumed: mean(|h| h.resumed),
                        avg: of(|h| h.avg),
                        p50: of(|h| h.p50),
                        p99: of(|h| h.p99),
                        max: of(|h| h.max),
                    }
                }),
                bytes_per_answer: Repeated::of(runs).bytes_per_answer,
                errors,
            },
            server: Sampled::over(&runs.iter().map(|r| &r.server).collect::<Vec<_>>()),
            engine: runs.last().and_then(|r| r.engine.clone()),
            agents: Vec::new(),
            machine: Machine::worst(runs.iter().filter_map(|r| r.machine.as_ref())),
            cores: Cores::median_of(runs),
            seq: None,
        }
    }
}

/// `cpu_s` seconds of CPU over `requests`, microseconds each (none without a request).
pub fn per_request_us(cpu_s: f64, requests: u64) -> Option<f64> {
    (requests > 0).then(|| cpu_s * 1e6 / requests as f64)
}

/// `cpu_pct` percent of one CPU spent on `rps` requests a second, microseconds each (none at
/// no rate).
pub fn us_per_request_at(cpu_pct: f64, rps: f64) -> Option<f64> {
    (rps > 0.0).then(|| cpu_pct / 100.0 * 1e6 / rps)
}

/// Each run's throughput, in order.
pub fn throughputs(runs: &[Trial]) -> Vec<f64> {
    runs.iter().map(|r| r.load.requests_per_s).collect()
}

/// Each run's throughput as a block of a paired comparison, in order: not a number where
/// the machine disturbed the run or the client bound it ([`Trial::left_out`]), which leaves
/// that block out of every comparison with this server
/// ([`Blocks::of`](greet_stats::paired::Blocks::of)). Within a block a slow spell falls on
/// every server alike, but the hypervisor's steal comes in bursts shorter than a block: one
/// slice loses a third of its CPU while the next loses none, and their ratio says nothing
/// about the servers.
pub fn block_throughputs(runs: &[Trial]) -> Vec<f64> {
    runs.iter()
        .map(|r| {
            if r.left_out() {
                f64::NAN
            } else {
                r.load.requests_per_s
            }
        })
        .collect()
}

/// What repeated keep-alive runs add up to.
#[derive(Debug, Clone, PartialEq)]
pub struct Repeated {
    /// Throughput over the runs.
    pub requests_per_s: Summary,
    /// Valid responses over all runs.
    pub hits: u64,
    /// Valid responses, percent of all requests over all runs.
    pub success_rate: f64,
    /// Median of the runs' mean latencies, seconds.
    pub average_s: f64,
    /// Median of the runs' mean server CPU, when sampled.
    pub cpu_avg_pct: Option<f64>,
    /// Median of the runs' mean answer size as it came, bytes, when counted.
    pub bytes_per_answer: Option<f64>,
}

impl Repeated {
    /// Sums and medians of `runs`.
    pub fn of(runs: &[Trial]) -> Self {
        let hits = runs.iter().map(|r| r.load.ok()).sum();
        let requests = runs.iter().map(|r| r.load.requests).sum();
        let cpu: Vec<f64> = runs.iter().filter_map(|r| r.server.cpu_avg_pct).collect();
        let bytes: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.load.bytes_per_answer)
            .collect();
        Self {
            requests_per_s: Summary::of(&throughputs(runs)),
            hits,
            success_rate: percent(hits, requests),
            average_s: median(&runs.iter().map(|r| r.load.average_s).collect::<Vec<_>>()),
            cpu_avg_pct: (!cpu.is_empty()).then(|| median(&cpu)),
            bytes_per_answer: (!bytes.is_empty()).then(|| median(&bytes)),
        }
    }
}

/// The best of several settings against the default, on throughput.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Gain {
    /// The best setting's median throughput.
    pub requests_per_s: f64,
    /// The default setting's median throughput.
    pub default_requests_per_s: f64,
    /// Best / default.
    pub gain: f64,
    /// Best against default, on per-run throughput.
    pub comparison: Comparison,
}

impl Gain {
    /// The runs of the best setting (`top`) against the default's (`base`), each named by
    /// its flags.
    pub fn of(top: (&str, &[Trial]), base: (&str, &[Trial])) -> Self {
        let (top_rps, base_rps) = (median(&throughputs(top.1)), median(&throughputs(base.1)));
        let (a, b) = (block_throughputs(top.1), block_throughputs(base.1));
        Self {
            requests_per_s: top_rps,
            default_requests_per_s: base_rps,
            gain: if base_rps == 0.0 {
                0.0
            } else {
                top_rps / base_rps
            },
            comparison: Comparison::new(Figure::RequestsPerS, top.0, &a, base.0, &b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(requests: u64, failed: u64, total_s: f64, rps: f64, cpu: Option<f64>) -> Trial {
        Trial {
            load: Figures {
                requests,
                total_s,
                requests_per_s: rps,
                average_s: total_s / 2.0,
                errors: BTreeMap::from([("io".to_owned(), failed)]),
                ..Figures::default()
            },
            server: Sampled {
                cpu_avg_pct: cpu,
                cpu_max_pct: cpu,
                rss_max_from: Some(RssFrom::PeakCounter),
                ..Sampled::default()
            },
            engine: None,
            agents: Vec::new(),
            machine: None,
            cores: None,
            seq: None,
        }
    }

    /// The client bound a load where its CPUs were saturated and the server's were not:
    /// such a block is left out, and the median of the runs' shares says it of a cell.
    #[test]
    fn a_load_the_client_saturated_is_client_bound_and_left_out() {
        let cores = |client_pct, server_pct| Cores {
            client_pct,
            server_pct,
        };
        assert!(cores(99.0, Some(58.0)).client_bound());
        assert!(cores(90.0, Some(80.0)).client_bound());
        assert!(
            !cores(89.9, Some(58.0)).client_bound(),
            "the client had room"
        );
        assert!(!cores(99.0, Some(80.1)).client_bound(), "both saturated");
        assert!(!cores(99.0, None).client_bound(), "the server unseen");
        assert_eq!(cores(99.0, Some(58.0)).line(), "client 99%, server 58%");
        let with = |c: Option<Cores>| Trial {
            cores: c,
            ..run(100, 0, 1.0, 100.0, Some(50.0))
        };
        let runs = [
            with(Some(cores(99.0, Some(58.0)))),
            with(Some(cores(70.0, Some(95.0)))),
            with(Some(cores(95.0, Some(60.0)))),
        ];
        assert!(block_throughputs(&runs)[0].is_nan());
        assert_eq!(block_throughputs(&runs)[1], 100.0);
        let median = Cores::median_of(&runs).unwrap();
        assert_eq!(median, cores(95.0, Some(60.0)));
        assert!(median.client_bound());
        assert_eq!(Trial::median_of(&runs).cores, Some(median));
        assert_eq!(Cores::median_of(&[with(None), runs[0].clone()]), None);
    }

    #[test]
    fn a_machine_is_disturbed_by_steal_or_by_other_programs() {
        let machine = |steal_pct, others_pct| Machine {
            cpus: 2,
            steal_pct,
            busy_pct: 90.0,
            others_pct,
            pace_us: None,
        };
        assert_eq!(machine(0.3, Some(6.7)).disturbance(), None);
        assert_eq!(machine(0.3, None).disturbance(), None);
        assert_eq!(
            machine(0.0, Some(62.0)).disturbance().as_deref(),
            Some("other programs used 62% of the CPUs")
        );
        assert_eq!(
            machine(12.0, Some(62.0)).disturbance().as_deref(),
            Some("the hypervisor took 12% of the CPUs")
        );
    }

    #[test]
    fn the_noise_counts_heavy_steal_and_the_loads_measured_again() {
        let machine = |steal_pct| Machine {
            cpus: 2,
            steal_pct,
            busy_pct: 90.0,
            others_pct: Some(1.0),
            pace_us: None,
        };
        let loads = [
            ("axum 1".to_owned(), machine(30.0)),
            (format!("axum 1 {}", Noise::AGAIN), machine(2.0)),
            ("hyper 1".to_owned(), machine(1.0)),
        ];
        let noise = Noise::of(&loads).expect("three loads");
        assert_eq!((noise.loads, noise.again), (3, 1));
        assert_eq!(noise.heavy, ["axum 1"]);
        let line = noise.line();
        assert!(
            line.contains(
                "over 3 loads, 1 under heavy steal (>= 10%): axum 1; 1 of those measured again, \
                 the second in the first's place"
            ),
            "{line}"
        );
        let calm = Noise::of(&loads[2..]).expect("one load");
        assert!(!calm.line().contains("again"), "{}", calm.line());
    }

    #[test]
    fn repeated_runs_add_up() {
        let r = Repeated::of(&[
            run(100, 0, 1.0, 10.0, Some(50.0)),
            run(100, 10, 3.0, 30.0, None),
            run(200, 0, 2.0, 20.0, Some(70.0)),
        ]);
        assert_eq!((r.hits, r.success_rate), (390, 97.5));
        assert_eq!(
            (r.requests_per_s.median, r.requests_per_s.min),
            (20.0, 10.0)
        );
        assert_eq!((r.average_s, r.cpu_avg_pct), (1.0, Some(60.0)));
    }

    #[test]
    fn containers_watched_together_add_up() {
        let one = |cpu: f64, mib: f64, threads: u64| Sampled {
            from: Some(SampledBy::Watch),
            cpu_max_pct: Some(cpu * 2.0),
            cpu_avg_pct: Some(cpu),
            rss_max_mib: Some(mib),
            rss_max_from: Some(RssFrom::Readings),
            threads_max: Some(threads),
            threads_last: Some(threads),
        };
        let both = Sampled::together(&[one(30.0, 40.0, 7), one(5.0, 3.5, 4)]);
        assert_eq!(both.cpu_avg_pct, Some(35.0));
        assert_eq!(both.cpu_max_pct, Some(70.0));
        assert_eq!(both.rss_max_mib, Some(43.5));
        assert_eq!(
            (both.threads_max, both.from),
            (Some(11), Some(SampledBy::Watch))
        );
        let unknown = Sampled::together(&[one(1.0, 1.0, 1), Sampled::default()]);
        assert_eq!(
            unknown.cpu_avg_pct, None,
            "a part unseen leaves the sum unknown"
        );
    }

    #[test]
    fn medians_of_runs_keep_errors_and_maxima() {
        let mut sampled = run(10, 1, 1.1, 9.0, Some(60.0));
        sampled.server.rss_max_from = Some(RssFrom::Readings);
        let runs = [
            run(10, 1, 1.2, 8.0, Some(50.0)),
            run(10, 1, 1.0, 10.0, Some(70.0)),
            sampled,
        ];
        let m = Trial::median_of(&runs);
        assert_eq!((m.load.total_s, m.load.requests_per_s), (1.1, 9.0));
        assert_eq!(m.load.errors.get("io"), Some(&3));
        assert_eq!(m.load.requests, 10);
        assert!((m.load.success_rate - 90.0).abs() < 1e-9);
        assert_eq!(m.server.cpu_max_pct, Some(70.0));
        assert_eq!(
            m.server.rss_max_from,
            Some(RssFrom::Readings),
            "one sampled peak taints"
        );
        assert_eq!(Trial::median_of(&runs[..1]), runs[0]);
    }
}
