//! `--agents`: a ladder level (and a soak level) split over `greet-bench agent` processes,
//! against a real server. Every request is counted once, the figures agree with the load run in one process,
//! and an agent that dies fails its level by name.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{
    assert_one_line_error, bench_ok, bin_dir_args, ladder_failed_once, out_dir, results, BENCH,
};
use greet_model::results::Trial;

/// The level of one agents run: hyper, 300 concurrent requests, 200 ms delay.
fn level(agents: &str) -> Trial {
    let out = out_dir(&format!("agents-{agents}"));
    bench_ok(&[
        "--quiet",
        "--servers",
        "hyper",
        "--concurrency",
        "300",
        "--delay-ms",
        "200",
        "--agents",
        agents,
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    let ladder = results(&out.join("results.json"))
        .sections
        .ladder
        .expect("ladder");
    ladder.servers[0].levels[0].run.clone()
}

#[test]
fn two_agents_count_every_request_once_and_agree_with_one() {
    let (one, two) = (level("1"), level("2"));
    for (run, n) in [(&one, 1), (&two, 2)] {
        assert_eq!(run.load.requests, 300, "{n} agents: {:?}", run.load);
        assert_eq!(run.load.success_rate, 100.0, "{n} agents: {:?}", run.load);
        assert_eq!(run.agents.len(), n, "{:?}", run.agents);
        let counted: u64 = run.agents.iter().map(|a| a.requests).sum();
        assert_eq!(
            counted, 300,
            "the agents' own counts add up: {:?}",
            run.agents
        );
        for agent in &run.agents {
            assert!(
                agent.start_skew_ms.abs() < 200.0,
                "agents start together: {:?}",
                run.agents
            );
        }
    }
    let shares: Vec<usize> = two.agents.iter().map(|a| a.concurrency).collect();
    assert_eq!(shares, [150, 150]);
    // The same load, split or not: the 200 ms delay dominates every latency.
    for (what, a, b) in [
        ("p50", one.load.latency_ms.p50, two.load.latency_ms.p50),
        ("p99", one.load.latency_ms.p99, two.load.latency_ms.p99),
    ] {
        assert!(
            (200.0..400.0).contains(&a) && (200.0..400.0).contains(&b),
            "{what}: {a} vs {b}"
        );
    }
    let ratio = two.load.requests_per_s / one.load.requests_per_s;
    assert!(
        (0.5..2.0).contains(&ratio),
        "throughput 2 agents / 1: {ratio}"
    );
}

/// `greet-bench soak` on `/greetings` with `args`, split over two agents: its section, which
/// must record no failure.
fn soak_over_two_agents(name: &str, args: &[&str]) -> greet_bench::scenario::soak::Section {
    let out = out_dir(name);
    let mut all = vec!["soak", "--quiet", "--agents", "2"];
    if !args.contains(&"--endpoints") {
        all.extend_from_slice(&["--endpoints", "/greetings"]);
    }
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().expect("utf-8 path")]);
    bench_ok(&all);
    let soak = results(&out.join("results.json"))
        .sections
        .soak
        .expect("soak");
    assert!(soak.frame.failures.is_empty(), "{:?}", soak.frame.failures);
    soak
}

/// Soak's keep-alive users split over agents: a request count is shared out exactly, each
/// agent with half the users, and the server is watched through the agents' load.
#[test]
fn soak_users_and_requests_are_shared_out_over_agents() {
    let soak = soak_over_two_agents(
        "agents-soak",
        &[
            "--servers",
            "hyper",
            "--concurrency",
            "20",
            "--requests",
            "2001",
        ],
    );
    let cell = &soak.cells[0];
    let run = &cell.runs[0];
    assert_eq!(
        (run.load.requests, run.load.success_rate),
        (2001, 100.0),
        "{:?}",
        run.load
    );
    let shares: Vec<(usize, u64)> = run
        .agents
        .iter()
        .map(|a| (a.concurrency, a.requests))
        .collect();
    assert_eq!(shares, [(10, 1001), (10, 1000)]);
    assert!(
        run.server.cpu_avg_pct.is_some_and(|c| c > 0.0) && cell.threads_peak.is_some(),
        "the server watched from the agents' start: {:?} {:?}",
        run.server,
        cell.threads_peak
    );
    // An agent told to keep users alive must be told when they stop.
    let said =
        assert_one_line_error(&["agent", "--url", "http://127.0.0.1:9/", "--keep-alive", "4"]);
    assert!(said.contains("--keep-alive needs one of"), "{said}");
}

