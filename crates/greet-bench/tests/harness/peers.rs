//! The original experiment's servers, embedded Tomcat 10 and Jetty 9 (`peers/jvm`), in the same
//! ladder as the workspace's: compiled with the machine's JDK, started, pinned, timed, sampled
//! and stopped alike (`#[ignore]`d: it needs the JDK and jars its reason names); skipped in
//! one line where there is no JDK.

use std::process::Command;

use crate::common::{assert_one_line_exit, bench_ok, bin_dir_args, out_dir, results, BENCH};
use greet_bed::server::jvm::PACKAGES;
use greet_launch::process::which;

#[test]
#[ignore = "needs a JDK and Debian's jars: apt-get install -y default-jdk-headless libtomcat10-embed-java libjetty9-java libjakarta-annotation-api-java"]
fn the_jvm_peers_run_in_the_same_ladder() {
    assert!(
        which("javac", []).is_some(),
        "the JVM peers need a JDK and Debian's jars: apt-get install -y {PACKAGES}"
    );
    let out = out_dir("peers");
    bench_ok(&[
        "--quiet",
        "--servers",
        "hyper,tomcat,jetty",
        "--concurrency",
        "10,50",
        "--delay-ms",
        "50",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    let ladder = results(&out.join("results.json"))
        .sections
        .ladder
        .expect("ladder");
    assert!(
        ladder.frame.failures.is_empty(),
        "{:?}",
        ladder.frame.failures
    );
    let names: Vec<_> = ladder.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["greet-hyper", "greet-tomcat", "greet-jetty"]);
    for server in &ladder.servers {
        let name = &server.name;
        assert!(server.startup_s.is_some_and(|s| s > 0.0), "{name}");
        assert!(server.rss_max_mib.is_some_and(|m| m > 0.0), "{name}");
        for level in &server.levels {
            let f = &level.run.load;
            assert_eq!(f.success_rate, 100.0, "{name}: {f:?}");
            assert!(f.fastest_s >= 0.050, "{name}: the delay is kept: {f:?}");
        }
    }
    // A thread per request in flight, up to the pool: the JVM servers hold far more threads
    // than the async server's runtime.
    let threads = |i: usize| ladder.servers[i].threads_max.expect("threads");
    assert!(
        threads(1) > 2 * threads(0) && threads(2) > 2 * threads(0),
        "{ladder:?}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn without_a_jdk_the_peers_are_skipped_in_one_line_and_the_run_goes_on() {
    let _beside = crate::common::beside_quiet();
    let out = out_dir("no-jdk");
    let empty = out.join("empty-path");
    std::fs::create_dir_all(&empty).expect("dir");
    let mut args = bin_dir_args();
    if args.is_empty() {
        // Without the debug servers beside it the harness would build: point it at release.
        args = vec![
            "--bin-dir".into(),
            std::path::Path::new(BENCH)
                .parent()
                .and_then(|d| d.parent())
                .expect("target")
                .join("release")
                .display()
                .to_string(),
        ];
    }
    let output = Command::new(BENCH)
        .args(["--quiet", "--servers", "hyper,tomcat", "--concurrency", "5"])
        .args(["--delay-ms", "0", "--out", out.to_str().expect("utf-8")])
        .args(args)
        .env("PATH", &empty)
        .output()
        .expect("greet-bench runs");
    let stderr = assert_one_line_exit(&output, 1);
    assert!(
        stderr.contains("greet-tomcat") && stderr.contains("apt-get install -y"),
        "{stderr}"
    );
    let ladder = results(&out.join("results.json"))
        .sections
        .ladder
        .expect("ladder");
    assert_eq!(ladder.servers[0].levels[0].run.load.success_rate, 100.0);
    assert_eq!(ladder.frame.failures.len(), 1);
    assert!(ladder.frame.failures[0]
        .error
        .starts_with("skipped: no JDK"));
    let _ = std::fs::remove_dir_all(&out);
}
