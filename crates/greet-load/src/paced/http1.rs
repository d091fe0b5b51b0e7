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
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use greet_probe::http1::{Options, Parser, Response};
use mio::{Poll, Token};
use rustls::ClientConfig;

use super::event::{drive, Engine, Slots};
use super::stream::Stream;
use super::PacedTally;
use crate::count::{ErrorKind, Opened};
use crate::expect::Check;
use crate::schedule::Schedule;
use crate::work::Load;

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
    stream: Option<Stream>,
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

/// The loop's whole state: a connection per slot, its token the slot's number.
struct Looper<'a> {
    poll: Poll,
    addr: SocketAddr,
    tls: Option<(&'a Arc<ClientConfig>, &'static [u8])>,
    request: &'a [u8],
    check: &'a Check,
    timeout: Duration,
    conns: Vec<Conn>,
    slots: Slots<'a>,
    /// Every read lands here first (a connection's own buffer keeps what is not parsed yet).
    scratch: Box<[u8; 16 * 1024]>,
}

/// Runs `load` (HTTP/1.1, in cleartext or over TLS) on `schedule`; `done` is bumped after each request. An
/// error is the loop's own (no epoll or timer for it), before any request went.
pub(super) fn paced(
    load: &Load,
    schedule: &Schedule,
    done: &AtomicUsize,
) -> std::io::Result<PacedTally> {
    let request = load.request();
    let connections = schedule.connections.max(1);
    let looper = Looper {
        poll: Poll::new()?,
        addr: load.addr,
        tls: load.wire.tls(),
        request: request.http1(),
        check: &load.check,
        timeout: load.timeout,
        conns: (0..connections).map(|_| Conn::new()).collect(),
        slots: Slots::new(connections, done),
        scratch: Box::new([0; 16 * 1024]),
    };
    drive(looper, schedule)
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

impl<'a> Engine<'a> for Looper<'a> {
    fn poll(&mut self) -> &mut Poll {
        &mut self.poll
    }

    fn slots(&mut self) -> &mut Slots<'a> {
        &mut self.slots
    }

    fn send(&mut self, c: usize, intended: Instant, sent: Instant) {
        let conn = &mut self.conns[c];
        conn.times = (intended, sent);
        conn.deadline = sent + self.timeout;
        conn.opened = None;
        conn.retried = false;
        self.begin(c);
    }

    fn ready(&mut self, Token(c): Token, writable: bool, readable: bool) {
        let Some(conn) = self.conns.get_mut(c) else {
            return;
        };
        // TLS records the socket could not take before.
        let connecting = conn.state == State::Connecting;
        if writable && !connecting && conn.stream.as_mut().is_some_and(|s| s.flush().is_err()) {
            if conn.state == State::Idle {
                conn.stream = None;
                return;
            }
            return self.closed(c, End::Failed);
        }
        match conn.state {
            State::Connecting if writable || readable => {
                let Some(stream) = conn.stream.as_mut() else {
                    return;
                };
                match stream.connected() {
                    Ok(true) => {
                        conn.opened = Some(Opened::tcp(conn.connecting.elapsed()));
                        conn.state = State::Writing(0);
                        self.write(c);
                    }
                    Ok(false) => {}
                    Err(_) => {
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

    fn expire(&mut self, now: Instant) {
        for c in 0..self.conns.len() {
            let conn = &mut self.conns[c];
            if conn.state != State::Idle && conn.deadline <= now {
                conn.stream = None;
                self.finish(c, Err(ErrorKind::Timeout));
            }
        }
    }

    fn abandon(&mut self) {
        for c in 0..self.conns.len() {
            if self.conns[c].state != State::Idle {
                self.conns[c].stream = None;
                self.finish(c, Err(ErrorKind::Io));
            }
        }
    }
}

impl Looper<'_> {
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
        match Stream::connect(self.addr, self.tls, self.poll.registry(), Token(c)) {
            Ok(stream) => {
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

    /// Reads what has come of the answer on `c`, and finishes the request when it is whole.
    fn read(&mut self, c: usize) {
        let conn = &mut self.conns[c];
        let Some(stream) = conn.stream.as_mut() else {
            return;
        };
        loop {
            let n = match stream.read(&mut self.scratch[..]) {
                Err(e) if e.kind() == IoKind::WouldBlock => return,
                Err(e) if e.kind() == IoKind::Interrupted => continue,
                // The connection never opened: its handshake failed or was cut short.
                Ok(0) | Err(_) if stream.handshaking() => {
                    conn.stream = None;
                    return self.finish(c, Err(ErrorKind::Connect));
                }
                Ok(0) => return self.closed(c, End::Closed),
                Ok(n) => n,
                Err(e) if e.kind() == IoKind::ConnectionReset => return self.closed(c, End::Reset),
                Err(_) => return self.closed(c, End::Failed),
            };
            if let Some(opened) = conn.opened.as_mut() {
                stream.handshaken(opened);
            }
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
                        let checked = self.check.bytes(conn.res.status(), conn.res.body());
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
            let checked = self.check.bytes(conn.res.status(), conn.res.body());
            return self.finish(c, checked);
        }
        if conn.reused && nothing_came && !conn.retried {
            conn.retried = true;
            return self.begin(c);
        }
        self.finish(c, Err(ErrorKind::Io))
    }

    /// Counts the request on `c` and frees the connection.
    fn finish(&mut self, c: usize, result: Result<u64, ErrorKind>) {
        let conn = &mut self.conns[c];
        conn.state = State::Idle;
        self.slots.finish(c, conn.times, conn.opened.take(), result);
    }
}

#[cfg(test)]
mod tests {

    use super::super::event::on_loop;
    use super::*;
    use crate::count::Tally;
    use crate::fake;

    /// `rate` a second for `ms` milliseconds on `connections`, to `addr`, each request timed
    /// out after `timeout_ms`, on the loop itself.
    async fn paced_to(
        addr: SocketAddr,
        rate: f64,
        ms: u64,
        connections: usize,
        timeout_ms: u64,
    ) -> PacedTally {
        let schedule = Schedule::constant(rate, Duration::from_millis(ms), connections);
        on_loop(paced, (addr, Default::default()), schedule, timeout_ms).await
    }

    fn errors(tally: &Tally) -> Vec<(String, u64)> {
        tally.figures().errors.into_iter().collect()
    }

    /// Kept-alive answers, plain and chunked: every one valid, on connections kept open, and
    /// each quarter second's requests counted in its window, four to a second.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn answers_are_read_on_kept_alive_connections() {
        for chunked in [false, true] {
            let tally = paced_to(fake::answering(chunked, false).await, 400.0, 1500, 4, 5000).await;
            let f = tally.corrected.figures();
            assert_eq!((f.requests, f.success_rate), (600, 100.0), "{f:?}");
            assert!(f.connects <= 4, "kept alive: {f:?}");
            let offered: Vec<u64> = tally
                .seconds()
                .iter()
                .map(|w| w.corrected.requests())
                .collect();
            assert_eq!(offered[..2], [400, 200], "{offered:?}");
            let quarters: Vec<u64> = tally.windows[..6]
                .iter()
                .map(|w| w.corrected.requests())
                .collect();
            assert_eq!(quarters, [100; 6], "a quarter second a window");
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
        assert_eq!(
            f.connects,
            100 + 2,
            "one connection per answer, and the warm-up's two: {f:?}"
        );
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
