//! The protocols chart.

use super::section::case as protocol_case;
use super::Section;
use crate::report::svg::Chart;
use crate::stats::distinct;

use crate::report::charts::{series, whiskers};

/// Throughput per protocol (groups), a bar per server.
pub(super) fn charts(protocols: &Section) -> Vec<(String, Chart)> {
    let names = distinct(protocols.cells.iter().map(|c| c.server.clone()));
    let groups: Vec<String> = protocols
        .cases()
        .into_iter()
        .map(|(p, streams)| protocol_case(p, streams))
        .collect();
    let find = |name: &str, case: &String| {
        protocols
            .cells
            .iter()
            .find(|c| c.server == name && c.case() == *case && !c.runs.is_empty())
            .map(|c| c.requests_per_s.clone())
    };
    let chart = Chart {
        title: "Protocols: keep-alive throughput at zero delay".into(),
        unit: "requests/sec (median, whiskers min-max)".into(),
        series: series(&names, &groups, find, |s| s.median),
        whiskers: whiskers(&names, &groups, find),
        groups,
    };
    vec![("protocols.svg".into(), chart)]
}
