//! The open loop over cleartext HTTP/1.1 on one thread around one epoll, as wrk runs its
//! connections: the schedule, every connection and the request timeouts in one loop, with no
//! task, channel, lock or timer entry per request.
//!
//! Per request the loop makes one `write` and (once the answer is there, as epoll says) one
//! `read`; a wake-up, whatever woke it, sends every request due by then. The task-per-connection
//! loop it replaces made each request cross a channel from the pacer thread (a futex wake),
//! take a lock, arm and disarm a timeout, and `read` once early for nothing: at 60k/s it cost
//! the load generator's core more per request than the server spent answering.

use std::io::{ErrorKind as IoKind, Read, Write};
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use greet_probe::http1::{Options, Parser, Response};
use mio::net::TcpStream;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};

use super::{PacedTally, SLEEP_AT_LEAST};
use crate::count::{ErrorKind, Opened, Outcome};
use crate::expect::Check;
use crate::schedule::Schedule;
use crate::work::Load;

/// The timer's token; a connection's is its index.
const TIMER: Token = Token(usize::MAX);

/// The longest the loop sleeps: how often it looks for requests past their timeout.
const TICK: Duration = Duration::from_millis(10);

/// Where a connection is with its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No request.
    Idle,
    /// Connecting, the request to follow.
    Connecting,
    /// This many bytes of the request written.
    Writing(usize),
    /// The request written, its answer awaited.
    Reading,
}

/// How a connection ended under a request.
#[derive(Debug, Clone, Copy)]
enum End {
    /// The peer closed it.
    Closed,
    /// The peer reset it.
    Reset,
    /// A write or read failed otherwise.
    Failed,
}

/// One connection and the request on it.
struct Conn {
    stream: Option<TcpStream>,
    state: State,
    /// The request's intended and actual send.
    times: (Instant, Instant),
    /// Its deadline: sent + the timeout.
    deadline: Instant,
    /// How this request opened the connection, when it did.
    opened: Option<Opened>,
    /// When its connect began: the send, or its retry on a fresh connection.
    connecting: Instant,
    /// The connection carried an earlier answer: a close before any byte of this one is the
    /// server's keep-alive ending, and the request goes again on a fresh connection once.
    reused: bool,
    /// The request already went again once.
    retried: bool,
    buf: Vec<u8>,
    parser: Parser,
    res: Response,
}

/// The loop's whole state.
struct Looper<'a> {
    poll: Poll,
    addr: SocketAddr,
    request: &'a [u8],
    check: &'a Check,
    timeout: Duration,
    conns: Vec<Conn>,
    idle: Vec<usize>,
    busy: usize,
    tally: PacedTally,
    /// Every read lands here first (a connection's own buffer keeps what is not parsed yet).
    scratch: Box<[u8; 16 * 1024]>,
    start: Instant,
    done: &'a AtomicUsize,
}

