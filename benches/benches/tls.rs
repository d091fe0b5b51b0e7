//! TLS handshakes in memory: the client the load generator uses and the server configuration
//! the servers use, one thread, records passed in buffers with no socket. What a core can do
//! at most, beside which the ladder's server CPU per connection over TLS (and the load
//! generator's) reads as the handshake itself or as overhead around it: a full handshake as
//! every fresh connection of the ladder makes, and one resuming a TLS 1.3 session
//! (`--tls-resume`).

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use greet_probe::tls::{client_config, Trust};
use greet_server::tls::Tls;
use rustls::client::Resumption;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, ServerConfig, ServerConnection};

/// Moves every record `from` has to send into `to`.
fn pass(from: &mut dyn FnMut(&mut Vec<u8>) -> bool, to: &mut dyn FnMut(&[u8])) {
    let mut records = Vec::new();
    while from(&mut records) {}
    if !records.is_empty() {
        to(&records);
    }
}

/// One handshake to its end, then the server's session tickets read, as a client reads
/// them with the answer.
fn handshake(client: &Arc<ClientConfig>, server: &Arc<ServerConfig>) -> bool {
    let name = ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into());
    let mut c = ClientConnection::new(Arc::clone(client), name).expect("client");
    let mut s = ServerConnection::new(Arc::clone(server)).expect("server");
    for _ in 0..4 {
        pass(
            &mut |out| c.wants_write() && c.write_tls(out).expect("client writes") > 0,
            &mut |records| {
                s.read_tls(&mut &records[..]).expect("server reads");
                s.process_new_packets().expect("server handshakes");
            },
        );
        pass(
            &mut |out| s.wants_write() && s.write_tls(out).expect("server writes") > 0,
            &mut |records| {
                c.read_tls(&mut &records[..]).expect("client reads");
                c.process_new_packets().expect("client handshakes");
            },
        );
    }
    assert!(
        !c.is_handshaking() && !s.is_handshaking(),
        "the handshake ends"
    );
    c.handshake_kind() == Some(rustls::HandshakeKind::Resumed)
}

fn handshakes(c: &mut Criterion) {
    let tls = Tls::self_signed().expect("a certificate");
    let trust = Trust::Certificate(tls.certificate.clone());
    let base = client_config(&trust, &[b"http/1.1"]).expect("client configuration");
    let config = |resumption: Resumption| {
        let mut config = (*base).clone();
        config.resumption = resumption;
        Arc::new(config)
    };
    let full = config(Resumption::disabled());
    let resuming = config(Resumption::default());
    // The servers send two tickets a handshake into a cache of 256, and a resumption takes
    // one out: a cache that grows until it evicts tickets the client still holds. One ticket a
    // handshake keeps it from growing.
    let mut one_ticket = (*tls.config).clone();
    one_ticket.send_tls13_tickets = 1;
    let one_ticket = Arc::new(one_ticket);
    handshake(&resuming, &one_ticket);
    assert!(handshake(&resuming, &one_ticket), "the second resumes");

    let mut group = c.benchmark_group("tls/handshake, client and server");
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("full", |b| {
        b.iter(|| assert!(!handshake(&full, &tls.config)));
    });
    let (mut tried, mut resumed) = (0u64, 0u64);
    group.bench_function("resumed", |b| {
        b.iter(|| {
            tried += 1;
            resumed += u64::from(handshake(&resuming, &one_ticket));
        });
    });
    group.finish();
    // A ticket the client holds is now and then no longer in the server's cache, and that
    // handshake is full: the share says how much of the figure is resumptions.
    println!("tls/handshake/resumed: {resumed} of {tried} handshakes resumed");
}

criterion_group!(benches, handshakes);
criterion_main!(benches);
