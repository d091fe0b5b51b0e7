//! The open loop over HTTP/2 (h2c, or h2 over TLS) in the same loop as HTTP/1.1
//! ([`super::event`]), as h2load runs its sessions: `streams` slots share each connection,
//! the request's HEADERS frame is built once, every frame a batch of sends queues on a
//! connection goes out in one `write`, and each `read` takes whatever frames have come for
//! all of its streams.
//!
//! It speaks only what a client of these servers needs: its SETTINGS turn server push and
//! the HPACK dynamic table off and open its windows, so an answer's status is one static
//! index or a literal, and no frame of a body waits on a WINDOW_UPDATE. A stream's body is
//! its DATA frames; trailers, PRIORITY and WINDOW_UPDATE frames are read and let be. A GOAWAY
//! lets the streams it names finish; the ones past it go again once on a fresh connection,
//! as a client does after a server closed an idle connection.

use std::io::{ErrorKind as IoKind, Write};
use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Poll, Token};
use rustls::ClientConfig;

use super::event::{drive, Engine, Slots};
use super::frames::*;
use super::hpack::request_block;
use super::stream::Stream;
use super::PacedTally;
use crate::count::{ErrorKind, Opened};
use crate::expect::Check;
use crate::schedule::Schedule;
use crate::work::Load;

mod incoming;

/// The stream of a slot whose request waits for room on its connection (under the server's
/// stream limit) or for the next connection (this one going away); no real stream is 0.
const HELD: u32 = 0;

/// One stream's place on a connection, and the request on it.
struct Slot {
    /// Its stream, while its request is in flight.
    stream: Option<u32>,
    /// Its request's intended and actual send.
    times: (Instant, Instant),
    deadline: Instant,
    /// How its request opened the connection, when it did.
    opened: Option<Opened>,
    /// It already went again once, after a GOAWAY or a close.
    retried: bool,
    status: u16,
    body: Vec<u8>,
    /// Its HEADERS ended the stream before their last CONTINUATION.
    ends_with_headers: bool,
}

/// Where a connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed,
    Connecting,
    Open,
}

/// One connection, shared by `streams` slots.
struct Conn {
    stream: Option<Stream>,
    state: State,
    /// Frames not written yet, from `written` on.
    out: Vec<u8>,
    written: usize,
    /// Bytes read and not yet parsed.
    input: Vec<u8>,
    next_id: u32,
    /// When its connect began, and the slot whose request began it.
    connecting: (Instant, usize),
    /// The last stream a GOAWAY said the server will answer: no stream opens on it after.
    goaway: Option<u32>,
    /// Streams in flight on it, and the most the server allows at once.
    open: usize,
    limit: usize,
    /// It carried an answer: a close before any of a stream's answer is the server ending
    /// it, not failing the stream.
    answered: bool,
    /// The connection's window used since it was last topped up.
    used: u64,
    /// The stream whose header block CONTINUATION frames carry on.
    continuing: Option<u32>,
}

impl Conn {
    fn new() -> Self {
        Self {
            stream: None,
            state: State::Closed,
            out: Vec::new(),
            written: 0,
            input: Vec::new(),
            next_id: 1,
            connecting: (Instant::now(), 0),
            goaway: None,
            open: 0,
            limit: usize::MAX,
            answered: false,
            used: 0,
            continuing: None,
        }
    }
}

/// The loop's whole state: `streams` slots to a connection, a connection's token its
/// number.
struct Looper<'a> {
    poll: Poll,
    addr: SocketAddr,
    tls: Option<(&'a Arc<ClientConfig>, &'static [u8])>,
    block: Vec<u8>,
    check: &'a Check,
    timeout: Duration,
    streams: usize,
    conns: Vec<Conn>,
    slots: Vec<Slot>,
    counts: Slots<'a>,
    /// Connections with frames queued since the last flush.
    dirty: Vec<usize>,
    scratch: Box<[u8; 64 * 1024]>,
}