/// Runs `load` (cleartext HTTP/1.1) on `schedule`; `done` is bumped after each request. An
/// error is the loop's own (no epoll or timer for it), before any request went.
pub(super) fn paced(
    load: &Load,
    schedule: &Schedule,
    done: &AtomicUsize,
) -> std::io::Result<PacedTally> {
    let _ = nix::sys::prctl::set_timerslack(1);
    let poll = Poll::new()?;
    let timer = TimerFd::new(ClockId::CLOCK_MONOTONIC, TimerFlags::TFD_NONBLOCK)?;
    poll.registry().register(
        &mut SourceFd(&timer.as_fd().as_raw_fd()),
        TIMER,
        Interest::READABLE,
    )?;
    let request = crate::conn::request(load.addr, &load.target, &load.wire);
    let connections = schedule.connections.max(1);
    let start = Instant::now() + Duration::from_millis(5);
    let mut looper = Looper {
        poll,
        addr: load.addr,
        request: request.http1(),
        check: &load.check,
        timeout: load.timeout,
        conns: (0..connections).map(|_| Conn::new()).collect(),
        idle: (0..connections).rev().collect(),
        busy: 0,
        tally: PacedTally::default(),
        scratch: Box::new([0; 16 * 1024]),
        start,
        done,
    };
    let mut intended = schedule.intended().map(|at| start + at).peekable();
    let mut events = Events::with_capacity(1024);
    // When the timer fires next, if it is armed.
    let mut armed: Option<Instant> = None;
    let mut next_tick = Instant::now() + TICK;
    loop {
        let now = Instant::now();
        while let Some(&due) = intended.peek() {
            if due > now {
                break;
            }
            let Some(c) = looper.idle.pop() else { break };
            intended.next();
            looper.send(c, due, Instant::now());
        }
        if now >= next_tick {
            looper.expire(now);
            next_tick = now + TICK;
        }
        if intended.peek().is_none() && looper.busy == 0 {
            break;
        }
        // Wake for the next request due (when a connection is free for it), or the tick, from
        // the time the batch above ended. A wake-up under SLEEP_AT_LEAST away sends in a batch,
        // each timed from its own due; one that came due during the batch only looks at what
        // epoll has before it goes.
        let now = Instant::now();
        let next = intended.peek().copied().filter(|_| !looper.idle.is_empty());
        let mut timeout = Some(TICK);
        if next.is_some_and(|due| due <= now) {
            timeout = Some(Duration::ZERO);
        } else {
            let wake = next.map_or(next_tick, |due| {
                next_tick.min(due.max(now + SLEEP_AT_LEAST))
            });
            if armed.is_none_or(|at| at > wake || at <= now) {
                let after = TimeSpec::from_duration(wake.saturating_duration_since(now));
                // A timer that cannot be set leaves the poll's own timeout, the tick.
                let set = timer.set(Expiration::OneShot(after), TimerSetTimeFlags::empty());
                armed = set.is_ok().then_some(wake);
            }
        }
        match looper.poll.poll(&mut events, timeout) {
            Ok(()) => {}
            Err(e) if e.kind() == IoKind::Interrupted => continue,
            Err(_) => {
                // The loop cannot go on: what it was sending, and what it had yet to send,
                // count as failed rather than vanish.
                looper.abandon(intended);
                break;
            }
        }
        for event in events.iter() {
            match event.token() {
                TIMER => {
                    let _ = timer.wait();
                    armed = None;
                }
                Token(c) => looper.ready(c, event.is_writable(), event.is_readable()),
            }
        }
    }
    let mut tally = looper.tally;
    tally.span = start.elapsed();
    tally.corrected.elapsed = tally.span;
    tally.service.elapsed = tally.span;
    Ok(tally)
}

impl Conn {
    fn new() -> Self {
        let now = Instant::now();
        Self {
            stream: None,
            state: State::Idle,
            times: (now, now),
            deadline: now,
            opened: None,
            connecting: now,
            reused: false,
            retried: false,
            buf: Vec::with_capacity(4096),
            parser: Parser::new(Options::default()),
            res: Response::new(),
        }
    }
}

