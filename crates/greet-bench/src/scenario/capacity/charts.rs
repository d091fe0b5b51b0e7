//! The capacity charts.

use super::Section;
use crate::report::svg::{Line, LineChart, XAxis};
use crate::stats::distinct;

use crate::report::charts::slug;

/// Per endpoint (and streams), each second of every server's ramp: the objective's latency against the rate
/// offered in it, a colour per server, with the objective's bound as a flat line: where a
/// server's line crosses it is its knee.
pub(super) fn charts(capacity: &Section) -> Vec<(String, LineChart)> {
    let mut out = Vec::new();
    let servers = distinct(capacity.servers.iter().map(|s| s.server.clone()));
    for case in distinct(capacity.servers.iter().map(|s| s.case())) {
        let mut lines = Vec::new();
        let mut widest: f64 = 0.0;
        for (colour, server) in servers.iter().enumerate() {
            let Some(record) = capacity
                .servers
                .iter()
                .find(|s| &s.server == server && s.case() == case)
            else {
                continue;
            };
            let mut seconds: Vec<_> = record
                .ramp
                .iter()
                .filter(|w| w.latency_ms.p50 > 0.0)
                .collect();
            seconds.sort_by(|a, b| a.offered_rps.total_cmp(&b.offered_rps));
            widest = seconds.iter().map(|w| w.offered_rps).fold(widest, f64::max);
            lines.push(Line {
                name: format!("{server} {:.1}k/s", record.capacity_rps / 1000.0),
                points: seconds
                    .iter()
                    .map(|w| (w.offered_rps, w.latency_ms.at(capacity.slo_percentile)))
                    .collect(),
                colour,
                dashed: false,
            });
        }
        if lines.is_empty() {
            continue;
        }
        lines.push(Line {
            name: format!("objective: {}", capacity.slo),
            points: vec![(0.0, capacity.slo_ms), (widest, capacity.slo_ms)],
            colour: servers.len(),
            dashed: true,
        });
        out.push((
            format!("capacity-{}.svg", slug(&case)),
            LineChart {
                title: format!(
                    "The ramp, second by second, against {}: {case}",
                    capacity.slo
                ),
                x_label: "requests/sec offered in the second".into(),
                y_label: "ms from the intended send (log)".into(),
                x_axis: XAxis::Linear,
                lines,
            },
        ));
    }
    out
}