/// Runs `load` (h2c) on `schedule`; `done` is bumped after each request. An error is the
/// loop's own (no epoll or timer for it), before any request went.
pub(super) fn paced(
    load: &Load,
    schedule: &Schedule,
    done: &AtomicUsize,
) -> std::io::Result<PacedTally> {
    let slots = schedule.connections.max(1);
    let streams = schedule.streams.clamp(1, slots);
    let now = Instant::now();
    let looper = Looper {
        poll: Poll::new()?,
        addr: load.addr,
        tls: load.wire.tls(),
        block: request_block(
            load.addr,
            &load.target,
            &load.headers,
            load.wire.protocol.tls(),
        ),
        check: &load.check,
        timeout: load.timeout,
        streams,
        conns: (0..slots.div_ceil(streams)).map(|_| Conn::new()).collect(),
        slots: (0..slots)
            .map(|_| Slot {
                stream: None,
                times: (now, now),
                deadline: now,
                opened: None,
                retried: false,
                status: 0,
                body: Vec::new(),
                ends_with_headers: false,
            })
            .collect(),
        counts: Slots::new(slots, done),
        dirty: Vec::new(),
        scratch: Box::new([0; 64 * 1024]),
    };
    drive(looper, schedule)
}

impl<'a> Engine<'a> for Looper<'a> {
    fn poll(&mut self) -> &mut Poll {
        &mut self.poll
    }

    fn slots(&mut self) -> &mut Slots<'a> {
        &mut self.counts
    }

    fn send(&mut self, s: usize, intended: Instant, sent: Instant) {
        let slot = &mut self.slots[s];
        slot.times = (intended, sent);
        slot.deadline = sent + self.timeout;
        slot.opened = None;
        slot.retried = false;
        self.begin(s);
    }

    fn flush(&mut self) {
        while let Some(c) = self.dirty.pop() {
            self.write(c);
        }
    }

    fn ready(&mut self, Token(c): Token, writable: bool, readable: bool) {
        let Some(conn) = self.conns.get_mut(c) else {
            return;
        };
        if conn.state == State::Connecting && (writable || readable) {
            let Some(stream) = conn.stream.as_mut() else {
                return;
            };
            match stream.connected() {
                Ok(true) => {
                    conn.state = State::Open;
                    let (began, opener) = conn.connecting;
                    if self.slots[opener].stream.is_some() {
                        self.slots[opener].opened = Some(Opened::tcp(began.elapsed()));
                    }
                }
                Ok(false) => return,
                Err(_) => return self.lost(c, Some(ErrorKind::Connect)),
            }
        }
        if self.conns[c].state != State::Open {
            return;
        }
        if writable {
            self.write(c);
        }
        if readable {
            self.read(c);
        }
    }

    fn expire(&mut self, now: Instant) {
        for c in 0..self.conns.len() {
            // A connect that takes longer than a request may: its requests time out, and the
            // next goes on a fresh one.
            let conn = &self.conns[c];
            if conn.state == State::Connecting && conn.connecting.0 + self.timeout <= now {
                self.lost(c, Some(ErrorKind::Timeout));
            }
        }
        for s in 0..self.slots.len() {
            let slot = &self.slots[s];
            if let Some(id) = slot.stream.filter(|_| slot.deadline <= now) {
                // Its stream is cancelled; the connection carries the others on.
                let c = s / self.streams;
                let conn = &mut self.conns[c];
                if conn.state == State::Open && id != HELD {
                    frame(&mut conn.out, RST_STREAM, 0, id, &8u32.to_be_bytes());
                    self.dirty.push(c);
                }
                self.finish(s, Err(ErrorKind::Timeout));
            }
        }
        for c in 0..self.conns.len() {
            self.settle(c);
        }
        self.flush();
    }

    fn abandon(&mut self) {
        for s in 0..self.slots.len() {
            if self.slots[s].stream.is_some() {
                self.finish(s, Err(ErrorKind::Io));
            }
        }
    }
}