impl Looper<'_> {
    /// Sends the request due at `intended` on idle connection `c`, at `sent`.
    fn send(&mut self, c: usize, intended: Instant, sent: Instant) {
        self.busy += 1;
        self.tally.busy_max = self.tally.busy_max.max(self.busy);
        let conn = &mut self.conns[c];
        conn.times = (intended, sent);
        conn.deadline = sent + self.timeout;
        conn.opened = None;
        conn.retried = false;
        self.begin(c);
    }

    /// Starts the request on `c`: on its open connection, or a new one.
    fn begin(&mut self, c: usize) {
        let conn = &mut self.conns[c];
        conn.buf.clear();
        conn.res.clear();
        conn.parser = Parser::new(Options::default());
        if conn.stream.is_some() {
            conn.reused = true;
            conn.state = State::Writing(0);
            self.write(c);
            return;
        }
        conn.reused = false;
        conn.connecting = Instant::now();
        match TcpStream::connect(self.addr) {
            Ok(mut stream) => {
                let _ = stream.set_nodelay(true);
                let interest = Interest::READABLE | Interest::WRITABLE;
                if self
                    .poll
                    .registry()
                    .register(&mut stream, Token(c), interest)
                    .is_err()
                {
                    return self.finish(c, Err(ErrorKind::Connect));
                }
                conn.stream = Some(stream);
                conn.state = State::Connecting;
            }
            Err(_) => self.finish(c, Err(ErrorKind::Connect)),
        }
    }

    /// Writes what is left of the request on `c`.
    fn write(&mut self, c: usize) {
        let conn = &mut self.conns[c];
        let (Some(stream), State::Writing(mut at)) = (conn.stream.as_mut(), conn.state) else {
            return;
        };
        while at < self.request.len() {
            match stream.write(&self.request[at..]) {
                Ok(n) => at += n,
                Err(e) if e.kind() == IoKind::WouldBlock => {
                    conn.state = State::Writing(at);
                    return;
                }
                Err(e) if e.kind() == IoKind::Interrupted => {}
                Err(_) => return self.closed(c, End::Failed),
            }
        }
        conn.state = State::Reading;
    }

    /// Epoll's word on `c`.
    fn ready(&mut self, c: usize, writable: bool, readable: bool) {
        let Some(conn) = self.conns.get_mut(c) else {
            return;
        };
        match conn.state {
            State::Connecting if writable || readable => {
                let Some(stream) = conn.stream.as_ref() else {
                    return;
                };
                match (stream.take_error(), stream.peer_addr()) {
                    (Ok(None), Ok(_)) => {
                        conn.opened = Some(Opened::tcp(conn.connecting.elapsed()));
                        conn.state = State::Writing(0);
                        self.write(c);
                    }
                    (Ok(None), Err(e)) if e.kind() == IoKind::NotConnected => {}
                    _ => {
                        conn.stream = None;
                        self.finish(c, Err(ErrorKind::Connect));
                    }
                }
            }
            State::Writing(_) if writable => {
                self.write(c);
                // The answer may have come while the request's end was being written.
                if self.conns[c].state == State::Reading {
                    self.read(c);
                }
            }
            State::Reading if readable => self.read(c),
            _ => {}
        }
    }

    /// Reads what has come of the answer on `c`, and finishes the request when it is whole.
    fn read(&mut self, c: usize) {
        let conn = &mut self.conns[c];
        let Some(stream) = conn.stream.as_mut() else {
            return;
        };
        loop {
            let n = match stream.read(&mut self.scratch[..]) {
                Ok(0) => return self.closed(c, End::Closed),
                Ok(n) => n,
                Err(e) if e.kind() == IoKind::WouldBlock => return,
                Err(e) if e.kind() == IoKind::Interrupted => continue,
                Err(e) if e.kind() == IoKind::ConnectionReset => return self.closed(c, End::Reset),
                Err(_) => return self.closed(c, End::Failed),
            };
            conn.buf.extend_from_slice(&self.scratch[..n]);
            match conn.parser.feed(&conn.buf, &mut conn.res) {
                Ok(progress) => {
                    conn.buf.drain(..progress.consumed);
                    if progress.done {
                        // Nothing is pipelined: bytes after the answer mean its framing was
                        // wrong.
                        if !conn.buf.is_empty() {
                            conn.stream = None;
                            return self.finish(c, Err(ErrorKind::Io));
                        }
                        let checked = self.check.check(conn.res.status(), conn.res.body());
                        if !conn.res.keep_alive() {
                            conn.stream = None;
                        }
                        return self.finish(c, checked);
                    }
                }
                Err(_) => {
                    conn.stream = None;
                    return self.finish(c, Err(ErrorKind::Io));
                }
            }
        }
    }

    /// The connection of `c` ended with its request in flight, as `greet_probe::http1::read`
    /// reads an ending: closed, or reset after part of the answer came, ends a body delimited
    /// by the close; a kept-alive connection that ended before any byte of the answer was the
    /// server closing it, and the request goes again, once.
    fn closed(&mut self, c: usize, end: End) {
        let conn = &mut self.conns[c];
        conn.stream = None;
        let nothing_came = conn.buf.is_empty() && conn.res.status() == 0;
        let ended = match end {
            End::Closed => true,
            End::Reset => !nothing_came,
            End::Failed => false,
        };
        if ended && conn.parser.finish(&mut conn.res).is_ok() {
            let checked = self.check.check(conn.res.status(), conn.res.body());
            return self.finish(c, checked);
        }
        if conn.reused && nothing_came && !conn.retried {
            conn.retried = true;
            return self.begin(c);
        }
        self.finish(c, Err(ErrorKind::Io))
    }

    /// Requests past their deadline at `now` fail as timed out, their connections closed.
    fn expire(&mut self, now: Instant) {
        for c in 0..self.conns.len() {
            let conn = &mut self.conns[c];
            if conn.state != State::Idle && conn.deadline <= now {
                conn.stream = None;
                self.finish(c, Err(ErrorKind::Timeout));
            }
        }
    }

    /// Fails every request in flight and every one still to send.
    fn abandon(&mut self, unsent: impl Iterator<Item = Instant>) {
        for c in 0..self.conns.len() {
            if self.conns[c].state != State::Idle {
                self.conns[c].stream = None;
                self.finish(c, Err(ErrorKind::Io));
            }
        }
        for due in unsent {
            let failed = Outcome::Failed {
                kind: ErrorKind::Io,
                connect: None,
            };
            let now = Instant::now();
            self.tally.count(self.start, [due, now, now], failed);
            self.done.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts the request on `c` and frees the connection.
    fn finish(&mut self, c: usize, result: Result<(), ErrorKind>) {
        let conn = &mut self.conns[c];
        let (intended, sent) = conn.times;
        let connect = conn.opened.take();
        let now = Instant::now();
        let attempt = match result {
            Ok(()) => Outcome::Ok {
                latency: now.saturating_duration_since(intended),
                connect,
            },
            Err(kind) => Outcome::Failed { kind, connect },
        };
        conn.state = State::Idle;
        self.tally.count(self.start, [intended, sent, now], attempt);
        self.busy -= 1;
        self.idle.push(c);
        self.done.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::count::Tally;
    use crate::expect::Expect;
    use crate::fake;
    use crate::work::Work;

    /// `rate` a second for `ms` milliseconds on `connections`, to `addr`, each request timed
    /// out after `timeout_ms`, on the loop itself (never the tasks [`crate::run`] would fall
    /// back to).
    async fn paced_to(
        addr: SocketAddr,
        rate: f64,
        ms: u64,
        connections: usize,
        timeout_ms: u64,
    ) -> PacedTally {
        let load = Load {
            wire: Default::default(),
            addr,
            target: "/health".into(),
            check: Check::for_target("/health", &Expect::Any),
            timeout: Duration::from_millis(timeout_ms),
            work: Work::Paced(Schedule::constant(
                rate,
                Duration::from_millis(ms),
                connections,
            )),
        };
        let Work::Paced(schedule) = load.work.clone() else {
            unreachable!("paced work")
        };
        let done = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&done);
        let tally = tokio::task::spawn_blocking(move || paced(&load, &schedule, &counted))
            .await
            .expect("no panic")
            .expect("the loop runs here");
        assert_eq!(
            done.load(Ordering::Relaxed) as u64,
            tally.corrected.requests(),
            "progress counts every request once"
        );
        tally
    }

    fn errors(tally: &Tally) -> Vec<(String, u64)> {
        tally.figures().errors.into_iter().collect()
    }

    /// Kept-alive answers, plain and chunked: every one valid, on connections kept open, and
    /// each second's requests counted in its window.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn answers_are_read_on_kept_alive_connections() {
        for chunked in [false, true] {
            let tally = paced_to(fake::answering(chunked, false).await, 400.0, 1500, 4, 5000).await;
            let f = tally.corrected.figures();
            assert_eq!((f.requests, f.success_rate), (600, 100.0), "{f:?}");
            assert!(f.connects <= 4, "kept alive: {f:?}");
            let offered: Vec<u64> = tally
                .windows
                .iter()
                .map(|w| w.corrected.requests())
                .collect();
            assert_eq!(offered[..2], [400, 200], "{offered:?}");
            let answered: u64 = tally.windows.iter().map(|w| w.completed).sum();
            assert_eq!(answered, 600);
        }
    }

    /// A server that closes each connection after one answer (no `Connection: close`): the
    /// next request on it finds it closed before any answer, and goes again on a fresh one.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_connection_the_server_closed_is_reopened_not_failed() {
        let tally = paced_to(fake::answering(false, true).await, 200.0, 500, 2, 5000).await;
        let f = tally.corrected.figures();
        assert_eq!((f.requests, f.success_rate), (100, 100.0), "{f:?}");
        assert_eq!(f.connects, 100, "one connection per answer: {f:?}");
    }

    /// A server that never answers: each request times out, counted as such, and the loop
    /// ends once the last one has.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unanswered_requests_time_out() {
        let began = Instant::now();
        let tally = paced_to(fake::silent().await, 100.0, 200, 30, 100).await;
        assert_eq!(errors(&tally.corrected), [("timeout".to_owned(), 20)]);
        assert!(
            began.elapsed() < Duration::from_secs(2),
            "{:?}",
            began.elapsed()
        );
    }

    /// Nothing listening: every request fails to connect, at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_refused_connection_is_a_connect_failure() {
        let tally = paced_to(fake::refusing(), 100.0, 200, 2, 5000).await;
        assert_eq!(errors(&tally.corrected), [("connect".to_owned(), 20)]);
    }
}
