//! The open loop's event loop, whatever the protocol: one thread, one epoll, a timerfd for
//! the schedule, and an [`Engine`] that owns the connections. First every slot sends one
//! request, uncounted ([`warm`]), so that the schedule finds its connections open; then each
//! wake-up sends every request due by then, lets the engine write what the batch queued, and
//! hands it what epoll saw.

use std::io::ErrorKind as IoKind;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};

use super::{PacedTally, SLEEP_AT_LEAST};
use crate::count::{ErrorKind, Opened, Outcome};
use crate::schedule::Schedule;

/// The timer's token; an engine's connections use the others.
const TIMER: Token = Token(usize::MAX);

/// The longest the loop sleeps: how often it looks for requests past their timeout.
pub(super) const TICK: Duration = Duration::from_millis(10);

/// What one protocol does inside [`drive`]: its connections, each request's slot on them,
/// and what epoll says of them.
pub(super) trait Engine<'a> {
    /// The poll its connections are registered with.
    fn poll(&mut self) -> &mut Poll;
    /// The counts, and the free slots.
    fn slots(&mut self) -> &mut Slots<'a>;
    /// Starts the request due at `intended` on free slot `s`, at `sent`.
    fn send(&mut self, s: usize, intended: Instant, sent: Instant);
    /// The batch of sends is over: write what it queued.
    fn flush(&mut self) {}
    /// Epoll's word on the connection of `token`.
    fn ready(&mut self, token: Token, writable: bool, readable: bool);
    /// Requests past their deadline at `now` fail as timed out.
    fn expire(&mut self, now: Instant);
    /// Every request in flight fails: the loop cannot go on.
    fn abandon(&mut self);
}

/// The slots requests go out on (a connection, or a stream's place on one), and the tally
/// every finished request goes to.
pub(super) struct Slots<'a> {
    free: Vec<usize>,
    /// When each slot was last freed.
    freed: Vec<Instant>,
    /// Of the request on each slot, how late the client itself sent it.
    own: Vec<Duration>,
    busy: usize,
    tally: PacedTally,
    start: Instant,
    /// The warm-up's requests are going: none is counted, only the connections they open.
    warming: bool,
    /// The connections the warm-up opened.
    warmed: Vec<Opened>,
    done: &'a AtomicUsize,
}

impl<'a> Slots<'a> {
    /// `n` free slots; `done` is bumped after each request of the schedule.
    pub(super) fn new(n: usize, done: &'a AtomicUsize) -> Self {
        Self {
            free: (0..n).rev().collect(),
            freed: vec![Instant::now(); n],
            own: vec![Duration::ZERO; n],
            busy: 0,
            tally: PacedTally::default(),
            start: Instant::now(),
            warming: false,
            warmed: Vec::new(),
            done,
        }
    }

    /// A free slot for the request due at `due`, which goes out `now`. The client's own part
    /// of its lateness runs from the later of `due` and the moment the slot was freed: what
    /// came before, it waited on the server.
    fn take(&mut self, due: Instant, now: Instant) -> Option<usize> {
        let s = self.free.pop()?;
        self.busy += 1;
        self.tally.busy_max = self.tally.busy_max.max(self.busy);
        self.own[s] = now.saturating_duration_since(due.max(self.freed[s]));
        Some(s)
    }

