//! The ladder, the original experiment: each server in turn verified, started, loaded at
//! each concurrency level (one request per fresh connection) while sampled, and stopped.

mod charts;
mod flags;
mod plan;
mod run;
mod section;
mod table;

use anyhow::{bail, Result};
use serde::Serialize;

use crate::harness::Harness;
use crate::plan::Metric;
use crate::plan::{Placement, ServerSpec, Target};
use crate::report::points::{load_figures, Point};
use crate::report::scorecard::{Entry, Row};
use crate::report::table::Table;
use crate::report::{self, csv, svg};
use crate::results::Run;
use crate::stats::distinct;

pub(crate) use flags::Flags;
pub use plan::Plan;
pub use section::{LadderServer, Section};

use super::{Book, Scenario};

/// The ladder.
#[derive(Debug)]
pub(crate) struct Ladder;

impl Scenario for Ladder {
    const NAME: &'static str = "ladder";
    const TITLE: &'static str = "Ladder (the original experiment)";
    const INTERLEAVED: bool = false;
    const KEEP_ALIVE: bool = false;
    type Plan = Plan;
    type Section = Section;

    fn defaults(quick: bool) -> Plan {
        Plan::defaults(quick)
    }

    fn binaries(plan: &Plan) -> Vec<String> {
        if plan.containers.is_some() {
            return Vec::new();
        }
        plan.servers.iter().map(|s| s.short.clone()).collect()
    }

    fn set_servers(plan: &mut Plan, servers: &[String]) {
        plan.servers = servers.iter().map(|s| ServerSpec::new(s)).collect();
    }

    fn set_repeats(plan: &mut Plan, n: usize) {
        plan.repeats = n;
    }

    fn targets(plan: &Plan) -> &[Target] {
        &plan.foreign.targets
    }

    fn place(plan: &Plan) -> Placement {
        plan.place
    }

    fn preflight(harness: &Harness, plan: &Plan) -> Result<()> {
        if plan.servers.is_empty() && plan.foreign.targets.is_empty() {
            bail!("nothing to benchmark: --servers is empty and no --target was given");
        }
        let shorts: Vec<&str> = plan.servers.iter().map(|s| s.short.as_str()).collect();
        let targets = !plan.foreign.targets.is_empty();
        harness.preflight(plan.place, &shorts, targets, plan.containers.as_ref())
    }

    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        run::run(harness, plan, book).await
    }

    fn compare(section: &mut Section) {
        section.comparisons = run::comparisons(&section.servers, &section.concurrency);
    }
}

impl report::Section for Section {
    fn tables(&self) -> Vec<Table> {
        table::tables(self)
    }

    fn charts(&self) -> Vec<(String, String)> {
        charts::charts(self)
            .into_iter()
            .map(|(file, chart)| (file, svg::render(&chart)))
            .collect()
    }

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
                .header
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
                    crate::plan::Metric::Startup,
                    one(s.startup_s.map(|v| v * 1e3)),
                ),
                (crate::plan::Metric::Rss, one(s.rss_max_mib)),
                (crate::plan::Metric::Cpu, one(s.cpu_max_pct)),
            ];
            out.extend(Point::each(&s.name, (&s.endpoint, ""), own));
            for level in &s.levels {
                let runs = if level.runs.is_empty() {
                    std::slice::from_ref(&level.run)
                } else {
                    &level.runs[..]
                };
                let place = format!("c={}", level.concurrency);
                out.extend(Point::each(
                    &s.name,
                    (&s.endpoint, &place),
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
            let each = |s: &LadderServer, f: &dyn Fn(&[&Run]) -> Option<f64>| {
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
            let one = |v: Option<f64>| v.into_iter().collect::<Vec<_>>();
            out.push(
                Row::new(
                    format!("start-up{at}"),
                    Metric::Startup,
                    of().map(|s| Entry::new(&s.name, one(s.startup_s.map(|v| v * 1e3))))
                        .collect(),
                )
                .once(),
            );
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
    f: &dyn Fn(&[&Run]) -> Option<f64>,
) -> Vec<f64> {
    let runs: Option<Vec<&[Run]>> = levels
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Figures, Level, Sampled};

    fn run(total_s: f64, rss: f64) -> Run {
        Run {
            load: Figures {
                total_s,
                success_rate: 100.0,
                ..Figures::default()
            },
            server: Sampled {
                rss_max_mib: Some(rss),
                ..Sampled::default()
            },
            ..Run::default()
        }
    }

    fn server(levels: &[(usize, &[(f64, f64)])]) -> LadderServer {
        LadderServer {
            name: "s".into(),
            levels: levels
                .iter()
                .map(|(c, runs)| Level {
                    concurrency: *c,
                    run: Run::default(),
                    runs: runs.iter().map(|&(t, m)| run(t, m)).collect(),
                })
                .collect(),
            ..LadderServer::default()
        }
    }

    #[test]
    fn each_repeat_of_the_whole_ladder_is_one_figure() {
        let total = |runs: &[&Run]| Some(runs.iter().map(|r| r.load.total_s).sum());
        let peak = |runs: &[&Run]| {
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
}
