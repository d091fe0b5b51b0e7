//! Workloads: what HttpArena scores besides a hello, on every server: a keep-alive baseline,
//! short-lived connections, a JSON POST, compressed answers, a 20 MB upload, a static file,
//! JSON over TLS and WebSocket echo ([`Profile`]). Each profile's figures are throughput,
//! latency, bytes per answer, the server's CPU per request and the load generator's, and
//! peak memory; each server's throughput is a share of the profile's best.

mod flags;
mod report;
mod run;

use std::time::Duration;

use greet_model::plan::{Base, Based, Budget, Measure, Measured, Takes, GRID_REPEATS};

pub use greet_model::plan::Profile;

pub(crate) use flags::Flags;
pub use report::*;

use super::kit::{About, Scenario};

/// The workloads scenario.
#[derive(Debug)]
pub(crate) struct Workloads;

impl Scenario for Workloads {
    const ABOUT: About = About {
        name: "workloads",
        block: "a slice of each server on a profile, every server started once for it",
        title: "Workloads (baseline, short-lived, POST JSON, compression, upload, static, TLS, \
                WebSocket)",
        summary: "HttpArena's profiles: JSON, compression, uploads, static, TLS, WebSocket",
        detail: "What HttpArena scores besides a hello: a keep-alive baseline, short-lived \
                 connections, a JSON POST, compressed answers, a 20 MB upload, a static file, \
                 JSON over TLS and WebSocket echo, on every server: throughput and its share of \
                 the best, latency, bytes per answer, server and client CPU per request, peak \
                 memory, verdicts. The upload's slices last at least 1 s (a 20 MB upload on 64 \
                 connections takes half a second), --duration's where longer",
        examples: &[
            "greet-bench workloads --quick",
            "greet-bench workloads --profiles baseline,compressed --repeats 8",
        ],
        // Each profile sets its own protocol, connections, header fields and body.
        own_protocols: true,
        keep_alive: false,
        measures_again: true,
        ..About::DEFAULT
    };
    type Plan = Plan;
    type Flags = Flags;
    type Section = Section;
}

/// Workloads: every profile on every server, each server started once a profile, measured in
/// blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario's plan holds.
    pub base: Base,
    /// Profiles, in order.
    pub profiles: Vec<Profile>,
    /// Each upload's size, bytes.
    pub upload_bytes: u64,
    /// How each profile is measured.
    pub measure: Measure,
    /// Blocks added to a profile whose figures are still undecided.
    pub budget: Budget,
    /// The upload's slices last at least this long, whatever `measure` says.
    pub upload_slice: Duration,
}

impl Plan {
    /// HttpArena's upload: 20 MB.
    pub const UPLOAD_BYTES: u64 = 20_000_000;
    /// `--quick`'s upload.
    pub const QUICK_UPLOAD_BYTES: u64 = 1 << 20;
    /// Time for the whole scenario, blocks added where undecided: about one and a half times
    /// what its 20 blocks take.
    pub const BUDGET: Duration = Duration::from_secs(285);
    /// The upload's shortest slice. A 20 MB upload on each of 64 connections takes about half
    /// a second, so a 250 ms slice is one wave of requests that end together: its blocks'
    /// log ratios spread 0.15-0.19, in two clusters. Slices of 1 s spread 0.08-0.11 for about
    /// twice the time, 2 s no less (docs/harness.md).
    pub const UPLOAD_SLICE: Duration = Duration::from_secs(1);

    /// How long `profile`'s slices last: `measure`'s, the upload's at least `upload_slice`.
    pub fn slice(&self, profile: Profile) -> Duration {
        match profile {
            Profile::Upload => self.measure.duration.max(self.upload_slice),
            _ => self.measure.duration,
        }
    }
}

impl Based for Plan {
    const TAKES: Takes = Takes::SERVERS_ONLY;
    const REPEATS_HELP: &'static str = GRID_REPEATS;

    fn defaults(quick: bool) -> Self {
        Self {
            base: Self::grid(quick),
            profiles: Profile::ALL.to_vec(),
            upload_bytes: if quick {
                Self::QUICK_UPLOAD_BYTES
            } else {
                Self::UPLOAD_BYTES
            },
            measure: Self::measure(quick),
            budget: Budget::of(if quick { Duration::ZERO } else { Self::BUDGET }),
            upload_slice: if quick {
                Duration::ZERO
            } else {
                Self::UPLOAD_SLICE
            },
        }
    }
}

impl Measured for Plan {
    /// 3 servers × 8 profiles × 20 blocks of a 0.25 s slice (the upload's 1 s), each server
    /// started and warmed for 0.25 s once a profile: about three minutes, and up to 20 more
    /// blocks for a profile still undecided, within the budget. Short slices, many blocks: the
    /// same-block ratios spread less the closer together a block's slices are, and longer
    /// slices did not narrow them (docs/harness.md).
    const MEASURE: Measure = Measure {
        connections: 64,
        duration: Duration::from_millis(250),
        warmup: Duration::from_millis(250),
    };
    const REPEATS: usize = 20;
    const QUICK_MEASURE: Measure = Measure {
        connections: 8,
        duration: Duration::from_millis(150),
        warmup: Duration::ZERO,
    };
    const QUICK_REPEATS: usize = 1;
}
