//! Open-loop load: requests on a schedule (a constant rate or a ramp), each timed from its
//! intended send, counted in all and per second of the schedule.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod event;
mod frames;
mod hpack;
mod http1;
mod http2;
mod stream;

use crate::conn::{Connection, Shared};
use crate::count::{ErrorKind, Outcome, Tally};
use crate::figures::rate;
use crate::schedule::Schedule;
use crate::work::Load;
use crate::workers::caught;

/// A request sent this long after its intended time counts as late: the client could not
/// send it on time (every connection busy, or the client itself behind).
pub const LATE: Duration = Duration::from_millis(1);

/// The schedule's shortest sleep: past 10,000 requests a second they are sent in batches.
const SLEEP_AT_LEAST: Duration = Duration::from_micros(100);

/// The length of a [`Window`]: a quarter second, fine enough that a stall of the machine
/// breaks one or two of a level's windows while a queue building in the server breaks every
/// one after it; four make a second ([`PacedTally::seconds`]).
pub const WINDOW: Duration = Duration::from_millis(250);

/// What an open-loop load did.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
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
    /// How late the client itself sent each request: from the later of its intended time and
    /// the moment the slot it went on was free, to its send. The rest of its lag was spent
    /// waiting for a slot, on the server.
    #[serde(default)]
    pub own_lag: Tally,
    /// Most requests in flight at once: connections busy over HTTP/1.1, streams (and
    /// requests held for one) over HTTP/2.
    pub busy_max: usize,
    /// The first intended send to the last answer.
    pub span: Duration,
    /// Each [`WINDOW`] of the schedule, from its start: a level's or a ramp's time series.
    #[serde(default)]
    pub windows: Vec<Window>,
}

/// One [`WINDOW`] of an open-loop load.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Window {
    /// The requests intended in this window, their latency from the intended send: how many
    /// were offered, and how they fared.
    pub corrected: Tally,
    /// Of those, sent [`LATE`] or later.
    pub late: u64,
    /// The same requests' latency less the client's own lateness ([`PacedTally::own_lag`]):
    /// from when a slot was free for each, the part of the corrected latency that is the
    /// server's (its answer, and the wait for a connection it had not yet freed).
    #[serde(default)]
    pub charged: Tally,
    /// Requests answered (or failed) in this window, whenever they were due: the rate the
    /// server achieved.
    pub completed: u64,
}

impl Window {
    fn merge(&mut self, other: &Window) {
        self.corrected.merge(&other.corrected);
        self.charged.merge(&other.charged);
        self.late += other.late;
        self.completed += other.completed;
    }
}

/// Merges `from` into `into`, window by window.
pub(crate) fn merge_windows(into: &mut Vec<Window>, from: &[Window]) {
    if into.len() < from.len() {
        into.resize_with(from.len(), Window::default);
    }
    for (a, b) in into.iter_mut().zip(from) {
        a.merge(b);
    }
}

/// The window `at` falls in, made when it is the first of it.
fn window(windows: &mut Vec<Window>, at: Duration) -> &mut Window {
    let i = (at.as_nanos() / WINDOW.as_nanos()) as usize;
    if windows.len() <= i {
        windows.resize_with(i + 1, Window::default);
    }
    &mut windows[i]
}

impl PacedTally {
    /// Counts one request of a schedule that started at `start`: due at `intended`, sent at
    /// `sent`, answered (or failed) at `now`; `own` of its lag was the client's own.
    fn count(
        &mut self,
        start: Instant,
        [intended, sent, now]: [Instant; 3],
        own: Duration,
        attempt: Outcome,
    ) {
        let lag = sent.saturating_duration_since(intended);
        let waited = |latency| Outcome::Ok {
            latency,
            connect: None,
            bytes: 0,
        };
        self.lag.push(waited(lag));
        self.own_lag.push(waited(own));
        let late = lag >= LATE;
        self.late += u64::from(late);
        if let Outcome::Ok { bytes, .. } = attempt {
            self.service.push(Outcome::Ok {
                latency: now.saturating_duration_since(sent),
                connect: None,
                bytes,
            });
        }
        self.corrected.push(attempt);
        let due = window(&mut self.windows, intended.saturating_duration_since(start));
        due.corrected.push(attempt);
        due.charged.push(match attempt {
            Outcome::Ok {
                latency,
                connect,
                bytes,
            } => Outcome::Ok {
                latency: latency.saturating_sub(own),
                connect,
                bytes,
            },
            failed => failed,
        });
        due.late += u64::from(late);
        window(&mut self.windows, now.saturating_duration_since(start)).completed += 1;
    }

    /// Adds another load's requests (repeats of one level).
    pub fn merge(&mut self, other: &PacedTally) {
        self.corrected.merge(&other.corrected);
        self.service.merge(&other.service);
        self.lag.merge(&other.lag);
        self.own_lag.merge(&other.own_lag);
        self.late += other.late;
        self.busy_max = self.busy_max.max(other.busy_max);
        self.span += other.span;
        self.corrected.elapsed += other.corrected.elapsed;
        merge_windows(&mut self.windows, &other.windows);
    }

