//! Closed-loop load: virtual users, each on its own keep-alive connection.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::check::Expect;
use super::conn::{request, Connection, Request, Shared, Wire};
use super::count::{ErrorKind, Outcome, Tally};
use super::{caught, gather};

/// When the virtual users of [`sessions`] stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Each user sends this many requests (JMeter's threads × loops).
    Each(usize),
    /// The users send this many requests between them (ab's `-n`).
    Total(usize),
    /// The users start no request after this long (siege's `-t`).
    After(Duration),
}

/// Keep-alive load: `users` users, each sending one request after another, on a connection of
/// its own (over HTTP/2, on one shared by `streams` users).
#[derive(Debug, Clone)]
pub struct Sessions {
    /// The server.
    pub addr: SocketAddr,
    /// Path and query to GET.
    pub target: String,
    /// What a valid response is.
    pub expect: Expect,
    /// Virtual users, each with its own connection.
    pub users: usize,
    /// When they stop.
    pub stop: Stop,
    /// Per-request limit, a reconnect included.
    pub timeout: Duration,
    /// The protocol, and TLS.
    pub wire: Wire,
    /// Over HTTP/2, users sharing one connection, each with one stream at a time
    /// (`--streams`); over HTTP/1.1 every user has a connection of its own.
    pub streams: usize,
}

/// Runs keep-alive load as `sessions` says; `done` is bumped after each request.
pub async fn sessions(sessions: &Sessions, done: Arc<AtomicUsize>) -> Tally {
    let shared = Arc::new(sessions.clone());
    let request = request(sessions.addr, &sessions.target, &sessions.wire);
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut connection = Arc::<Shared>::default();
    let users: Vec<_> = (0..sessions.users)
        .map(|i| {
            if i % sessions.streams.max(1) == 0 {
                connection = Arc::default();
            }
            let conn = Connection::sharing(sessions.addr, &sessions.wire, Arc::clone(&connection));
            let (shared, request, next, done) = (
                Arc::clone(&shared),
                Arc::clone(&request),
                Arc::clone(&next),
                Arc::clone(&done),
            );
            tokio::spawn(async move { user(&shared, conn, &request, &next, start, &done).await })
        })
        .collect();
    gather(users, start).await
}

/// One virtual user: one connection (reopened when the server closes it or a request
/// fails), one request at a time.
async fn user(
    s: &Sessions,
    mut conn: Connection,
    request: &Request,
    next: &AtomicUsize,
    start: Instant,
    done: &AtomicUsize,
) -> Tally {
    let mut tally = Tally::default();
    let mut sent = 0usize;
    loop {
        let go = match s.stop {
            Stop::Each(n) => sent < n,
            Stop::Total(n) => next.fetch_add(1, Ordering::Relaxed) < n,
            Stop::After(d) => start.elapsed() < d,
        };
        if !go {
            break;
        }
        sent += 1;
        let began = Instant::now();
        let outcome = caught(conn.send(request, &s.expect, s.timeout, began, began)).await;
        match outcome {
            Outcome::Failed {
                kind: ErrorKind::Panic,
                ..
            } => conn.close().await,
            // A server that refuses connections would otherwise be hammered in a tight loop
            // until the deadline.
            Outcome::Failed {
                kind: ErrorKind::Connect,
                ..
            } => tokio::time::sleep(Duration::from_millis(1)).await,
            _ => {}
        }
        tally.push(outcome);
        done.fetch_add(1, Ordering::Relaxed);
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{fresh, Level};
    use crate::plan;
    use greet_conformance::protocols::Protocol;
    use greet_probe::tls::Trust;
    use std::sync::atomic::AtomicU64;
    use tokio::io::AsyncWriteExt;

    /// A keep-alive server answering `ok` to every request, chunked when asked.
    async fn fake(chunked: bool) -> SocketAddr {
        fake_closing(chunked, false).await
    }

    /// [`fake`], closing each connection right after its first answer when `close` is set,
    /// with no `Connection: close`: a server closing an idle connection.
    async fn fake_closing(chunked: bool, close: bool) -> SocketAddr {
        use tokio::io::AsyncReadExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    loop {
                        let mut chunk = [0u8; 1024];
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            buf.drain(..end + 4);
                            let answer: &[u8] = if chunked {
                                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\no\r\n1\r\nk\r\n0\r\n\r\n"
                            } else {
                                b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
                            };
                            if stream.write_all(answer).await.is_err() || close {
                                return;
                            }
                        }
                    }
                });
            }
        });
        addr
    }

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
                        let head = hyper::Response::new(());
                        if let Ok(mut body) = respond.send_response(head, false) {
                            let _ = body.send_data(hyper::body::Bytes::from_static(b"ok"), true);
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
        let expect = || Expect::for_target("/health", &plan::Expect::Greeting);
        let http1 = sessions_of(fake_closing(false, true).await, expect());
        let f = sessions(&http1, Arc::default()).await.figures();
        assert_eq!(
            (f.requests, f.success_rate, f.connects),
            (30, 100.0, 30),
            "HTTP/1.1: {f:?}"
        );
        let h2c = Sessions {
            wire: Wire::new(Protocol::H2c, &Trust::Any).unwrap(),
            ..sessions_of(fake_h2_closing().await, expect())
        };
        let f = sessions(&h2c, Arc::default()).await.figures();
        assert_eq!((f.requests, f.success_rate), (30, 100.0), "h2c: {f:?}");
        assert!(f.connects > 3, "no connection was reopened: {f:?}");
    }

    fn sessions_of(addr: SocketAddr, expect: Expect) -> Sessions {
        Sessions {
            wire: Wire::default(),
            streams: 1,
            addr,
            target: "/health".into(),
            expect,
            users: 3,
            stop: Stop::Each(10),
            timeout: Duration::from_secs(5),
        }
    }

    #[tokio::test]
    async fn keep_alive_reads_chunked_answers_on_one_connection() {
        let addr = fake(true).await;
        let tally = sessions(
            &sessions_of(addr, Expect::for_target("/health", &plan::Expect::Greeting)),
            Arc::default(),
        )
        .await;
        let f = tally.figures();
        assert_eq!(
            (f.requests, f.success_rate, f.connects),
            (30, 100.0, 3),
            "{f:?}"
        );
    }

    #[tokio::test]
    async fn a_panicking_request_counts_as_a_failure() {
        let addr = fake(false).await;
        let seen = Arc::new(AtomicU64::new(0));
        let count = Arc::clone(&seen);
        let expect = Expect::with(move |_, _| {
            if count.fetch_add(1, Ordering::Relaxed) % 3 == 2 {
                panic!("a bug in validation");
            }
            Ok(())
        });
        let tally = sessions(&sessions_of(addr, expect.clone()), Arc::default()).await;
        let f = tally.figures();
        assert_eq!(f.requests, 30, "every request counted: {f:?}");
        assert_eq!(f.errors.get("panic"), Some(&10));
        assert!((f.success_rate - 100.0 * 20.0 / 30.0).abs() < 1e-9);
        let level = Level {
            wire: Wire::default(),
            addr,
            target: "/health".into(),
            expect,
            concurrency: 4,
            requests: 12,
            timeout: Duration::from_secs(5),
        };
        let f = fresh(&level, Arc::default()).await.figures();
        assert_eq!((f.requests, f.errors.get("panic")), (12, Some(&4)), "{f:?}");
    }
}
