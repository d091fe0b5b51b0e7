//! The idle limit of HTTP/2 connections: a connection with no request in flight for
//! [`greet_core::limits::IDLE_TIMEOUT`] is closed. hyper's and actix-web's HTTP/2 servers
//! only PING an idle client (actix-web) or nothing at all (hyper), so a client that answers
//! PINGs could hold a connection, and its memory, for ever.
//!
//! Each HTTP/2 connection gets an [`InFlight`]; every request holds a [`Busy`] from it while
//! it is answered, and [`InFlight::idle`] resolves once the count has stayed at zero for the
//! limit. What the server then does is its own glue: hyper and axum send GOAWAY and close,
//! actix-web, which cannot be asked to, has its socket shut down.

use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;

/// The requests in flight on one connection.
#[derive(Debug, Clone)]
pub struct InFlight(watch::Sender<usize>);

/// One request in flight, until dropped.
#[derive(Debug)]
pub struct Busy(watch::Sender<usize>);

impl Default for InFlight {
    fn default() -> Self {
        Self(watch::Sender::new(0))
    }
}

impl InFlight {
    /// A connection with nothing in flight yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A request begins. Only the first of a busy spell wakes [`InFlight::idle`]: it waits
    /// for nothing else.
    pub fn begin(&self) -> Busy {
        self.0.send_if_modified(|n| {
            *n += 1;
            *n == 1
        });
        Busy(self.0.clone())
    }

    /// Resolves once no request has been in flight for `limit`, counted from the connection's
    /// start or its last answer, or once every [`InFlight`] and [`Busy`] of the connection
    /// is gone.
    pub fn idle(&self, limit: Duration) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.0.subscribe();
        async move {
            loop {
                if rx.wait_for(|n| *n == 0).await.is_err() {
                    return;
                }
                match tokio::time::timeout(limit, rx.changed()).await {
                    Ok(Ok(())) => continue,
                    Ok(Err(_)) | Err(_) => return,
                }
            }
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.send_if_modified(|n| {
            *n -= 1;
            *n == 0
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Duration = Duration::from_secs(5);

    #[tokio::test(start_paused = true)]
    async fn idle_counts_from_the_last_answer() {
        let in_flight = InFlight::new();
        let start = tokio::time::Instant::now();
        let idle = tokio::spawn(in_flight.idle(LIMIT));
        tokio::time::sleep(Duration::from_secs(3)).await;
        let first = in_flight.begin();
        let second = in_flight.begin();
        tokio::time::sleep(Duration::from_secs(7)).await;
        drop(first);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!idle.is_finished(), "idle while a request was in flight");
        drop(second);
        idle.await.expect("idle");
        // Busy from 3 s to 11 s; idle 5 s after the last answer.
        assert_eq!(start.elapsed(), Duration::from_secs(16));
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_without_requests_is_idle_after_the_limit() {
        let in_flight = InFlight::new();
        let start = tokio::time::Instant::now();
        in_flight.idle(LIMIT).await;
        assert_eq!(start.elapsed(), LIMIT);
    }
}
