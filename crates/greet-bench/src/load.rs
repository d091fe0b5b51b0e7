//! The load generator: every request timed, every response read by the workspace's one
//! reader (`greet_probe::http1`) and validated, every outcome pushed into one [`Tally`].
//!
//! Three shapes of load:
//! - [`fresh`], the ladder's: `requests` GETs, `concurrency` at a time, each on a fresh
//!   connection with the clock started before connect (the original tool's
//!   `--disable-keepalive` semantics); the client closes each connection after its response.
//! - [`sessions`], the closed-loop scenarios' (loops, soak, sweep, business): virtual users,
//!   each on its own keep-alive connection sending one request after another (JMeter threads,
//!   siege and ab clients), until each has sent its count, the users a total, or a deadline.
//! - [`paced`], the rate scenario's: open loop, requests sent on a fixed schedule whether or
//!   not earlier ones were answered, each timed from its intended send.
//!
//! A [`Tally`] is oha's one result type: each task pushes its outcomes into its own, the tallies
//! are merged, and [`Tally::figures`] is the one place outcomes become [`Figures`].

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use greet_core::{paths, WORDS};
use greet_probe::http1::{self, Options, Response};
use greet_store::{Business, World};
use hdrhistogram::Histogram;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::plan;
use crate::results::{Connect, Figures, Latency};
use crate::stats::{percent, rate};

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ErrorKind {
    /// No connection could be established.
    Connect,
    /// No complete response within the per-request timeout.
    Timeout,
    /// The connection failed after it was established, or the answer was not HTTP/1.
    Io,
    /// A status other than the endpoint's.
    Status,
    /// The endpoint's status with a body it would not send.
    Body,
    /// The harness itself panicked on this request: counted, never dropped.
    Panic,
}

impl ErrorKind {
    /// The name in `results.json` and the CSVs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Timeout => "timeout",
            Self::Io => "io",
            Self::Status => "status",
            Self::Body => "body",
            Self::Panic => "panic",
        }
    }
}

/// One request's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// A valid response after `latency` (clock started before the connect, when there was
    /// one); `connect` when this request opened its connection.
    Ok {
        /// Start → last body byte.
        latency: Duration,
        /// Start → connection established, when this request opened it.
        connect: Option<Duration>,
    },
    /// A failure; `connect` when this request opened a connection.
    Failed {
        /// What went wrong.
        kind: ErrorKind,
        /// Start → connection established, when this request opened it.
        connect: Option<Duration>,
    },
}

impl Outcome {
    /// A request lost to a panic in the load generator itself, outside [`caught`] when a
    /// whole worker was lost.
    const PANICKED: Outcome = Outcome::Failed {
        kind: ErrorKind::Panic,
        connect: None,
    };
}

/// Latencies are recorded in microseconds, from 1 µs to an hour, at 3 significant digits.
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds")
}

/// The quantiles of a latency spectrum (HdrHistogram's percentile distribution, by nines);
/// the maximum follows them.
pub const SPECTRUM: [f64; 10] = [
    0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99999,
];

/// Latencies (µs) kept as a list until there are more than this many, then in a histogram.
const FEW: usize = 4096;

/// A tally's latencies. A histogram of that range and precision is 180 KB of counters: one
/// per task of a 2700-connection level (a task each, one request each) cost the load
/// generator a third of a second of its CPU and stretched the level; a list costs 8 bytes a
/// request.
#[derive(Debug, Clone)]
enum Latencies {
    Few(Vec<u64>),
    Many(Box<Histogram<u64>>),
}

impl Latencies {
    fn record(&mut self, micros: u64) {
        match self {
            Self::Few(values) if values.len() < FEW => values.push(micros),
            Self::Few(_) => {
                self.spill();
                self.record(micros);
            }
            Self::Many(histogram) => histogram.saturating_record(micros),
        }
    }

    /// Moves the list into a histogram.
    fn spill(&mut self) {
        if let Self::Few(values) = self {
            let mut histogram = histogram();
            for &v in values.iter() {
                histogram.saturating_record(v);
            }
            *self = Self::Many(Box::new(histogram));
        }
    }

    fn merge(&mut self, other: &Latencies) {
        match other {
            Self::Few(values) => values.iter().for_each(|&v| self.record(v)),
            Self::Many(other) => {
                self.spill();
                if let Self::Many(histogram) = self {
                    // Same bounds on both sides: adding cannot fail.
                    let _ = histogram.add(other.as_ref());
                }
            }
        }
    }

