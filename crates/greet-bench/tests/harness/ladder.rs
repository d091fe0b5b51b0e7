//! The harness end to end, against the real server binaries: a small ladder, a server killed
//! mid-run, and bad flags.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{
    assert_balanced, assert_one_line_exit, bench, bench_ok, bin_dir_args, ladder_failed_once,
    out_dir, packages, results, BENCH,
};
use greet_model::results::{Mode, RssFrom};
use greet_stats::paired::{Figure, Word};

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

    let results = results(&out.join("results.json"));
    assert_eq!(results.meta.scenarios, ["ladder"]);
    assert!(
        results.sections.loops.is_none()
            && results.sections.soak.is_none()
            && results.sections.sweep.is_none()
    );
    let ladder = results.sections.ladder.expect("the ladder's section");
    // Repeated levels: every pair of servers compared per level on total time; two blocks
    // can never decide.
    assert_eq!(ladder.comparisons.len(), 3 * 2, "3 pairs x 2 levels");
    for c in &ladder.comparisons {
        assert_eq!(c.word(), Word::Undecided, "{c:?}");
        assert_eq!(c.figure, Figure::TotalS, "{c:?}");
        assert_eq!(c.judged.blocks, 2, "{c:?}");
    }
    assert!(
        !results.meta.comparison_method.contains("throughput"),
        "the method names no figure: {}",
        results.meta.comparison_method
    );
    let meta = &results.meta;
    assert!(!meta.machine.is_empty() && !meta.kernel.is_empty() && !meta.started_at.is_empty());
    assert!(meta.cpus.count >= 1);
    assert!(meta.crate_versions.contains_key("axum"));
    assert_eq!(
        (ladder.delay_ms, ladder.frame.repeats, ladder.mode),
        (50, 2, Mode::Process)
    );
    assert_eq!(ladder.concurrency, [10, 50]);
    assert!(
        ladder.frame.block.contains("repeat"),
        "{}",
        ladder.frame.block
    );
    assert!(
        ladder.frame.failures.is_empty(),
        "{:?}",
        ladder.frame.failures
    );
    let names: Vec<_> = ladder.servers.iter().map(|s| s.name.clone()).collect();
    assert_eq!(names, packages());
    for server in &ladder.servers {
        let name = &server.name;
        assert_eq!(server.endpoint, "/greetings");
        let startup = server.startup_s.expect("startup_s");
        assert!(startup > 0.0 && startup < 10.0, "{name} startup {startup}");
        // Each repeat started it afresh: a start-up each, the figure their median.
        assert_eq!(server.startups_s.len(), 2, "{name}");
        assert_eq!(startup, greet_stats::median(&server.startups_s), "{name}");
        assert!(server.idle_rss_mib.expect("idle_rss_mib") > 0.0);
        assert!(server.rss_max_mib.expect("rss_max_mib") > 0.0);
        // Root resets the kernel's peak counter: the peak is each level's own.
        assert_eq!(server.rss_max_from, Some(RssFrom::PeakCounter), "{name}");
        // Levels of 50 ms are mostly shorter than /proc's clock can measure (100 ms): the
        // server's CPU figure is one its levels gave, never one made up without them.
        assert_eq!(
            server.cpu_max_pct.is_some(),
            server
                .levels
                .iter()
                .flat_map(|l| &l.runs)
                .any(|r| r.server.cpu_max_pct.is_some()),
            "{name} cpu_max_pct"
        );
        assert!(server.threads_max.expect("threads_max") >= 1);
        assert_eq!(server.levels.len(), 2);
        for (level, concurrency) in server.levels.iter().zip([10, 50]) {
            assert_eq!(level.concurrency, concurrency);
            assert_eq!(level.runs.len(), 2, "each run kept");
            let f = &level.run.load;
            assert_eq!(f.requests, concurrency as u64);
            assert_eq!(
                f.success_rate, 100.0,
                "{name} at {concurrency}: {:?}",
                f.errors
            );
            // Every request waits the 50 ms delay, and no figure contradicts another.
            assert!(
                f.fastest_s >= 0.050
                    && f.fastest_s <= f.average_s
                    && f.average_s <= f.slowest_s
                    && f.slowest_s <= f.total_s,
                "{f:?}"
            );
            let l = &f.latency_ms;
            for (key, value) in [
                ("p50", l.p50),
                ("p90", l.p90),
                ("p99", l.p99),
                ("p999", l.p999),
                ("max", l.max),
            ] {
                assert!(value >= 50.0, "latency {key} {value}");
            }
            // One fresh connection per request.
            assert_eq!(f.connects, concurrency as u64);
            assert!(f.connect_ms.avg > 0.0 && f.connect_ms.max >= f.connect_ms.avg);
            assert!(f.errors.is_empty());
            // Each run's throughput is its valid responses over its time.
            for run in &level.runs {
                let r = &run.load;
                let expected = r.ok() as f64 / r.total_s;
                assert!(
                    (r.requests_per_s - expected).abs() < 1e-6 * expected,
                    "{r:?}"
                );
            }
        }
    }

    let ladder_csv = std::fs::read_to_string(out.join("ladder.csv")).expect("ladder.csv");
    let rows: Vec<_> = ladder_csv.lines().collect();
    assert_eq!(rows.len(), 1 + 3 * 2);
    assert!(rows[0].starts_with("server,endpoint,concurrency,requests,success_rate,total_s,"));
    let columns = rows[0].split(',').count();
    assert!(rows.iter().all(|r| r.split(',').count() == columns));
    assert!(
        rows[1].starts_with("greet-axum,/greetings,10,10,100.0,"),
        "{}",
        rows[1]
    );
    let resources = std::fs::read_to_string(out.join("resources.csv")).expect("resources.csv");
    assert_eq!(resources.lines().count(), 1 + 3);

    for chart in [
        "above-delay.svg",
        "p99-above-delay.svg",
        "connect.svg",
        "startup.svg",
        "memory.svg",
    ] {
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
    let cpu_drawn = out.join("cpu.svg").exists();
    assert_eq!(
        cpu_drawn,
        ladder.servers.iter().any(|s| s.cpu_max_pct.is_some()),
        "a CPU chart only of CPU measured"
    );
    assert_eq!(
        html.matches("<svg ").count(),
        5 + usize::from(cpu_drawn),
        "charts inline"
    );
    assert_eq!(
        html.matches("<table>").count(),
        1 + 3,
        "the scorecard, and the ladder's three tables"
    );
    assert!(
        html.find("id=\"scorecard\"").expect("a scorecard")
            < html.find("id=\"ladder\"").expect("the ladder")
    );
    assert!(
        !html.contains(" src=") && !html.contains("<link"),
        "self-contained: nothing fetched"
    );
    assert!(html.contains("greet-hyper") && html.contains("id=\"ladder\""));
    assert_balanced(
        &html
            .replace("<!DOCTYPE html>", "")
            .replace("<meta charset=\"utf-8\">", ""),
        "report.html",
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_named_greeting_is_validated_and_counted_as_valid() {
    // The validator reads the name from the endpoint's query, as the servers do.
    let out = out_dir("named");
    let load = |endpoint: &str| {
        bench_ok(&[
            "--quiet",
            "--servers",
            "hyper",
            "--concurrency",
            "20",
            "--delay-ms",
            "0",
            "--endpoint",
            endpoint,
            "--out",
            out.to_str().expect("utf-8 path"),
        ]);
        let ladder = results(&out.join("results.json"))
            .sections
            .ladder
            .expect("ladder");
        ladder.servers[0].levels[0].run.load.clone()
    };
    let f = load("/greetings?name=Ana");
    assert_eq!((f.success_rate, f.ok()), (100.0, 20), "{f:?}");
    assert!(f.requests_per_s > 0.0);
    // A name the contract refuses: every answer a 400, none valid, and no throughput.
    let f = load("/greetings?name=%ZZ");
    assert_eq!((f.success_rate, f.requests_per_s), (0.0, 0.0), "{f:?}");
    assert_eq!(f.errors.get("status"), Some(&20));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_server_killed_mid_run_is_reported_and_its_results_kept() {
    let _beside = crate::common::beside_quiet();
    let out = out_dir("killed");
    // Once the first level is on disk, kill the server with SIGKILL.
    let (harness, server) = start_until_first_level(&out, "hyper,axum", "20,20,20,20");
    let killed = Command::new("kill")
        .args(["-KILL", &server.to_string()])
        .status();
    assert!(killed.is_ok_and(|s| s.success()));

    let output = harness.wait_with_output().expect("greet-bench ends");
    let ladder = ladder_failed_once(&output, &out, &["greet-hyper", "exited mid-run"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("greet-hyper") && stderr.contains("exited mid-run"),
        "{stderr}"
    );
    assert_eq!(ladder.frame.failures[0].server, "greet-hyper");
    assert!(ladder.frame.failures[0].error.contains("exited mid-run"));
    let kept = ladder.servers[0].levels.len();
    assert!((1..4).contains(&kept), "levels kept: {kept}");
    // The run went on with the next server, which completed.
    assert_eq!(ladder.servers[1].name, "greet-axum");
    assert_eq!(ladder.servers[1].levels.len(), 4);
    let report = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(report.contains("greet-hyper FAILED"));
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
        let levels = std::fs::read_to_string(out.join("results.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<greet_bench::Results>(&t).ok())
            .and_then(|r| r.sections.ladder)
            .map_or(0, |l| l.servers.first().map_or(0, |s| s.levels.len()));
        if levels >= 1 {
            if let Some(pid) = child_named(harness.id(), &format!("greet-{first}")) {
                return (harness, pid);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pid of a child of `parent` whose command is `name`.
fn child_named(parent: u32, name: &str) -> Option<u32> {
    use greet_probe::procfs;
    procfs::children(parent)
        .into_iter()
        .find(|&pid| procfs::stat(pid).is_some_and(|s| name.starts_with(&s.comm)))
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
    // A target gets the light check unless --contract full is asked for.
    assert!(
        stderr.contains("gone") && stderr.contains("light check failed"),
        "{stderr}"
    );
    assert!(stderr.contains("cannot connect"), "{stderr}");
    let ladder = results(&out.join("results.json"))
        .sections
        .ladder
        .expect("ladder");
    assert_eq!(ladder.frame.failures[0].server, "gone");
    assert!(ladder.frame.failures[0]
        .error
        .contains("light check failed"));
    assert!(
        ladder.frame.failures[0].error.len() < 600,
        "short: {}",
        ladder.frame.failures[0].error
    );
    assert!(ladder.servers[0].startup_s.is_none());
    // Nothing measured: one line, no empty tables, no report of empty charts.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("nothing was measured"), "{stdout}");
    assert!(!stdout.contains("Application |"), "{stdout}");
    assert!(!out.join("report.html").exists());
    assert!(!out.join("above-delay.svg").exists() && !out.join("ladder.csv").exists());
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
    let stderr = assert_one_line_exit(&output, 1);
    assert!(stderr.contains("no Docker engine"), "{stderr}");
    assert!(
        !empty.join("results").exists(),
        "a run refused at once writes no results directory"
    );
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
fn a_signal_keeps_the_levels_measured_in_a_report_marked_incomplete() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let out = out_dir(&format!("interrupted-{signal}"));
        let (harness, server) = start_until_first_level(&out, "hyper", "20,20,20,20,20,20");
        let interrupted = Command::new("kill")
            .args([&format!("-{signal}"), &harness.id().to_string()])
            .status();
        assert!(interrupted.is_ok_and(|s| s.success()));
        let output = harness.wait_with_output().expect("greet-bench ends");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "INCOMPLETE: SIG{signal} ended the run during ladder"
            )),
            "{stderr}"
        );
        let results = results(&out.join("results.json"));
        let incomplete = results.incomplete.expect("marked incomplete");
        assert_eq!(
            (incomplete.signal, incomplete.cut_short, incomplete.not_run),
            (format!("SIG{signal}"), Some("ladder".to_owned()), vec![])
        );
        let ladder = results.sections.ladder.expect("ladder");
        let kept = ladder.servers[0].levels.len();
        assert!((1..6).contains(&kept), "levels kept: {kept}");
        let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
        assert!(html.trim_end().ends_with("</html>"));
        assert!(html.contains("INCOMPLETE"), "the report says it too");
        // The server it had started went with it (stopped and reaped, not orphaned).
        assert!(
            !Path::new(&format!("/proc/{server}")).exists(),
            "server {server} left running"
        );
        let _ = std::fs::remove_dir_all(&out);
    }
}
