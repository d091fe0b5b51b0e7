//! The shutdown signal: SIGTERM (what `docker stop` and the harness send) or Ctrl-C, and
//! for a server whose accept loop is its framework's, the wait for its accept queue.

use std::future::Future;
use std::io;
use std::time::{Duration, Instant};

use nix::sys::signal::{SigSet, Signal};

use crate::net::AcceptQueue;

/// The longest a server goes on accepting after the signal, waiting for its accept queue to
/// empty: a client that keeps connecting cannot hold the shutdown back for longer.
pub const QUEUE_WAIT: Duration = Duration::from_millis(100);

/// How long a connection just accepted may take to reach the worker that serves it: actix
/// hands each from its accept thread to a worker over a channel, and a worker told to stop
/// drops what is still in its channel.
const HAND_OVER: Duration = Duration::from_millis(20);

/// The signals a server drains on: SIGTERM (what `docker stop` and the harness send) and
/// Ctrl-C (SIGINT).
pub fn drain_signals() -> SigSet {
    let mut signals = SigSet::empty();
    signals.add(Signal::SIGTERM);
    signals.add(Signal::SIGINT);
    signals
}

/// Holds the drain signals back in the calling thread and in every thread it starts after.
/// A server's main calls it before it says it is listening: a signal sent at once on that
/// line (as a harness may) then waits for the handlers instead of killing the process, which
/// it would between the line and their first poll. [`signal`] lets them through once its
/// handlers are in place; a server that waits for them itself takes them with `sigwait`.
pub fn hold() -> io::Result<()> {
    drain_signals().thread_block().map_err(io::Error::from)
}

/// Resolves on the first SIGTERM or Ctrl-C (SIGINT). Every server passes it to its `serve`,
/// which then stops accepting, lets in-flight requests finish and returns, so both signals
/// drain the same way on all three servers. Its first poll puts the handlers in place, then
/// lets through what [`hold`] held back, in the thread that polls it: a signal sent since is
/// seen now.
///
/// Must be polled inside a Tokio runtime with I/O enabled.
pub async fn signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let terminate = signal(SignalKind::terminate());
    let interrupt = signal(SignalKind::interrupt());
    // A thread that lets them through is where the kernel delivers them; the others hold
    // them still, which no longer matters once the handlers are in place.
    let _ = drain_signals().thread_unblock();
    let received = |registered: io::Result<tokio::signal::unix::Signal>| async move {
        match registered {
            Ok(mut stream) => {
                stream.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = received(interrupt) => tracing::info!("Ctrl-C received: draining"),
        () = received(terminate) => tracing::info!("SIGTERM received: draining"),
    }
}

/// Resolves after `signal`, once `queue` has emptied (for at most [`QUEUE_WAIT`]) and the
/// connections last accepted have reached their workers: the shutdown for a server that
/// cannot take the queue itself after it stops accepting (actix-web, whose listener closes
/// with its accept thread), so the connections the kernel completed before the signal are
/// served rather than reset. Without a readable queue (no `/proc`), only the hand-over.
pub async fn then_queue_taken(signal: impl Future<Output = ()>, queue: Option<AcceptQueue>) {
    signal.await;
    let deadline = Instant::now() + QUEUE_WAIT;
    while let Some(waiting) = queue.and_then(|q| q.waiting()) {
        if waiting == 0 || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    tokio::time::sleep(HAND_OVER).await;
}
