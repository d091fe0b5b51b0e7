//! The TechEmpower chart.

use super::{Section, NO_STORE};
use crate::report::svg::Chart;
use crate::stats::distinct;

use crate::report::charts::series;

/// Each server's share of the best per test and store (groups), as TechEmpower's tables
/// rank them: throughputs that differ a hundredfold between tests, on one scale.
pub(super) fn charts(techempower: &Section) -> Vec<(String, Chart)> {
    let names = distinct(techempower.cells.iter().map(|c| c.server.clone()));
    let keys = distinct(
        techempower
            .cells
            .iter()
            .map(|c| (c.test.clone(), c.store.clone())),
    );
    // A bar group is a few characters wide: short names, the store on a line of its own.
    let groups: Vec<String> = keys
        .iter()
        .map(|(test, store)| {
            let test = test.strip_suffix("-queries").unwrap_or(test);
            match store.as_str() {
                NO_STORE => test.to_owned(),
                store => format!("{test} {}", store.split('+').next().unwrap_or(store)),
            }
        })
        .collect();
    let find = |name: &str, group: &String| {
        let i = groups.iter().position(|g| g == group)?;
        let (test, store) = &keys[i];
        techempower
            .cells
            .iter()
            .find(|c| c.server == name && &c.test == test && &c.store == store)
            .map(|c| c.share_of_best * 100.0)
    };
    let chart = Chart {
        title: "TechEmpower: each server's throughput as a share of the best".into(),
        unit: "% of the best server's requests/sec (medians)".into(),
        series: series(&names, &groups, find, |v| *v),
        whiskers: Vec::new(),
        groups,
    };
    vec![("techempower.svg".into(), chart)]
}
