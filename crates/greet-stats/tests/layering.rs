//! The statistics stand alone: no crate of the workspace below them, so their claims are
//! tested on numbers alone. (Their modules' one-way order is held with the harness's, by
//! greet-bench's `tests/harness/layering/`.)

use std::path::Path;

#[test]
fn no_crate_of_the_workspace_below() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .expect("a [dependencies] table");
    assert!(!deps.contains("greet-"), "{deps}");
}
