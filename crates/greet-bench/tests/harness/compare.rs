//! Thresholds on a run and `compare` of two runs, end to end: small ladders of the real
//! hyper server, held to thresholds, then compared as a CI job would.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::{assert_one_line_exit, bench, out_dir, results, BENCH};

/// A ladder of hyper at two small levels, two runs each, into `out`.
fn ladder(out: &Path, delay_ms: &str, thresholds: &[&str]) -> Output {
    let mut args = vec![
        "--quiet",
        "--servers",
        "hyper",
        "--concurrency",
        "10,20",
        "--delay-ms",
        delay_ms,
        "--repeats",
        "2",
        "--out",
        out.to_str().expect("utf-8 path"),
    ];
    for t in thresholds {
        args.extend(["--threshold", t]);
    }
    bench(&args)
}

fn compare(args: &[&str]) -> Output {
    Command::new(BENCH)
        .arg("compare")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("greet-bench runs")
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

#[test]
fn thresholds_gate_a_run_and_compare_pairs_two() {
    let (a, b, slower) = (out_dir("gate-a"), out_dir("gate-b"), out_dir("gate-slower"));
    let held = ladder(&a, "20", &["success>=100%", "hyper:total<5s", "p99<2s"]);
    let stdout = text(&held.stdout);
    assert!(held.status.success(), "{stdout}\n{}", text(&held.stderr));
    assert!(
        stdout.contains("threshold hyper:total<5s: held"),
        "{stdout}"
    );
    let run_a = results(&a.join("results.json"));
    assert!(run_a
        .meta
        .rustc
        .as_deref()
        .is_some_and(|v| v.starts_with("rustc ")));
    let checked = run_a.thresholds;
    assert_eq!(checked.len(), 3);
    assert!(
        checked.iter().all(|t| t.held && t.figures > 0),
        "{checked:?}"
    );

    // 20 ms of delay cannot be answered in 1 ms; a server that did not run names no figure,
    // and that breaches too.
    let breached = ladder(&b, "20", &["total<1ms", "tomcat:total<5s"]);
    assert_eq!(
        breached.status.code(),
        Some(3),
        "{}",
        text(&breached.stderr)
    );
    let stdout = text(&breached.stdout);
    assert!(stdout.contains("threshold total<1ms: BREACHED"), "{stdout}");
    let checked = results(&b.join("results.json")).thresholds;
    assert!(checked.iter().all(|t| !t.held), "{checked:?}");
    assert_eq!(checked[1].figures, 0, "{checked:?}");

    // The same settings twice: every figure paired, nothing called worse beyond the noise
    // band with two runs a side (Mann-Whitney cannot separate 2 and 2).
    let same = compare(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    let table = text(&same.stdout);
    assert!(same.status.success(), "{table}\n{}", text(&same.stderr));
    assert!(table.starts_with("compare: "), "{table}");
    assert!(table.contains("hyper") && table.contains("c=20"), "{table}");
    assert!(table.contains("too few runs: no verdict"), "{table}");
    assert!(!table.contains("settings differ"), "{table}");
    // Both scorecards, row by row: hyper alone, the best in each.
    assert!(
        table.contains("Scorecard, OLD → NEW")
            && table.contains("ladder: start-up: greet-hyper 1.00  → 1.00 "),
        "{table}"
    );

    // A run drawn again: beside it, its results.json untouched; into --out, all of it.
    let before = std::fs::read(a.join("results.json")).expect("results.json");
    let _ = std::fs::remove_file(a.join("report.html"));
    let drawn = Command::new(BENCH)
        .args(["report", a.to_str().unwrap()])
        .output()
        .expect("greet-bench runs");
    assert!(drawn.status.success(), "{}", text(&drawn.stderr));
    assert!(text(&drawn.stdout).contains("Scorecard:"));
    assert!(a.join("report.html").is_file());
    assert_eq!(
        std::fs::read(a.join("results.json")).expect("results.json"),
        before
    );
    let copy = out_dir("gate-a-drawn");
    let drawn = Command::new(BENCH)
        .args([
            "report",
            a.to_str().unwrap(),
            "--out",
            copy.to_str().unwrap(),
        ])
        .output()
        .expect("greet-bench runs");
    assert!(drawn.status.success(), "{}", text(&drawn.stderr));
    let copied = results(&copy.join("results.json"));
    assert_eq!(copied.scorecard, results(&a.join("results.json")).scorecard);
    assert!(!copied.scorecard.rows.is_empty() && copy.join("report.html").is_file());
    let _ = std::fs::remove_dir_all(&copy);

    let json = compare(&["--format", "json", a.to_str().unwrap(), b.to_str().unwrap()]);
    let parsed: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    let rows = parsed["rows"].as_array().expect("rows");
    assert!(
        rows.len() >= 2 * 6,
        "two levels, six load figures each: {}",
        rows.len()
    );
    for row in rows {
        let (old, new) = (row["old"].as_f64().unwrap(), row["new"].as_f64().unwrap());
        match row["ratio"].as_f64() {
            Some(ratio) => assert!((ratio - new / old).abs() < 1e-9, "{row}"),
            None => assert_eq!(old, 0.0, "only a zero has no ratio: {row}"),
        }
    }
    let md = compare(&["--format", "md", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(text(&md.stdout).contains("| scenario | server | at |"));

    // Ratio thresholds: every answer valid in both runs is a success ratio of exactly 1, and
    // no p99 of a 20 ms delay falls to a tenth (totals of ~22 ms move 10-20 % with a stall,
    // so neither bound rests on timing).
    let gate = compare(&[
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--threshold",
        "success>=1x",
        "--threshold",
        "hyper:p99<0.1x",
    ]);
    assert_eq!(gate.status.code(), Some(3), "{}", text(&gate.stderr));
    let lines = text(&gate.stderr);
    assert!(lines.contains("threshold success>=1x: held"), "{lines}");
    assert!(
        lines.contains("threshold hyper:p99<0.1x: BREACHED"),
        "{lines}"
    );
    // Two runs a side cannot be tested against the machine's drift: the line says the ratio
    // alone breached.
    assert!(
        lines.contains("on the ratio alone: too few runs"),
        "{lines}"
    );

    // Another delay: the figures are shown, never judged, and the header says why.
    assert!(ladder(&slower, "100", &[]).status.success());
    let unlike = compare(&[a.to_str().unwrap(), slower.to_str().unwrap()]);
    let table = text(&unlike.stdout);
    assert!(
        table.contains("differs: ladder settings: delay_ms 20 → 100"),
        "{table}"
    );
    assert!(table.contains("settings differ: no verdict"), "{table}");
    assert!(!table.contains("too few runs: no verdict"), "{table}");

    // The same two runs as a deliberate A/B of the delay: judged (as far as two runs a side
    // allow), held to ratios, and marked; a setting they do not differ in is refused.
    let ab = [a.to_str().unwrap(), slower.to_str().unwrap()];
    let varied = compare(
        &[
            &ab[..],
            &["--vary", "delay_ms", "--threshold", "min(p50)>1.5x"],
        ]
        .concat(),
    );
    let table = text(&varied.stdout);
    assert!(varied.status.success(), "{table}\n{}", text(&varied.stderr));
    assert!(table.contains("delay_ms 20 → 100 (varied)"), "{table}");
    assert!(!table.contains("settings differ"), "{table}");
    assert!(
        text(&varied.stderr).contains("threshold min(p50)>1.5x: held"),
        "the fastest median latency behind a 100 ms delay is over 1.5 times one behind 20 ms, \
         even with 30 ms of stall on the 20 ms side"
    );
    let typo = compare(&[&ab[..], &["--vary", "workers"]].concat());
    let err = assert_one_line_exit(&typo, 2);
    assert!(
        err.contains("--vary workers: the runs do not differ in it (they differ in: delay_ms)"),
        "{err}"
    );
}

#[test]
fn compare_refuses_what_it_cannot_read_in_one_line() {
    let missing = compare(&["/nonexistent/old", "/nonexistent/new"]);
    let err = assert_one_line_exit(&missing, 2);
    assert!(
        err.contains("cannot read /nonexistent/old/results.json")
            || err.contains("cannot read /nonexistent/old"),
        "{err}"
    );

    let dir = out_dir("gate-old-schema");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("results.json"),
        r#"{"schema_version": 1, "levels": []}"#,
    )
    .unwrap();
    let old = compare(&[dir.to_str().unwrap(), dir.to_str().unwrap()]);
    let err = assert_one_line_exit(&old, 2);
    assert!(
        err.contains("has schema_version 1; this greet-bench reads 2"),
        "{err}"
    );

    // A ratio is for compare, an absolute value for a run.
    let run = bench(&["--threshold", "total<1.1x", "--quiet"]);
    let err = assert_one_line_exit(&run, 2);
    assert!(err.contains("a ratio (x) compares two runs"), "{err}");
    let ratio = compare(&["--threshold", "p99<5ms", "a", "b"]);
    let err = assert_one_line_exit(&ratio, 2);
    assert!(err.contains("compare holds ratios"), "{err}");
}

#[test]
fn a_saved_baseline_is_compared_and_gated_by_ratio() {
    let cwd = out_dir("gate-baseline");
    std::fs::create_dir_all(&cwd).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--quiet",
            "--servers",
            "hyper",
            "--concurrency",
            "10",
            "--delay-ms",
            "20",
            "--repeats",
            "2",
        ];
        args.extend(extra);
        Command::new(BENCH)
            .args(&args)
            .args(crate::common::bin_dir_args())
            .current_dir(&cwd)
            .stdin(Stdio::null())
            .output()
            .expect("greet-bench runs")
    };
    let saved = run(&["--save-baseline", "main"]);
    assert!(saved.status.success(), "{}", text(&saved.stderr));
    let kept = cwd.join("results/baselines/main/results.json");
    assert!(kept.is_file(), "{}", kept.display());
    assert!(text(&saved.stderr).contains("baseline main saved in results/baselines/main"));

    let gated = run(&[
        "--baseline",
        "main",
        "--threshold",
        "success>=1x",
        "--threshold",
        "p99<0.1x",
    ]);
    assert_eq!(gated.status.code(), Some(3), "{}", text(&gated.stderr));
    let stdout = text(&gated.stdout);
    assert!(
        stdout.contains("Against baseline main: compare: "),
        "{stdout}"
    );
    assert!(stdout.contains("threshold success>=1x: held"), "{stdout}");
    assert!(stdout.contains("threshold p99<0.1x: BREACHED"), "{stdout}");

    let by_name = Command::new(BENCH)
        .args([
            "compare",
            "--format",
            "json",
            "--baseline",
            "main",
            "results/baselines/main",
        ])
        .current_dir(&cwd)
        .output()
        .expect("greet-bench runs");
    assert!(by_name.status.success(), "{}", text(&by_name.stderr));
    let itself: serde_json::Value = serde_json::from_slice(&by_name.stdout).expect("json");
    let rows = itself["rows"].as_array().expect("rows");
    assert!(!rows.is_empty());
    for row in rows {
        assert!(
            row["ratio"].is_null() || row["ratio"] == 1.0,
            "a run against itself: {row}"
        );
    }

    // Refused before anything runs: a baseline that is not there, a ratio without one.
    let missing = run(&["--baseline", "nope"]);
    let err = assert_one_line_exit(&missing, 2);
    assert!(
        err.contains("baseline nope: cannot read results/baselines/nope"),
        "{err}"
    );
    let two = Command::new(BENCH)
        .args(["compare", "--baseline", "main", "a", "b"])
        .output()
        .expect("greet-bench runs");
    assert!(assert_one_line_exit(&two, 2).contains("takes one run, NEW"));
}