/// Short-lived connections on a real server, split over agents: with one request per
/// connection, every request opens its own, so the merged level counts exactly as many
/// connections as requests, each agent its share; the transport records the shape.
#[test]
fn short_lived_connections_are_counted_exactly_over_agents() {
    let soak = soak_over_two_agents(
        "agents-short-lived",
        &[
            "--servers",
            "actix",
            "--concurrency",
            "8",
            "--requests",
            "301",
            "--requests-per-connection",
            "1",
        ],
    );
    assert_eq!(soak.transport.requests_per_connection, Some(1));
    let run = &soak.cells[0].runs[0];
    assert_eq!(
        (run.load.requests, run.load.success_rate, run.load.connects),
        (301, 100.0, 301),
        "{:?}",
        run.load
    );
    let shares: Vec<u64> = run.agents.iter().map(|a| a.requests).collect();
    assert_eq!(shares, [151, 150]);
}

/// A body and a header field over agents: every agent POSTs the body (an upload, each
/// answer checked to count it whole) or sends the header (gzip asked of a 1,228-byte page),
/// and the merged level counts the answers' bytes exactly; the transport records both.
#[test]
fn bodies_headers_and_answer_bytes_merge_exactly_over_agents() {
    let common = [
        "--servers",
        "hyper",
        "--concurrency",
        "4",
        "--requests",
        "101",
    ];
    let upload = soak_over_two_agents(
        "agents-body",
        &[
            &common[..],
            &["--endpoints", "/upload", "--body", "size:5000"],
        ]
        .concat(),
    );
    assert_eq!(upload.transport.body.as_deref(), Some("size:5000"));
    let run = &upload.cells[0].runs[0];
    let answer = r#"{"bytes":5000,"crc32":"01234567"}"#.len() as f64;
    assert_eq!(
        (
            run.load.requests,
            run.load.success_rate,
            run.load.bytes_per_answer
        ),
        (101, 100.0, Some(answer)),
        "{:?}",
        run.load
    );
    let gzip = soak_over_two_agents(
        "agents-header",
        &[
            &common[..],
            &[
                "--endpoints",
                "/fortunes",
                "--header",
                "Accept-Encoding: gzip",
            ],
        ]
        .concat(),
    );
    assert_eq!(gzip.transport.headers, ["accept-encoding: gzip"]);
    let run = &gzip.cells[0].runs[0];
    let bytes = run.load.bytes_per_answer.expect("counted");
    assert!(
        run.load.success_rate == 100.0 && bytes > 100.0 && bytes < 1228.0 && bytes.fract() == 0.0,
        "{:?}",
        run.load
    );
}

