//! Each server in-process on an ephemeral port at delay 0, one request per iteration: over
//! one keep-alive connection (the server's request path plus loopback I/O), and over a fresh
//! connection each time (adding accept, connection set-up and teardown).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use greet_benches::{Client, CLOSE_REQUEST, KEEP_ALIVE_REQUEST};
use greet_conformance::spawn::{spawn, Run, Spawned};
use greet_server::ServerConfig;

fn servers() -> Vec<(&'static str, Spawned)> {
    let config = ServerConfig {
        port: 0,
        delay_ms: 0,
        workers: 1.try_into().expect("non-zero"),
        shutdown_timeout_secs: 1,
        ..ServerConfig::default()
    };
    let start = |run: Run| spawn(run, config.clone()).expect("server starts");
    macro_rules! start_all {
        ($($short:ident => $run:path,)*) => {
            vec![$((stringify!($short), start($run)),)*]
        };
    }
    greet_conformance::for_each_server!(start_all)
}

fn roundtrip(c: &mut Criterion) {
    let servers = servers();

    let mut group = c.benchmark_group("roundtrip/keep-alive");
    group.measurement_time(Duration::from_secs(3));
    for (name, server) in &servers {
        let mut client = Client::connect(server.addr()).expect("connect");
        group.bench_function(*name, |b| {
            b.iter(|| assert_eq!(client.request(KEEP_ALIVE_REQUEST).expect("response"), 200));
        });
    }
    group.finish();

    let mut group = c.benchmark_group("roundtrip/fresh-connection");
    group.measurement_time(Duration::from_secs(3));
    for (name, server) in &servers {
        let addr = server.addr();
        group.bench_function(*name, |b| {
            b.iter(|| {
                let mut client = Client::connect(addr).expect("connect");
                assert_eq!(client.request(CLOSE_REQUEST).expect("response"), 200);
            });
        });
    }
    group.finish();
}

criterion_group!(benches, roundtrip);
criterion_main!(benches);