impl Looper<'_> {
    /// The slots of connection `c`.
    fn range(&self, c: usize) -> std::ops::Range<usize> {
        c * self.streams..((c + 1) * self.streams).min(self.slots.len())
    }

    /// Starts slot `s`'s request afresh: its answer so far forgotten, then [`Self::queue`].
    fn begin(&mut self, s: usize) {
        let slot = &mut self.slots[s];
        slot.status = 0;
        slot.body.clear();
        slot.ends_with_headers = false;
        self.queue(s);
    }

    /// Queues slot `s`'s request on its connection, opening it first when it is closed, or
    /// holds it while the connection has no room for another stream or is going away.
    fn queue(&mut self, s: usize) {
        let c = s / self.streams;
        let conn = &mut self.conns[c];
        if conn.state == State::Closed {
            let began = Instant::now();
            let registry = self.poll.registry();
            let Ok(stream) = Stream::connect(self.addr, self.tls, registry, Token(c)) else {
                return self.finish(s, Err(ErrorKind::Connect));
            };
            *conn = Conn::new();
            conn.stream = Some(stream);
            conn.state = State::Connecting;
            conn.connecting = (began, s);
            conn.out = opening();
        }
        if conn.next_id > WINDOW_MAX - 2 && conn.goaway.is_none() {
            // Out of stream ids: this connection ends with the streams it has.
            conn.goaway = Some(conn.next_id - 2);
        }
        if conn.goaway.is_some() || conn.open >= conn.limit {
            self.slots[s].stream = Some(HELD);
            return;
        }
        let id = conn.next_id;
        conn.next_id += 2;
        conn.open += 1;
        frame(
            &mut conn.out,
            HEADERS,
            END_STREAM | END_HEADERS,
            id,
            &self.block,
        );
        self.slots[s].stream = Some(id);
        self.dirty.push(c);
    }

    /// After what may have freed room on connection `c` or drained it: a connection going
    /// away is closed once the streams it will still answer are, its held requests going on
    /// the next one; otherwise held requests go as the stream limit allows.
    fn settle(&mut self, c: usize) {
        let conn = &self.conns[c];
        if conn.state == State::Closed {
            return;
        }
        if let Some(last) = conn.goaway {
            let answering = self.range(c).any(|s| {
                self.slots[s]
                    .stream
                    .is_some_and(|id| id != HELD && id <= last)
            });
            if !answering {
                self.lost(c, None);
            }
            return;
        }
        let mut room = conn.limit.saturating_sub(conn.open);
        for s in self.range(c) {
            if room == 0 {
                break;
            }
            if self.slots[s].stream == Some(HELD) {
                self.queue(s);
                room -= 1;
            }
        }
    }

    /// Writes what is queued on connection `c` (and TLS records held before), as far as the
    /// socket takes it.
    fn write(&mut self, c: usize) {
        let conn = &mut self.conns[c];
        let Some(stream) = conn.stream.as_mut().filter(|_| conn.state == State::Open) else {
            return;
        };
        if stream.flush().is_err() {
            return self.lost(c, None);
        }
        while conn.written < conn.out.len() {
            match stream.write(&conn.out[conn.written..]) {
                Ok(n) => conn.written += n,
                Err(e) if e.kind() == IoKind::WouldBlock => return,
                Err(e) if e.kind() == IoKind::Interrupted => {}
                Err(_) => return self.lost(c, None),
            }
        }
        conn.out.clear();
        conn.written = 0;
    }

    /// Connection `c` is gone (or, drained after a GOAWAY, closed): its held requests go on
    /// the next one, and so do, once, its streams the server did not take up: past a
    /// GOAWAY's last stream, or with nothing of their answer come on a connection that had
    /// carried answers (the server closing it). The rest fail, as `failed` when given, else as
    /// I/O errors.
    fn lost(&mut self, c: usize, failed: Option<ErrorKind>) {
        let conn = &mut self.conns[c];
        if let Some(mut stream) = conn.stream.take() {
            stream.deregister(self.poll.registry());
        }
        let (goaway, answered) = (conn.goaway, conn.answered);
        *conn = Conn::new();
        let mut again = Vec::new();
        for s in self.range(c) {
            let slot = &self.slots[s];
            let Some(id) = slot.stream else { continue };
            let nothing_came = slot.status == 0 && slot.body.is_empty();
            let refused = match goaway {
                Some(last) => id > last,
                None => failed.is_none() && answered && nothing_came,
            };
            if id == HELD || (refused && !slot.retried) {
                again.push((s, id != HELD));
            } else {
                self.finish(s, Err(failed.unwrap_or(ErrorKind::Io)));
            }
        }
        for (s, retry) in again {
            self.slots[s].retried |= retry;
            self.begin(s);
        }
    }

    /// Counts slot `s`'s request and frees the slot.
    fn finish(&mut self, s: usize, result: Result<u64, ErrorKind>) {
        let slot = &mut self.slots[s];
        if slot.stream.take().is_some_and(|id| id != HELD) {
            let conn = &mut self.conns[s / self.streams];
            conn.open = conn.open.saturating_sub(1);
        }
        self.counts
            .finish(s, slot.times, slot.opened.take(), result);
    }
}

