//! The load generator: every request timed, every response read by the workspace's one
//! reader (`greet_probe::http1`) and validated, every outcome pushed into one [`Tally`].
//!
//! Three shapes of load, one module each:
//! - [`fresh()`], the ladder's: `requests` GETs, `concurrency` at a time, each on a fresh
//!   connection with the clock started before connect (the original tool's
//!   `--disable-keepalive` semantics); the client closes each connection after its response.
//! - [`sessions()`], the closed-loop scenarios' (loops, soak, sweep, business): virtual users,
//!   each on its own keep-alive connection sending one request after another (JMeter threads,
//!   siege and ab clients), until each has sent its count, the users a total, or a deadline.
//! - [`paced()`], the rate scenario's: open loop, requests sent on a fixed schedule whether or
//!   not earlier ones were answered, each timed from its intended send.
//!
//! A [`Tally`] is oha's one result type: each task pushes its outcomes into its own, the tallies
//! are merged, and [`Tally::figures`] is the one place outcomes become
//! [`Figures`](crate::results::Figures).
//!
//! Beneath them: `count` (outcomes and tallies), `check` (what a valid answer is) and
//! `conn` (the connection every shape sends through). Each module uses only those below
//! it in this list: `fresh`, `sessions`, `paced`, `conn`, `check`, `count`.

mod check;
mod conn;
mod count;
mod fresh;
mod paced;
mod sessions;

pub use check::{is_greeting, Expect};
pub use conn::{check_once, Wire};
pub use count::{ErrorKind, Opened, Outcome, Tally, SPECTRUM};
pub use fresh::{fresh, Level};
pub use paced::{paced, Paced, PacedTally, LATE};
pub use sessions::{sessions, Sessions, Stop};

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::task::Poll;
use std::time::Instant;

/// Runs `attempt`, turning a panic inside it into [`ErrorKind::Panic`]: a worker that panicked
/// would otherwise take its whole tally with it and leave the success rate computed over the
/// requests that remain.
async fn caught<F: Future<Output = Outcome>>(attempt: F) -> Outcome {
    let mut attempt = std::pin::pin!(attempt);
    std::future::poll_fn(|cx| {
        match std::panic::catch_unwind(AssertUnwindSafe(|| attempt.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(_) => Poll::Ready(Outcome::PANICKED),
        }
    })
    .await
}

/// Awaits every worker of a load started at `start` and merges what each counted.
async fn gather(workers: Vec<tokio::task::JoinHandle<Tally>>, start: Instant) -> Tally {
    let mut tally = Tally::default();
    for worker in workers {
        match worker.await {
            Ok(part) => tally.merge(&part),
            Err(_) => tally.push(Outcome::PANICKED),
        }
    }
    tally.elapsed = start.elapsed();
    tally
}
