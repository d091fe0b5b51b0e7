//! The figures of a per-request cost, in the order the tables show them, and how a count is
//! written in a table.

use crate::plan::Metric;

use super::PerRequest;

/// One figure of a per-request cost, as tables, points and rows read it.
pub(super) struct Figure {
    pub(super) metric: Metric,
    pub(super) label: &'static str,
    pub(super) of: fn(&PerRequest) -> Option<f64>,
}

/// The per-request figures, in table order.
pub(super) const FIGURES: [Figure; 7] = [
    Figure {
        metric: Metric::Instructions,
        label: "instructions",
        of: |c| c.instructions,
    },
    Figure {
        metric: Metric::Cycles,
        label: "cycles (est.)",
        of: |c| c.cycles,
    },
    Figure {
        metric: Metric::Allocations,
        label: "allocations",
        of: |c| c.allocations,
    },
    Figure {
        metric: Metric::AllocBytes,
        label: "bytes allocated",
        of: |c| c.alloc_bytes,
    },
    Figure {
        metric: Metric::Syscalls,
        label: "syscalls",
        of: |c| c.syscalls,
    },
    Figure {
        metric: Metric::Switches,
        label: "switches",
        of: |c| c.switches,
    },
    Figure {
        metric: Metric::CpuPerRequest,
        label: "CPU µs",
        of: |c| c.cpu_us,
    },
];

/// A count as tables show it: thousands with a `k` past 10,000, two decimals under 10.
pub(super) fn count(value: Option<f64>) -> String {
    match value {
        None => "-".to_owned(),
        Some(v) if v >= 10_000.0 => format!("{:.1}k", v / 1000.0),
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}
