//! What each scenario draws: its figures as [`Chart`]s, each named by its section and file, so
//! the HTML report places them without guessing from file names.

use super::svg::{render, render_lines, Chart, Line, LineChart, XAxis};
use crate::plan::ScenarioKind;
use crate::results::{
    Business, Ladder, LadderServer, LoopShape, Loops, Rate, Results, Soak, SoakCell, Sweep,
};
use crate::stats::{distinct, Summary};

/// One chart of a section, drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartFile {
    /// The section it belongs to.
    pub section: ScenarioKind,
    /// Its file name, e.g. `soak-threads.svg`.
    pub file: String,
    /// The SVG document.
    pub svg: String,
}

/// Every chart of `results`, section by section.
pub fn charts(results: &Results) -> Vec<ChartFile> {
    let mut out = Vec::new();
    let mut add = |section: ScenarioKind, charts: Vec<(String, Chart)>| {
        out.extend(charts.into_iter().map(|(file, chart)| ChartFile {
            section,
            file,
            svg: render(&chart),
        }));
    };
    if let Some(ladder) = &results.ladder {
        add(ScenarioKind::Ladder, ladder_charts(ladder));
    }
    if let Some(loops) = &results.loops {
        add(
            ScenarioKind::Loops,
            vec![("loops.svg".into(), loops_chart(loops))],
        );
    }
    if let Some(soak) = &results.soak {
        add(ScenarioKind::Soak, soak_charts(soak));
    }
    if let Some(sweep) = &results.sweep {
        add(ScenarioKind::Sweep, sweep_charts(sweep));
    }
    if let Some(business) = &results.business {
        add(ScenarioKind::Business, business_charts(business));
    }
    if let Some(rate) = &results.rate {
        out.extend(
            rate_charts(rate)
                .into_iter()
                .map(|(file, chart)| ChartFile {
                    section: ScenarioKind::Rate,
                    file,
                    svg: render_lines(&chart),
                }),
        );
    }
    out
}

/// Per endpoint, p50 and p99 against the achieved rate, a colour per server; per server and
/// endpoint, the corrected latency by percentile, a line per level.
fn rate_charts(rate: &Rate) -> Vec<(String, LineChart)> {
    let mut out = Vec::new();
    let servers = distinct(rate.servers.iter().map(|s| s.server.clone()));
    for endpoint in distinct(rate.servers.iter().map(|s| s.endpoint.clone())) {
        let mut lines = Vec::new();
        for (colour, server) in servers.iter().enumerate() {
            let Some(record) = rate
                .servers
                .iter()
                .find(|s| &s.server == server && s.endpoint == endpoint)
            else {
                continue;
            };
            let mut levels: Vec<_> = record
                .levels
                .iter()
                .filter(|l| l.refused.is_none())
                .collect();
            levels.sort_by(|a, b| a.achieved_rps.total_cmp(&b.achieved_rps));
            for (quantile, dashed) in [("p50", false), ("p99", true)] {
                lines.push(Line {
                    name: format!("{server} {quantile}"),
                    points: levels
                        .iter()
                        .map(|l| {
                            let y = if dashed {
                                l.latency_ms.p99
                            } else {
                                l.latency_ms.p50
                            };
                            (l.achieved_rps, y)
                        })
                        .collect(),
                    colour,
                    dashed,
                });
            }
        }
        out.push((
            format!("rate-{}.svg", slug(&endpoint)),
            LineChart {
                title: format!("Latency against throughput: {endpoint}"),
                x_label: "achieved requests/sec".into(),
                y_label: "ms from the intended send (log)".into(),
                x_axis: XAxis::Linear,
                lines,
            },
        ));
    }
    for record in &rate.servers {
        let lines = record
            .levels
            .iter()
            .filter(|l| l.refused.is_none())
            .enumerate()
            .map(|(colour, l)| Line {
                name: format!("{} ({:.0}/s)", l.label, l.achieved_rps),
                points: l.distribution.iter().map(|[p, ms]| (*p, *ms)).collect(),
                colour,
                dashed: l.over_capacity,
            })
            .collect();
        out.push((
            format!(
                "rate-{}-{}.svg",
                slug(&record.server),
                slug(&record.endpoint)
            ),
            LineChart {
                title: format!(
                    "Latency by percentile: {} {}",
                    record.server, record.endpoint
                ),
                x_label: "percentile (dashed: over capacity)".into(),
                y_label: "ms from the intended send (log)".into(),
                x_axis: XAxis::Nines,
                lines,
            },
        ));
    }
    out
}

