//! The ladder's charts.

use super::{LadderServer, Section};
use crate::report::svg::Chart;

use crate::report::charts::series;

/// The original's four: response time per level, start-up, memory, CPU.
pub(super) fn charts(ladder: &Section) -> Vec<(String, Chart)> {
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
    if ladder.servers.iter().any(|s| s.cpu_max_pct.is_some()) {
        charts.push((
            "cpu.svg".into(),
            per_server("Max CPU under load", "% of one CPU", "max CPU", |s| {
                s.cpu_max_pct
            }),
        ));
    }
    if ladder.over_tls() {
        charts.insert(3, ("handshake.svg".into(), handshake));
    }
    charts
}
