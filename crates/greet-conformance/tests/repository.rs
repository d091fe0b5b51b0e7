//! The repository keeps its own promises: the licences Cargo.toml names are there, the
//! declared minimum Rust is what the locked dependencies need, and no file sends a reader to a
//! document outside the repository.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `key = "value"` from the workspace's Cargo.toml.
fn workspace_field(key: &str) -> String {
    read(&root().join("Cargo.toml"))
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = ")))
        .map(|v| v.trim().trim_matches('"').to_owned())
        .unwrap_or_else(|| panic!("no {key} in Cargo.toml"))
}

/// `1.89` → `(1, 89)`.
fn version(text: &str) -> (u32, u32) {
    let mut parts = text.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

#[test]
fn the_licences_named_are_shipped() {
    assert_eq!(workspace_field("license"), "MIT OR Apache-2.0");
    assert!(read(&root().join("LICENSE-MIT")).contains("Permission is hereby granted"));
    assert!(read(&root().join("LICENSE-APACHE")).contains("Apache License"));
}

#[test]
fn rust_version_is_what_the_lock_needs() {
    let declared = workspace_field("rust-version");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let needed = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| Some((p["rust_version"].as_str()?, p["name"].as_str()?)))
        .max_by_key(|(v, _)| version(v))
        .expect("some package declares a rust-version");
    assert!(
        version(&declared) >= version(needed.0),
        "rust-version {declared} in Cargo.toml, but {} needs {}",
        needed.1,
        needed.0
    );
}

/// Every text file of the repository a reader meets: docs and sources.
fn texts(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            // A harness run's output is `results/`; greet-bench's `src/results/` is source.
            let output = name == "results" && !dir.ends_with("src");
            if !output && !["target", ".git", "corpus", "artifacts"].contains(&name.as_str()) {
                texts(&path, out);
            }
        } else if [".rs", ".md", ".toml", ".yaml", ".sh"]
            .iter()
            .any(|e| name.ends_with(e))
            || name == "run"
        {
            out.push(path);
        }
    }
}

#[test]
fn no_file_cites_a_document_outside_the_repository() {
    let mut files = Vec::new();
    texts(&root(), &mut files);
    assert!(files.len() > 30, "{} files", files.len());
    // Written split, so that this file does not name them itself.
    let outside = [["DESIGN", ".md"].concat(), ["../", "shared"].concat()];
    for file in files {
        let text = read(&file);
        for name in &outside {
            assert!(
                !text.contains(name.as_str()),
                "{} cites {name}",
                file.display()
            );
        }
    }
}

/// A test that needs an outside program (or the release build, which takes minutes to make)
/// is `#[ignore]`d with a reason that says how to get it, so `cargo test` passes anywhere and
/// names what it did not run; CI runs them all (`-- --include-ignored`) and fails if any was
/// left out.
#[test]
fn every_ignored_test_says_what_to_install() {
    let mut files = Vec::new();
    texts(&root(), &mut files);
    // Written split, so that this test does not find itself.
    let attribute = ["#[", "ignore"].concat();
    let mut ignored = 0;
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
        for line in read(file).lines().map(str::trim) {
            if !line.starts_with(&attribute) {
                continue;
            }
            ignored += 1;
            assert!(
                line.starts_with(&format!("{attribute} = \"needs "))
                    && (line.contains("apt-get install -y ")
                        || line.contains("pip install ")
                        || line.contains("docker/build-offline.sh")
                        || line.contains("cargo build --release ")),
                "{}: {line}: say what it needs and how to install it",
                file.display()
            );
        }
    }
    assert!(
        ignored > 0,
        "no ignored test found: is this test still looking?"
    );
}