#[test]
fn a_killed_agent_fails_its_level_by_name() {
    let _beside = crate::common::beside_quiet();
    let out = out_dir("agents-killed");
    let run = Command::new(BENCH)
        .args([
            "--quiet",
            "--servers",
            "hyper",
            "--concurrency",
            "50",
            "--delay-ms",
            "5000",
            "--agents",
            "2",
            "--out",
            out.to_str().expect("utf-8 path"),
        ])
        .args(bin_dir_args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("greet-bench runs");
    // This run's agent with index 1, once it is up: killed outright. (Before it, the run
    // checks and starts the server: slow on two cores busy with other tests.)
    let deadline = Instant::now() + Duration::from_secs(180);
    let parent = run.id().to_string();
    let killed = loop {
        let found = Command::new("pgrep")
            .args(["-P", &parent, "-f", "greet-bench agent .*--index 1 "])
            .output()
            .expect("pgrep runs");
        let pids = String::from_utf8_lossy(&found.stdout).to_string();
        if let Some(pid) = pids.split_whitespace().next() {
            let status = Command::new("kill").args(["-9", pid]).status();
            break status.expect("kill runs").success();
        }
        assert!(Instant::now() < deadline, "no agent seen within 180 s");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(killed);
    let output = run.wait_with_output().expect("greet-bench ends");
    let ladder = ladder_failed_once(&output, &out, &["agent 1 of 2", "killed by signal 9"]);
    assert!(
        ladder.servers[0].levels.is_empty(),
        "no level figures from a lost agent: {:?}",
        ladder.servers[0].levels
    );
}

/// Agents' reports as a cluster's logs hold them: `merge` adds them up when every agent is
/// there, and refuses a level with one missing, in one line and exit 1.
#[test]
fn merge_takes_a_whole_level_or_refuses_it() {
    use greet_load::{Counted, Outcome, Report, Tally};
    let dir = out_dir("agents-merge");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let line = |index: usize, ms: u64| {
        let mut tally = Tally::default();
        for _ in 0..150 {
            tally.push(Outcome::Ok {
                latency: Duration::from_millis(ms),
                connect: None,
                bytes: 12,
            });
        }
        tally.elapsed = Duration::from_millis(ms + 5);
        let report = Report {
            index,
            agents: 2,
            concurrency: 150,
            requests: 150,
            start_skew_s: 0.001,
            started_s: 1_700_000_000.0,
            cpu_s: 0.05,
            counted: Counted::Closed(tally),
        };
        // As `kubectl logs --prefix` shows them: a source before each of its lines.
        report
            .lines()
            .lines()
            .map(|l| format!("greet-load.{}.abc@node | {l}\n", index + 1))
            .collect::<String>()
    };
    let logs = dir.join("logs.txt");
    std::fs::write(&logs, format!("starting\n{}{}", line(1, 220), line(0, 210))).unwrap();
    let merged = Command::new(BENCH)
        .args(["merge", "--json", logs.to_str().unwrap()])
        .output()
        .expect("merge runs");
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let level: greet_bench::scenario::ladder::Level =
        serde_json::from_slice(&merged.stdout).expect("a level as JSON");
    assert_eq!((level.concurrency, level.run.load.requests), (300, 300));
    assert_eq!(level.run.agents.len(), 2);
    let p90 = level.run.load.latency_ms.p90;
    assert!(
        (219.0..=221.0).contains(&p90),
        "the slower agent's half: {p90}"
    );

    let half = dir.join("half.txt");
    std::fs::write(&half, line(0, 210)).unwrap();
    let refused = Command::new(BENCH)
        .args(["merge", half.to_str().unwrap()])
        .output()
        .expect("merge runs");
    let said = crate::common::assert_one_line_exit(&refused, 1);
    assert!(said.contains("agent 1 of 2 did not report"), "{said}");
}

/// Open loop over two agents: each paces half the rate on half the connections, and every
/// scheduled request is counted once.
#[test]
fn two_agents_split_a_rate_and_count_every_request_once() {
    let out = out_dir("agents-rate");
    bench_ok(&[
        "rate",
        "--quick",
        "--quiet",
        "--servers",
        "hyper",
        "--rates",
        "2000",
        "--duration",
        "1s",
        "--agents",
        "2",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    let rate = results(&out.join("results.json"))
        .sections
        .rate
        .expect("rate");
    assert!(rate.frame.failures.is_empty(), "{:?}", rate.frame.failures);
    let level = &rate.servers[0].levels[0];
    assert_eq!(level.requests, 2000, "{level:?}");
    assert_eq!(level.success_rate, 100.0);
    let agents = &level.runs[0].agents;
    let counted: Vec<u64> = agents.iter().map(|a| a.requests).collect();
    assert_eq!(counted, [1000, 1000], "{agents:?}");
    assert!(
        (1800.0..2200.0).contains(&level.achieved_rps),
        "the agents together achieve the rate: {}",
        level.achieved_rps
    );
}