    /// Its windows merged second by second: a ramp's time series as tables and charts show it.
    pub fn seconds(&self) -> Vec<Window> {
        let per_second = (Duration::from_secs(1).as_nanos() / WINDOW.as_nanos()) as usize;
        self.windows
            .chunks(per_second)
            .map(|quarters| {
                let mut second = Window::default();
                quarters.iter().for_each(|q| second.merge(q));
                second
            })
            .collect()
    }

    /// Requests answered (or failed) per second of the load: what the server let through.
    pub fn achieved_rate(&self) -> f64 {
        rate(self.corrected.requests(), self.span.as_secs_f64())
    }
}

/// Runs `load` on `schedule`, open loop; `done` is bumped after each request. On one thread
/// of its own around one epoll ([`event`]), with an engine per protocol ([`http1::paced`],
/// [`http2::paced`]), in cleartext or over TLS; where that loop cannot run (or a body goes
/// over HTTP/2), as [`tasks`]. A
/// request that finds no free connection waits for one and is sent late, counted; none is
/// dropped.
pub(crate) async fn paced(load: &Load, schedule: &Schedule, done: Arc<AtomicUsize>) -> PacedTally {
    let (looped, shared) = (load.clone(), schedule.clone());
    let counted = Arc::clone(&done);
    if load.wire.protocol.http2() && load.body.is_some() {
        // The h2c loop's own framing sends no DATA (a body would need its flow control).
        return tasks(load, schedule, done).await;
    }
    let looped = tokio::task::spawn_blocking(move || {
        if looped.wire.protocol.http2() {
            http2::paced(&looped, &shared, &counted)
        } else {
            http1::paced(&looped, &shared, &counted)
        }
    });
    match looped.await {
        Ok(Ok(tally)) => tally,
        // No epoll or timer for it (a sandbox that forbids them): the tasks below.
        Ok(Err(_)) => tasks(load, schedule, done).await,
        Err(_) => {
            let mut tally = PacedTally::default();
            tally.corrected.push(Outcome::PANICKED);
            tally
        }
    }
}

/// [`paced`] where the event loop cannot run: a task per connection, or over HTTP/2 per
/// stream, `schedule.streams` of them to a connection. A thread of its own keeps the schedule: it hands each request's intended time
/// to whichever connection is free, sleeping between sends with the kernel's timer slack set
/// to 1 µs (nanosleep otherwise overshoots by 50–70 µs here, and tokio's timers by up to a
/// millisecond — the error both anchors carry into every corrected latency).
async fn tasks(load: &Load, schedule: &Schedule, done: Arc<AtomicUsize>) -> PacedTally {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Instant>();
    let rx = Arc::new(tokio::sync::Mutex::new(rx));
    let busy = Arc::new(AtomicUsize::new(0));
    let busy_max = Arc::new(AtomicUsize::new(0));
    let request = load.request();
    let start = Instant::now() + Duration::from_millis(5);
    let intended = schedule.intended();
    let pacer = std::thread::spawn(move || {
        let _ = nix::sys::prctl::set_timerslack(1);
        for offset in intended {
            let due = start + offset;
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
    let streams = if load.wire.protocol.http2() {
        schedule.streams.max(1)
    } else {
        1
    };
    let mut shared = Arc::<Shared>::default();
    let workers: Vec<_> = (0..schedule.connections.max(1))
        .map(|i| {
            if i % streams == 0 {
                shared = Arc::default();
            }
            let (rx, busy, busy_max, done, request) = (
                Arc::clone(&rx),
                Arc::clone(&busy),
                Arc::clone(&busy_max),
                Arc::clone(&done),
                Arc::clone(&request),
            );
            let (load, shared) = (load.clone(), Arc::clone(&shared));
            tokio::spawn(async move {
                let mut tally = PacedTally::default();
                let mut conn = Connection::sharing(load.addr, &load.wire, shared);
                loop {
                    let intended = match rx.lock().await.recv().await {
                        Some(intended) => intended,
                        None => break,
                    };
                    let now = busy.fetch_add(1, Ordering::Relaxed) + 1;
                    busy_max.fetch_max(now, Ordering::Relaxed);
                    let sent = Instant::now();
                    let send = conn.send(&request, &load.check, load.timeout, sent, intended);
                    let attempt = caught(send).await;
                    if let Outcome::Failed {
                        kind: ErrorKind::Panic,
                        ..
                    } = attempt
                    {
                        conn.close().await;
                    }
                    // Whether a connection was free for it before it was taken is not known
                    // here: the whole lag counts as the server's.
                    let times = [intended, sent, Instant::now()];
                    tally.count(start, times, Duration::ZERO, attempt);
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
    let _ = pacer.join();
    tally.span = start.elapsed();
    tally.corrected.elapsed = tally.span;
    tally.service.elapsed = tally.span;
    tally.busy_max = busy_max.load(Ordering::Relaxed);
    tally
}
