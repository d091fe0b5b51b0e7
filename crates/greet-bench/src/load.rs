//! The load generator, every response validated (status 200 and the endpoint's body).
//!
//! Two shapes of load:
//! - [`run`], the ladder's: `requests` GETs, `concurrency` at a time, each on a fresh
//!   connection with the clock started before connect (the original tool's
//!   `--disable-keepalive` semantics); the client closes each connection after its response.
//! - [`sessions`], the other scenarios': virtual users, each on its own keep-alive connection
//!   sending one request after another (JMeter threads, siege and ab clients), until each has
//!   sent its count or until a deadline.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use greet_core::{paths, WORDS};
use hdrhistogram::Histogram;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::stats::{ErrorKind, Outcome};

/// One level of load.
#[derive(Debug, Clone)]
pub struct Level {
    /// The server.
    pub addr: SocketAddr,
    /// Path and query to GET, e.g. `/greetings`.
    pub path: String,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Requests in all.
    pub requests: usize,
    /// Per-request limit, connect included.
    pub timeout: Duration,
}

/// A response larger than this is not a greeting.
const MAX_RESPONSE: usize = 16 * 1024;

/// Runs `level`; `done` is bumped after each request (for progress bars). Returns every
/// request's outcome and the time from the first connect to the last response.
pub async fn run(level: &Level, done: Arc<AtomicUsize>) -> (Vec<Outcome>, Duration) {
    let next = Arc::new(AtomicUsize::new(0));
    // Built once: every request is the same bytes.
    let request: Arc<[u8]> = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: greet-bench\r\n\r\n",
        level.path, level.addr
    )
    .into_bytes()
    .into();
    let start = Instant::now();
    let workers: Vec<_> = (0..level.concurrency.min(level.requests))
        .map(|_| {
            let (next, done, request) =
                (Arc::clone(&next), Arc::clone(&done), Arc::clone(&request));
            let level = level.clone();
            tokio::spawn(async move {
                let mut outcomes = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < level.requests {
                    outcomes.push(one(&level, &request).await);
                    done.fetch_add(1, Ordering::Relaxed);
                }
                outcomes
            })
        })
        .collect();
    let mut outcomes = Vec::with_capacity(level.requests);
    for worker in workers {
        // A worker only ends by returning: its requests never panic.
        if let Ok(mut part) = worker.await {
            outcomes.append(&mut part);
        }
    }
    (outcomes, start.elapsed())
}

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

/// Keep-alive load: `users` connections, each carrying one request after another.
#[derive(Debug, Clone)]
pub struct Sessions {
    /// The server.
    pub addr: SocketAddr,
    /// Path and query to GET.
    pub path: String,
    /// Virtual users, each with its own connection.
    pub users: usize,
    /// When they stop.
    pub stop: Stop,
    /// Per-request limit, a reconnect included.
    pub timeout: Duration,
}

/// What a keep-alive load did.
#[derive(Debug, Clone)]
pub struct Tally {
    /// Valid responses.
    pub ok: u64,
    /// Failed requests by kind ([`ErrorKind::as_str`]).
    pub errors: BTreeMap<String, u64>,
    /// Connections opened (one per user, more when a server closes them).
    pub connects: u64,
    /// Latency of the valid responses, microseconds, write to last body byte.
    pub latency: Histogram<u64>,
    /// Sum of those latencies.
    pub latency_sum: Duration,
    /// First request to last response.
    pub elapsed: Duration,
}

impl Tally {
    fn new() -> Self {
        Self {
            ok: 0,
            errors: BTreeMap::new(),
            connects: 0,
            latency: Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds"),
            latency_sum: Duration::ZERO,
            elapsed: Duration::ZERO,
        }
    }

    fn merge(&mut self, other: Self) {
        self.ok += other.ok;
        for (kind, n) in other.errors {
            *self.errors.entry(kind).or_insert(0) += n;
        }
        self.connects += other.connects;
        // Same bounds on both sides: adding cannot fail.
        let _ = self.latency.add(&other.latency);
        self.latency_sum += other.latency_sum;
    }