    /// The latencies at quantiles `qs`, µs, as a histogram reads them.
    fn quantiles<const N: usize>(&self, qs: [f64; N]) -> [u64; N] {
        let mut all = self.clone();
        all.spill();
        match all {
            Self::Many(histogram) => qs.map(|q| histogram.value_at_quantile(q)),
            Self::Few(_) => unreachable!("spilled"),
        }
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
}

/// Everything a load did, from its outcomes.
#[derive(Debug, Clone)]
pub struct Tally {
    ok: u64,
    errors: BTreeMap<ErrorKind, u64>,
    latency: Latencies,
    latency_sum: Duration,
    fastest: Duration,
    slowest: Duration,
    connects: u64,
    connect_sum: Duration,
    connect_max: Duration,
    /// First request to last response.
    pub elapsed: Duration,
}

impl Default for Tally {
    fn default() -> Self {
        Self {
            ok: 0,
            errors: BTreeMap::new(),
            latency: Latencies::Few(Vec::new()),
            latency_sum: Duration::ZERO,
            fastest: Duration::MAX,
            slowest: Duration::ZERO,
            connects: 0,
            connect_sum: Duration::ZERO,
            connect_max: Duration::ZERO,
            elapsed: Duration::ZERO,
        }
    }
}

impl Tally {
    /// Adds one request's outcome.
    pub fn push(&mut self, outcome: Outcome) {
        let connect = match outcome {
            Outcome::Ok { latency, connect } => {
                self.ok += 1;
                self.latency_sum += latency;
                self.fastest = self.fastest.min(latency);
                self.slowest = self.slowest.max(latency);
                self.latency.record(micros(latency));
                connect
            }
            Outcome::Failed { kind, connect } => {
                *self.errors.entry(kind).or_insert(0) += 1;
                connect
            }
        };
        if let Some(connect) = connect {
            self.connects += 1;
            self.connect_sum += connect;
            self.connect_max = self.connect_max.max(connect);
        }
    }

    /// Adds another tally's outcomes (its elapsed time is not added: loads run side by side).
    pub fn merge(&mut self, other: &Tally) {
        self.ok += other.ok;
        for (kind, n) in &other.errors {
            *self.errors.entry(*kind).or_insert(0) += n;
        }
        self.latency.merge(&other.latency);
        self.latency_sum += other.latency_sum;
        self.fastest = self.fastest.min(other.fastest);
        self.slowest = self.slowest.max(other.slowest);
        self.connects += other.connects;
        self.connect_sum += other.connect_sum;
        self.connect_max = self.connect_max.max(other.connect_max);
    }

    /// The valid responses' latencies at the quantiles of [`SPECTRUM`], milliseconds, the
    /// slowest last (empty when none was valid).
    pub fn spectrum_ms(&self) -> Vec<f64> {
        if self.ok == 0 {
            return Vec::new();
        }
        // A histogram reads a bucket's highest value: never above the exact maximum.
        let max = self.slowest.as_secs_f64() * 1000.0;
        let mut out: Vec<f64> = self
            .latency
            .quantiles(SPECTRUM)
            .iter()
            .map(|&us| (us as f64 / 1000.0).min(max))
            .collect();
        out.push(max);
        out
    }

    /// Requests counted, valid or not.
    pub fn requests(&self) -> u64 {
        self.ok + self.errors.values().sum::<u64>()
    }

    /// The figures of the load, valid responses only in every latency and in the throughput.
    pub fn figures(&self) -> Figures {
        let ok = self.ok;
        let total_s = self.elapsed.as_secs_f64();
        let when_ok = |d: Duration| if ok == 0 { 0.0 } else { d.as_secs_f64() };
        let max_ms = when_ok(self.slowest) * 1000.0;
        let [p50, p90, p99, p999] = if ok == 0 {
            [0.0; 4]
        } else {
            // A histogram reads a bucket's highest value: never above the exact maximum.
            self.latency
                .quantiles([0.50, 0.90, 0.99, 0.999])
                .map(|us| (us as f64 / 1000.0).min(max_ms))
        };
        Figures {
            requests: self.requests(),
            success_rate: percent(ok, self.requests()),
            total_s,
            requests_per_s: rate(ok, total_s),
            fastest_s: when_ok(self.fastest),
            slowest_s: when_ok(self.slowest),
            average_s: if ok == 0 {
                0.0
            } else {
                self.latency_sum.as_secs_f64() / ok as f64
            },
            latency_ms: Latency {
                p50,
                p90,
                p99,
                p999,
                max: when_ok(self.slowest) * 1000.0,
            },
            connects: self.connects,
            connect_ms: Connect {
                avg: if self.connects == 0 {
                    0.0
                } else {
                    self.connect_sum.as_secs_f64() * 1000.0 / self.connects as f64
                },
                max: self.connect_max.as_secs_f64() * 1000.0,
            },
            errors: self
                .errors
                .iter()
                .map(|(kind, n)| (kind.as_str().to_owned(), *n))
                .collect(),
        }
    }
}

/// A check of a response: `Ok` for a valid one, or why it is not.
type Check = dyn Fn(&Response) -> Result<(), ErrorKind> + Send + Sync;

/// What a valid response is: the status and body a path answers with.
#[derive(Clone)]
pub struct Expect(Arc<Check>);

impl std::fmt::Debug for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Expect(..)")
    }
}

