//! The harness end to end, against the real server binaries: a small ladder, a server killed
//! mid-run, and bad flags.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{assert_balanced, assert_one_line_error, bench, bin_dir_args, json, out_dir, BENCH};
use serde_json::Value;

#[test]
fn small_ladder_against_the_three_servers() {
    let out = out_dir("ladder");
    let run = bench(&[
        "--quiet",
        "--concurrency",
        "10,50",
        "--delay-ms",
        "50",
        "--repeats",
        "2",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}\n{}",
        stdout,
        String::from_utf8_lossy(&run.stderr)
    );

    // The original's two tables, then the extended one.
    assert!(
        stdout.contains("Application | numRequests | Concurrency | Success rate(%) | Total(secs)")
    );
    assert!(stdout.contains("Application | StartUpTime(sec) | Max CPU(%) | Max Memory(MB) |"));
    assert!(stdout.contains("p99.9(ms)"));

    let results = json(&out.join("results.json"));
    // Repeated levels: every pair of servers compared per level on total time; two runs a
    // side can never be told apart.
    let comparisons = results["ladder_comparisons"]
        .as_array()
        .expect("comparisons");
    assert_eq!(comparisons.len(), 3 * 2, "3 pairs x 2 levels");
    for c in comparisons {
        assert_eq!(c["verdict"], "too_few_runs", "{c}");
        assert_eq!(c["n"], serde_json::json!([2, 2]), "{c}");
    }
    let meta = &results["meta"];
    for key in [
        "machine",
        "cpus",
        "kernel",
        "crate_versions",
        "flags",
        "started_at",
    ] {
        assert!(!meta[key].is_null(), "meta.{key}");
    }
    assert_eq!(meta["flags"]["delay_ms"], 50);
    assert!(meta["crate_versions"]["axum"].is_string());
    let servers = results["servers"].as_array().expect("servers");
    let names: Vec<_> = servers
        .iter()
        .map(|s| s["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["greet-axum", "greet-actix", "greet-hyper"]);
    for server in servers {
        let name = &server["name"];
        assert!(server["error"].is_null(), "{name}: {}", server["error"]);
        assert_eq!(server["endpoint"], "/greetings");
        let startup = server["startup_s"].as_f64().expect("startup_s");
        assert!(startup > 0.0 && startup < 10.0, "{name} startup {startup}");
        assert!(server["idle_rss_mib"].as_f64().expect("idle_rss_mib") > 0.0);
        assert!(server["max_rss_mib"].as_f64().expect("max_rss_mib") > 0.0);
        assert!(
            server["max_cpu_pct"].as_f64().is_some(),
            "{name} max_cpu_pct"
        );
        assert!(server["max_threads"].as_u64().expect("max_threads") >= 1);
        let runs = server["runs"].as_array().expect("runs");
        assert_eq!(runs.len(), 2);
        for (run, level) in runs.iter().zip([10, 50]) {
            assert_eq!(run["concurrency"], level);
            assert_eq!(run["requests"], level);
            assert_eq!(
                run["success_rate"], 100.0,
                "{name} at {level}: {}",
                run["errors"]
            );
            let (fastest, average, slowest, total) = (
                run["fastest_s"].as_f64().unwrap_or_default(),
                run["average_s"].as_f64().unwrap_or_default(),
                run["slowest_s"].as_f64().unwrap_or_default(),
                run["total_s"].as_f64().unwrap_or_default(),
            );
            // Every request waits the 50 ms delay, and no figure contradicts another.
            assert!(
                fastest >= 0.050 && fastest <= average && average <= slowest && slowest <= total
            );
            let latency = &run["latency_ms"];
            for key in ["p50", "p90", "p99", "p999", "max"] {
                assert!(
                    latency[key].as_f64().unwrap_or_default() >= 50.0,
                    "latency {key}"
                );
            }
            assert!(run["connect_ms"]["avg"].as_f64().is_some());
            assert!(run["errors"].as_object().is_some_and(|e| e.is_empty()));
            assert!(run["requests_per_s"].as_f64().unwrap_or_default() > 0.0);
        }
    }

    let ladder = std::fs::read_to_string(out.join("ladder.csv")).expect("ladder.csv");
    let rows: Vec<_> = ladder.lines().collect();
    assert_eq!(rows.len(), 1 + 3 * 2);
    let columns = rows[0].split(',').count();
    assert!(rows.iter().all(|r| r.split(',').count() == columns));
    assert!(rows[1].starts_with("greet-axum,/greetings,10,10,100.00,"));
    let resources = std::fs::read_to_string(out.join("resources.csv")).expect("resources.csv");
    assert_eq!(resources.lines().count(), 1 + 3);

    for chart in ["response-time.svg", "startup.svg", "memory.svg", "cpu.svg"] {
        let svg = std::fs::read_to_string(out.join(chart)).expect(chart);
        assert!(
            svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"),
            "{chart}"
        );
        assert!(
            svg.contains("greet-axum") && svg.contains("<rect x="),
            "{chart}"
        );
        assert_balanced(&svg, chart);
    }
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert_eq!(html.matches("<svg ").count(), 4, "charts inline");
    assert!(
        !html.contains(" src=") && !html.contains("<link"),
        "self-contained: nothing fetched"
    );
    assert!(html.contains("greet-hyper"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_server_killed_mid_run_is_reported_and_its_results_kept() {
    let out = out_dir("killed");
    // Once the first level is on disk, kill the server with SIGKILL.
    let (harness, server) = start_until_first_level(&out, "hyper,axum", "20,20,20,20");
    let killed = Command::new("kill")
        .args(["-KILL", &server.to_string()])
        .status();
    assert!(killed.is_ok_and(|s| s.success()));

    let output = harness.wait_with_output().expect("greet-bench ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("greet-hyper") && stderr.contains("exited mid-run"),
        "{stderr}"
    );

    let results = json(&out.join("results.json"));
    let hyper = &results["servers"][0];
    assert!(hyper["error"]
        .as_str()
        .is_some_and(|e| e.contains("exited mid-run")));
    let kept = hyper["runs"].as_array().map_or(0, Vec::len);
    assert!((1..4).contains(&kept), "runs kept: {kept}");
    // The run went on with the next server, which completed.
    let axum = &results["servers"][1];
    assert!(axum["error"].is_null(), "{}", axum["error"]);
    assert_eq!(axum["runs"].as_array().map_or(0, Vec::len), 4);
    let report = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(report.contains("greet-hyper failed"));
    let _ = std::fs::remove_dir_all(&out);
}

/// Starts the harness on `servers` at a 1 s delay and waits until its first level is on disk;
/// returns it and the pid of the first server it started.
// The child goes back to the caller, which waits for it; the lint does not follow the return.
#[allow(clippy::zombie_processes)]
fn start_until_first_level(out: &Path, servers: &str, levels: &str) -> (std::process::Child, u32) {
    let mut harness = Command::new(BENCH)
        .args([
            "--quiet",
            "--servers",
            servers,
            "--concurrency",
            levels,
            "--delay-ms",
            "1000",
        ])
        .args(["--out", out.to_str().expect("utf-8 path")])
        .args(bin_dir_args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("greet-bench starts");
    let first = servers.split(',').next().unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if Instant::now() >= deadline {
            let _ = harness.kill();
            let _ = harness.wait();
            panic!("no level completed in time");
        }
        let runs = std::fs::read_to_string(out.join("results.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .map_or(0, |r| {
                r["servers"][0]["runs"].as_array().map_or(0, Vec::len)
            });
        if runs >= 1 {
            if let Some(pid) = child_named(harness.id(), &format!("greet-{first}")) {
                return (harness, pid);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pid of a child of `parent` whose command is `name`.
fn child_named(parent: u32, name: &str) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let comm = &stat[stat.find('(')? + 1..stat.rfind(')')?];
            let ppid: u32 = stat[stat.rfind(')')? + 2..]
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            (ppid == parent && name.starts_with(comm)).then_some(pid)
        })
}

#[test]
fn bad_flags_are_one_line_errors() {
    for args in [
        &["--servers", "tomcat"][..],
        &["--concurrency", "0"],
        &["--target", "x=ftp://h"],
        &["--repeats", "0"],
        &["no-such-scenario"],
    ] {
        assert_one_line_error(args);
    }
}

#[test]
fn an_unreachable_target_fails_its_check_and_the_run_exits_1() {
    let out = out_dir("target");
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port");
    let output = Command::new(BENCH)
        .args(["--quiet", "--concurrency", "5", "--delay-ms", "10"])
        .args(["--target", &format!("gone=http://{closed}")])
        .args(["--out", out.to_str().expect("utf-8 path")])
        .output()
        .expect("greet-bench runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("gone") && stderr.contains("contract check failed"),
        "{stderr}"
    );
    let results = json(&out.join("results.json"));
    assert!(results["servers"][0]["error"].is_string());
    assert!(results["servers"][0]["startup_s"].is_null());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn docker_mode_without_an_engine_says_so() {
    // No `docker` on PATH: as on a machine without an engine.
    let empty = out_dir("no-docker-path");
    std::fs::create_dir_all(&empty).expect("empty dir");
    let output = Command::new(BENCH)
        .args(["--docker", "--quiet", "--concurrency", "5"])
        .env("PATH", &empty)
        .current_dir(&empty)
        .output()
        .expect("greet-bench runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no Docker engine"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        !empty.join("results").exists(),
        "a run refused at once writes no results directory"
    );
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
fn ctrl_c_keeps_the_levels_measured_and_a_valid_report() {
    let out = out_dir("interrupted");
    let (harness, server) = start_until_first_level(&out, "hyper", "20,20,20,20,20,20");
    let interrupted = Command::new("kill")
        .args(["-INT", &harness.id().to_string()])
        .status();
    assert!(interrupted.is_ok_and(|s| s.success()));
    let output = harness.wait_with_output().expect("greet-bench ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let results = json(&out.join("results.json"));
    let kept = results["servers"][0]["runs"].as_array().map_or(0, Vec::len);
    assert!((1..6).contains(&kept), "runs kept: {kept}");
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(html.trim_end().ends_with("</html>"));
    // The server it had started went with it (stopped and reaped, not orphaned).
    assert!(
        !Path::new(&format!("/proc/{server}")).exists(),
        "server {server} left running"
    );
    let _ = std::fs::remove_dir_all(&out);
}
