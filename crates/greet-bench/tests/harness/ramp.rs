//! `rate --ramp`: open-loop load whose target rate climbs, reported second by second, against
//! the real hyper server, in the harness and split over agents.

use crate::common::{bench_ok, out_dir, results, shared_turn, turn};

/// The ramp of `args` against hyper behind `delay_ms`, into a fresh directory: its results and
/// the report's files.
fn ramp(name: &str, args: &[&str]) -> (greet_bench::scenario::rate::Section, String, String) {
    let out = out_dir(name);
    let mut all = vec!["rate", "--quick", "--quiet", "--servers", "hyper"];
    all.extend(args);
    all.extend(["--out", out.to_str().expect("utf-8 path")]);
    bench_ok(&all);
    let rate = results(&out.join("results.json"))
        .sections
        .rate
        .expect("rate");
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let csv = std::fs::read_to_string(out.join("rate-ramp.csv")).expect("rate-ramp.csv");
    let _ = std::fs::remove_dir_all(&out);
    (rate, html, csv)
}

/// Each request waits 50 ms and 16 connections carry one each: 320 a second at most. A ramp
/// from 100/s to 600/s over 3 s crosses that in its second second: the first second is
/// answered at the delay, the last queues, and each second offers what the schedule holds.
#[test]
fn a_ramp_through_the_knee_is_reported_second_by_second() {
    let _turn = shared_turn();
    let (rate, html, csv) = ramp(
        "ramp-knee",
        &[
            "--delay-ms",
            "50",
            "--connections",
            "16",
            "--ramp",
            "100,600:3s",
        ],
    );
    assert!(rate.frame.failures.is_empty(), "{:?}", rate.frame.failures);
    let level = &rate.servers[0].levels[0];
    assert_eq!(level.label, "ramp to 600/s");
    assert_eq!(level.requests, 1050, "(100 + 600) / 2 × 3 s");
    assert_eq!(level.success_rate, 100.0, "{level:?}");
    let seconds = &level.windows;
    assert!(seconds.len() >= 3, "{seconds:?}");
    // 100 → 600/s: the seconds' means are 183, 350 and 517 a second.
    for (w, expected) in seconds.iter().zip([183.3, 350.0, 516.7]) {
        assert!(
            (w.offered_rps - expected).abs() <= 1.5,
            "second {}: {} offered, {expected} due",
            w.at_s,
            w.offered_rps
        );
    }
    let offered: f64 = seconds.iter().map(|w| w.offered_rps).sum();
    let achieved: f64 = seconds.iter().map(|w| w.achieved_rps).sum();
    assert_eq!((offered, achieved), (1050.0, 1050.0), "each request once");
    let (first, last) = (&seconds[0], &seconds[2]);
    assert!(
        first.latency_ms.p50 >= 50.0 && first.latency_ms.p50 < 60.0,
        "under capacity, the delay: {first:?}"
    );
    assert!(
        last.latency_ms.p50 > 4.0 * first.latency_ms.p50 && last.late > 100,
        "past 320/s the queue grows: {last:?}"
    );
    assert!(
        seconds.iter().all(|w| w.achieved_rps <= 340.0),
        "no second answers more than 16 connections can: {seconds:?}"
    );
    assert!(
        html.contains("Latency against offered rate"),
        "the ramp's chart"
    );
    assert!(csv.starts_with("server,endpoint,level,at_s,offered_rps,achieved_rps,"));
    assert_eq!(csv.lines().count(), 1 + seconds.len());
}

/// Split over two agents, a ramp is each agent's half of every stage, and its seconds merge
/// into the whole.
#[test]
fn two_agents_split_a_ramp_and_count_each_second_once() {
    let _turn = shared_turn();
    let (rate, _, _) = ramp("ramp-agents", &["--ramp", "2k:1s,2k:1s", "--agents", "2"]);
    assert!(rate.frame.failures.is_empty(), "{:?}", rate.frame.failures);
    let level = &rate.servers[0].levels[0];
    assert_eq!(level.requests, 3000, "1000 on the way up, 2000 held");
    assert_eq!(level.success_rate, 100.0, "{level:?}");
    let counted: Vec<u64> = level.runs[0].agents.iter().map(|a| a.requests).collect();
    assert_eq!(counted, [1500, 1500], "{level:?}");
    let offered: Vec<f64> = level.windows.iter().map(|w| w.offered_rps).collect();
    assert_eq!(offered[..2], [1000.0, 2000.0], "{:?}", level.windows);
    assert!(
        offered[2..].iter().all(|&o| o == 0.0),
        "after the ramp, only answers still on their way: {:?}",
        level.windows
    );
}

