//! Each framework's request path without a socket, at delay 0: routing, the shared head
//! check, extraction, the core's work and building the response. axum's `Router` through
//! `oneshot`, actix-web's service through `test::init_service`, and hyper's `handle`.

use std::hint::black_box;

use actix_web::test::{call_service, init_service, TestRequest};
use criterion::{criterion_group, criterion_main, Criterion};
use greet_server::ServerConfig;
use tower::ServiceExt;

const TARGET: &str = "/greetings?name=Ana";

fn handler(c: &mut Criterion) {
    // One thread, as a single worker would run it; actix-web's services are not Send.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let api = rt
        .block_on(async {
            ServerConfig {
                delay_ms: 0,
                ..ServerConfig::default()
            }
            .api()
        })
        .expect("stores");
    let mut group = c.benchmark_group("handler");

    let router = greet_axum::app(api.clone(), true);
    group.bench_function("axum", |b| {
        b.to_async(&rt).iter(|| {
            let router = router.clone();
            async move {
                let req = axum::http::Request::get(TARGET)
                    .header("host", "bench")
                    .body(axum::body::Body::empty())
                    .expect("request");
                let res = router.oneshot(req).await.expect("infallible");
                assert_eq!(res.status(), 200);
                black_box(res)
            }
        });
    });

    let actix = rt.block_on(init_service(greet_actix::app(api.clone(), true)));
    group.bench_function("actix", |b| {
        b.to_async(&rt).iter(|| async {
            let req = TestRequest::get()
                .uri(TARGET)
                .insert_header(("host", "bench"))
                .to_request();
            let res = call_service(&actix, req).await;
            assert_eq!(res.status(), 200);
            black_box(res)
        });
    });

    group.bench_function("hyper", |b| {
        b.to_async(&rt).iter(|| async {
            let req = hyper::Request::get(TARGET)
                .header("host", "bench")
                .body(http_body_util::Empty::<hyper::body::Bytes>::new())
                .expect("request");
            let res = greet_hyper::handle(&api, req).await;
            assert_eq!(res.status(), 200);
            black_box(res)
        });
    });
    group.finish();
}

criterion_group!(benches, handler);
criterion_main!(benches);
