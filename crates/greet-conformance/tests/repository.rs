//! The repository keeps its own promises: the licences Cargo.toml names are there, the
//! declared minimum Rust is what the locked dependencies need, no file sends a reader to a
//! document outside the repository, every source is formatted (whether `cargo fmt` reaches it
//! or not), and the size rules hold: 500 lines of code a file, five files a scenario folder,
//! 200 lines of README and 500 of the harness's guide.

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
            // A harness run's output is `results/`; greet-model's `src/results/` is source.
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

/// Every Rust source of the workspace's crates and benches, whether or not a module tree
/// reaches it.
fn rust_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["crates", "benches"] {
        texts(&root().join(dir), &mut files);
    }
    files.retain(|f| f.extension().is_some_and(|e| e == "rs"));
    files.sort();
    files
}

/// The files of `files` that rustfmt would change, each checked on its own: `cargo fmt` only
/// follows the modules it can see, and one declared inside a macro is not among them.
fn unformatted(files: &[PathBuf]) -> Vec<String> {
    let out = Command::new("rustfmt")
        .args(["--edition", "2021", "--check", "--files-with-diff"])
        .args(files)
        .output()
        .unwrap_or_else(|e| panic!("rustfmt: {e}: rustup component add rustfmt"));
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    let errors = String::from_utf8_lossy(&out.stderr).into_owned();
    // Exit 1 with files listed is "would change"; anything else is rustfmt failing to read.
    assert!(
        out.status.success() || (out.status.code() == Some(1) && errors.trim().is_empty()),
        "rustfmt failed: {errors}"
    );
    // A file is also checked through every file that declares it: name it once.
    let named: std::collections::BTreeSet<String> = listed.lines().map(str::to_owned).collect();
    named.into_iter().collect()
}

#[test]
fn every_source_file_is_formatted() {
    let files = rust_sources();
    assert!(files.len() > 200, "{} sources", files.len());
    let changed = unformatted(&files);
    assert!(
        changed.is_empty(),
        "rustfmt would change {changed:?}: run `cargo fmt --all`, and declare modules plainly \
         (not inside a macro) so that it reaches them"
    );
}

/// The check above fails where it should: a misformatted file is named.
#[test]
fn the_format_check_names_a_misformatted_file() {
    let dir = std::env::temp_dir().join(format!("greet-fmt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let (good, bad) = (dir.join("good.rs"), dir.join("bad.rs"));
    std::fs::write(&good, "fn main() {}\n").expect("written");
    std::fs::write(&bad, "fn  main( ) {\n}\n").expect("written");
    let changed = unformatted(&[good, bad.clone()]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(changed, [bad.display().to_string()]);
}

/// The lines of a source before its unit tests: what a reader reads to learn its job.
fn lines_before_tests(text: &str) -> usize {
    text.lines()
        .take_while(|l| l.trim_start() != "#[cfg(test)]")
        .count()
}

/// A file past 500 lines of code has grown past one job; split it along the jobs it holds.
#[test]
fn no_source_file_is_over_500_lines_before_its_tests() {
    let long: Vec<String> = rust_sources()
        .iter()
        .filter_map(|f| {
            let lines = lines_before_tests(&read(f));
            (lines > 500).then(|| format!("{} ({lines})", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "over 500 lines before the tests: {long:?}");
    assert_eq!(lines_before_tests("a\nb\n#[cfg(test)]\nmod tests {}\n"), 2);
}

/// A scenario is its folder (`mod.rs`, `flags.rs`, `run.rs`, `report.rs` and at most one
/// more): what is not the scenario's alone belongs to a shared floor.
#[test]
fn a_scenario_folder_holds_at_most_five_files() {
    let scenarios = root().join("crates/greet-bench/src/scenario");
    let mut folders = 0;
    for entry in std::fs::read_dir(&scenarios).expect("scenarios").flatten() {
        // The kit every scenario is built with is held to the same size.
        if !entry.path().is_dir() {
            continue;
        }
        folders += 1;
        let mut files = Vec::new();
        texts(&entry.path(), &mut files);
        assert!(
            files.len() <= 5,
            "{}: {} files",
            entry.path().display(),
            files.len()
        );
    }
    assert!(folders >= 10, "{folders} scenario folders");
}

/// The front page and the harness's guide stay readable at one sitting; dated runs go to
/// docs/results.md, and history to git.
#[test]
fn the_readme_and_the_harness_guide_keep_their_size() {
    for (file, most) in [("README.md", 200), ("docs/harness.md", 500)] {
        let lines = read(&root().join(file)).lines().count();
        assert!(lines <= most, "{file}: {lines} lines, at most {most}");
    }
}
