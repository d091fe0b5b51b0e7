//! The open-loop load generator against a real server: latency counted from each request's
//! intended send time, so a stall of the server shows in the corrected latencies even though
//! the few requests in flight at the time are all a closed-loop tool would see.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::common::BENCH;
use greet_launch::process::{Launch, ServerProcess, Signal};
use greet_load::{run, Check, Counted, Expect, Load, PacedTally, Schedule, Work};

/// greet-hyper (built beside the harness by `cargo test --workspace`, else the release one),
/// on one worker.
fn hyper(delay_ms: &str) -> ServerProcess {
    let dir = Path::new(BENCH).parent().expect("target dir");
    let debug = dir.join("greet-hyper");
    let bin = if debug.is_file() {
        debug
    } else {
        dir.parent().expect("target").join("release/greet-hyper")
    };
    Launch::new(bin)
        .args(["--delay-ms", delay_ms, "--workers", "1"])
        .start()
        .expect("greet-hyper starts (cargo build -p greet-hyper)")
}

fn level(server: &ServerProcess, rate: f64, seconds: f64, connections: usize) -> Load {
    Load {
        wire: Default::default(),
        addr: server.addr(),
        target: "/greetings".into(),
        headers: Vec::new(),
        body: None,
        check: Check::for_target("/greetings", &Expect::Greeting),
        timeout: Duration::from_secs(10),
        work: Work::Paced(Schedule::constant(
            rate,
            Duration::from_secs_f64(seconds),
            connections,
        )),
    }
}

/// `load`, open loop: its whole count.
async fn paced(load: &Load) -> PacedTally {
    match run(load, Arc::default()).await {
        Counted::Paced(tally) => tally,
        Counted::Closed(_) => panic!("a schedule counts as an open loop"),
    }
}

/// The two loads take turns: each is a timing, and the machine has two cores.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_delay_is_measured_at_a_low_rate() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let server = hyper("5");
    // What the server takes, one request at a time: the 5 ms delay rounded up to the runtime
    // timer's tick (6–7 ms on some machines), plus the exchange.
    let alone = Load {
        work: Work::Sessions {
            users: 1,
            stop: greet_load::Stop::Each(50),
            streams: 1,
            pipeline: 1,
            requests_per_connection: None,
        },
        ..level(&server, 1.0, 1.0, 1)
    };
    let alone = match run(&alone, Arc::default()).await {
        Counted::Closed(tally) => tally.figures().latency_ms.p50,
        Counted::Paced(_) => panic!("sessions count as a closed loop"),
    };
    assert!((5.0..9.0).contains(&alone), "alone p50 {alone} ms");
    let tally = paced(&level(&server, 200.0, 1.0, 8)).await;
    let f = tally.corrected.figures();
    assert_eq!((f.requests, f.success_rate), (200, 100.0), "{f:?}");
    // At 200/s nothing queues: the open loop measures what one request alone takes.
    assert!(
        (f.latency_ms.p50 - alone).abs() < 1.0,
        "p50 {} ms, one at a time {alone} ms",
        f.latency_ms.p50
    );
    // 200/s at 5 ms holds about one connection: a free one is always there (a send can still
    // be late when the machine is busy: that is the client's, and counted).
    assert!(
        tally.busy_max < 8,
        "never every connection busy: {}",
        tally.busy_max
    );
    assert!(
        (tally.achieved_rate() - 200.0).abs() < 20.0,
        "{}",
        tally.achieved_rate()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_shows_in_corrected_latency_and_not_in_service_time() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let server = hyper("0");
    let pid = server.pid();
    // 2000 a second for 3 s on 4 connections: at most 4 requests are in flight when the
    // server stops, 0.07% of the 6000, under the 0.1% that p99.9 would show.
    let load = level(&server, 2000.0, 3.0, 4);
    let stall = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        let stop = |signal| {
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).expect("signal")
        };
        stop(Signal::SIGSTOP);
        std::thread::sleep(Duration::from_millis(300));
        stop(Signal::SIGCONT);
    });
    let tally = paced(&load).await;
    stall.join().expect("stalled and resumed");
    let corrected = tally.corrected.figures();
    let service = tally.service.figures();
    // Every request due, the 600 due during the stall among them, was sent (late) and counted.
    assert_eq!(corrected.requests, 6000, "{corrected:?}");
    assert_eq!(corrected.success_rate, 100.0, "{corrected:?}");
    assert!(
        tally.late >= 500,
        "the stall's requests went out late: {}",
        tally.late
    );
    assert!(
        corrected.latency_ms.p999 >= 250.0,
        "corrected p99.9 shows the stall: {} ms",
        corrected.latency_ms.p999
    );
    assert!(
        service.latency_ms.p999 < 250.0,
        "service times hide it: p99.9 {} ms",
        service.latency_ms.p999
    );
    assert!(
        service.latency_ms.max >= 250.0,
        "the requests in flight did wait it out"
    );
}

/// Over h2c with `streams` slots to a connection, requests in flight share connections: more
/// of them at once than connections were ever opened, every answer valid.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_loop_streams_share_http2_connections() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let server = hyper("50");
    let wire = greet_load::Wire::new(greet_probe::Protocol::H2c, &greet_probe::tls::Trust::Any)
        .expect("h2c needs no TLS");
    // 400/s behind 50 ms holds about 20 requests in flight, over 40 slots, 10 to a connection.
    let load = Load {
        wire,
        work: Work::Paced(Schedule::constant(400.0, Duration::from_secs(1), 40).with_streams(10)),
        ..level(&server, 1.0, 1.0, 1)
    };
    let tally = paced(&load).await;
    let f = tally.corrected.figures();
    assert_eq!((f.requests, f.success_rate), (400, 100.0), "{f:?}");
    assert!(f.connects <= 4, "10 slots to a connection: {f:?}");
    assert!(
        tally.busy_max > 2 * f.connects as usize,
        "streams in flight on shared connections: {} busy, {} connections",
        tally.busy_max,
        f.connects
    );
}
