//! The ladder's load: each request on a fresh connection.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::conn::Connection;
use crate::count::Tally;
use crate::work::Load;
use crate::workers::{caught, gather};

/// `requests` GETs, `concurrency` at a time, each on a fresh connection that the client
/// closes after its answer; `done` is bumped after each.
pub(crate) async fn fresh(
    load: &Load,
    concurrency: usize,
    requests: usize,
    done: Arc<AtomicUsize>,
) -> Tally {
    let next = Arc::new(AtomicUsize::new(0));
    let request = load.request();
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use greet_conformance::spawn::{quick, spawn};
    use greet_probe::tls::Trust;
    use greet_probe::Protocol;
    use greet_server::ServerConfig;

    use super::*;
    use crate::conn::Wire;
    use crate::expect::{Check, Expect};
    use crate::work::Work;

    /// One connection after another over TLS to the real greet-hyper: every handshake full
    /// by default; asked to resume, each after the first resumes the session the one before
    /// left.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sessions_resume_only_when_asked() {
        let config = ServerConfig {
            tls_self_signed: true,
            ..quick()
        };
        let server = spawn(greet_hyper::run, config).expect("greet-hyper starts");
        let trust = Trust::Certificate(server.certificate().expect("over TLS").clone());
        for (resume, resumed) in [(false, 0), (true, 19)] {
            let load = Load {
                addr: server.addr(),
                target: "/health".into(),
                headers: Vec::new(),
                body: None,
                check: Check::for_target("/health", &Expect::Any),
                timeout: Duration::from_secs(5),
                wire: Wire::new(Protocol::Https, &trust).unwrap().resuming(resume),
                work: Work::Fresh {
                    concurrency: 1,
                    requests: 20,
                },
            };
            let f = fresh(&load, 1, 20, Arc::default()).await.figures();
            assert_eq!((f.requests, f.success_rate), (20, 100.0), "{f:?}");
            let handshakes = f.handshake_ms.expect("handshakes timed");
            assert_eq!(
                (handshakes.count, handshakes.resumed),
                (20, resumed),
                "resume: {resume}"
            );
        }
    }
}
