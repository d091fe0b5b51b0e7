//! The shutdown signal: SIGTERM (what `docker stop` and the harness send) or Ctrl-C, and
//! for a server whose accept loop is its framework's, the wait for its accept queue.

use std::future::Future;
use std::time::{Duration, Instant};

use crate::net::AcceptQueue;

/// The longest a server goes on accepting after the signal, waiting for its accept queue to
/// empty: a client that keeps connecting cannot hold the shutdown back for longer.
pub const QUEUE_WAIT: Duration = Duration::from_millis(100);

/// How long a connection just accepted may take to reach the worker that serves it: actix
/// hands each from its accept thread to a worker over a channel, and a worker told to stop
/// drops what is still in its channel.
const HAND_OVER: Duration = Duration::from_millis(20);

/// Resolves on the first SIGTERM or Ctrl-C (SIGINT). Every server passes it to its `serve`,
/// which then stops accepting, lets in-flight requests finish and returns, so both signals
/// drain the same way on all three servers.
///
/// Must be polled inside a Tokio runtime with I/O enabled.
pub async fn signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut stream) => {
                stream.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();

    tokio::select! {
        () = ctrl_c => tracing::info!("Ctrl-C received: draining"),
        () = terminate => tracing::info!("SIGTERM received: draining"),
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
