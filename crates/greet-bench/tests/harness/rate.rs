//! The rate scenario end to end at its `--quick` size against the real server binaries:
//! fixed rates as fractions of each capacity, CPU per request at each, and the levels over
//! capacity or beyond what the load generator can send.

use crate::scenarios::scenario;
use greet_model::plan::Metric;
use greet_model::results::Mark;
use greet_stats::paired::Figure;

#[test]
fn rate_quick_measures_latency_at_fractions_of_each_capacity() {
    let (stdout, results, html) = scenario("rate", &["rate"]);
    let rate = results.sections.rate.expect("rate");
    assert!(rate.frame.failures.is_empty(), "{:?}", rate.frame.failures);
    assert_eq!(rate.servers.len(), 3);
    for server in &rate.servers {
        let what = &server.server;
        assert!(server.capacity_rps > 0.0, "{what}");
        assert!(server.probe_client_cpu_pct > 0.0, "{what}");
        // The same rates for every server: fractions of the lowest capacity, named in the label.
        let lowest = rate
            .servers
            .iter()
            .map(|s| s.capacity_rps)
            .fold(f64::INFINITY, f64::min);
        let labels: Vec<_> = server.levels.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(labels.len(), 3, "{what}: {labels:?}");
        for (label, percent) in labels.iter().zip(["25% (", "75% (", "110% ("]) {
            assert!(label.starts_with(percent), "{what}: {labels:?}");
        }
        for level in &server.levels {
            let percent = level.label.split('%').next().unwrap();
            let expected = lowest * percent.parse::<f64>().unwrap() / 100.0;
            assert!(
                (level.target_rps - expected).abs() < 1e-6,
                "{what}: {level:?}"
            );
            if level.refused.is_some() {
                continue;
            }
            assert!(
                level.requests > 0 && level.achieved_rps > 0.0,
                "{what}: {level:?}"
            );
            assert_eq!(
                level.over_capacity,
                level.achieved_rps < 0.95 * level.target_rps,
                "{what}: {level:?}"
            );
            let l = &level.latency_ms;
            assert!(
                l.p50 <= l.p90
                    && l.p90 <= l.p99
                    && l.p99 <= l.p999
                    && l.p999 <= l.p9999
                    && l.p9999 <= l.max,
                "{what}: {l:?}"
            );
            // Counted from the intended send, never from a later one.
            assert!(
                l.p50 + 1e-9 >= level.service_ms.p50 * 0.999,
                "{what}: {level:?}"
            );
            assert_eq!(level.distribution.len(), 11, "{what}");
            assert_eq!(level.distribution.last().map(|p| p[0]), Some(100.0));
            assert_eq!(level.runs.len(), 1);
            assert!(
                level.client_cpu_pct > 0.0,
                "the load generator's CPU is reported"
            );
            // The server's CPU per request, at a fixed rate: a few µs on loopback, never
            // zero, never a millisecond.
            let us = level.server_us_per_request().expect("CPU per request");
            assert!(us > 0.1 && us < 1000.0, "{what} {}: {us} µs", level.label);
            let machine = level.machine().expect("the machine is sampled");
            assert!(machine.busy_pct > 0.0, "{machine:?}");
            assert!(machine.others_pct.is_some(), "{machine:?}");
        }
    }
    let cpu = rate
        .comparisons
        .iter()
        .filter(|c| c.figure == Figure::ServerUsPerRequest)
        .count();
    assert!(cpu >= 3, "CPU per request compared at each shared level");
    // One block: every verdict of the scorecard is "undecided", and it says so.
    let rows: Vec<_> = results
        .scorecard
        .rows
        .iter()
        .filter(|r| r.metric == Metric::CpuPerRequest)
        .collect();
    assert!(!rows.is_empty(), "{:?}", results.scorecard);
    assert!(
        rows.iter()
            .flat_map(|r| &r.cells)
            .all(|c| c.mark == Mark::Undecided && c.share > 0.0 && c.share <= 1.0),
        "{rows:#?}"
    );
    assert!(
        results
            .scorecard
            .words
            .iter()
            .any(|w| w.contains("--repeats")),
        "{:?}",
        results.scorecard.words
    );
    assert!(stdout.contains("Server µs/req") && stdout.contains("Steal(%)"));
    assert!(stdout.contains("Highest rate, p99 <= 1 ms") && stdout.contains("p99.99"));
    assert!(html.contains("id=\"rate\""));
    assert_eq!(
        html.matches("<svg ").count(),
        1 + 3,
        "one latency-throughput chart, one distribution per server"
    );
    assert!(html.contains("<polyline "), "lines drawn");
}

#[test]
fn rates_over_capacity_are_marked_and_rates_the_client_cannot_send_are_refused() {
    // Each request waits 50 ms and 16 connections carry one each: 320 a second at most. The
    // over-capacity level asks three times that: the client's probe (2-3 % of a CPU for
    // 320/s in a debug build) puts what it can send near 7,700/s, and a level above that
    // would be refused, so 1000/s stays clear of it even when parallel tests slow the probe.
    let (_, results, _) = scenario(
        "rate-over",
        &[
            "rate",
            "--servers",
            "hyper",
            "--delay-ms",
            "50",
            "--connections",
            "16",
            "--rates",
            "100,1000,10m",
            "--duration",
            "1s",
        ],
    );
    let rate = results.sections.rate.expect("rate");
    let levels = &rate.servers[0].levels;
    assert_eq!(levels.len(), 3);
    let (held, over, refused) = (&levels[0], &levels[1], &levels[2]);
    assert!(!held.over_capacity && held.refused.is_none(), "{held:?}");
    assert!((held.achieved_rps - 100.0).abs() < 10.0, "{held:?}");
    assert!(
        held.latency_ms.p50 >= 50.0 && held.latency_ms.p50 < 60.0,
        "{held:?}"
    );
    assert!(over.over_capacity, "{over:?}");
    assert!(
        over.achieved_rps < 400.0 && over.achieved_rps > 200.0,
        "{over:?}"
    );
    assert_eq!(
        over.requests, 1000,
        "every request due was sent, late, and counted"
    );
    assert!(over.late > 600, "{over:?}");
    assert!(
        over.latency_ms.p99 > 1000.0,
        "the queue shows in the corrected latency: {over:?}"
    );
    let why = refused.refused.as_deref().expect("10m/s refused");
    assert!(
        why.contains("more than the load generator can send"),
        "{why}"
    );
    assert_eq!(refused.requests, 0);
}
