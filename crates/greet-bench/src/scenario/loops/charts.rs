//! The loops chart.

use super::{LoopShape, Section};
use crate::report::svg::Chart;
use crate::stats::distinct;

use crate::report::charts::{series, whiskers};

/// `loops.svg`.
pub(super) fn charts(loops: &Section) -> Vec<(String, Chart)> {
    vec![("loops.svg".into(), chart(loops))]
}

fn chart(loops: &Section) -> Chart {
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