impl Expect {
    /// A valid answer to `GET target` as `rule` says. The greeting (the default): `ok` from
    /// `/health`; otherwise `<word> <name>!`, the name read from the query as the servers read
    /// it (`World` when there is none; a query the contract refuses gets 400s, which count as
    /// failures). Every rule wants a 2xx status.
    pub fn for_target(target: &str, rule: &plan::Expect) -> Self {
        match rule {
            plan::Expect::Any => Self::with(|res| status_and(res, |_| true)),
            plan::Expect::Pattern(pattern) => {
                // The CLI has compiled it once already: it compiles.
                let regex = regex::bytes::Regex::new(pattern).unwrap_or_else(|_| {
                    regex::bytes::Regex::new("$^").expect("a regex that matches nothing")
                });
                Self::with(move |res| status_and(res, |body| regex.is_match(body)))
            }
            plan::Expect::Greeting => {
                let (path, query) = match target.split_once('?') {
                    Some((path, query)) => (path, Some(query)),
                    None => (target, None),
                };
                match path {
                    paths::HEALTH => {
                        return Self::with(|res| status_and(res, |body| body == b"ok"))
                    }
                    paths::DB => {
                        return Self::with(|res| {
                            status_and(res, |body| {
                                json::<World>(body).is_some_and(|w| w.is_seeded())
                            })
                        })
                    }
                    paths::QUERIES => {
                        let n = greet_store::queries_from_query(query);
                        return Self::with(move |res| {
                            status_and(res, |body| {
                                json::<Vec<World>>(body).is_some_and(|rows| {
                                    rows.len() == n && rows.iter().all(World::is_seeded)
                                })
                            })
                        });
                    }
                    paths::BUSINESS => return Self::business(query),
                    _ => {}
                }
                let suffix = greet_core::name::name_from_query(query)
                    .map(|name| format!(" {name}!").into_bytes())
                    .unwrap_or_default();
                Self::with(move |res| status_and(res, |body| is_greeting(body, &suffix)))
            }
        }
    }

    /// `/business?<query>`: the name as the servers read it, the person's greeting, and a
    /// visit count no other answer of this load had: each visit is counted once, so the
    /// counts a load sees of one name are distinct (a repeated count is an invalid body).
    fn business(query: Option<&str>) -> Self {
        let Ok(name) = greet_core::name::name_from_query(query) else {
            // A refused name: 400s, which count as failures.
            return Self::with(|res| status_and(res, |_| false));
        };
        let seen = Arc::new(VisitLedger::default());
        Self::with(move |res| {
            status_and(res, |body| {
                json::<Business>(body)
                    .is_some_and(|b| b.greets(&name) && b.visits >= 1 && seen.first(b.visits))
            })
        })
    }

    /// Any check of a response: `Ok` for a valid one, or why it is not.
    pub fn with(
        check: impl Fn(&Response) -> Result<(), ErrorKind> + Send + Sync + 'static,
    ) -> Self {
        Self(Arc::new(check))
    }

    /// Whether `res` is valid.
    pub fn check(&self, res: &Response) -> Result<(), ErrorKind> {
        (self.0)(res)
    }
}

fn status_and(res: &Response, body: impl Fn(&[u8]) -> bool) -> Result<(), ErrorKind> {
    if !(200..300).contains(&res.status()) {
        Err(ErrorKind::Status)
    } else if body(res.body()) {
        Ok(())
    } else {
        Err(ErrorKind::Body)
    }
}

fn json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Option<T> {
    serde_json::from_slice(body).ok()
}

/// The visit counts a load has seen, in shards so that workers on several threads seldom
/// wait for each other.
#[derive(Default)]
struct VisitLedger([std::sync::Mutex<std::collections::HashSet<u64>>; 16]);

