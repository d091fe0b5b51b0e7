//! Closed-loop load: virtual users, each on its own keep-alive connection.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::conn::{Connection, Request, Shared};
use crate::count::{ErrorKind, Outcome, Tally};
use crate::work::{Load, Stop};
use crate::workers::{caught, caught_as, gather};

/// The shape of a closed loop: [`crate::work::Work::Sessions`]' fields.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    pub(crate) users: usize,
    pub(crate) stop: Stop,
    pub(crate) streams: usize,
    pub(crate) pipeline: usize,
    pub(crate) requests_per_connection: Option<usize>,
}

/// `users` users, each sending one request after another, on a connection of its own (over
/// HTTP/2, on one shared by `streams` users), until `stop`; `done` is bumped after each.
/// With a `pipeline` deeper than 1, each user has that many requests in flight: over HTTP/1.1
/// written back to back and answered in order; over HTTP/2 as that many streams, each a user
/// of its own on the same connection. With `requests_per_connection`, a user closes its
/// connection after that many requests on it, and its next request opens another.
pub(crate) async fn sessions(load: &Load, shape: Shape, done: Arc<AtomicUsize>) -> Tally {
    let Shape {
        users,
        stop,
        streams,
        pipeline,
        requests_per_connection,
    } = shape;
    let pipeline = pipeline.max(1);
    let (users, streams, stop, depth) = if load.wire.protocol.http2() && pipeline > 1 {
        // Each stream a user of its own: the original users' requests, shared out exactly.
        let stop = match stop {
            Stop::Each(n) => Stop::Total(n * users),
            other => other,
        };
        (users * pipeline, streams.max(1) * pipeline, stop, 1)
    } else {
        (users, streams, stop, pipeline)
    };
    let shared = Arc::new(load.clone());
    let request = load.request();
    let batch: Arc<[u8]> = request.pipelined(depth).into();
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut connection = Arc::<Shared>::default();
    let users: Vec<_> = (0..users)
        .map(|i| {
            if i % streams.max(1) == 0 {
                connection = Arc::default();
            }
            let conn = Connection::sharing(load.addr, &load.wire, Arc::clone(&connection));
            let (shared, request, batch, next, done) = (
                Arc::clone(&shared),
                Arc::clone(&request),
                Arc::clone(&batch),
                Arc::clone(&next),
                Arc::clone(&done),
            );
            tokio::spawn(async move {
                let how = User {
                    load: &shared,
                    request: &request,
                    batch: &batch,
                    depth,
                    per_connection: requests_per_connection,
                    stop,
                    next: &next,
                    start,
                    done: &done,
                };
                how.send(conn).await
            })
        })
        .collect();
    gather(users, start).await
}

/// One virtual user's part: what it sends, and when it stops.
struct User<'a> {
    load: &'a Load,
    request: &'a Request,
    /// `depth` requests back to back, when the user pipelines.
    batch: &'a [u8],
    /// Requests in flight at once: 1, or the pipeline's depth.
    depth: usize,
    /// Requests on one connection before the user closes it; none: no limit.
    per_connection: Option<usize>,
    stop: Stop,
    /// The requests taken so far, all users together (for [`Stop::Total`]).
    next: &'a AtomicUsize,
    start: Instant,
    done: &'a AtomicUsize,
}

