//! The harness's modules depend on each other one way only, and only the CLI sees clap.
//! `cargo test -p greet-bench --test layering -- --nocapture` prints the module graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("src readable").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// The top-level module a source file belongs to: `src/report/html.rs` → `report`.
fn module(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).expect("under src");
    let first = relative.components().next().expect("a component");
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_owned()
}

/// The top-level modules a file's code names as `crate::<module>`, tests left out.
fn uses(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut out = BTreeSet::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (i, _) in line.match_indices("crate::") {
            let before = &line[..i];
            // `greet_conformance::` and the like end in `_crate::`? No: only a bare `crate::`.
            if before.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let name: String = line[i + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
        // `use crate::{a, b::c}` groups.
        if let Some(rest) = line.trim_start().strip_prefix("use crate::{") {
            for part in rest.split([',', '}']) {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in sources(&src) {
        let from = module(&src, &file);
        if from == "lib" || from == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable");
        let entry = graph.entry(from.clone()).or_default();
        entry.extend(uses(&text).into_iter().filter(|m| *m != from));
    }
    graph
}

/// A cycle through `node`, if there is one, as the path that closes it.
fn cycle(
    graph: &BTreeMap<String, BTreeSet<String>>,
    node: &str,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    if let Some(at) = path.iter().position(|n| n == node) {
        let mut found = path[at..].to_vec();
        found.push(node.to_owned());
        return Some(found);
    }
    path.push(node.to_owned());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(found) = cycle(graph, next, path) {
            return Some(found);
        }
    }
    path.pop();
    None
}

#[test]
fn modules_depend_one_way() {
    let graph = graph();
    for (module, deps) in &graph {
        let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
        println!("{module:>8} -> {}", deps.join(", "));
    }
    assert!(graph.len() >= 12, "every module read: {graph:?}");
    for node in graph.keys() {
        if let Some(found) = cycle(&graph, node, &mut Vec::new()) {
            panic!("import cycle: {}", found.join(" -> "));
        }
    }
    // The bottom of the harness knows nothing above it.
    assert!(graph["stats"].is_empty(), "{:?}", graph["stats"]);
    assert!(graph["plan"].is_empty(), "{:?}", graph["plan"]);
}

#[test]
fn only_the_cli_sees_clap() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for file in sources(&src) {
        let text = std::fs::read_to_string(&file).expect("readable");
        let code = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .any(|l| l.contains("clap"));
        if module(&src, &file) != "cli" {
            assert!(!code, "{} uses clap", file.display());
        }
    }
}

#[test]
fn the_reader_finds_uses() {
    let text = "use crate::a::B;\nuse crate::{b, c::D};\nfn f() { crate::e::g(); greet_crate::x(); }\n// crate::z\n#[cfg(test)]\nuse crate::t;";
    let found: Vec<String> = uses(text).into_iter().collect();
    assert_eq!(found, ["a", "b", "c", "e"]);
}