    /// Requests sent, valid or not.
    pub fn requests(&self) -> u64 {
        self.ok + self.errors.values().sum::<u64>()
    }

    /// Valid responses, percent of the requests.
    pub fn success_rate(&self) -> f64 {
        match self.requests() {
            0 => 0.0,
            n => 100.0 * self.ok as f64 / n as f64,
        }
    }

    /// Valid responses per second: failures, however fast, add no throughput.
    pub fn requests_per_s(&self) -> f64 {
        if self.elapsed.is_zero() {
            0.0
        } else {
            self.ok as f64 / self.elapsed.as_secs_f64()
        }
    }

    /// Mean latency of the valid responses, milliseconds.
    pub fn average_ms(&self) -> f64 {
        if self.ok == 0 {
            0.0
        } else {
            self.latency_sum.as_secs_f64() * 1000.0 / self.ok as f64
        }
    }

    /// Latency at quantile `q` of the valid responses, milliseconds.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.ok == 0 {
            0.0
        } else {
            self.latency.value_at_quantile(q) as f64 / 1000.0
        }
    }
}

/// Runs keep-alive load as `sessions` says; `done` is bumped after each request.
pub async fn sessions(sessions: &Sessions, done: Arc<AtomicUsize>) -> Tally {
    let shared = Arc::new(sessions.clone());
    let request: Arc<[u8]> = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: greet-bench\r\n\r\n",
        sessions.path, sessions.addr
    )
    .into_bytes()
    .into();
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let users: Vec<_> = (0..sessions.users)
        .map(|_| {
            let (shared, request, next, done) = (
                Arc::clone(&shared),
                Arc::clone(&request),
                Arc::clone(&next),
                Arc::clone(&done),
            );
            tokio::spawn(async move { user(&shared, &request, &next, start, &done).await })
        })
        .collect();
    let mut tally = Tally::new();
    for user in users {
        // A user only ends by returning: its requests never panic.
        if let Ok(part) = user.await {
            tally.merge(part);
        }
    }
    tally.elapsed = start.elapsed();
    tally
}

/// One virtual user: one connection (reopened when the server closes it or a request
/// fails), one request at a time.
async fn user(
    s: &Sessions,
    request: &[u8],
    next: &AtomicUsize,
    start: Instant,
    done: &AtomicUsize,
) -> Tally {
    let expect = Expect::for_path(&s.path);
    let mut tally = Tally::new();
    let mut conn: Option<TcpStream> = None;
    let mut buf = Vec::with_capacity(512);
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
        let attempt = async {
            let mut opened = false;
            if conn.is_none() {
                let stream = TcpStream::connect(s.addr)
                    .await
                    .map_err(|_| ErrorKind::Connect)?;
                let _ = stream.set_nodelay(true);
                conn = Some(stream);
                opened = true;
            }
            let Some(stream) = conn.as_mut() else {
                return Err(ErrorKind::Connect);
            };
            stream.write_all(request).await.map_err(|_| ErrorKind::Io)?;
            let reusable = read_response(stream, &mut buf, expect).await?;
            Ok((opened, reusable))
        };
        let result = match tokio::time::timeout(s.timeout, attempt).await {
            Ok(result) => result,
            Err(_) => Err(ErrorKind::Timeout),
        };
        match result {
            Ok((opened, reusable)) => {
                let latency = began.elapsed();
                tally.ok += 1;
                tally.connects += u64::from(opened);
                tally.latency_sum += latency;
                tally.latency.saturating_record(
                    u64::try_from(latency.as_micros())
                        .unwrap_or(u64::MAX)
                        .max(1),
                );
                if !reusable {
                    conn = None;
                }
            }
            Err(kind) => {
                *tally.errors.entry(kind.as_str().to_owned()).or_insert(0) += 1;
                conn = None;
                if kind == ErrorKind::Connect {
                    // A server that refuses connections would otherwise be hammered in a
                    // tight loop until the deadline.
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        }
        done.fetch_add(1, Ordering::Relaxed);
    }
    tally
}

/// One request on a fresh connection: the request is written whole in one `write`, the
/// response parsed with `httparse` (hyper's own parser). hyper's client connection machinery
/// (dispatch channel, connection task) cost about 20 µs more per request on the load
/// generator's core, which at 2700 concurrent delayed the last request by ~50 ms.
async fn one(level: &Level, request: &[u8]) -> Outcome {
    let start = Instant::now();
    let mut connect = None;
    let expect = Expect::for_path(&level.path);
    let attempt = async {
        let mut stream = TcpStream::connect(level.addr)
            .await
            .map_err(|_| ErrorKind::Connect)?;
        connect = Some(start.elapsed());
        stream.write_all(request).await.map_err(|_| ErrorKind::Io)?;
        read_response(&mut stream, &mut Vec::with_capacity(512), expect).await
    };
    match tokio::time::timeout(level.timeout, attempt).await {
        Ok(Ok(_)) => Outcome::Ok {
            latency: start.elapsed(),
            connect: connect.unwrap_or_default(),
        },
        Ok(Err(kind)) => Outcome::Failed { kind, connect },
        Err(_) => Outcome::Failed {
            kind: ErrorKind::Timeout,
            connect,
        },
    }
}

/// What a valid response's body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// `<word> World!`.
    Greeting,
    /// `ok` (`/health`).
    Health,
}

