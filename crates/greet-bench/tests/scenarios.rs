//! The loops, soak, sweep and all scenarios end to end, each at its `--quick` size against
//! the real server binaries, and their bad flags.

mod common;

use std::process::Output;

use common::{assert_balanced, assert_one_line_error, bench, json, out_dir};
use serde_json::Value;

const SERVERS: [&str; 3] = ["greet-axum", "greet-actix", "greet-hyper"];

/// Runs a scenario into a fresh directory; its stdout, results.json and report.html.
fn scenario(name: &str, args: &[&str]) -> (String, Value, String) {
    let out = out_dir(name);
    let mut all = args.to_vec();
    all.extend([
        "--quick",
        "--quiet",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    let run: Output = bench(&all);
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "{args:?}\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let results = json(&out.join("results.json"));
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    for svg in html.split("<svg ").skip(1) {
        let svg = svg.split("</svg>").next().expect("split");
        assert_balanced(&format!("<svg {svg}</svg>"), "chart in report.html");
    }
    let _ = std::fs::remove_dir_all(&out);
    (stdout, results, html)
}

fn f(value: &Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

fn u(value: &Value) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("not a count: {value}"))
}

/// A keep-alive run: every request answered and validated, a throughput, a latency.
fn assert_clean_run(run: &Value, what: &str) {
    assert!(u(&run["requests"]) > 0, "{what}: {run}");
    assert_eq!(f(&run["success_rate"]), 100.0, "{what}: {run}");
    assert!(f(&run["requests_per_s"]) > 0.0, "{what}: {run}");
    assert!(f(&run["average_ms"]) > 0.0, "{what}: {run}");
    assert!(
        f(&run["p99_ms"]) >= f(&run["average_ms"]) * 0.5,
        "{what}: {run}"
    );
    assert!(u(&run["connects"]) >= 1, "{what}: {run}");
    assert!(f(&run["cpu_avg_pct"]) >= 0.0, "{what}: {run}");
}

/// A summary's median sits inside its range.
fn assert_summary(s: &Value, what: &str) {
    let (min, median, max) = (f(&s["min"]), f(&s["median"]), f(&s["max"]));
    assert!(0.0 < min && min <= median && median <= max, "{what}: {s}");
    assert!(min <= f(&s["mean"]) && f(&s["mean"]) <= max, "{what}: {s}");
}

/// A comparison carries the test's figures and one of its three verdicts.
fn assert_comparison(c: &Value, runs: u64) {
    let p = f(&c["p_value"]);
    assert!((0.0..=1.0).contains(&p), "{c}");
    assert!(f(&c["ratio"]) > 0.0, "{c}");
    assert_eq!(c["n"], serde_json::json!([runs, runs]), "{c}");
    let verdict = c["verdict"].as_str().expect("verdict");
    assert!(
        ["different", "within_noise", "too_few_runs"].contains(&verdict),
        "{c}"
    );
    if runs < 4 {
        // A rank test on 3 runs a side cannot reach p < 0.05: never a winner.
        assert_eq!(verdict, "too_few_runs", "{c}");
    }
}

#[test]
fn loops_quick_measures_every_shape_on_every_server() {
    let (stdout, results, html) = scenario("loops", &["loops"]);
    assert!(results.get("soak").is_none() && results.get("sweep").is_none());
    assert_eq!(results["meta"]["scenarios"], serde_json::json!(["loops"]));
    let loops = &results["loops"];
    assert_eq!(u(&loops["repeats"]), 3);
    assert_eq!(u(&loops["delay_ms"]), 0);
    let shapes = loops["shapes"].as_array().expect("shapes");
    assert_eq!(shapes.len(), 2);
    for shape in shapes {
        let (users, each) = (u(&shape["users"]), u(&shape["loops"]));
        let servers = shape["servers"].as_array().expect("servers");
        let names: Vec<_> = servers
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, SERVERS);
        for server in servers {
            let runs = server["runs"].as_array().expect("runs");
            assert_eq!(runs.len(), 3);
            for run in runs {
                assert_clean_run(run, "loops");
                assert_eq!(u(&run["requests"]), users * each, "{run}");
                // Keep-alive: one connection per user.
                assert_eq!(u(&run["connects"]), users, "{run}");
            }
            assert_summary(&server["requests_per_s"], "loops");
        }
        let comparisons = shape["comparisons"].as_array().expect("comparisons");
        assert_eq!(comparisons.len(), 3, "every pair");
        for c in comparisons {
            assert_comparison(c, 3);
        }
    }
    assert!(stdout.contains("Application | first | second | third | average | median"));
    assert!(stdout.contains("too few runs to tell"));
    assert!(html.contains("id=\"loops\"") && html.contains("<svg "));
    assert!(
        html.contains("Mann-Whitney"),
        "the report says how servers are compared"
    );
}

