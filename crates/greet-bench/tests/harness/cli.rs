//! The command line as a user meets it: every bad flag is one line and exit 2, the errors name
//! what is wrong, and an installed harness finds installed servers.

use std::path::Path;
use std::process::Command;

use crate::common::{assert_one_line_error, assert_one_line_exit, out_dir, BENCH};

/// Every refused command line, in one list.
const BAD: &[&[&str]] = &[
    &["--servers", "lighttpd"],
    &["--servers", "axum:greetings"],
    &["--concurrency", "0"],
    &["--concurrency", "10,x"],
    &["--target", "nourl"],
    &["--target", "x=ftp://h"],
    &["--target", "=http://h"],
    &["--repeats", "0"],
    &["--timeout-secs", "0"],
    &["--endpoint", "greetings"],
    &["--workers", "0"],
    &["no-such-scenario"],
    &["soak", "--duration", "0s"],
    &["soak", "--duration", "0s"],
    &["soak", "--duration", "0ms"],
    &["soak", "--duration", "ten"],
    &["soak", "--duration", "1s", "--requests", "10"],
    &["soak", "--requests", "0"],
    &["soak", "--concurrency", ""],
    &["sweep", "--workers", ""],
    &["sweep", "--workers", "0"],
    &["sweep", "--blocking-threads", ","],
    &["sweep", "--duration", "0s"],
    &["loops", "--shapes", "100"],
    &["loops", "--shapes", "0x10"],
    &["loops", "--shapes", ""],
    &["loops", "--servers", "axum:/health"],
    &["loops", "--repeats", "0"],
    &["all", "--servers", "nginx"],
    &["sweep", "--target", "x=http://127.0.0.1:9"],
    &["--expect", "("],
    &["--contract", "medium"],
    &["loops", "--target", "x"],
    &["check"],
    &["business", "--stores", "mysql"],
    &["business", "--stores", ""],
    &["business", "--db-pools", "0"],
    &["business", "--db-pools", "many"],
    &[
        "business",
        "--database-url",
        "postgres://greet@127.0.0.1/greet",
    ],
    &["business", "--redis-url", "redis://127.0.0.1:6379"],
    &[
        "business",
        "--database-url",
        "sqlite:///tmp/x.db",
        "--redis-url",
        "redis://h",
    ],
    &[
        "business",
        "--database-url",
        "postgres://h/d",
        "--redis-url",
        "http://h",
    ],
    &[
        "business",
        "--database-url",
        "postgres://u@h:port/d",
        "--redis-url",
        "redis://h",
    ],
    &["business", "--target", "x=http://127.0.0.1:9"],
];

#[test]
fn bad_command_lines_are_one_line_errors() {
    for args in BAD {
        assert_one_line_error(args);
    }
}

#[test]
fn errors_name_what_is_wrong() {
    let unknown = assert_one_line_error(&["frobnicate"]);
    assert!(
        unknown.contains("unknown scenario \"frobnicate\""),
        "{unknown}"
    );
    let store = assert_one_line_error(&["business", "--stores", "mysql"]);
    assert!(
        store.contains("the stores are sqlite and postgres"),
        "{store}"
    );
    let zero = assert_one_line_error(&["soak", "--duration", "0s"]);
    assert!(zero.contains("more than zero"), "{zero}");
    let bare = assert_one_line_error(&["workloads", "--duration", "5"]);
    assert!(bare.contains("needs its unit"), "{bare}");
    let band = assert_one_line_error(&["workloads", "--band", "0.05"]);
    assert!(band.contains("a percentage with its %"), "{band}");
    let missing = assert_one_line_error(&["check"]);
    assert!(
        missing.contains("<URL>"),
        "the missing argument is named: {missing}"
    );
    let typo = assert_one_line_error(&["--concurrenc", "10"]);
    assert!(
        typo.contains("a similar argument exists: '--concurrency'"),
        "{typo}"
    );
}

