//! What the loops do with their workers: a panic inside one attempt caught and counted as an
//! outcome ([`caught`], [`caught_as`]), and every worker's tally gathered into the load's
//! ([`gather`]), a worker lost whole counted too. Used by `fresh`, `sessions` and `paced`.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::task::Poll;
use std::time::Instant;

use crate::count::{Outcome, Tally};

/// Runs `attempt`, turning a panic inside it into [`ErrorKind::Panic`]: a worker that panicked
/// would otherwise take its whole tally with it and leave the success rate computed over the
/// requests that remain.
///
/// [`ErrorKind::Panic`]: crate::count::ErrorKind::Panic
pub(crate) async fn caught<F: Future<Output = Outcome>>(attempt: F) -> Outcome {
    caught_as(attempt, || Outcome::PANICKED).await
}

/// [`caught`] for a future of any output: `panicked` makes what a panic stands for.
pub(crate) async fn caught_as<T, F: Future<Output = T>>(
    attempt: F,
    panicked: impl FnOnce() -> T,
) -> T {
    let mut attempt = std::pin::pin!(attempt);
    let mut panicked = Some(panicked);
    std::future::poll_fn(|cx| {
        match std::panic::catch_unwind(AssertUnwindSafe(|| attempt.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(_) => Poll::Ready(panicked.take().expect("polled once more after a panic")()),
        }
    })
    .await
}

/// Awaits every worker of a load started at `start` and merges what each counted.
pub(crate) async fn gather(workers: Vec<tokio::task::JoinHandle<Tally>>, start: Instant) -> Tally {
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
