//! The first `cargo run --release -p greet-bench` compiles each crate once: the harness's own
//! build of the servers after it links their binaries and compiles nothing else. (Build
//! scripts that watch the variables `cargo run` sets for the harness, ring's among them, would
//! otherwise rebuild everything above them, twice.) `#[ignore]`d: on a machine with no release
//! build it would make one, minutes of both cores under every other test; CI builds it first.

use std::process::{Command, Stdio};

use greet_bed::server::build_command;
use greet_model::plan::SERVERS;

/// The packages and targets a cargo build compiled (rather than found fresh).
fn compiled(cmd: &mut Command) -> Vec<(String, Vec<String>)> {
    let out = cmd
        .arg("--message-format=json")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "{cmd:?} failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["fresh"] == false)
        .map(|m| {
            let kinds = m["target"]["kind"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str().map(str::to_owned))
                .collect();
            (
                m["target"]["name"].as_str().unwrap_or("?").to_owned(),
                kinds,
            )
        })
        .collect()
}

#[test]
#[ignore = "needs the release build: cargo build --release -p greet-bench -p greet-axum -p greet-actix -p greet-hyper"]
fn the_servers_build_after_the_harness_compiles_nothing_again() {
    let shorts: Vec<String> = SERVERS.map(String::from).to_vec();
    // As a shell runs it: `cargo build --release -p greet-bench`, what `cargo run` builds,
    // with none of what `cargo test` set for this process.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut harness = Command::new(cargo);
    harness
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(["build", "--release", "-p", "greet-bench"]);
    for (name, _) in std::env::vars() {
        let from_cargo = [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix));
        if from_cargo || name == "OUT_DIR" || name == "CARGO_PRIMARY_PACKAGE" {
            harness.env_remove(name);
        }
    }
    compiled(&mut harness);
    // Then as the harness runs it, from a process `cargo test` gave its own CARGO_PKG_* and
    // CARGO_MANIFEST_DIR, as `cargo run` gives the harness.
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let mut servers = build_command(&shorts).expect("run from the workspace");
    let again: Vec<_> = compiled(&mut servers)
        .into_iter()
        .filter(|(name, kinds)| {
            !(kinds == &["bin"] && shorts.iter().any(|s| *name == format!("greet-{s}")))
        })
        .collect();
    assert!(
        again.is_empty(),
        "compiled again besides the servers' binaries: {again:?}"
    );
}
