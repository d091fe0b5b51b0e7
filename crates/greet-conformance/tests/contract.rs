//! The contract suite: every case of `greet_conformance::cases`, once per server, each
//! against a fresh in-process server on an ephemeral port.

use greet_conformance::cases::{self, Outcome};
use greet_conformance::spawn::{quick, spawn, Spawned};
use greet_server::ServerConfig;

fn ok(outcome: Outcome) {
    if let Err(why) = outcome {
        panic!("{why:#}");
    }
}

macro_rules! quick_case_tests {
    ($($case:ident,)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let server = super::start(greet_conformance::spawn::quick());
                super::ok(cases::$case(server.addr()).await);
            }
        )*
    };
}

macro_rules! server_tests {
    ($($server:ident => $run:path,)*) => {
        $(
            mod $server {
                use super::*;

                fn start(config: ServerConfig) -> Spawned {
                    spawn(|listener, config, shutdown| $run(listener, config, shutdown), config)
                        .expect("server starts")
                }

                mod quick {
                    use super::*;
                    greet_conformance::for_each_case!(quick_case_tests);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn slow_head_is_cut() {
                    let server = start(quick());
                    ok(cases::slow_head_is_cut(server.addr()).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn delay_does_not_block() {
                    let server = start(ServerConfig { delay_ms: 1000, ..quick() });
                    ok(cases::delay_does_not_block(server.addr()).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn blocking_pool_is_bounded() {
                    let config = ServerConfig {
                        delay_ms: 1000,
                        blocking_threads: 100.try_into().expect("non-zero"),
                        ..quick()
                    };
                    let server = start(config);
                    ok(cases::blocking_pool_is_bounded(server.addr()).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn compression_follows_accept_encoding() {
                    let server = start(quick());
                    ok(cases::compression_follows_accept_encoding(server.addr()).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn compression_off_sends_as_is() {
                    let server = start(ServerConfig { compression: false, ..quick() });
                    ok(cases::compression_off_sends_as_is(server.addr()).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn upload_counts_and_checksums() {
                    let server = start(quick());
                    ok(cases::upload_counts_and_checksums(server.addr()).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn upload_refuses_over_the_limit() {
                    const MAX: usize = 256 << 10;
                    let server = start(ServerConfig { max_upload: MAX as u64, ..quick() });
                    ok(cases::upload_refuses_over_the_limit(server.addr(), MAX).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn upload_refuses_over_http2() {
                    const MAX: usize = 256 << 10;
                    let server = start(ServerConfig { max_upload: MAX as u64, ..quick() });
                    ok(cases::upload_refuses_over_http2(server.addr(), MAX).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn upload_stall_is_cut() {
                    let server = start(quick());
                    ok(cases::upload_stall_is_cut(server.addr()).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn static_files_are_served() {
                    let server = start(quick());
                    ok(cases::static_files_are_served(server.addr()).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn static_files_stay_inside() {
                    let fixture = cases::static_fixture().expect("a static directory");
                    let config = ServerConfig { static_dir: Some(fixture.join("site")), ..quick() };
                    let server = start(config);
                    let outcome = cases::static_files_stay_inside(server.addr()).await;
                    drop(server);
                    let _ = std::fs::remove_dir_all(&fixture);
                    ok(outcome);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn ws_echoes() {
                    let server = start(quick());
                    ok(cases::ws_echoes(server.addr()).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn ws_closes_on_bad_messages() {
                    let server = start(quick());
                    ok(cases::ws_closes_on_bad_messages(server.addr()).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn ws_idle_is_closed() {
                    let server = start(quick());
                    ok(cases::ws_idle_is_closed(server.addr()).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn ws_goes_away_on_shutdown() {
                    let server = start(quick());
                    let addr = server.addr();
                    ok(cases::ws_goes_away_on_shutdown(addr, move || drop(server)).await);
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn check_passes() {
                    let server = start(quick());
                    greet_conformance::check(&server.base_url()).await.expect("check passes");
                }
            }
        )*
    };
}

greet_conformance::for_each_server!(server_tests);
