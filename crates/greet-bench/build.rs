//! Records the versions of the server crates from Cargo.lock and the compiler's, for
//! `results.json`'s meta.

use std::path::Path;

fn main() {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let mut versions = Vec::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_owned());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            if [
                "axum",
                "actix-web",
                "actix-http",
                "hyper",
                "hyper-util",
                "tokio",
            ]
            .contains(&n.as_str())
            {
                versions.push(format!("{n}={}", v.trim_matches('"')));
            }
        }
    }
    println!(
        "cargo:rustc-env=GREET_CRATE_VERSIONS={}",
        versions.join(",")
    );
    // The toolchain that built the harness (and, in one cargo invocation, the servers).
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_default();
    println!("cargo:rustc-env=GREET_RUSTC={version}");
}
