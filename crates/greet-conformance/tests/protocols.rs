//! One contract on every protocol, per server: the cleartext port answers HTTP/1.1 and h2c,
//! the TLS port (a certificate made at start-up, trusted alone) HTTP/1.1 and HTTP/2 by ALPN,
//! and every request of `greet_conformance::protocols::requests` gets the same answer on all
//! four.

use std::time::Duration;

use greet_conformance::protocols::{
    answers_alike, fetch, idle_connection_is_closed, silent_h2c_connection_is_closed,
    streams_answer_together,
};
use greet_conformance::spawn::{quick, spawn, Spawned};
use greet_probe::tls::Trust;
use greet_probe::Protocol;
use greet_server::ServerConfig;

macro_rules! protocol_tests {
    ($($server:ident => $run:path,)*) => {
        $(
            mod $server {
                use super::*;

                fn start(config: ServerConfig) -> Spawned {
                    spawn(|listener, config, shutdown| $run(listener, config, shutdown), config)
                        .expect("server starts")
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn every_protocol_answers_alike() {
                    let plain = start(quick());
                    let tls = start(ServerConfig { tls_self_signed: true, ..quick() });
                    let trust = Trust::Certificate(tls.certificate().expect("TLS").clone());
                    if let Err(why) = answers_alike(plain.addr(), Some((tls.addr(), trust))).await {
                        panic!("{why:#}");
                    }
                }

                /// Pipelining over HTTP/2 is streams: 16 at once on one connection, over
                /// h2c and over TLS.
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn streams_of_one_connection_answer_together() {
                    let plain = start(quick());
                    let tls = start(ServerConfig { tls_self_signed: true, ..quick() });
                    let trust = Trust::Certificate(tls.certificate().expect("TLS").clone());
                    for (addr, protocol, trust) in [
                        (plain.addr(), Protocol::H2c, Trust::Any),
                        (tls.addr(), Protocol::H2, trust),
                    ] {
                        if let Err(why) = streams_answer_together(addr, protocol, &trust).await {
                            panic!("{why:#}");
                        }
                    }
                }

                /// On every protocol a connection is closed about `IDLE_TIMEOUT` after its
                /// last answer, and not while a request is in flight for longer than that:
                /// a greeting delayed past the limit is answered; an h2c client that reads
                /// nothing is closed too. About 12 s.
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn idle_connections_are_closed_on_every_protocol() {
                    let delay = greet_core::limits::IDLE_TIMEOUT + Duration::from_secs(1);
                    let config = |tls_self_signed| ServerConfig {
                        tls_self_signed,
                        delay_ms: delay.as_millis() as u64,
                        ..quick()
                    };
                    let (plain, tls) = (start(config(false)), start(config(true)));
                    let trust = Trust::Certificate(tls.certificate().expect("TLS").clone());
                    let mut checks = tokio::task::JoinSet::new();
                    for protocol in Protocol::ALL {
                        let addr = if protocol.tls() { tls.addr() } else { plain.addr() };
                        for target in ["/health", "/greetings?name=Ana"] {
                            let trust = trust.clone();
                            checks.spawn(async move {
                                let idle = idle_connection_is_closed(addr, protocol, &trust, target)
                                    .await;
                                (protocol, target, idle)
                            });
                        }
                    }
                    let silent = tokio::spawn(silent_h2c_connection_is_closed(plain.addr()));
                    let mut failures = Vec::new();
                    if let Err(why) = silent.await.expect("silent check") {
                        failures.push(format!("{why:#}"));
                    }
                    while let Some(check) = checks.join_next().await {
                        let (protocol, target, idle) = check.expect("check");
                        match idle {
                            Ok(idle) => eprintln!("{protocol} {target}: closed {idle:?} after"),
                            Err(why) => failures.push(format!("{target}: {why:#}")),
                        }
                    }
                    assert!(failures.is_empty(), "{failures:#?}");
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn a_tls_port_speaks_no_cleartext_and_trusts_matter() {
                    let tls = start(ServerConfig { tls_self_signed: true, ..quick() });
                    let err = fetch(tls.addr(), Protocol::Http1, &Trust::Any, "GET", "/health")
                        .await
                        .expect_err("cleartext on a TLS port")
                        .to_string();
                    assert!(err.starts_with("http1 GET /health: "), "{err}");
                    let other = start(ServerConfig { tls_self_signed: true, ..quick() });
                    let stranger = Trust::Certificate(other.certificate().unwrap().clone());
                    let err = fetch(tls.addr(), Protocol::H2, &stranger, "GET", "/health")
                        .await
                        .expect_err("another server's certificate")
                        .to_string();
                    assert!(err.contains("TLS handshake"), "{err}");
                }
            }
        )*
    };
}

greet_conformance::for_each_server!(protocol_tests);