impl VisitLedger {
    /// Records `visits`; false if it was seen before.
    fn first(&self, visits: u64) -> bool {
        let shard = &self.0[(visits % 16) as usize];
        shard
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(visits)
    }
}

/// `^(Hello|Hi|Olá|Oi|Hallo)<suffix>$`, the suffix being ` <name>!`.
pub fn is_greeting(body: &[u8], suffix: &[u8]) -> bool {
    !suffix.is_empty()
        && body
            .strip_suffix(suffix)
            .is_some_and(|word| WORDS.iter().any(|w| w.as_bytes() == word))
}

/// A request for `target` on `addr`, built once: every request of a load is the same bytes.
fn request(addr: SocketAddr, target: &str) -> Arc<[u8]> {
    format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: greet-bench\r\n\r\n")
        .into_bytes()
        .into()
}

/// Runs `attempt`, turning a panic inside it into [`ErrorKind::Panic`]: a worker that panicked
/// would otherwise take its whole tally with it and leave the success rate computed over the
/// requests that remain.
async fn caught<F: Future<Output = Outcome>>(attempt: F) -> Outcome {
    let mut attempt = std::pin::pin!(attempt);
    std::future::poll_fn(|cx| {
        match std::panic::catch_unwind(AssertUnwindSafe(|| attempt.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(_) => Poll::Ready(Outcome::PANICKED),
        }
    })
    .await
}

/// Awaits every worker of a load started at `start` and merges what each counted.
async fn gather(workers: Vec<tokio::task::JoinHandle<Tally>>, start: Instant) -> Tally {
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

/// The light check: one `GET target` on a fresh connection, valid as `expect` says, within
/// `timeout`; else one short line saying what came back.
pub async fn check_once(
    addr: SocketAddr,
    target: &str,
    expect: &Expect,
    timeout: Duration,
) -> Result<(), String> {
    let request = request(addr, target);
    let exchange = async {
        let mut stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        stream
            .write_all(&request)
            .await
            .map_err(|e| format!("cannot send: {e}"))?;
        let mut res = Response::new();
        http1::read(&mut stream, &mut Vec::new(), &mut res, Options::default())
            .await
            .map_err(|e| e.to_string())?;
        expect.check(&res).map_err(|_| {
            let body = res.text();
            let body: String = body.chars().take(60).collect();
            let cut = if res.text().chars().count() > 60 {
                "…"
            } else {
                ""
            };
            format!(
                "answered {} {:?}{cut}, which is not what --expect asks for",
                res.status(),
                body.replace(['\r', '\n'], " ")
            )
        })
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| format!("no answer within {timeout:?}"))?
        .map_err(|why| format!("GET {target}: {why}"))
}

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
}

/// Runs `level`, each request on a fresh connection; `done` is bumped after each (for
/// progress bars).
pub async fn fresh(level: &Level, done: Arc<AtomicUsize>) -> Tally {
    let next = Arc::new(AtomicUsize::new(0));
    let request = request(level.addr, &level.target);
    let start = Instant::now();
    let workers: Vec<_> = (0..level.concurrency.min(level.requests))
        .map(|_| {
            let (next, done, request) =
                (Arc::clone(&next), Arc::clone(&done), Arc::clone(&request));
            let level = level.clone();
            tokio::spawn(async move {
                let mut tally = Tally::default();
                let mut conn = Connection::new(level.addr);
                while next.fetch_add(1, Ordering::Relaxed) < level.requests {
                    // The clock starts before the connect, as the original tool's did.
                    let start = Instant::now();
                    let send = conn.send(&request, &level.expect, level.timeout, start, start);
                    let outcome = caught(send).await;
                    conn.close();
                    tally.push(outcome);
                    done.fetch_add(1, Ordering::Relaxed);
                }
                tally
            })
        })
        .collect();
    gather(workers, start).await
}

/// A connection of the load generator: opened when a request needs one, reused while the
/// server keeps it open, dropped when the server closes it or a request fails. Every load shape
/// sends through it. A request is written whole in one `write` and its answer parsed by
/// `greet_probe::http1`: hyper's client connection machinery (dispatch channel, connection
/// task) cost about 20 µs more per request on the load generator's core, which at 2700
/// concurrent delayed the last request by ~50 ms.
struct Connection {
    addr: SocketAddr,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
    res: Response,
}

impl Connection {
    fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            stream: None,
            buf: Vec::with_capacity(512),
            res: Response::new(),
        }
    }

    /// Sends `request` and reads and validates its answer within `timeout`, opening the
    /// connection first when there is none (its connect timed from `sent`); the latency
    /// counts from `from`.
    async fn send(
        &mut self,
        request: &[u8],
        expect: &Expect,
        timeout: Duration,
        sent: Instant,
        from: Instant,
    ) -> Outcome {
        let Self {
            addr,
            stream,
            buf,
            res,
        } = self;
        let mut connect = None;
        let attempt = async {
            if stream.is_none() {
                let opened = TcpStream::connect(*addr)
                    .await
                    .map_err(|_| ErrorKind::Connect)?;
                let _ = opened.set_nodelay(true);
                connect = Some(sent.elapsed());
                *stream = Some(opened);
            }
            let Some(open) = stream.as_mut() else {
                return Err(ErrorKind::Connect);
            };
            open.write_all(request).await.map_err(|_| ErrorKind::Io)?;
            buf.clear();
            read(open, buf, res, expect).await
        };
        let result = match tokio::time::timeout(timeout, attempt).await {
            Ok(result) => result,
            Err(_) => Err(ErrorKind::Timeout),
        };
        match result {
            Ok(keep) => {
                if !keep {
                    *stream = None;
                }
                Outcome::Ok {
                    latency: from.elapsed(),
                    connect,
                }
            }
            Err(kind) => {
                *stream = None;
                Outcome::Failed { kind, connect }
            }
        }
    }

    /// Closes it: a fresh-connection load's client closes after each answer, and a
    /// connection a panic left behind is in no known state.
    fn close(&mut self) {
        self.stream = None;
    }
}

