//! The ladder's load: each request on a fresh connection.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::conn::{request, Connection};
use crate::count::Tally;
use crate::work::Load;
use crate::{caught, gather};

/// `requests` GETs, `concurrency` at a time, each on a fresh connection that the client
/// closes after its answer; `done` is bumped after each.
pub(crate) async fn fresh(
    load: &Load,
    concurrency: usize,
    requests: usize,
    done: Arc<AtomicUsize>,
) -> Tally {
    let next = Arc::new(AtomicUsize::new(0));
    let request = request(load.addr, &load.target, &load.wire);
    let start = Instant::now();
    let workers: Vec<_> = (0..concurrency.min(requests))
        .map(|_| {
            let (next, done, request) =
                (Arc::clone(&next), Arc::clone(&done), Arc::clone(&request));
            let load = load.clone();
            tokio::spawn(async move {
                let mut tally = Tally::default();
                let mut conn = Connection::new(load.addr, &load.wire);
                while next.fetch_add(1, Ordering::Relaxed) < requests {
                    // The clock starts before the connect (and the TLS handshake), as the
                    // original tool's did.
                    let start = Instant::now();
                    let send = conn.send(&request, &load.check, load.timeout, start, start);
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
