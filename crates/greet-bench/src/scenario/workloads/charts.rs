//! The workloads charts: each server's share of the best throughput per profile, and its CPU
//! per request.

use super::Section;
use crate::report::svg::Chart;
use crate::stats::distinct;

use crate::report::charts::series;

/// Share of the best per profile (groups), a bar per server; and server CPU per request.
pub(super) fn charts(workloads: &Section) -> Vec<(String, Chart)> {
    let names = distinct(workloads.cells.iter().map(|c| c.server.clone()));
    let profiles = distinct(workloads.cells.iter().map(|c| c.profile));
    let groups: Vec<String> = profiles.iter().map(ToString::to_string).collect();
    let find = |name: &str, group: &String| {
        workloads
            .cells
            .iter()
            .find(|c| c.server == name && c.profile.name() == group && !c.runs.is_empty())
    };
    let share = Chart {
        title: "Workloads: throughput as a share of the best server's, per profile".into(),
        unit: "share of the best median (1 = the best)".into(),
        series: series(&names, &groups, find, |c| c.share_of_best.unwrap_or(0.0)),
        whiskers: Vec::new(),
        groups: groups.clone(),
    };
    let cpu = Chart {
        title: "Workloads: server CPU per request".into(),
        unit: "microseconds of user and system time per request (median)".into(),
        series: series(&names, &groups, find, |c| c.server_cpu_us.unwrap_or(0.0)),
        whiskers: Vec::new(),
        groups,
    };
    vec![
        ("workloads.svg".into(), share),
        ("workloads-cpu.svg".into(), cpu),
    ]
}
