//! The rate charts.

use super::Section;
use crate::report::svg::{Line, LineChart, XAxis};
use crate::stats::distinct;

use crate::report::charts::slug;

/// Per endpoint, p50 and p99 against the achieved rate, a colour per server (and on a ramp,
/// against each second's offered rate); per server and endpoint, the corrected latency by
/// percentile, a line per level.
pub(super) fn charts(rate: &Section) -> Vec<(String, LineChart)> {
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
    out.extend(ramps(rate, &servers));
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

/// Per endpoint that ran a ramp, each second's p50 and p99 against the rate offered in it, a
/// colour per server: where latency leaves the floor is the knee.
fn ramps(rate: &Section, servers: &[String]) -> Vec<(String, LineChart)> {
    let mut out = Vec::new();
    for endpoint in distinct(rate.servers.iter().map(|s| s.endpoint.clone())) {
        let mut lines = Vec::new();
        for (colour, server) in servers.iter().enumerate() {
            let ramped = rate
                .servers
                .iter()
                .filter(|s| &s.server == server && s.endpoint == endpoint)
                .flat_map(|s| &s.levels)
                .find(|l| !l.windows.is_empty());
            let Some(level) = ramped else { continue };
            let mut seconds: Vec<_> = level
                .windows
                .iter()
                .filter(|w| w.latency_ms.p50 > 0.0)
                .collect();
            seconds.sort_by(|a, b| a.offered_rps.total_cmp(&b.offered_rps));
            for (quantile, dashed) in [("p50", false), ("p99", true)] {
                lines.push(Line {
                    name: format!("{server} {quantile}"),
                    points: seconds
                        .iter()
                        .map(|w| {
                            let l = &w.latency_ms;
                            (w.offered_rps, if dashed { l.p99 } else { l.p50 })
                        })
                        .collect(),
                    colour,
                    dashed,
                });
            }
        }
        if !lines.is_empty() {
            out.push((
                format!("rate-ramp-{}.svg", slug(&endpoint)),
                LineChart {
                    title: format!(
                        "Latency against offered rate, each second of the ramp: {endpoint}"
                    ),
                    x_label: "requests/sec offered in the second".into(),
                    y_label: "ms from the intended send (log)".into(),
                    x_axis: XAxis::Linear,
                    lines,
                },
            ));
        }
    }
    out
}