#[test]
fn help_lists_the_scenarios_and_examples() {
    let out = Command::new(BENCH).arg("--help").output().expect("runs");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for word in [
        "ladder",
        "loops",
        "soak",
        "sweep",
        "business",
        "rate",
        "all",
        "check",
        "Examples:",
        "--bin-dir",
    ] {
        assert!(help.contains(word), "{word} in {help}");
    }
    assert!(help.contains("Servers:") && help.contains("Output and gates:"));

    // -h: one screen, the first things to try, the shared flags a first run needs only.
    let out = Command::new(BENCH).arg("-h").output().expect("runs");
    let short = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        short.lines().count() < 40,
        "{} lines:\n{short}",
        short.lines().count()
    );
    assert!(
        short.contains("--quick") && short.contains("workloads"),
        "{short}"
    );
    assert!(
        !short.contains("--bin-dir") && !short.contains("Exit codes"),
        "{short}"
    );

    // A scenario shows its own flags and its examples, not another's.
    let out = Command::new(BENCH)
        .args(["ladder", "--help"])
        .output()
        .expect("runs");
    let ladder = String::from_utf8_lossy(&out.stdout);
    assert!(ladder.contains("--concurrency") && ladder.contains("Examples:"));
    assert!(
        !ladder.contains("--pipeline"),
        "the ladder pipelines nothing: {ladder}"
    );
    let out = Command::new(BENCH)
        .args(["rate", "-h"])
        .output()
        .expect("runs");
    let rate = String::from_utf8_lossy(&out.stdout);
    assert!(
        rate.contains("--rates") && rate.contains("greet-bench rate --rates"),
        "{rate}"
    );
}

#[test]
fn a_flag_of_another_command_is_named_with_it() {
    let line = assert_one_line_error(&["ladder", "--rates", "10k"]);
    assert!(
        line.contains("--rates is not a flag of ladder: it belongs to rate"),
        "{line}"
    );
    let line = assert_one_line_error(&["--slo", "p99<5ms"]);
    assert!(line.contains("it belongs to capacity"), "{line}");
    let line = assert_one_line_error(&["rate", "--pipeline", "4"]);
    assert!(
        line.contains("--pipeline 4") && line.contains("only loops"),
        "{line}"
    );
}

/// Copies `from` to `dir`, executable.
fn install(from: &Path, dir: &Path) {
    std::fs::create_dir_all(dir).expect("dir");
    std::fs::copy(from, dir.join(from.file_name().expect("a file"))).expect("copied");
}

/// `cmd`'s output. A binary just copied can be refused for a moment ("text file busy"): a
/// process another test forks meanwhile inherits the copy's write descriptor until it execs.
fn run(cmd: &mut Command) -> std::process::Output {
    for _ in 0..100 {
        match cmd.output() {
            Err(err) if err.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            result => return result.expect("runs"),
        }
    }
    panic!("{cmd:?}: text file busy for 2 s");
}

#[test]
fn an_installed_harness_finds_servers_beside_it_or_says_how() {
    let root = out_dir("installed");
    let bin = root.join("bin");
    install(Path::new(BENCH), &bin);
    let installed = bin.join("greet-bench");
    // Nothing beside it and nothing on PATH: one line naming the way out.
    let output = run(Command::new(&installed)
        .args(["--quiet", "--servers", "hyper", "--concurrency", "1"])
        .env("PATH", root.join("empty"))
        .current_dir(&root));
    let stderr = assert_one_line_exit(&output, 1);
    assert!(
        stderr.contains("greet-hyper") && stderr.contains("--bin-dir"),
        "{stderr}"
    );
    // The server installed beside it: found, run, measured.
    let server = Path::new(BENCH).with_file_name("greet-hyper");
    if !server.is_file() {
        // `cargo test -p greet-bench` alone builds no server binary in this target dir.
        eprintln!(
            "skipping the found-beside half: {} not built",
            server.display()
        );
        return;
    }
    install(&server, &bin);
    let out = root.join("results");
    let output = run(Command::new(&installed)
        .args([
            "--quiet",
            "--servers",
            "hyper",
            "--concurrency",
            "5",
            "--delay-ms",
            "0",
        ])
        .args(["--out", out.to_str().expect("utf-8")])
        .env("PATH", root.join("empty")));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let ladder = crate::common::results(&out.join("results.json"))
        .sections
        .ladder
        .expect("ladder");
    assert_eq!(ladder.servers[0].levels[0].run.load.success_rate, 100.0);
    let _ = std::fs::remove_dir_all(&root);
}
