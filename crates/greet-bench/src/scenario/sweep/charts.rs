//! The sweep charts.

use super::Section;
use crate::report::svg::Chart;
use crate::stats::distinct;

use crate::report::charts::{series, slug, whiskers};

/// One chart per endpoint swept, settings along the axis.
pub(super) fn charts(sweep: &Section) -> Vec<(String, Chart)> {
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
            let find = |name: &str, setting: &super::Setting| {
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