/// Capacity of hyper behind a 50 ms delay on 16 connections, judged at p99 < 80 ms, with a
/// 2 s ramp and bisections of 3 one-second levels, and `extra` flags, into `out`.
fn capacity_behind_the_delay(out: &std::path::Path, extra: &[&str]) {
    capacity_of_behind_the_delay("hyper", out, extra);
}

/// [`capacity_behind_the_delay`] of `servers`: what it said on its way.
fn capacity_of_behind_the_delay(servers: &str, out: &std::path::Path, extra: &[&str]) -> String {
    let mut args = vec![
        "capacity",
        "--quick",
        "--servers",
        servers,
        "--delay-ms",
        "50",
        "--connections",
        "16",
        "--slo",
        "p99<80ms",
        "--ramp",
        "2s",
        "--duration",
        "1s",
        "--steps",
        "3",
        "--out",
        out.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(extra);
    String::from_utf8_lossy(&bench_ok(&args).stderr).into_owned()
}

/// A search in one line, for a failure message: the capacity, where the search began, and each
/// level's rate and verdict (✓ held, ✗ broke, why, and what disturbed the machine). The whole
/// record's debug form runs to pages, and a CI log keeps only its tail.
fn searched(s: &greet_bench::scenario::capacity::CapacityServer) -> String {
    let steps: Vec<String> = (s.steps.iter())
        .map(|t| {
            let mark = if t.held { "✓" } else { "✗" };
            let why = t.broke.as_deref().unwrap_or("");
            let busy = t
                .disturbed
                .as_deref()
                .map_or(String::new(), |d| format!(" [{d}]"));
            format!("{:.0}{mark}{why}{busy}", t.target_rps)
        })
        .collect();
    format!(
        "{} {}: capacity {:.0}/s (searches {:?}), probe {:.0}/s, knee {:?}, top {:.0}/s, \
         at_top {}; levels: {}",
        s.server,
        s.case(),
        s.capacity_rps,
        s.searches,
        s.probe_rps,
        s.ramp_knee_rps,
        s.top_rps,
        s.at_top,
        steps.join(", ")
    )
}

/// The capacity section a run wrote into `out`, which is then removed; the run failed no
/// server.
fn capacity_in(out: &std::path::Path) -> greet_bench::scenario::capacity::Section {
    let capacity = results(&out.join("results.json"))
        .sections
        .capacity
        .expect("capacity");
    let _ = std::fs::remove_dir_all(out);
    assert!(
        capacity.frame.failures.is_empty(),
        "{:?}",
        capacity.frame.failures
    );
    capacity
}

/// Each request waits 50 ms on one of 16 connections: 320 a second is all they carry. Under
/// that, every answer comes at the delay; past it, a queue grows and the objective of 80 ms
/// breaks within the second a level lasts. The capacity found is that bound, far under what
/// the client can pace, and the report says how it was found.
#[test]
fn capacity_finds_the_rate_the_server_holds_within_the_objective() {
    let _turn = shared_turn();
    let out = out_dir("capacity-knee");
    capacity_behind_the_delay(&out, &[]);
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let csv = std::fs::read_to_string(out.join("capacity.csv")).expect("capacity.csv");
    let capacity = capacity_in(&out);
    assert_eq!((capacity.slo.as_str(), capacity.slo_ms), ("p99<80ms", 80.0));
    let hyper = &capacity.servers[0];
    assert!(
        (280.0..=340.0).contains(&hyper.probe_rps),
        "16 connections × 50 ms: {}",
        searched(hyper)
    );
    assert!(
        !hyper.at_top,
        "the server's bound, not the search's: {}",
        searched(hyper)
    );
    assert!(
        (250.0..=345.0).contains(&hyper.capacity_rps),
        "the capacity is the server's 320/s: {}",
        searched(hyper)
    );
    assert!(
        hyper.top_rps > 1.1 * hyper.capacity_rps,
        "{}",
        searched(hyper)
    );
    assert!(hyper.ramp.len() >= 2, "{:?}", hyper.ramp);
    assert!(
        hyper.steps.iter().any(|s| s.held) && hyper.steps.iter().any(|s| !s.held),
        "the search bracketed the knee: {:?}",
        hyper.steps
    );
    // Held is the judge's rule: every quarter second kept the objective, or a stall broke at
    // most a quarter of them and not the last (excused, though the level's whole p99 may pass
    // 80 ms for it).
    for step in hyper.steps.iter().filter(|s| s.held) {
        let quarters = &step.broken_quarters;
        let excused = quarters.len() <= step.quarters / 4
            && !quarters.contains(&step.quarters.saturating_sub(1));
        assert!(
            step.success_rate == 100.0 && (step.latency_ms.p99 <= 80.0 || excused),
            "{step:?}"
        );
        assert!(quarters.is_empty() || excused, "{step:?}");
    }
    // Each search ran with the machine's pace timed.
    assert_eq!(hyper.paces_us.len(), hyper.searches.len(), "{hyper:?}");
    assert!(
        hyper.paces_us.iter().all(|&us| us > 10.0),
        "{:?}",
        hyper.paces_us
    );
    let half = hyper.at_half.as_ref().expect("measured at half");
    assert!(half.p50 >= 50.0 && half.p50 < 60.0, "{half:?}");
    assert!(
        html.contains("The ramp, second by second, against p99&lt;80ms")
            || html.contains("The ramp, second by second, against p99<80ms")
    );
    assert!(csv.starts_with("server,endpoint,streams,slo,capacity_rps,"));
}

/// Over h2c with `--streams 1,4`, each server is measured at each: the same 16 slots and
/// 50 ms delay bound both at 320 a second, on 16 connections and on 4.
#[test]
fn capacity_measures_each_stream_count_over_http2() {
    let _turn = shared_turn();
    let out = out_dir("capacity-streams");
    capacity_behind_the_delay(&out, &["--protocol", "h2c", "--streams", "1,4"]);
    let capacity = capacity_in(&out);
    let cases: Vec<_> = capacity.servers.iter().map(|s| s.case()).collect();
    assert_eq!(cases, ["/greetings", "/greetings, 4 streams"]);
    for s in &capacity.servers {
        assert!(
            (250.0..=345.0).contains(&s.capacity_rps) && !s.at_top,
            "16 slots × 50 ms, whatever their streams: {}",
            searched(s)
        );
        for step in s.steps.iter().filter(|s| s.held) {
            assert_eq!(step.success_rate, 100.0, "{step:?}");
        }
    }
}

/// Where one agent suffices, two find the same capacity: the 16 slots split 8 and 8 over two
/// agent processes, each with half the rate, still carry 320 a second behind the 50 ms delay,
/// the bound one agent finds (`capacity_finds_the_rate_the_server_holds_within_the_objective`).
#[test]
fn two_agents_find_the_capacity_one_agent_finds() {
    let _turn = shared_turn();
    let out = out_dir("capacity-agents");
    capacity_behind_the_delay(&out, &["--agents", "2"]);
    let capacity = capacity_in(&out);
    let hyper = &capacity.servers[0];
    assert!(
        (250.0..=345.0).contains(&hyper.capacity_rps) && !hyper.at_top,
        "two agents, the server's 320/s: {}",
        searched(hyper)
    );
    for step in hyper.steps.iter().filter(|s| s.held) {
        assert_eq!(step.success_rate, 100.0, "{step:?}");
    }
    // Every level keeps each agent's own share, which adds up to the level.
    for step in &hyper.steps {
        let indexes: Vec<usize> = step.agents.iter().map(|a| a.index).collect();
        assert_eq!(indexes, [0, 1], "{step:?}");
        let requests: u64 = step.agents.iter().map(|a| a.requests).sum();
        assert_eq!(requests, step.requests, "{step:?}");
    }
}

/// The same server twice (`--servers hyper,hyper`) is measured as two, the second named
/// `greet-hyper#2`: behind the 50 ms delay both are bound at 320 a second, so their four
/// searches each must find the same knee, within 10% of each other, and the comparison between
/// them must never call one ahead or behind. A search that a stall could move would fail this.
/// Their searches take turns, one of each a round: a block.
#[test]
fn the_same_server_twice_is_never_ahead_or_behind() {
    let _turn = shared_turn();
    let out = out_dir("capacity-a-a");
    let said = capacity_of_behind_the_delay("hyper,hyper", &out, &["--repeats", "4"]);
    let turns: Vec<&str> = said
        .lines()
        .filter(|l| l.contains(" of 4 settled at "))
        .filter_map(|l| l.split(": ").nth(1))
        .collect();
    // A Williams order: each first in half the rounds, each after the other alike.
    assert_eq!(
        turns,
        [
            "greet-hyper",
            "greet-hyper#2",
            "greet-hyper#2",
            "greet-hyper"
        ]
        .repeat(2),
        "A B B A A B B A:\n{said}"
    );
    let csv = std::fs::read_to_string(out.join("capacity.csv")).expect("capacity.csv");
    let capacity = capacity_in(&out);
    let names: Vec<&str> = capacity.servers.iter().map(|s| s.server.as_str()).collect();
    assert_eq!(names, ["greet-hyper", "greet-hyper#2"]);
    let [a, b] = [&capacity.servers[0], &capacity.servers[1]];
    for s in [a, b] {
        assert_eq!(s.searches.len(), 4, "{}", searched(s));
        assert!(
            (250.0..=345.0).contains(&s.capacity_rps) && !s.at_top,
            "the server's 320/s: {}",
            searched(s)
        );
        let (low, high) = s.spread().expect("a spread");
        assert!(
            low <= 1.0 && high >= 1.0,
            "around the capacity: {low} {high}"
        );
    }
    let ratio = a.capacity_rps / b.capacity_rps;
    assert!((0.9..=1.1).contains(&ratio), "{a:?}\n{b:?}");
    let compared = capacity
        .comparisons
        .iter()
        .find(|c| c.figure == greet_stats::paired::Figure::CapacityRps)
        .expect("the two compared");
    assert_eq!(
        (compared.a.as_str(), compared.b.as_str()),
        ("greet-hyper /greetings", "greet-hyper#2 /greetings")
    );
    // The same server twice is never ahead or behind of itself.
    assert!(
        matches!(
            compared.word(),
            greet_stats::paired::Word::Equal | greet_stats::paired::Word::Undecided
        ),
        "{compared:?}"
    );
    assert!(csv.contains("\ngreet-hyper#2,/greetings,"), "{csv}");
}

/// Two busy loops beside the run take what the server and the load generator leave of the
/// CPUs, so every level is run on a disturbed machine. Every run of one is set aside, held or
/// broken alike (a retry that followed only breaks pushed capacities up): each level is run
/// again three times, the last run standing, and the run says its verdicts were the busy
/// machine's. The loops can only take from the server, so no level past its 320/s holds: a
/// queue breaks whatever the machine does.
#[test]
fn every_level_on_a_busy_machine_is_run_again_and_a_queue_still_breaks() {
    let _turn = turn();
    let out = out_dir("capacity-busy");
    let hogs = Hogs::start(2);
    capacity_behind_the_delay(&out, &[]);
    drop(hogs);
    let report = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let capacity = capacity_in(&out);
    let hyper = &capacity.servers[0];
    let steps = &hyper.steps;
    assert!(
        steps.iter().all(|s| s.disturbed.is_some()),
        "every level ran beside the loops: {}",
        searched(hyper)
    );
    // The runs of each level, in order.
    let mut levels: Vec<Vec<&greet_bench::scenario::capacity::CapacityStep>> = Vec::new();
    for step in steps {
        match levels.last_mut() {
            Some(runs) if step.again => runs.push(step),
            _ => levels.push(vec![step]),
        }
    }
    for runs in &levels {
        // Three runs again whatever the first came to, and one more where the judge was
        // unsure of the last.
        assert!((4..=5).contains(&runs.len()), "{}", searched(hyper));
    }
    assert_eq!(
        hyper.disturbed_verdicts(),
        levels.len(),
        "{}",
        searched(hyper)
    );
    for s in steps.iter().filter(|s| s.target_rps > 345.0) {
        assert!(!s.held, "past the server's 320/s: {}", searched(hyper));
    }
    assert!(hyper.capacity_rps <= 345.0, "{}", searched(hyper));
    assert!(
        report.contains("decided on a disturbed machine, every run of them disturbed"),
        "the table says so"
    );
}

/// Busy loops on the machine, stopped when dropped. They run at the lowest priority, on the
/// time nothing else wants: the harness counts them as other programs all the same, and the
/// lighter tests running beside this one keep their CPUs; those that take turns on the
/// machine ([`crate::common::turn`]) wait for this one to end.
struct Hogs(Vec<std::process::Child>);

impl Hogs {
    /// `n` shells spinning.
    fn start(n: usize) -> Self {
        Hogs(
            (0..n)
                .map(|_| {
                    std::process::Command::new("nice")
                        .args(["-n", "19", "sh", "-c", "while :; do :; done"])
                        .spawn()
                        .expect("sh starts")
                })
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
