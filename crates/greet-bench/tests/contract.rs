//! The scenario contract is the compiler's: a scenario that leaves out a part the contract
//! requires does not build. `src/scenario/incomplete.rs` is such a scenario, listed only with
//! the `incomplete-scenario` feature; this builds the harness with it (in a target directory
//! of its own: the one `cargo test` holds is locked) and holds that the build fails once for
//! each part it leaves out, and for nothing else.

use std::path::Path;
use std::process::Command;

/// Each part the incomplete scenario leaves out, and what the compiler says of it.
const PARTS: [(&str, &str); 4] = [
    ("what it says of itself, its name first", "missing: `ABOUT`"),
    ("the frame in its section", "method `frame` on type `&"),
    (
        "what its section compares",
        "incomplete::Section: Compared` is not satisfied",
    ),
    (
        "how it runs",
        "incomplete::Incomplete: Run` is not satisfied",
    ),
];

#[test]
fn a_scenario_that_leaves_out_a_part_does_not_build() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = crate_dir.join("../../target/incomplete-scenario");
    let out = Command::new(env!("CARGO"))
        .args([
            "check",
            "--quiet",
            "--locked",
            "--lib",
            "--message-format",
            "short",
        ])
        .args([
            "--package",
            "greet-bench",
            "--features",
            "incomplete-scenario",
        ])
        .arg("--target-dir")
        .arg(&target)
        .current_dir(crate_dir)
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a scenario leaving out the contract's parts built"
    );
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error[")).collect();
    for (part, said) in PARTS {
        assert!(
            errors.iter().any(|e| e.contains(said)),
            "leaving out {part} did not fail the build with {said:?}:\n{stderr}"
        );
    }
    for error in &errors {
        assert!(
            error.contains("incomplete") && PARTS.iter().any(|(_, said)| error.contains(said)),
            "an error no left-out part explains: {error}\n{stderr}"
        );
    }
}
