//! `greet-agent`, the binary a cluster runs, as a process against a real server: two agents
//! of one level, each its share, their reports merged back into the whole level; the watch
//! task and bad flags as one line.

use std::process::{Command, Output};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use greet_conformance::spawn::{quick, spawn};
use greet_load::shard::gather_reports;
use greet_load::{merge, Counted};

const AGENT: &str = env!("CARGO_BIN_EXE_greet-agent");

fn agent(args: &[&str]) -> Output {
    Command::new(AGENT)
        .args(args)
        .output()
        .expect("greet-agent runs")
}

/// Agents 0 and 1 of two, started at once with `flags` and `more`, each exiting 0: their
/// reports, read back from what they printed.
fn two_agents(flags: &[&str], more: &[&str]) -> Vec<greet_load::Report> {
    let children: Vec<_> = (0..2)
        .map(|index| {
            let index = index.to_string();
            Command::new(AGENT)
                .args(flags)
                .args(["--agents", "2", "--index", &index])
                .args(more)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("greet-agent runs")
        })
        .collect();
    let mut logs = String::new();
    for child in children {
        let out = child.wait_with_output().expect("greet-agent ends");
        assert!(out.status.success(), "{out:?}");
        logs.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    gather_reports(&logs).expect("both agents reported")
}

/// A removed swarm task or a stopped container is sent SIGTERM, and an agent there is its
/// container's first process, which has no default action for it: the agent ends at once on
/// its own, waiting for a server or loading one.
#[test]
fn sigterm_or_sigint_ends_an_agent_at_once() {
    for (signal, code) in [("-TERM", 143), ("-INT", 130)] {
        // Port 1 answers nobody: the agent waits for its /health.
        let child = Command::new(AGENT)
            .args([
                "--url",
                "http://127.0.0.1:1/greetings",
                "--concurrency",
                "1",
            ])
            .args(["--wait", "60s"])
            .spawn()
            .expect("greet-agent runs");
        std::thread::sleep(Duration::from_millis(300));
        let sent = std::time::Instant::now();
        let kill = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(kill.success());
        let out = child.wait_with_output().expect("greet-agent ends");
        assert_eq!(out.status.code(), Some(code), "{signal}: {out:?}");
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "{signal}: ended {:?} after it",
            sent.elapsed()
        );
    }
}

#[test]
fn two_agents_run_their_shares_and_merge_into_the_level() {
    let server = spawn(greet_hyper::run, quick()).expect("greet-hyper starts");
    let url = format!("{}/greetings?name=Ana", server.base_url());
    let start = SystemTime::now() + Duration::from_millis(500);
    let start_at = start
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_millis()
        .to_string();
    // Both at once, as a coordinator starts them: 101 requests, 11 connections at a time.
    let flags = ["--url", &url, "--concurrency", "11", "--requests", "101"];
    let reports = two_agents(&flags, &["--start-at", &start_at]);
    let shares: Vec<(usize, usize)> = reports
        .iter()
        .map(|r| (r.concurrency, r.requests))
        .collect();
    assert_eq!(shares, [(6, 51), (5, 50)], "the first takes the one more");
    for report in &reports {
        assert!(
            report.start_skew_s.abs() < 0.4,
            "started together: {report:?}"
        );
    }
    let (counted, agents) = merge(&reports);
    let Counted::Closed(tally) = counted else {
        panic!("fresh connections count as a closed loop")
    };
    let f = tally.figures();
    assert_eq!((f.requests, f.success_rate), (101, 100.0), "{f:?}");
    assert_eq!(f.connects, 101, "one connection a request");
    assert_eq!(agents.iter().map(|a| a.requests).sum::<u64>(), 101);
}

/// WebSocket users split over two agents: each user's messages echoed on sockets of five
/// messages each, the two reports merged into the whole level exactly.
#[test]
fn two_agents_echo_websocket_messages_and_merge_exactly() {
    let server = spawn(greet_hyper::run, quick()).expect("greet-hyper starts");
    let url = format!("{}/ws", server.base_url());
    let flags = [
        "--url",
        &url,
        "--websocket",
        "--body",
        "size:2000",
        "--keep-alive",
        "5",
        "--each",
        "12",
        "--requests-per-connection",
        "5",
    ];
    let reports = two_agents(&flags, &[]);
    let shares: Vec<(usize, usize)> = reports
        .iter()
        .map(|r| (r.concurrency, r.requests))
        .collect();
    assert_eq!(
        shares,
        [(3, 36), (2, 24)],
        "users shared out, 12 messages each"
    );
    let (counted, _) = merge(&reports);
    let f = counted.tally().figures();
    assert_eq!((f.requests, f.success_rate), (60, 100.0), "{f:?}");
    assert_eq!(f.connects, 15, "a socket every five messages: {f:?}");
    assert_eq!(f.bytes_per_answer, Some(2000.0), "each echo whole: {f:?}");
}

#[test]
fn a_wrong_answer_is_counted_not_fatal_and_bad_flags_are_one_line() {
    let server = spawn(greet_hyper::run, quick()).expect("greet-hyper starts");
    // Every greeting refused by the pattern: counted as body errors, exit 0.
    let url = format!("{}/greetings", server.base_url());
    let out = agent(&["--url", &url, "--concurrency", "3", "--expect", "^Nope"]);
    assert!(out.status.success(), "{out:?}");
    let report = gather_reports(&String::from_utf8_lossy(&out.stdout)).expect("a report");
    let f = report[0].counted.tally().figures();
    assert_eq!((f.requests, f.errors.get("body")), (3, Some(&3)), "{f:?}");

    for (args, code, says) in [
        (
            &["--url", "http://127.0.0.1:1/", "--keep-alive", "2"][..],
            2,
            "--keep-alive needs",
        ),
        (&["--concurrency", "2"][..], 2, "--url"),
        (
            &[
                "--url",
                "http://127.0.0.1:1/ws",
                "--concurrency",
                "2",
                "--websocket",
                "--protocol",
                "h2c",
            ][..],
            2,
            "--websocket does not go",
        ),
        (
            &["--url", "http://127.0.0.1:1/", "--concurrency", "0"][..],
            2,
            "not a concurrency",
        ),
        (
            &["watch", "--container", "nothing"][..],
            1,
            "no control group",
        ),
    ] {
        let out = agent(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
