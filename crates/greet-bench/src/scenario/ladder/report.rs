//! ladder's report: its section of results.json, and what is drawn from it: tables, charts,
//! CSV files, its figures as points and its scorecard rows; its tables are in `table.rs`.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use greet_model::plan::Metric;
use greet_model::results::{Frame, Mode, RssFrom, Sampled, Transport, Trial};
use greet_report::charts::series;
use greet_report::points::{load_figures, Point};
use greet_report::scorecard::{Entry, Row};
use greet_report::svg::Chart;
use greet_report::{csv, Charts, Render};
use greet_stats::distinct;
use greet_stats::paired::Comparison;

use crate::scenario::kit::Compared;

/// The ladder, the original experiment: each server started, verified, and loaded at each
/// concurrency level, one request per fresh connection.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Section {
    /// The protocol its requests went over.
    #[serde(flatten)]
    pub transport: Transport,
    /// Processes or containers.
    pub mode: Mode,
    /// `--delay-ms` given to the servers.
    pub delay_ms: u64,
    /// `--workers` given to the servers.
    pub workers: usize,
    /// `--blocking-threads` given to the servers.
    pub blocking_threads: usize,
    /// The concurrency levels, in order; each sends as many requests as its concurrency.
    pub concurrency: Vec<usize>,
    /// Per-request timeout, seconds.
    pub timeout_s: f64,
    /// One entry per server (and endpoint), in run order.
    pub servers: Vec<LadderServer>,
    /// With repeats: every pair of servers at each level, on per-run total time.
    pub comparisons: Vec<Comparison>,
    /// What every section has: the repeats, the failures.
    #[serde(flatten)]
    pub frame: Frame,
}

/// One server (and endpoint) of the ladder: start-up, resources and a level per concurrency.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LadderServer {
    /// The name in the tables, e.g. `greet-axum`.
    pub name: String,
    /// The path loaded, e.g. `/greetings`.
    pub endpoint: String,
    /// Where it was loaded, `host:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<String>,
    /// On a swarm: the node its task ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Spawn → first 200 on `/health`, seconds (none for `--target`): the median of
    /// `startups_s` where the ladder was repeated.
    pub startup_s: Option<f64>,
    /// Each repeat's start-up, seconds, in repeat order, when the ladder was repeated (each
    /// repeat starts every server afresh).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub startups_s: Vec<f64>,
    /// Resident memory after start-up, before any load, MiB (the first start's).
    pub idle_rss_mib: Option<f64>,
    /// Highest CPU use over all levels, percent of one CPU.
    pub cpu_max_pct: Option<f64>,
    /// Highest resident memory over all levels, MiB.
    pub rss_max_mib: Option<f64>,
    /// How `rss_max_mib` was measured.
    pub rss_max_from: Option<RssFrom>,
    /// Most threads over all levels.
    pub threads_max: Option<u64>,
    /// One entry per concurrency level measured.
    pub levels: Vec<Level>,
}

/// One level of fresh-connection load on one server (or merged from agents' reports).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Level {
    /// Requests in flight at once (and requests sent).
    pub concurrency: usize,
    /// The level's figures: its one run, or the medians of its runs.
    #[serde(flatten)]
    pub run: Trial,
    /// Each run, in order, when the level was repeated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<Trial>,
}

impl Section {
    /// Whether its connections made TLS handshakes (`--protocol https` or `h2`).
    pub fn over_tls(&self) -> bool {
        self.servers
            .iter()
            .flat_map(|s| &s.levels)
            .any(|l| l.run.load.handshake_ms.is_some())
    }
}

impl LadderServer {
    /// A run of its `index`th level (at `concurrency`): the level's one run, or
    /// (`repeated`) one more of its runs, its figures their medians.
    pub fn add(&mut self, index: usize, concurrency: usize, run: Trial, repeated: bool) {
        if index >= self.levels.len() {
            self.levels.push(Level {
                concurrency,
                ..Level::default()
            });
        }
        let at = index.min(self.levels.len() - 1);
        let level = &mut self.levels[at];
        if repeated {
            level.runs.push(run);
            level.run = Trial::median_of(&level.runs);
        } else {
            level.run = run;
        }
        self.fold_maxima();
    }

