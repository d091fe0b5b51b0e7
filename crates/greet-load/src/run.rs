//! The one entry point that runs any load ([`run`]), and what it counted ([`Counted`]).

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::count::Tally;
use crate::paced::PacedTally;
use crate::work::{Load, Work};

/// What a load counted. One a load, never one a request: its size costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Counted {
    /// A closed loop's (fresh connections, sessions): every request's outcome.
    Closed(Tally),
    /// An open loop's: the corrected latencies, the service times, and the schedule's lag.
    Paced(PacedTally),
}

impl Counted {
    /// Every request's outcome (an open loop's latencies from the intended sends).
    pub fn tally(&self) -> &Tally {
        match self {
            Self::Closed(tally) => tally,
            Self::Paced(paced) => &paced.corrected,
        }
    }

    /// An open loop's whole count.
    pub fn paced(&self) -> Option<&PacedTally> {
        match self {
            Self::Closed(_) => None,
            Self::Paced(paced) => Some(paced),
        }
    }
}

/// Runs `load`; `done` is bumped after each request (for progress bars).
pub async fn run(load: &Load, done: Arc<AtomicUsize>) -> Counted {
    match load.work {
        Work::Fresh {
            concurrency,
            requests,
        } => Counted::Closed(crate::fresh::fresh(load, concurrency, requests, done).await),
        Work::Sessions {
            users,
            stop,
            streams,
            pipeline,
            requests_per_connection,
        } => {
            let shape = crate::sessions::Shape {
                users,
                stop,
                streams,
                pipeline,
                requests_per_connection,
            };
            Counted::Closed(crate::sessions::sessions(load, shape, done).await)
        }
        Work::Paced(ref schedule) => {
            Counted::Paced(crate::paced::paced(load, schedule, done).await)
        }
    }
}
