//! The business charts.

use super::Section;
use crate::report::svg::Chart;
use crate::stats::distinct;

use crate::report::charts::{series, slug, whiskers};

/// Per store: each endpoint's throughput at the default setting, a bar per server, so the
/// store-bound endpoints stand beside the ceiling they are a fraction of.
pub(super) fn charts(business: &Section) -> Vec<(String, Chart)> {
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