#[cfg(test)]
mod tests {

    use greet_probe::tls::Trust;
    use greet_probe::Protocol;

    use super::super::event::on_loop;
    use super::*;
    use crate::conn::Wire;
    use crate::fake;

    /// `rate` a second for `ms` milliseconds on `slots`, `streams` to a connection, to
    /// `addr` over h2c, each request timed out after `timeout_ms`, on the loop itself.
    async fn paced_to(
        addr: SocketAddr,
        rate: f64,
        ms: u64,
        (slots, streams): (usize, usize),
        timeout_ms: u64,
    ) -> PacedTally {
        let schedule =
            Schedule::constant(rate, Duration::from_millis(ms), slots).with_streams(streams);
        let wire = Wire::new(Protocol::H2c, &Trust::Any).unwrap();
        on_loop(paced, (addr, wire), schedule, timeout_ms).await
    }

    fn errors(tally: &PacedTally) -> Vec<(String, u64)> {
        tally.corrected.figures().errors.into_iter().collect()
    }

    /// Every request answered and valid, `streams` of them at once on each connection.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn streams_share_connections() {
        let tally = paced_to(
            fake::h2(200, Duration::ZERO, 100, None).await,
            2000.0,
            1000,
            (8, 4),
            5000,
        )
        .await;
        let f = tally.corrected.figures();
        assert_eq!((f.requests, f.success_rate), (2000, 100.0), "{f:?}");
        assert!(f.connects <= 2, "4 slots to a connection: {f:?}");
        let offered: u64 = tally.windows.iter().map(|w| w.corrected.requests()).sum();
        assert_eq!(offered, 2000);
    }

    /// A server that goes away after 10 answers on each connection: the streams past its
    /// GOAWAY go again on a fresh connection, and none fails.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn streams_past_a_goaway_go_again() {
        let tally = paced_to(
            fake::h2(200, Duration::ZERO, 100, Some(10)).await,
            500.0,
            400,
            (4, 4),
            5000,
        )
        .await;
        let f = tally.corrected.figures();
        assert_eq!((f.requests, f.success_rate), (200, 100.0), "{f:?}");
        assert!(f.connects >= 10, "a connection per 10 answers: {f:?}");
    }

    /// A server that takes 2 streams at once under 8 slots: the first streams, sent before
    /// its SETTINGS came, are refused and go again; after, the rest wait for room. None fails,
    /// all on one connection.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_servers_stream_limit_is_kept() {
        let server = fake::h2(200, Duration::from_millis(20), 2, None).await;
        let tally = paced_to(server, 400.0, 500, (8, 8), 5000).await;
        let f = tally.corrected.figures();
        assert_eq!((f.requests, f.success_rate), (200, 100.0), "{f:?}");
        assert_eq!(f.connects, 1, "{f:?}");
        assert!(
            tally.busy_max > 2,
            "requests held for room: {}",
            tally.busy_max
        );
    }

    /// An answer's status is checked.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wrong_status_is_invalid() {
        let tally = paced_to(
            fake::h2(404, Duration::ZERO, 100, None).await,
            200.0,
            200,
            (2, 2),
            5000,
        )
        .await;
        assert_eq!(errors(&tally), [("status".to_owned(), 40)]);
    }

    /// A server that never answers: each request times out; nothing listening: each fails
    /// to connect.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unanswered_and_refused_requests_fail() {
        let began = Instant::now();
        let tally = paced_to(fake::silent().await, 100.0, 200, (30, 10), 100).await;
        assert_eq!(errors(&tally), [("timeout".to_owned(), 20)]);
        assert!(began.elapsed() < Duration::from_secs(2));
        let tally = paced_to(fake::refusing(), 100.0, 200, (4, 2), 5000).await;
        assert_eq!(errors(&tally), [("connect".to_owned(), 20)]);
    }
}
