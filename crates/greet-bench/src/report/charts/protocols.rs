//! The protocols chart.

use crate::report::svg::Chart;
use crate::results::Protocols;
use crate::stats::distinct;

use super::{series, whiskers};

/// Throughput per protocol (groups), a bar per server.
pub(super) fn charts(protocols: &Protocols) -> Vec<(String, Chart)> {
    let names = distinct(protocols.cells.iter().map(|c| c.server.clone()));
    let find = |name: &str, protocol: &String| {
        protocols
            .cells
            .iter()
            .find(|c| c.server == name && c.protocol == *protocol && !c.runs.is_empty())
            .map(|c| c.requests_per_s.clone())
    };
    let chart = Chart {
        title: "Protocols: keep-alive throughput at zero delay".into(),
        unit: "requests/sec (median, whiskers min-max)".into(),
        groups: protocols.protocols.clone(),
        series: series(&names, &protocols.protocols, find, |s| s.median),
        whiskers: whiskers(&names, &protocols.protocols, find),
    };
    vec![("protocols.svg".into(), chart)]
}
