//! The capacity table.

use super::Section;

use crate::report::table::{comparison_notes, failure_notes, opt, Table};

/// One row per server and endpoint: the capacity at the objective, how the search found it,
/// the latency below it, and what each side's CPU spent per request there.
pub(super) fn tables(capacity: &Section) -> Vec<Table> {
    let ms = |l: Option<&crate::results::Spectrum>| {
        l.map_or("-".to_owned(), |l| format!("{:.3} / {:.3}", l.p50, l.p99))
    };
    let rows = capacity
        .servers
        .iter()
        .map(|s| {
            let ratio = match (s.client_us_per_request, s.server_us_per_request) {
                (Some(c), Some(v)) if v > 0.0 => Some(c / v),
                _ => None,
            };
            vec![
                s.server.clone(),
                s.case(),
                format!("{}{:.0}", if s.at_top { ">= " } else { "" }, s.capacity_rps),
                s.searches
                    .iter()
                    .map(|v| format!("{v:.0}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                spread(s.spread()),
                if s.paces_us.is_empty() {
                    "-".to_owned()
                } else {
                    (s.paces_us.iter())
                        .map(|v| format!("{v:.0}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                },
                format!("{:.0}", s.probe_rps),
                opt(s.ramp_knee_rps, 0),
                ms(s.at_half.as_ref()),
                ms(s.at_ninety.as_ref()),
                opt(s.server_us_per_request, 1),
                opt(s.client_us_per_request, 1),
                opt(ratio, 2),
            ]
        })
        .collect();
    let mut table = Table::new(
        format!(
            "Capacity at {} (every answer valid, at most {:.0}% sent later than it allows), a {:.0} s ramp then {} \
             search(es), each a staircase of {} levels of {:.1} s, {} connections, delay {} ms, --workers {}",
            capacity.slo,
            capacity.late_share_max * 100.0,
            capacity.ramp_s,
            capacity.frame.repeats,
            capacity.steps,
            capacity.duration_s,
            capacity.connections,
            capacity.delay_ms,
            capacity.workers
        ),
        &[
            "Application",
            "Endpoint",
            "Capacity(req/s)",
            "Searches",
            "Spread",
            "Paces (us)",
            "Closed-loop probe",
            "Ramp knee",
            "p50 / p99 at 50%",
            "p50 / p99 at 90%",
            "Server us/req",
            "Client us/req",
            "Client/server",
        ],
        vec![rows],
    );
    table.notes.push(
        ">= : held up to the top of the search (what the client can pace; on agents, 1.2 \
         times the probe): the capacity is at least this; Spread: the lowest and highest search \
         from the capacity; Paces: how long the machine took meanwhile for a fixed piece of \
         kernel work, each search's median (higher is slower); us/req: CPU microseconds per request at the highest level held under the capacity"
            .to_owned(),
    );
    for s in &capacity.servers {
        let disturbed = s.disturbed_verdicts();
        if disturbed > 0 {
            table.notes.push(format!(
                "{} {}: {disturbed} level(s) broke on a disturbed machine even when run again \
                 (steal, or other programs on the CPUs): its searches may be low",
                s.server,
                s.case()
            ));
        }
    }
    table.notes.extend(comparison_notes(&capacity.comparisons));
    table.notes.extend(failure_notes(&capacity.frame.failures));
    vec![table]
}

/// The searches' spread around the capacity, in percent (`-8% +5%`).
pub(super) fn spread(spread: Option<(f64, f64)>) -> String {
    spread.map_or("-".to_owned(), |(low, high)| {
        format!("{:+.0}% {:+.0}%", (low - 1.0) * 100.0, (high - 1.0) * 100.0)
    })
}
