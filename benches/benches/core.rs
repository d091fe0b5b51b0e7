//! The shared core's own work per request: query → name (parse, decode, validate) and the
//! greeting (word choice and formatting). Nothing here touches a socket or a framework.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use greet_core::greeting::greeting;
use greet_core::name::name_from_query;
use greet_core::{check_head, HeadInfo};

fn core(c: &mut Criterion) {
    let long = format!("name={}", "a".repeat(256));
    let mut group = c.benchmark_group("core/name_from_query");
    for (label, query) in [
        ("absent", None),
        ("plain", Some("name=Ana")),
        ("percent-encoded", Some("name=Jo%C3%A3o")),
        ("256 chars", Some(long.as_str())),
    ] {
        group.bench_function(label, |b| b.iter(|| name_from_query(black_box(query))));
    }
    group.finish();

    let mut group = c.benchmark_group("core/greeting");
    group.bench_function("plain", |b| b.iter(|| greeting(black_box("Ana"))));
    let long_name = "a".repeat(256);
    group.bench_function("256 chars", |b| b.iter(|| greeting(black_box(&long_name))));
    group.finish();

    let head = HeadInfo {
        http11: true,
        host_fields: 1,
        target_ascii: true,
        target_len: 24,
        header_count: 4,
        header_bytes: 80,
    };
    c.bench_function("core/check_head", |b| {
        b.iter(|| check_head(black_box(&head)))
    });
}

criterion_group!(benches, core);
criterion_main!(benches);
