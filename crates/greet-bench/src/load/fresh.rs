//! The ladder's load: each request on a fresh connection.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::check::Expect;
use super::conn::{request, Connection, Wire};
use super::count::Tally;
use super::{caught, gather};

/// One level of the ladder.
#[derive(Debug, Clone)]
pub struct Level {
    /// The server.
    pub addr: SocketAddr,
    /// Path and query to GET, e.g. `/greetings`.
    pub target: String,
    /// What a valid response is.
    pub expect: Expect,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Requests in all.
    pub requests: usize,
    /// Per-request limit, connect included.
    pub timeout: Duration,
    /// The protocol, and TLS.
    pub wire: Wire,
}

/// Runs `level`, each request on a fresh connection; `done` is bumped after each (for
/// progress bars).
pub async fn fresh(level: &Level, done: Arc<AtomicUsize>) -> Tally {
    let next = Arc::new(AtomicUsize::new(0));
    let request = request(level.addr, &level.target, &level.wire);
    let start = Instant::now();
    let workers: Vec<_> = (0..level.concurrency.min(level.requests))
        .map(|_| {
            let (next, done, request) =
                (Arc::clone(&next), Arc::clone(&done), Arc::clone(&request));
            let level = level.clone();
            tokio::spawn(async move {
                let mut tally = Tally::default();
                let mut conn = Connection::new(level.addr, &level.wire);
                while next.fetch_add(1, Ordering::Relaxed) < level.requests {
                    // The clock starts before the connect (and the TLS handshake), as the
                    // original tool's did.
                    let start = Instant::now();
                    let send = conn.send(&request, &level.expect, level.timeout, start, start);
                    let outcome = caught(send).await;
                    conn.close().await;
                    tally.push(outcome);
                    done.fetch_add(1, Ordering::Relaxed);
                }
                tally
            })
        })
        .collect();
    gather(workers, start).await
}