impl User<'_> {
    /// One connection (reopened when the server closes it or a request fails, or closed
    /// after `per_connection` requests on it), one request at a time, or a pipelined batch of
    /// `depth`.
    async fn send(&self, mut conn: Connection) -> Tally {
        let mut tally = Tally::default();
        let mut sent = 0usize;
        // Requests sent since the user last closed its connection.
        let mut on_connection = 0usize;
        loop {
            if self.per_connection.is_some_and(|n| on_connection >= n) {
                conn.close().await;
                on_connection = 0;
            }
            let room = self
                .per_connection
                .map_or(self.depth, |n| self.depth.min(n - on_connection));
            let take = match self.stop {
                Stop::Each(n) => n.saturating_sub(sent).min(room),
                Stop::Total(n) => {
                    let from = self.next.fetch_add(room, Ordering::Relaxed);
                    n.saturating_sub(from).min(room)
                }
                Stop::After(d) if self.start.elapsed() < d => room,
                Stop::After(_) => 0,
            };
            if take == 0 {
                break;
            }
            sent += take;
            on_connection += take;
            let began = Instant::now();
            if self.depth > 1 {
                let len = self.batch.len() / self.depth;
                let batch = &self.batch[..take * len];
                let check = &self.load.check;
                let send = conn.send_pipelined(batch, take, check, self.load.timeout, began);
                let every = || (0..take).map(|_| Outcome::PANICKED).collect();
                let outcomes: Vec<Outcome> = caught_as(send, every).await;
                if outcomes.iter().any(|o| {
                    matches!(
                        o,
                        Outcome::Failed {
                            kind: ErrorKind::Panic,
                            ..
                        }
                    )
                }) {
                    conn.close().await;
                }
                let refused = outcomes.iter().any(|o| {
                    matches!(
                        o,
                        Outcome::Failed {
                            kind: ErrorKind::Connect,
                            ..
                        }
                    )
                });
                outcomes.into_iter().for_each(|o| tally.push(o));
                self.done.fetch_add(take, Ordering::Relaxed);
                if refused {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                continue;
            }
            let send = conn.send(
                self.request,
                &self.load.check,
                self.load.timeout,
                began,
                began,
            );
            let outcome = caught(send).await;
            match outcome {
                Outcome::Failed {
                    kind: ErrorKind::Panic,
                    ..
                } => conn.close().await,
                // A server that refuses connections would otherwise be hammered in a tight
                // loop until the deadline.
                Outcome::Failed {
                    kind: ErrorKind::Connect,
                    ..
                } => tokio::time::sleep(Duration::from_millis(1)).await,
                _ => {}
            }
            tally.push(outcome);
            self.done.fetch_add(1, Ordering::Relaxed);
        }
        tally
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::Wire;
    use crate::expect::{Check, Expect};
    use crate::fake;
    use crate::run::run;
    use crate::work::Work;
    use greet_probe::tls::Trust;
    use greet_probe::Protocol;
    use std::net::SocketAddr;
    use std::sync::atomic::AtomicU64;
    use tokio::io::AsyncWriteExt;

    /// An h2c server answering `ok` to the requests of each connection until it has answered
    /// one, then sending GOAWAY and closing.
    async fn fake_h2_closing() -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let Ok(mut conn) = h2::server::handshake(stream).await else {
                        return;
                    };
                    let mut answered = 0;
                    while let Some(Ok((_, mut respond))) = conn.accept().await {
                        let head = http::Response::new(());
                        if let Ok(mut body) = respond.send_response(head, false) {
                            let _ = body.send_data(bytes::Bytes::from_static(b"ok"), true);
                        }
                        answered += 1;
                        if answered == 1 {
                            conn.graceful_shutdown();
                        }
                    }
                });
            }
        });
        addr
    }

    /// A request that finds its kept-alive connection closed by the server goes again on a
    /// fresh one: none fails, over HTTP/1.1 (the socket closed) or HTTP/2 (GOAWAY).
    #[tokio::test]
    async fn a_connection_the_server_closed_is_reopened_not_failed() {
        let check = || Check::for_target("/health", &Expect::Greeting);
        let http1 = sessions_of(fake::answering(false, true).await, check());
        let f = run(&http1, Arc::default()).await.tally().figures();
        assert_eq!(
            (f.requests, f.success_rate, f.connects),
            (30, 100.0, 30),
            "HTTP/1.1: {f:?}"
        );
        let h2c = Load {
            wire: Wire::new(Protocol::H2c, &Trust::Any).unwrap(),
            ..sessions_of(fake_h2_closing().await, check())
        };
        let f = run(&h2c, Arc::default()).await.tally().figures();
        assert_eq!((f.requests, f.success_rate), (30, 100.0), "h2c: {f:?}");
        assert!(f.connects > 3, "no connection was reopened: {f:?}");
    }

    /// Three users sending ten requests each to `/health`.
    fn sessions_of(addr: SocketAddr, check: Check) -> Load {
        Load {
            wire: Wire::default(),
            addr,
            target: "/health".into(),
            headers: Vec::new(),
            body: None,
            check,
            timeout: Duration::from_secs(5),
            work: Work::Sessions {
                users: 3,
                stop: Stop::Each(10),
                streams: 1,
                pipeline: 1,
                requests_per_connection: None,
            },
        }
    }

    /// A keep-alive server answering `ok` to every request, that keeps the most requests it
    /// found waiting in one read: how deep its clients pipeline.
    async fn fake_measuring_depth() -> (SocketAddr, Arc<AtomicUsize>) {
        use tokio::io::AsyncReadExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let deepest = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&deepest);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let seen = Arc::clone(&seen);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    loop {
                        let mut chunk = [0u8; 16384];
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                        let mut answers = Vec::new();
                        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            buf.drain(..end + 4);
                            answers.extend_from_slice(
                                b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok",
                            );
                        }
                        seen.fetch_max(answers.len() / 40, Ordering::Relaxed);
                        if stream.write_all(&answers).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (addr, deepest)
    }

    /// Pipelined users write their requests back to back and count every answer: each
    /// user's share exactly (the last batch shorter), on one connection each.
    #[tokio::test]
    async fn pipelined_users_write_back_to_back_and_count_every_answer() {
        let (addr, deepest) = fake_measuring_depth().await;
        let check = Check::for_target("/health", &Expect::Greeting);
        for (stop, total) in [(Stop::Each(40), 120), (Stop::Total(50), 50)] {
            let load = Load {
                work: Work::Sessions {
                    users: 3,
                    stop,
                    streams: 1,
                    pipeline: 16,
                    requests_per_connection: None,
                },
                ..sessions_of(addr, check.clone())
            };
            let f = run(&load, Arc::default()).await.tally().figures();
            assert_eq!(
                (f.requests, f.success_rate, f.connects),
                (total, 100.0, 3),
                "{stop:?}: {f:?}"
            );
        }
        // A batch of 16 is written whole before an answer is read: the server sees it in
        // one read (loopback delivers a 1.3 KB write at once).
        assert_eq!(deepest.load(Ordering::Relaxed), 16);
    }

    /// Short-lived connections: a user closes its connection after its requests per
    /// connection and opens another, one request at a time or pipelined (a batch never
    /// crosses from one connection to the next); every request is counted once.
    #[tokio::test]
    async fn users_reconnect_after_their_requests_per_connection() {
        let addr = fake::answering(false, false).await;
        let load = sessions_of(addr, Check::for_target("/health", &Expect::Greeting));
        // (pipeline, requests per connection, connections of 3 users × 10 requests)
        for (pipeline, per, connects) in [(1, 4, 9), (1, 10, 3), (1, 1, 30), (4, 6, 6), (4, 3, 12)]
        {
            let load = Load {
                work: Work::Sessions {
                    users: 3,
                    stop: Stop::Each(10),
                    streams: 1,
                    pipeline,
                    requests_per_connection: Some(per),
                },
                ..load.clone()
            };
            let f = run(&load, Arc::default()).await.tally().figures();
            assert_eq!(
                (f.requests, f.success_rate, f.connects),
                (30, 100.0, connects),
                "pipeline {pipeline}, {per} a connection: {f:?}"
            );
        }
    }

    #[tokio::test]
    async fn keep_alive_reads_chunked_answers_on_one_connection() {
        let addr = fake::answering(true, false).await;
        let load = sessions_of(addr, Check::for_target("/health", &Expect::Greeting));
        let f = run(&load, Arc::default()).await.tally().figures();
        assert_eq!(
            (f.requests, f.success_rate, f.connects),
            (30, 100.0, 3),
            "{f:?}"
        );
    }

    #[tokio::test]
    async fn a_panicking_request_counts_as_a_failure() {
        let addr = fake::answering(false, false).await;
        let seen = Arc::new(AtomicU64::new(0));
        let count = Arc::clone(&seen);
        let check = Check::with(move |_, _| {
            if count.fetch_add(1, Ordering::Relaxed) % 3 == 2 {
                panic!("a bug in validation");
            }
            Ok(())
        });
        // Each panic prints its backtrace (CI sets RUST_BACKTRACE) on this test's one runtime
        // thread, while the other users' requests wait: their timeout is not what is tested.
        let load = Load {
            timeout: Duration::from_secs(60),
            ..sessions_of(addr, check)
        };
        let f = run(&load, Arc::default()).await.tally().figures();
        assert_eq!(f.requests, 30, "every request counted: {f:?}");
        assert_eq!(f.errors.get("panic"), Some(&10), "{f:?}");
        assert!((f.success_rate - 100.0 * 20.0 / 30.0).abs() < 1e-9);
        // Pipelined, a panic loses its batch's answers, each counted as one.
        let pipelined = Load {
            work: Work::Sessions {
                users: 3,
                stop: Stop::Each(10),
                streams: 1,
                pipeline: 4,
                requests_per_connection: None,
            },
            ..load.clone()
        };
        let f = run(&pipelined, Arc::default()).await.tally().figures();
        assert_eq!(f.requests, 30, "every request counted: {f:?}");
        assert!(f.errors.get("panic").is_some_and(|n| *n >= 10), "{f:?}");
        let fresh = Load {
            work: Work::Fresh {
                concurrency: 4,
                requests: 12,
            },
            ..load
        };
        let f = run(&fresh, Arc::default()).await.tally().figures();
        assert_eq!((f.requests, f.errors.get("panic")), (12, Some(&4)), "{f:?}");
    }
}