/// Reads and validates one response; whether the connection may carry another request.
async fn read(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    res: &mut Response,
    expect: &Expect,
) -> Result<bool, ErrorKind> {
    http1::read(stream, buf, res, Options::default())
        .await
        .map_err(|_| ErrorKind::Io)?;
    // Nothing is pipelined: bytes after the response mean its framing was wrong.
    if !buf.is_empty() {
        return Err(ErrorKind::Io);
    }
    expect.check(res)?;
    Ok(res.keep_alive())
}

/// Open-loop load: `rate` requests a second on a fixed schedule for `duration`, over
/// `connections` keep-alive connections (wrk2's `-R`, oha's `-q --latency-correction`).
#[derive(Debug, Clone)]
pub struct Paced {
    /// The server.
    pub addr: SocketAddr,
    /// Path and query to GET.
    pub target: String,
    /// What a valid response is.
    pub expect: Expect,
    /// Requests a second, the schedule's.
    pub rate: f64,
    /// How long the schedule runs.
    pub duration: Duration,
    /// Keep-alive connections, each carrying one request at a time.
    pub connections: usize,
    /// Per-request limit, from its send.
    pub timeout: Duration,
}

/// A request sent this long after its intended time counts as late: the client could not
/// send it on time (every connection busy, or the client itself behind).
pub const LATE: Duration = Duration::from_millis(1);

/// The schedule's shortest sleep: past 10,000 requests a second they are sent in batches.
const SLEEP_AT_LEAST: Duration = Duration::from_micros(100);

/// What an open-loop load did.
#[derive(Debug, Clone, Default)]
pub struct PacedTally {
    /// Every request's outcome, latency counted from its *intended* send time: the corrected
    /// latency, stalls included (no coordinated omission).
    pub corrected: Tally,
    /// The valid responses' service time, counted from the actual send: what a closed-loop
    /// tool would report.
    pub service: Tally,
    /// How late each request was sent, intended → actual.
    pub lag: Tally,
    /// Requests sent [`LATE`] or later.
    pub late: u64,
    /// Most connections busy at once.
    pub busy_max: usize,
    /// The first intended send to the last answer.
    pub span: Duration,
}

impl PacedTally {
    /// Adds another load's requests (repeats of one level).
    pub fn merge(&mut self, other: &PacedTally) {
        self.corrected.merge(&other.corrected);
        self.service.merge(&other.service);
        self.lag.merge(&other.lag);
        self.late += other.late;
        self.busy_max = self.busy_max.max(other.busy_max);
        self.span += other.span;
        self.corrected.elapsed += other.corrected.elapsed;
    }

    /// Requests answered (or failed) per second of the load: what the server let through.
    pub fn achieved_rate(&self) -> f64 {
        rate(self.corrected.requests(), self.span.as_secs_f64())
    }
}