    /// Folds the levels' resource maxima into the server's.
    pub fn fold_maxima(&mut self) {
        let all = Sampled::over(
            &self
                .levels
                .iter()
                .map(|l| &l.run.server)
                .collect::<Vec<_>>(),
        );
        self.cpu_max_pct = all.cpu_max_pct;
        self.rss_max_mib = all.rss_max_mib;
        self.rss_max_from = all.rss_max_from;
        self.threads_max = all.threads_max;
    }
}

/// The original's four: response time per level, start-up, memory, CPU.
impl Charts for Section {
    type Chart = Chart;

    fn charts(&self) -> Vec<(String, Chart)> {
        let names: Vec<String> = self.servers.iter().map(|s| s.name.clone()).collect();
        let server = |name: &str| self.servers.iter().find(|s| s.name == name);
        // Every request waits the delay: what tells servers apart is what comes on top of it.
        let delay_ms = self.delay_ms as f64;
        let per_level = |title: &str, value: fn(&Level, f64) -> f64| Chart {
            title: title.into(),
            unit: "milliseconds".into(),
            groups: self
                .concurrency
                .iter()
                .map(|c| format!("{c} concurrent"))
                .collect(),
            series: series(
                &names,
                &self.concurrency,
                |name, c| server(name)?.levels.iter().find(|l| l.concurrency == *c),
                |l| value(l, delay_ms),
            ),
            whiskers: Vec::new(),
        };
        let total = per_level("Total time of a level above the delay", |l, delay| {
            (l.run.load.total_s * 1000.0 - delay).max(0.0)
        });
        let p99 = per_level("p99 latency above the delay", |l, delay| {
            (l.run.load.latency_ms.p99 - delay).max(0.0)
        });
        let connect = per_level("Mean connect time", |l, _| l.run.load.connect_ms.avg);
        let per_server =
            |title: &str, unit: &str, name: &str, f: fn(&LadderServer) -> Option<f64>| Chart {
                title: title.into(),
                unit: unit.into(),
                groups: names.clone(),
                series: vec![(name.to_owned(), self.servers.iter().map(f).collect())],
                whiskers: Vec::new(),
            };
        let memory = Chart {
            title: "Memory (resident set)".into(),
            unit: "MiB".into(),
            groups: names.clone(),
            series: vec![
                (
                    "idle".to_owned(),
                    self.servers.iter().map(|s| s.idle_rss_mib).collect(),
                ),
                (
                    "max under load".to_owned(),
                    self.servers.iter().map(|s| s.rss_max_mib).collect(),
                ),
            ],
            whiskers: Vec::new(),
        };
        let handshake = per_level("Mean TLS handshake (after the connect)", |l, _| {
            l.run.load.handshake_ms.as_ref().map_or(0.0, |h| h.avg)
        });
        let mut charts = vec![
            ("above-delay.svg".into(), total),
            ("p99-above-delay.svg".into(), p99),
            ("connect.svg".into(), connect),
            (
                "startup.svg".into(),
                per_server(
                    "Start-up time (spawn to first 200)",
                    "milliseconds",
                    "start-up",
                    |s| s.startup_s.map(|v| v * 1000.0),
                ),
            ),
            ("memory.svg".into(), memory),
        ];
        // Levels too short for /proc's clock measure no CPU: no chart of nothing.
        if self.servers.iter().any(|s| s.cpu_max_pct.is_some()) {
            charts.push((
                "cpu.svg".into(),
                per_server("Max CPU under load", "% of one CPU", "max CPU", |s| {
                    s.cpu_max_pct
                }),
            ));
        }
        if self.over_tls() {
            charts.insert(3, ("handshake.svg".into(), handshake));
        }
        charts
    }
}