impl Expect {
    /// The body `path` answers with.
    pub fn for_path(path: &str) -> Self {
        if path == paths::HEALTH {
            Self::Health
        } else {
            Self::Greeting
        }
    }

    fn accepts(self, body: &[u8]) -> bool {
        match self {
            Self::Greeting => is_greeting(body),
            Self::Health => body == b"ok",
        }
    }
}

/// Reads one response into `buf` (emptied first) and validates it: 200 and the expected
/// body. Returns whether the connection may carry another request (HTTP/1.1, a length, no
/// `Connection: close`).
async fn read_response(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    expect: Expect,
) -> Result<bool, ErrorKind> {
    buf.clear();
    let (head_len, length, reusable) = loop {
        if stream.read_buf(buf).await.map_err(|_| ErrorKind::Io)? == 0 {
            return Err(ErrorKind::Io);
        }
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(buf) {
            Ok(httparse::Status::Complete(head_len)) => {
                if response.code != Some(200) {
                    return Err(ErrorKind::Status);
                }
                let header = |name: &str| {
                    response
                        .headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .and_then(|h| std::str::from_utf8(h.value).ok())
                        .map(str::trim)
                };
                let length = header("content-length").and_then(|v| v.parse::<usize>().ok());
                let close = header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
                let reusable = response.version == Some(1) && length.is_some() && !close;
                break (head_len, length, reusable);
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_RESPONSE => {}
            _ => return Err(ErrorKind::Io),
        }
    };
    match length {
        Some(length) => {
            while buf.len() < head_len + length {
                if stream.read_buf(buf).await.map_err(|_| ErrorKind::Io)? == 0 {
                    return Err(ErrorKind::Io);
                }
            }
            // Without pipelining nothing may follow the body.
            if buf.len() > head_len + length {
                return Err(ErrorKind::Io);
            }
        }
        // No length: the body runs to the end of the connection.
        None => {
            while buf.len() < MAX_RESPONSE {
                if stream.read_buf(buf).await.map_err(|_| ErrorKind::Io)? == 0 {
                    break;
                }
            }
        }
    }
    if expect.accepts(&buf[head_len..]) {
        Ok(reusable)
    } else {
        Err(ErrorKind::Body)
    }
}

/// `^(Hello|Hi|Olá|Oi|Hallo) World!$`.
pub fn is_greeting(body: &[u8]) -> bool {
    std::str::from_utf8(body)
        .ok()
        .and_then(|text| text.strip_suffix(" World!"))
        .is_some_and(|word| WORDS.contains(&word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_bodies() {
        for word in WORDS {
            assert!(is_greeting(format!("{word} World!").as_bytes()));
        }
        for bad in [
            "Hello Ana!",
            "Hey World!",
            "Hello World!\n",
            "",
            "Hello World",
        ] {
            assert!(!is_greeting(bad.as_bytes()), "{bad}");
        }
        assert!(!is_greeting(b"\xff World!"));
    }
}