/// Runs open-loop load as `paced` says; `done` is bumped after each request.
///
/// A thread of its own keeps the schedule: it hands each request's intended time to whichever
/// connection is free, sleeping between sends with the kernel's timer slack set to 1 µs
/// (nanosleep otherwise overshoots by 50–70 µs here, and tokio's timers by up to a
/// millisecond — the error both anchors carry into every corrected latency). A request that
/// finds no free connection waits for one and is sent late, counted; none is dropped.
pub async fn paced(paced: &Paced, done: Arc<AtomicUsize>) -> PacedTally {
    let total = (paced.rate * paced.duration.as_secs_f64()).round().max(1.0) as u64;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Instant>();
    let rx = Arc::new(tokio::sync::Mutex::new(rx));
    let busy = Arc::new(AtomicUsize::new(0));
    let busy_max = Arc::new(AtomicUsize::new(0));
    let request = request(paced.addr, &paced.target);
    let start = Instant::now() + Duration::from_millis(5);
    let interval = Duration::from_secs_f64(1.0 / paced.rate);
    let schedule = std::thread::spawn(move || {
        let _ = nix::sys::prctl::set_timerslack(1);
        for i in 0..total {
            let due = start + interval.mul_f64(i as f64);
            let now = Instant::now();
            if due > now {
                // A sleep (and the wake-up it ends in) costs the load generator's core more
                // than a request does: under SLEEP_AT_LEAST apart, requests go out in batches,
                // each still timed from its own intended instant.
                std::thread::sleep((due - now).max(SLEEP_AT_LEAST));
            }
            if tx.send(due).is_err() {
                return;
            }
        }
    });
    let workers: Vec<_> = (0..paced.connections.max(1))
        .map(|_| {
            let (rx, busy, busy_max, done, request) = (
                Arc::clone(&rx),
                Arc::clone(&busy),
                Arc::clone(&busy_max),
                Arc::clone(&done),
                Arc::clone(&request),
            );
            let paced = paced.clone();
            tokio::spawn(async move {
                let mut tally = PacedTally::default();
                let mut conn = Connection::new(paced.addr);
                loop {
                    let intended = match rx.lock().await.recv().await {
                        Some(intended) => intended,
                        None => break,
                    };
                    let now = busy.fetch_add(1, Ordering::Relaxed) + 1;
                    busy_max.fetch_max(now, Ordering::Relaxed);
                    let sent = Instant::now();
                    let lag = sent.saturating_duration_since(intended);
                    tally.lag.push(Outcome::Ok {
                        latency: lag,
                        connect: None,
                    });
                    if lag >= LATE {
                        tally.late += 1;
                    }
                    let send = conn.send(&request, &paced.expect, paced.timeout, sent, intended);
                    let attempt = caught(send).await;
                    match attempt {
                        Outcome::Ok { .. } => tally.service.push(Outcome::Ok {
                            latency: sent.elapsed(),
                            connect: None,
                        }),
                        Outcome::Failed {
                            kind: ErrorKind::Panic,
                            ..
                        } => conn.close(),
                        Outcome::Failed { .. } => {}
                    }
                    tally.corrected.push(attempt);
                    busy.fetch_sub(1, Ordering::Relaxed);
                    done.fetch_add(1, Ordering::Relaxed);
                }
                tally
            })
        })
        .collect();
    let mut tally = PacedTally::default();
    for worker in workers {
        match worker.await {
            Ok(part) => tally.merge(&part),
            Err(_) => tally.corrected.push(Outcome::PANICKED),
        }
    }
    let _ = schedule.join();
    tally.span = start.elapsed();
    tally.corrected.elapsed = tally.span;
    tally.service.elapsed = tally.span;
    tally.busy_max = busy_max.load(Ordering::Relaxed);
    tally
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
    pub target: String,
    /// What a valid response is.
    pub expect: Expect,
    /// Virtual users, each with its own connection.
    pub users: usize,
    /// When they stop.
    pub stop: Stop,
    /// Per-request limit, a reconnect included.
    pub timeout: Duration,
}