impl Render for Section {
    fn csv(&self) -> Result<Vec<(String, String)>> {
        let levels = self.servers.iter().flat_map(|s| {
            s.levels.iter().map(move |l| {
                let key = LevelKey {
                    server: &s.name,
                    endpoint: &s.endpoint,
                    concurrency: l.concurrency,
                };
                (key, csv::RunColumns::of(&l.run))
            })
        });
        let servers = self.servers.iter().map(|s| ResourceRow {
            server: &s.name,
            endpoint: &s.endpoint,
            startup_s: s.startup_s,
            idle_rss_mib: s.idle_rss_mib,
            cpu_max_pct: s.cpu_max_pct,
            rss_max_mib: s.rss_max_mib,
            threads_max: s.threads_max,
            error: self
                .frame
                .failures
                .iter()
                .find(|f| f.server == s.name)
                .map(|f| f.error.as_str()),
        });
        Ok(vec![
            ("ladder.csv".to_owned(), csv::write(levels)?),
            ("resources.csv".to_owned(), csv::write(servers)?),
        ])
    }

    fn points(&self) -> Vec<Point> {
        let mut out = Vec::new();
        for s in &self.servers {
            // A server may be loaded on two endpoints in one ladder (`axum:/greetings/blocking`).
            let one = |v: Option<f64>| v.into_iter().collect::<Vec<_>>();
            let own = [
                (
                    greet_model::plan::Metric::Startup,
                    one(s.startup_s.map(|v| v * 1e3)),
                ),
                (greet_model::plan::Metric::Rss, one(s.rss_max_mib)),
                (greet_model::plan::Metric::Cpu, one(s.cpu_max_pct)),
            ];
            out.extend(Point::each(&s.name, (&s.endpoint, ""), own));
            for level in &s.levels {
                let runs = if level.runs.is_empty() {
                    std::slice::from_ref(&level.run)
                } else {
                    &level.runs[..]
                };
                let cell = format!("c={}", level.concurrency);
                out.extend(Point::each(
                    &s.name,
                    (&s.endpoint, &cell),
                    load_figures(runs),
                ));
            }
        }
        out
    }

    fn scorecard(&self) -> Vec<Row> {
        let mut out = Vec::new();
        let endpoints = distinct(self.servers.iter().map(|s| s.endpoint.as_str()));
        for endpoint in &endpoints {
            let at = if endpoints.len() > 1 {
                format!(", {endpoint}")
            } else {
                String::new()
            };
            let of = || self.servers.iter().filter(|s| s.endpoint == *endpoint);
            let levels: Vec<String> = self.concurrency.iter().map(usize::to_string).collect();
            let each = |s: &LadderServer, f: &dyn Fn(&[&Trial]) -> Option<f64>| {
                Entry::new(&s.name, per_repeat(s, &self.concurrency, f))
            };
            out.push(Row::new(
                format!("total time, c={}{at}", levels.join("+")),
                Metric::Total,
                of().map(|s| {
                    each(s, &|runs| {
                        // A level with failed requests ends early: its time is no figure.
                        let whole = runs.iter().all(|r| r.load.success_rate >= 100.0);
                        whole.then(|| runs.iter().map(|r| r.load.total_s).sum())
                    })
                })
                .collect(),
            ));
            // Each repeat starts every server afresh: its start-ups are blocks.
            let repeated = of().any(|s| s.startups_s.len() > 1);
            let starts = |s: &LadderServer| -> Vec<f64> {
                if repeated {
                    s.startups_s.iter().map(|v| v * 1e3).collect()
                } else {
                    s.startup_s.map(|v| v * 1e3).into_iter().collect()
                }
            };
            let startup = Row::new(
                format!("start-up{at}"),
                Metric::Startup,
                of().map(|s| Entry::new(&s.name, starts(s))).collect(),
            );
            out.push(if repeated { startup } else { startup.once() });
            out.push(Row::new(
                format!("peak memory{at}"),
                Metric::Rss,
                of().map(|s| {
                    each(s, &|runs| {
                        runs.iter()
                            .filter_map(|r| r.server.rss_max_mib)
                            .reduce(f64::max)
                    })
                })
                .collect(),
            ));
        }
        out
    }
}