#[test]
fn soak_quick_counts_threads_on_both_endpoints() {
    let (stdout, results, html) = scenario("soak", &["soak"]);
    let soak = &results["soak"];
    assert_eq!(f(&soak["duration_s"]), 0.3);
    let cells = soak["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 3 * 2 * 2, "servers x endpoints x levels");
    for cell in cells {
        let what = format!(
            "{} {} c={}",
            cell["server"], cell["endpoint"], cell["concurrency"]
        );
        assert!(u(&cell["hits"]) > 0, "{what}");
        assert_eq!(f(&cell["success_rate"]), 100.0, "{what}");
        assert_summary(&cell["requests_per_s"], &what);
        assert!(f(&cell["average_s"]) > 0.0, "{what}");
        let start = u(&cell["threads_at_start"]);
        let (live, peak, total) = (
            u(&cell["threads_live"]),
            u(&cell["threads_peak"]),
            u(&cell["threads_total"]),
        );
        assert!(start >= 1 && live >= 1, "{what}");
        assert!(
            peak >= live && total >= peak,
            "{what}: {live} {peak} {total}"
        );
        assert!(f(&cell["cpu_avg_pct"]) > 0.0, "{what}");
        assert!(f(&cell["max_rss_mib"]) > 0.0, "{what}");
        for run in cell["runs"].as_array().expect("runs") {
            assert_clean_run(run, &what);
        }
        if cell["endpoint"] == "/greetings/blocking" {
            // Each blocking request holds a pool thread: the pool has grown past start-up.
            assert!(total > start, "{what}: {start} -> {total}");
        }
    }
    // One run per level: comparisons are recorded, and none can be a verdict.
    for c in soak["comparisons"].as_array().expect("comparisons") {
        assert_eq!(c["verdict"], "too_few_runs", "{c}");
    }
    assert!(stdout.contains("Threads at start | Live | Peak | Total started"));
    assert!(stdout.contains("/greetings/blocking: requests/sec, average seconds"));
    assert!(html.contains("id=\"soak\"") && html.matches("<svg ").count() == 2);
}

#[test]
fn sweep_quick_finds_a_best_setting_per_server_and_endpoint() {
    let (stdout, results, html) = scenario("sweep", &["sweep"]);
    let sweep = &results["sweep"];
    assert_eq!(sweep["workers"], serde_json::json!([1, 2]));
    let default_workers = u(&sweep["default"]["workers"]);
    let cells = sweep["cells"].as_array().expect("cells");
    assert!(
        cells
            .iter()
            .any(|c| u(&c["setting"]["workers"]) == default_workers),
        "the default setting is always measured"
    );
    // Per server: /health and /greetings at 2 worker counts, /greetings/blocking at 2 x 1.
    assert_eq!(cells.len(), 3 * (2 + 2 + 2));
    for cell in cells {
        let runs = cell["runs"].as_array().expect("runs");
        assert_eq!(runs.len(), 2, "{cell}");
        for run in runs {
            assert_clean_run(run, "sweep");
        }
        assert_summary(&cell["requests_per_s"], "sweep");
    }
    let best = sweep["best"].as_array().expect("best");
    assert_eq!(best.len(), 3 * 3, "servers x endpoints");
    for b in best {
        let (top, base) = (f(&b["requests_per_s"]), f(&b["default_requests_per_s"]));
        assert!(top >= base && base > 0.0, "{b}");
        assert!((f(&b["gain"]) - top / base).abs() < 1e-9, "{b}");
        let same = cells
            .iter()
            .filter(|c| c["server"] == b["server"] && c["endpoint"] == b["endpoint"]);
        let highest = same
            .map(|c| f(&c["requests_per_s"]["median"]))
            .fold(0.0, f64::max);
        assert_eq!(top, highest, "{b}");
        assert_comparison(&b["comparison"], 2);
    }
    assert!(stdout.contains("Best setting") && stdout.contains("--workers"));
    assert!(html.contains("id=\"sweep\"") && html.matches("<svg ").count() == 3);
}

#[test]
fn all_quick_runs_every_scenario_into_one_report() {
    let (stdout, results, html) = scenario("all", &["all", "--servers", "hyper"]);
    assert_eq!(
        results["meta"]["scenarios"],
        serde_json::json!(["ladder", "loops", "soak", "sweep"])
    );
    assert_eq!(results["servers"][0]["name"], "greet-hyper");
    assert_eq!(
        results["servers"][0]["runs"].as_array().map(Vec::len),
        Some(2)
    );
    for key in ["loops", "soak", "sweep"] {
        assert!(results[key].is_object(), "{key}");
    }
    for id in ["ladder", "loops", "soak", "sweep"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(stdout.contains("Application | numRequests") && stdout.contains("Best setting"));
}

#[test]
fn bad_scenarios_and_settings_are_one_line_errors() {
    for args in [
        &["soak", "--duration", "0s"][..],
        &["sweep", "--workers", ""],
        &["sweep", "--blocking-threads", ","],
        &["loops", "--shapes", "100"],
        &["loops", "--shapes", ""],
    ] {
        assert_one_line_error(args);
    }
    let unknown = assert_one_line_error(&["frobnicate"]);
    assert!(
        unknown.contains("unknown scenario \"frobnicate\""),
        "{unknown}"
    );
    let zero = assert_one_line_error(&["soak", "--duration", "0"]);
    assert!(zero.contains("more than zero"), "{zero}");
}
