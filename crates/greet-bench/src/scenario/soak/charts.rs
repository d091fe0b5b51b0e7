//! The soak charts.

use super::{Section, SoakCell};
use crate::report::svg::Chart;
use crate::stats::distinct;

use crate::report::charts::{series, whiskers};

pub(super) fn charts(soak: &Section) -> Vec<(String, Chart)> {
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