/// One figure per repeat of the whole ladder: `f` over repeat i's run of every level, in
/// `levels`' order; none unless every level has that run and `f` gives a figure for each.
fn per_repeat(
    server: &LadderServer,
    levels: &[usize],
    f: &dyn Fn(&[&Trial]) -> Option<f64>,
) -> Vec<f64> {
    let runs: Option<Vec<&[Trial]>> = levels
        .iter()
        .map(|&c| {
            let level = server.levels.iter().find(|l| l.concurrency == c)?;
            Some(if level.runs.is_empty() {
                std::slice::from_ref(&level.run)
            } else {
                &level.runs[..]
            })
        })
        .collect();
    let Some(runs) = runs.filter(|r| !r.is_empty()) else {
        return Vec::new();
    };
    let repeats = runs.iter().map(|r| r.len()).min().unwrap_or(0);
    let each: Vec<f64> = (0..repeats)
        .filter_map(|i| f(&runs.iter().map(|r| &r[i]).collect::<Vec<_>>()))
        .collect();
    if each.len() == repeats {
        each
    } else {
        Vec::new()
    }
}

/// The key of a `ladder.csv` row.
#[derive(Serialize)]
struct LevelKey<'a> {
    server: &'a str,
    endpoint: &'a str,
    concurrency: usize,
}

/// A row of `resources.csv`.
#[derive(Serialize)]
struct ResourceRow<'a> {
    server: &'a str,
    endpoint: &'a str,
    startup_s: Option<f64>,
    idle_rss_mib: Option<f64>,
    cpu_max_pct: Option<f64>,
    rss_max_mib: Option<f64>,
    threads_max: Option<u64>,
    error: Option<&'a str>,
}

impl Compared for Section {
    /// Every comparison it makes: one family, judged together.
    fn comparisons(&mut self) -> Vec<&mut greet_stats::paired::Comparison> {
        self.comparisons.iter_mut().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use greet_model::results::{Figures, Sampled};

    fn run(total_s: f64, rss: f64) -> Trial {
        Trial {
            load: Figures {
                total_s,
                success_rate: 100.0,
                ..Figures::default()
            },
            server: Sampled {
                rss_max_mib: Some(rss),
                ..Sampled::default()
            },
            ..Trial::default()
        }
    }

    fn server(levels: &[(usize, &[(f64, f64)])]) -> LadderServer {
        LadderServer {
            name: "s".into(),
            levels: levels
                .iter()
                .map(|(c, runs)| Level {
                    concurrency: *c,
                    run: Trial::default(),
                    runs: runs.iter().map(|&(t, m)| run(t, m)).collect(),
                })
                .collect(),
            ..LadderServer::default()
        }
    }

    #[test]
    fn each_repeat_of_the_whole_ladder_is_one_figure() {
        let total = |runs: &[&Trial]| Some(runs.iter().map(|r| r.load.total_s).sum());
        let peak = |runs: &[&Trial]| {
            runs.iter()
                .filter_map(|r| r.server.rss_max_mib)
                .reduce(f64::max)
        };
        let both = server(&[
            (10, &[(1.0, 5.0), (2.0, 6.0)]),
            (50, &[(3.0, 9.0), (4.0, 7.0)]),
        ]);
        assert_eq!(per_repeat(&both, &[10, 50], &total), [4.0, 6.0]);
        assert_eq!(per_repeat(&both, &[10, 50], &peak), [9.0, 7.0]);
        // A server that never reached a level has no total: a shorter ladder is no win.
        let short = server(&[(10, &[(1.0, 5.0), (2.0, 6.0)])]);
        assert!(per_repeat(&short, &[10, 50], &total).is_empty());
    }

    #[test]
    fn the_json_of_a_level_is_flat_and_reads_back() {
        let level = Level {
            concurrency: 10,
            run: Trial {
                server: Sampled {
                    cpu_max_pct: Some(1.0),
                    rss_max_from: Some(greet_model::results::RssFrom::PeakCounter),
                    ..Sampled::default()
                },
                ..run(1.0, 10.0)
            },
            runs: Vec::new(),
        };
        let json = serde_json::to_value(&level).unwrap();
        for key in [
            "concurrency",
            "requests",
            "requests_per_s",
            "cpu_max_pct",
            "rss_max_from",
        ] {
            assert!(json.get(key).is_some(), "{key} in {json}");
        }
        assert!(json.get("runs").is_none(), "no runs list for a single run");
        assert_eq!(serde_json::from_value::<Level>(json).unwrap(), level);
    }
}