    /// Counts the request of slot `s`, due at `intended` and sent at `sent`, and frees the
    /// slot; `connect` is how it opened its connection, when it did.
    pub(super) fn finish(
        &mut self,
        s: usize,
        (intended, sent): (Instant, Instant),
        connect: Option<Opened>,
        result: Result<u64, ErrorKind>,
    ) {
        let now = Instant::now();
        self.busy -= 1;
        self.free.push(s);
        self.freed[s] = now;
        if self.warming {
            self.warmed.extend(connect);
            return;
        }
        let attempt = match result {
            Ok(bytes) => Outcome::Ok {
                latency: now.saturating_duration_since(intended),
                connect,
                bytes,
            },
            Err(kind) => Outcome::Failed { kind, connect },
        };
        self.tally
            .count(self.start, [intended, sent, now], self.own[s], attempt);
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts requests that were never sent as failed.
    fn unsent(&mut self, unsent: impl Iterator<Item = Instant>) {
        for due in unsent {
            let failed = Outcome::Failed {
                kind: ErrorKind::Io,
                connect: None,
            };
            let now = Instant::now();
            let late = now.saturating_duration_since(due);
            self.tally.count(self.start, [due, now, now], late, failed);
            self.done.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Runs `schedule` on `engine`, after [`warm`]: every request is counted once, none
/// dropped. An error is the loop's own (no epoll or timer for it), before any request went.
pub(super) fn drive<'a, E: Engine<'a>>(
    mut engine: E,
    schedule: &Schedule,
) -> std::io::Result<PacedTally> {
    let _ = nix::sys::prctl::set_timerslack(1);
    let timer = TimerFd::new(ClockId::CLOCK_MONOTONIC, TimerFlags::TFD_NONBLOCK)?;
    engine.poll().registry().register(
        &mut SourceFd(&timer.as_fd().as_raw_fd()),
        TIMER,
        Interest::READABLE,
    )?;
    let mut events = Events::with_capacity(1024);
    warm(&mut engine, &mut events);
    let start = Instant::now() + Duration::from_millis(1);
    engine.slots().start = start;
    let mut intended = schedule.intended().map(|at| start + at).peekable();
    // When the timer fires next, if it is armed.
    let mut armed: Option<Instant> = None;
    let mut next_tick = Instant::now() + TICK;
    loop {
        let now = Instant::now();
        let mut sent = false;
        while let Some(&due) = intended.peek() {
            if due > now {
                break;
            }
            let at = Instant::now();
            let Some(s) = engine.slots().take(due, at) else {
                break;
            };
            intended.next();
            engine.send(s, due, at);
            sent = true;
        }
        if sent {
            engine.flush();
        }
        if now >= next_tick {
            engine.expire(now);
            next_tick = now + TICK;
        }
        if intended.peek().is_none() && engine.slots().busy == 0 {
            break;
        }
        // Wake for the next request due (when a slot is free for it), or the tick, from the
        // time the batch above ended. A wake-up under SLEEP_AT_LEAST away sends in a batch,
        // each timed from its own due; one that came due during the batch only looks at what
        // epoll has before it goes.
        let now = Instant::now();
        let next = intended
            .peek()
            .copied()
            .filter(|_| !engine.slots().free.is_empty());
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
        match wait(&mut engine, &mut events, timeout) {
            Ok(true) => {
                let _ = timer.wait();
                armed = None;
            }
            Ok(false) => {}
            Err(_) => {
                // The loop cannot go on: what it was sending, and what it had yet to send,
                // count as failed rather than vanish.
                engine.abandon();
                engine.slots().unsent(intended);
                break;
            }
        }
    }
    let mut tally = std::mem::take(&mut engine.slots().tally);
    tally.span = start.elapsed();
    tally.corrected.elapsed = tally.span;
    tally.service.elapsed = tally.span;
    Ok(tally)
}

/// Sends one request on every slot, uncounted, and waits for them all (each at most the
/// load's timeout): every connection opened, over TLS its handshake done, over HTTP/2 the
/// settings exchanged, as a client that has been running has them. The schedule's first
/// requests would otherwise pay for every connect at once: over TLS, 64 handshakes queued
/// on one core hold the first tens of milliseconds' requests past a 5 ms objective, and a
/// short level fails on its start alone. The connects and handshakes are counted, no
/// request's latency holding them; a connection the warm-up could not open is opened by the
/// first request that needs it.
fn warm<'a, E: Engine<'a>>(engine: &mut E, events: &mut Events) {
    engine.slots().warming = true;
    let now = Instant::now();
    // Every slot once: a send that fails at once (no descriptor left) frees its slot again.
    let all: Vec<usize> = std::iter::from_fn(|| engine.slots().take(now, now)).collect();
    for s in all {
        engine.send(s, now, now);
    }
    engine.flush();
    while engine.slots().busy > 0 {
        if wait(engine, events, Some(TICK)).is_err() {
            engine.abandon();
            break;
        }
        engine.expire(Instant::now());
    }
    let slots = engine.slots();
    slots.warming = false;
    slots.tally = PacedTally::default();
    for opened in std::mem::take(&mut slots.warmed) {
        slots.tally.corrected.opened(opened);
    }
}

/// Waits up to `timeout` for epoll and hands the engine what it saw of its connections;
/// whether the timer fired. An error is the poll's own: the loop cannot go on.
fn wait<'a, E: Engine<'a>>(
    engine: &mut E,
    events: &mut Events,
    timeout: Option<Duration>,
) -> std::io::Result<bool> {
    match engine.poll().poll(events, timeout) {
        Ok(()) => {}
        Err(e) if e.kind() == IoKind::Interrupted => return Ok(false),
        Err(e) => return Err(e),
    }
    let mut fired = false;
    for event in events.iter() {
        match event.token() {
            TIMER => fired = true,
            token => engine.ready(token, event.is_writable(), event.is_readable()),
        }
    }
    Ok(fired)
}

/// What the engines' tests share: `schedule` to `addr` over `wire`, GET `/health`, any 2xx
/// valid, each request timed out after `timeout_ms`, run on `paced` itself (never the tasks
/// [`crate::run`] would fall back to); progress is held to count every request once.
#[cfg(test)]
pub(super) async fn on_loop(
    paced: fn(&crate::work::Load, &Schedule, &AtomicUsize) -> std::io::Result<PacedTally>,
    (addr, wire): (std::net::SocketAddr, crate::conn::Wire),
    schedule: Schedule,
    timeout_ms: u64,
) -> PacedTally {
    use crate::expect::{Check, Expect};
    use std::sync::Arc;

    let load = crate::work::Load {
        wire,
        addr,
        target: "/health".into(),
        headers: Vec::new(),
        body: None,
        check: Check::for_target("/health", &Expect::Any),
        timeout: Duration::from_millis(timeout_ms),
        work: crate::work::Work::Paced(schedule.clone()),
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

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// An engine whose every send fails at once, as a connect does with no descriptor left.
    struct Failing<'a> {
        poll: Poll,
        slots: Slots<'a>,
        sends: &'a Cell<usize>,
    }

    impl<'a> Engine<'a> for Failing<'a> {
        fn poll(&mut self) -> &mut Poll {
            &mut self.poll
        }
        fn slots(&mut self) -> &mut Slots<'a> {
            &mut self.slots
        }
        fn send(&mut self, s: usize, intended: Instant, sent: Instant) {
            self.sends.set(self.sends.get() + 1);
            let failed = Err(ErrorKind::Connect);
            self.slots.finish(s, (intended, sent), None, failed);
        }
        fn ready(&mut self, _: Token, _: bool, _: bool) {}
        fn expire(&mut self, _: Instant) {}
        fn abandon(&mut self) {}
    }

    /// A request's lag is split where its slot came free: before, it waited on the server
    /// (every connection busy with its answers); after, on the client. One due before its
    /// slot came free counts only the time since as the client's own; one due after it, its
    /// whole lag.
    #[test]
    fn the_client_owns_only_the_lag_after_a_slot_came_free() {
        let done = AtomicUsize::new(0);
        let mut slots = Slots::new(1, &done);
        // Two requests due now: the first holds the one slot for 20 ms, the second is taken
        // 5 ms after it came free.
        let due = Instant::now();
        let s = slots.take(due, Instant::now()).expect("a free slot");
        std::thread::sleep(Duration::from_millis(20));
        slots.finish(s, (due, due), None, Ok(0));
        std::thread::sleep(Duration::from_millis(5));
        let lag = due.elapsed();
        let s = slots.take(due, Instant::now()).expect("a free slot");
        let own = slots.own[s];
        assert!(own >= Duration::from_millis(5), "{own:?}");
        assert!(own + Duration::from_millis(20) <= lag, "{own:?} of {lag:?}");
        // Due once it was free again, and taken 10 ms late: all of it.
        slots.finish(s, (due, due), None, Ok(0));
        let late = Instant::now();
        std::thread::sleep(Duration::from_millis(10));
        let s = slots.take(late, Instant::now()).expect("a free slot");
        assert!(
            slots.own[s] >= Duration::from_millis(10),
            "{:?}",
            slots.own[s]
        );
    }

    /// Sends that fail at once free their slot at once: the warm-up still tries each slot
    /// once (it took the same slot again and again, for ever), and every request of the
    /// schedule is counted as failed, once.
    #[test]
    fn sends_that_fail_at_once_neither_spin_nor_vanish() {
        let (done, sends) = (AtomicUsize::new(0), Cell::new(0));
        let engine = Failing {
            poll: Poll::new().expect("epoll"),
            slots: Slots::new(4, &done),
            sends: &sends,
        };
        let schedule = Schedule::constant(1000.0, Duration::from_millis(100), 4);
        let tally = drive(engine, &schedule).expect("the loop runs");
        let errors: Vec<_> = tally.corrected.figures().errors.into_iter().collect();
        assert_eq!(errors, [("connect".to_owned(), 100)]);
        assert_eq!(done.load(Ordering::Relaxed), 100);
        assert_eq!(
            sends.get(),
            4 + 100,
            "the warm-up's four, then the schedule's"
        );
    }
}