/// A bar per series in each group, from `value` of whatever `find` finds.
fn series<G, T>(
    names: &[String],
    groups: &[G],
    find: impl Fn(&str, &G) -> Option<T>,
    value: impl Fn(&T) -> f64,
) -> Vec<(String, Vec<Option<f64>>)> {
    names
        .iter()
        .map(|name| {
            let values = groups
                .iter()
                .map(|g| find(name, g).map(|t| value(&t)))
                .collect();
            (name.clone(), values)
        })
        .collect()
}

/// Min–max whiskers per series in each group, where `find` finds a summary of several runs.
fn whiskers<G>(
    names: &[String],
    groups: &[G],
    find: impl Fn(&str, &G) -> Option<Summary>,
) -> Vec<Vec<Option<[f64; 2]>>> {
    names
        .iter()
        .map(|name| {
            groups
                .iter()
                .map(|g| find(name, g).map(|s| [s.min, s.max]))
                .collect()
        })
        .collect()
}

/// The original's four: response time per level, start-up, memory, CPU.
fn ladder_charts(ladder: &Ladder) -> Vec<(String, Chart)> {
    let names: Vec<String> = ladder.servers.iter().map(|s| s.name.clone()).collect();
    let server = |name: &str| ladder.servers.iter().find(|s| s.name == name);
    // Every request waits the delay: what tells servers apart is what comes on top of it.
    let delay_ms = ladder.delay_ms as f64;
    let per_level = |title: &str, value: fn(&crate::results::Level, f64) -> f64| Chart {
        title: title.into(),
        unit: "milliseconds".into(),
        groups: ladder
            .concurrency
            .iter()
            .map(|c| format!("{c} concurrent"))
            .collect(),
        series: series(
            &names,
            &ladder.concurrency,
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
            series: vec![(name.to_owned(), ladder.servers.iter().map(f).collect())],
            whiskers: Vec::new(),
        };
    let memory = Chart {
        title: "Memory (resident set)".into(),
        unit: "MiB".into(),
        groups: names.clone(),
        series: vec![
            (
                "idle".to_owned(),
                ladder.servers.iter().map(|s| s.idle_rss_mib).collect(),
            ),
            (
                "max under load".to_owned(),
                ladder.servers.iter().map(|s| s.rss_max_mib).collect(),
            ),
        ],
        whiskers: Vec::new(),
    };
    vec![
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
        (
            "cpu.svg".into(),
            per_server("Max CPU under load", "% of one CPU", "max CPU", |s| {
                s.cpu_max_pct
            }),
        ),
    ]
}

fn loops_chart(loops: &Loops) -> Chart {
    let names = distinct(
        loops
            .shapes
            .iter()
            .flat_map(|shape| shape.servers.iter().map(|s| s.name.clone())),
    );
    let find = |name: &str, shape: &LoopShape| {
        shape
            .servers
            .iter()
            .find(|s| s.name == name && !s.runs.is_empty())
            .map(|s| s.requests_per_s.clone())
    };
    Chart {
        title: "Loops: throughput per shape (median, whiskers min-max)".into(),
        unit: "requests/sec".into(),
        groups: loops
            .shapes
            .iter()
            .map(|s| format!("{} users x {}", s.users, s.loops))
            .collect(),
        series: series(&names, &loops.shapes, find, |s| s.median),
        whiskers: whiskers(&names, &loops.shapes, find),
    }
}

fn soak_charts(soak: &Soak) -> Vec<(String, Chart)> {
    let groups = distinct(
        soak.cells
            .iter()
            .map(|c| (c.endpoint.clone(), c.concurrency)),
    );
    let names = distinct(soak.cells.iter().map(|c| c.server.clone()));
    let cell = |name: &str, (endpoint, level): &(String, usize)| {
        soak.cells
            .iter()
            .find(|c| c.server == name && &c.endpoint == endpoint && c.concurrency == *level)
    };
    let labels: Vec<String> = groups.iter().map(|(e, c)| format!("{e} c={c}")).collect();
    let throughput = Chart {
        title: "Soak: throughput per endpoint and connections".into(),
        unit: "requests/sec".into(),
        groups: labels.clone(),
        series: series(&names, &groups, cell, |c: &&SoakCell| {
            c.requests_per_s.median
        }),
        whiskers: whiskers(&names, &groups, |name, g| {
            cell(name, g)
                .filter(|c| c.runs.len() > 1)
                .map(|c| c.requests_per_s.clone())
        }),
    };
    let threads = Chart {
        title: "Soak: peak live threads".into(),
        unit: "threads".into(),
        groups: labels,
        series: series(
            &names,
            &groups,
            |n, g| cell(n, g).filter(|c| c.threads_peak.is_some()),
            |c: &&SoakCell| c.threads_peak.unwrap_or(0) as f64,
        ),
        whiskers: Vec::new(),
    };
    vec![
        ("soak-throughput.svg".into(), throughput),
        ("soak-threads.svg".into(), threads),
    ]
}

/// A file-name part from a path: `/greetings/blocking` → `greetings-blocking`.
fn slug(path: &str) -> String {
    let slug: String = path
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let slug = slug.trim_matches('-').to_owned();
    if slug.is_empty() {
        "root".to_owned()
    } else {
        slug
    }
}

/// One chart per endpoint swept, settings along the axis.
fn sweep_charts(sweep: &Sweep) -> Vec<(String, Chart)> {
    distinct(sweep.cells.iter().map(|c| c.endpoint.as_str()))
        .into_iter()
        .map(|endpoint| {
            let cells: Vec<_> = sweep
                .cells
                .iter()
                .filter(|c| c.endpoint == endpoint)
                .collect();
            let settings = distinct(cells.iter().map(|c| c.setting));
            let names = distinct(cells.iter().map(|c| c.server.clone()));
            let find = |name: &str, setting: &crate::results::Setting| {
                cells
                    .iter()
                    .find(|c| c.server == name && c.setting == *setting && !c.runs.is_empty())
                    .map(|c| c.requests_per_s.clone())
            };
            let blocking = settings.iter().any(|s| s.blocking_threads.is_some());
            let chart = Chart {
                title: format!(
                    "Sweep: {endpoint} by --workers{}",
                    if blocking {
                        " and --blocking-threads"
                    } else {
                        ""
                    }
                ),
                unit: "requests/sec (median, whiskers min-max)".into(),
                groups: settings
                    .iter()
                    .map(|s| match s.blocking_threads {
                        Some(b) => format!("w{} b{b}", s.workers),
                        None => format!("w{}", s.workers),
                    })
                    .collect(),
                series: series(&names, &settings, find, |s| s.median),
                whiskers: whiskers(&names, &settings, find),
            };
            (format!("sweep-{}.svg", slug(endpoint)), chart)
        })
        .collect()
}

/// Per store: each endpoint's throughput at the default setting, a bar per server, so the
/// store-bound endpoints stand beside the ceiling they are a fraction of.
fn business_charts(business: &Business) -> Vec<(String, Chart)> {
    business
        .stores
        .iter()
        .map(|store| {
            let cells: Vec<_> = business
                .cells
                .iter()
                .filter(|c| {
                    &c.store == store && c.setting == business.default && !c.runs.is_empty()
                })
                .collect();
            let endpoints = distinct(cells.iter().map(|c| c.endpoint.clone()));
            let names = distinct(cells.iter().map(|c| c.server.clone()));
            let find = |name: &str, endpoint: &String| {
                cells
                    .iter()
                    .find(|c| c.server == name && &c.endpoint == endpoint)
                    .map(|c| c.requests_per_s.clone())
            };
            let chart = Chart {
                title: format!(
                    "Business on {store}: each endpoint against the ceiling (/health), {}",
                    business.default.label()
                ),
                unit: "requests/sec (median, whiskers min-max)".into(),
                groups: endpoints.clone(),
                series: series(&names, &endpoints, find, |s| s.median),
                whiskers: whiskers(&names, &endpoints, find),
            };
            (format!("business-{}.svg", slug(store)), chart)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_name_files() {
        assert_eq!(slug("/greetings/blocking"), "greetings-blocking");
        assert_eq!(slug("/health"), "health");
        assert_eq!(slug("/"), "root");
    }
}