/// Runs keep-alive load as `sessions` says; `done` is bumped after each request.
pub async fn sessions(sessions: &Sessions, done: Arc<AtomicUsize>) -> Tally {
    let shared = Arc::new(sessions.clone());
    let request = request(sessions.addr, &sessions.target);
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
    gather(users, start).await
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
    let mut tally = Tally::default();
    let mut conn = Connection::new(s.addr);
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
            } => conn.close(),
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
    use std::sync::atomic::AtomicU64;

    fn ok(ms: u64, connect_ms: u64) -> Outcome {
        Outcome::Ok {
            latency: Duration::from_millis(ms),
            connect: Some(Duration::from_millis(connect_ms)),
        }
    }

    #[test]
    fn figures_of_a_level() {
        let mut tally = Tally::default();
        for i in 1..=100 {
            tally.push(ok(1000 + i, i % 4));
        }
        tally.push(Outcome::Failed {
            kind: ErrorKind::Status,
            connect: Some(Duration::from_millis(8)),
        });
        tally.push(Outcome::Failed {
            kind: ErrorKind::Connect,
            connect: None,
        });
        tally.elapsed = Duration::from_millis(1250);
        let f = tally.figures();
        assert_eq!(f.requests, 102);
        assert!((f.success_rate - 100.0 * 100.0 / 102.0).abs() < 1e-9);
        assert_eq!((f.total_s, f.fastest_s, f.slowest_s), (1.25, 1.001, 1.100));
        assert!((f.average_s - 1.0505).abs() < 1e-9);
        // Valid responses only: 100 over 1.25 s, not the 102 sent.
        assert!((f.requests_per_s - 100.0 / 1.25).abs() < 1e-9);
        // HDR histogram at 3 significant digits: within 0.1%.
        for (got, want) in [
            (f.latency_ms.p50, 1050.0),
            (f.latency_ms.p90, 1090.0),
            (f.latency_ms.p99, 1099.0),
        ] {
            assert!((got - want).abs() <= 1.1, "{got} vs {want}");
        }
        assert_eq!(f.latency_ms.max, 1100.0);
        // 100 successes (connect 0..3 ms, mean 1.5) and one status failure that connected in 8.
        assert_eq!(f.connects, 101);
        assert!((f.connect_ms.avg - (150.0 + 8.0) / 101.0).abs() < 1e-9);
        assert_eq!(f.connect_ms.max, 8.0);
        assert_eq!(f.errors.get("status"), Some(&1));
        assert_eq!(f.errors.get("connect"), Some(&1));
        assert_eq!(f.ok(), 100);
    }

    #[test]
    fn many_latencies_move_to_a_histogram_with_the_same_quantiles() {
        let (mut few, mut many) = (Tally::default(), Tally::default());
        for i in 0..FEW as u64 * 2 {
            let outcome = ok(1 + i % 1000, 1);
            many.push(outcome);
            if i < 100 {
                few.push(outcome);
            }
        }
        assert!(matches!(few.latency, Latencies::Few(_)));
        assert!(matches!(many.latency, Latencies::Many(_)));
        let mut merged = few.clone();
        merged.merge(&many);
        let mut other_way = many.clone();
        other_way.merge(&few);
        for t in [&mut merged, &mut other_way] {
            t.elapsed = Duration::from_secs(1);
        }
        assert_eq!(merged.figures(), other_way.figures());
        assert_eq!(merged.requests(), FEW as u64 * 2 + 100);
    }

    #[test]
    fn merged_tallies_are_one() {
        let (mut a, mut b, mut both) = (Tally::default(), Tally::default(), Tally::default());
        for (i, outcome) in [ok(5, 1), ok(9, 2), ok(7, 3)].into_iter().enumerate() {
            both.push(outcome);
            if i == 0 { &mut a } else { &mut b }.push(outcome);
        }
        a.merge(&b);
        (a.elapsed, both.elapsed) = (Duration::from_secs(1), Duration::from_secs(1));
        assert_eq!(a.figures(), both.figures());
    }

    #[test]
    fn a_level_with_no_success_has_zero_latencies() {
        let mut tally = Tally::default();
        tally.push(Outcome::Failed {
            kind: ErrorKind::Timeout,
            connect: None,
        });
        tally.elapsed = Duration::from_secs(1);
        let f = tally.figures();
        assert_eq!(
            (
                f.success_rate,
                f.fastest_s,
                f.latency_ms.p50,
                f.requests_per_s
            ),
            (0.0, 0.0, 0.0, 0.0)
        );
        assert_eq!(f.errors.get("timeout"), Some(&1));
    }

    fn response(wire: &[u8]) -> Response {
        let mut res = Response::new();
        http1::read_blocking(
            &mut &wire[..],
            &mut Vec::new(),
            &mut res,
            Options::default(),
        )
        .unwrap();
        res
    }

    /// A 200 with `body`.
    fn answer(body: &str) -> Response {
        response(
            format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
    }

    #[test]
    fn validates_bodies_for_the_target() {
        let world = Expect::for_target("/greetings", &plan::Expect::Greeting);
        for word in WORDS {
            assert_eq!(world.check(&answer(&format!("{word} World!"))), Ok(()));
        }
        for bad in [
            "Hello Ana!",
            "Hey World!",
            "Hello World!\n",
            "",
            "Hello World",
        ] {
            assert_eq!(world.check(&answer(bad)), Err(ErrorKind::Body), "{bad}");
        }
        let ana = Expect::for_target("/greetings?name=Ana&x=1", &plan::Expect::Greeting);
        assert_eq!(ana.check(&answer("Oi Ana!")), Ok(()));
        assert_eq!(ana.check(&answer("Oi World!")), Err(ErrorKind::Body));
        let joao = Expect::for_target(
            "/greetings/blocking?name=Jo%C3%A3o",
            &plan::Expect::Greeting,
        );
        assert_eq!(joao.check(&answer("Hallo João!")), Ok(()));
        assert_eq!(
            Expect::for_target("/health", &plan::Expect::Greeting).check(&answer("ok")),
            Ok(())
        );
        let refused = response(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        let any = Expect::for_target("/x", &plan::Expect::Any);
        assert_eq!(any.check(&answer("anything")), Ok(()));
        assert_eq!(any.check(&refused), Err(ErrorKind::Status));
        let pattern = Expect::for_target("/x", &plan::Expect::Pattern("^Ol. ".into()));
        assert_eq!(pattern.check(&answer("Olá Ana!")), Ok(()));
        assert_eq!(pattern.check(&answer("Hi Ana!")), Err(ErrorKind::Body));
        assert_eq!(
            Expect::for_target("/greetings?name=%ZZ", &plan::Expect::Greeting).check(&refused),
            Err(ErrorKind::Status)
        );
    }

    #[test]
    fn validates_the_store_bound_answers() {
        let rule = &plan::Expect::Greeting;
        let row = |id: i32| {
            format!(
                r#"{{"id":{id},"randomNumber":{}}}"#,
                greet_store::seed::world_number(id)
            )
        };
        let db = Expect::for_target("/db", rule);
        assert_eq!(db.check(&answer(&row(17))), Ok(()));
        let wrong = format!(
            r#"{{"id":17,"randomNumber":{}}}"#,
            greet_store::seed::world_number(17) % 10_000 + 1
        );
        for bad in [
            wrong.as_str(),
            r#"{"id":0,"randomNumber":1}"#,
            "[]",
            "ok",
            r#"{"id":17}"#,
        ] {
            assert_eq!(db.check(&answer(bad)), Err(ErrorKind::Body), "{bad}");
        }
        let three = Expect::for_target("/queries?queries=3", rule);
        assert_eq!(
            three.check(&answer(&format!("[{},{},{}]", row(1), row(2), row(10_000)))),
            Ok(())
        );
        assert_eq!(
            three.check(&answer(&format!("[{},{}]", row(1), row(2)))),
            Err(ErrorKind::Body)
        );
        let one = Expect::for_target("/queries?queries=x", rule);
        assert_eq!(one.check(&answer(&format!("[{}]", row(5)))), Ok(()));

        let word = greet_store::seed::person_word(42);
        let other = WORDS.iter().find(|w| **w != word).unwrap();
        let business = |greeting: &str, visits: u64| {
            answer(&format!(
                r#"{{"name":"user-00042","greeting":"{greeting}","visits":{visits}}}"#
            ))
        };
        let known = Expect::for_target("/business?name=user-00042", rule);
        assert_eq!(
            known.check(&business(&format!("{word} user-00042!"), 1)),
            Ok(())
        );
        assert_eq!(
            known.check(&business(&format!("{word} user-00042!"), 3)),
            Ok(())
        );
        // The same count twice: a visit counted once for two answers.
        assert_eq!(
            known.check(&business(&format!("{word} user-00042!"), 3)),
            Err(ErrorKind::Body)
        );
        assert_eq!(
            known.check(&business(&format!("{other} user-00042!"), 4)),
            Err(ErrorKind::Body)
        );
        assert_eq!(
            known.check(&business(&format!("{word} user-00042!"), 0)),
            Err(ErrorKind::Body)
        );
        let ana = Expect::for_target("/business?name=Ana", rule);
        let body = format!(r#"{{"name":"Ana","greeting":"{other} Ana!","visits":1}}"#);
        assert_eq!(ana.check(&answer(&body)), Ok(()));
        let bad = Expect::for_target("/business?name=%ZZ", rule);
        assert_eq!(bad.check(&answer("{}")), Err(ErrorKind::Body));
    }

    /// A keep-alive server answering `ok` to every request, chunked when asked.
    async fn fake(chunked: bool) -> SocketAddr {
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
                            if stream.write_all(answer).await.is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        addr
    }

    fn sessions_of(addr: SocketAddr, expect: Expect) -> Sessions {
        Sessions {
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
        let expect = Expect::with(move |_| {
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
