//! The harness's modules (and the load engine's, `greet-load`) depend on each other one way
//! only, so do the files inside each directory module (the data model's too, `greet-model`,
//! the crate below the harness); only the CLI sees clap (the agent's command line, in the
//! engine); and no scenario asks where its load runs.
//! `cargo test -p greet-bench --test harness layering:: -- --nocapture` prints the module graphs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod scenarios;

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

/// The top-level module a source file belongs to: `src/harness/load.rs` → `harness`.
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

/// The `src` of workspace crate `name`.
fn src_of(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .join("src")
}

/// The harness's sources, the bed's, the report's, the data model's and the statistics'
/// beneath them, and the load engine's.
const CRATES: [&str; 6] = [
    "greet-bench",
    "greet-bed",
    "greet-report",
    "greet-model",
    "greet-stats",
    "greet-load",
];

/// The top-level modules of `src`, from its files and folders (`lib.rs` and `main.rs` left
/// out): what the graph must have read.
fn top_modules(src: &Path) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .expect("src readable")
        .flatten()
        .map(|e| {
            e.file_name()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_owned()
        })
        .filter(|m| m != "lib" && m != "main")
        .collect()
}

fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // An item of the crate's root (`crate::median`) is no module: no edge.
    let modules = top_modules(src);
    for file in sources(src) {
        let from = module(src, &file);
        if from == "lib" || from == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable");
        let entry = graph.entry(from.clone()).or_default();
        entry.extend((uses(&text).into_iter()).filter(|m| *m != from && modules.contains(m)));
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
    for name in CRATES {
        let graph = graph(&src_of(name));
        println!("{name}:");
        for (module, deps) in &graph {
            let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
            println!("{module:>10} -> {}", deps.join(", "));
        }
        let read: BTreeSet<String> = graph.keys().cloned().collect();
        assert_eq!(
            read,
            top_modules(&src_of(name)),
            "every module of {name} read"
        );
        for node in graph.keys() {
            if let Some(found) = cycle(&graph, node, &mut Vec::new()) {
                panic!("import cycle in {name}: {}", found.join(" -> "));
            }
        }
    }
    // The bottom of the harness, its data model, is a crate below it: the plan knows nothing
    // of the results, and neither knows a module of the harness (the compiler holds that).
    let model = graph(&src_of("greet-model"));
    assert!(model["plan"].is_empty(), "{:?}", model["plan"]);
    // The two verdicts know nothing of each other; the paired one knows only the order a
    // block takes its servers in (its calibration models it).
    let stats = graph(&src_of("greet-stats"));
    assert!(
        stats["mann_whitney"].is_empty() && stats["paired"].iter().all(|m| m == "order"),
        "{stats:?}"
    );
    assert!(stats["order"].is_empty(), "{stats:?}");
    // The bed: what is sampled knows nothing of how it was started.
    let bed = graph(&src_of("greet-bed"));
    assert!(bed["sample"].is_empty(), "{:?}", bed["sample"]);
    // The report's primitives know no output format above them: tables and the drawing's
    // canvas are the bottom, the page and the scorecard the top.
    let report = graph(&src_of("greet-report"));
    for lower in ["table", "canvas", "csv"] {
        for upper in ["html", "scorecard", "scorecard_text", "charts"] {
            assert!(!report[lower].contains(upper), "{lower} uses {upper}");
        }
    }
    // The engine's loops share the work, the connection, the checks and the counting beneath
    // them, and nothing beneath them knows a loop; a shard runs any of them and knows no
    // coordinator; the figures know nothing else.
    let load = graph(&src_of("greet-load"));
    let loops = ["fresh", "sessions", "paced", "run"];
    for lower in ["work", "conn", "expect", "count", "figures"] {
        for upper in loops.iter().chain(&["shard", "local", "agent"]) {
            assert!(!load[lower].contains(*upper), "{lower} uses {upper}");
        }
    }
    assert!(load["figures"].is_empty(), "{:?}", load["figures"]);
    assert!(!load["shard"].contains("local") && !load["shard"].contains("agent"));
    assert!(load["conn"].contains("expect") && load["expect"].contains("count"));
}

/// Inside each directory module (`load/`, `server/`, …): which sibling files each file's code
/// names, as `super::x` or `crate::<dir>::x`, tests left out. `mod.rs` is the parent that
/// re-exports them, not a sibling.
fn inner_graphs(src: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = src.to_path_buf();
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&dir).expect("readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path.clone());
                files.push((
                    path.file_name().unwrap().to_string_lossy().into_owned(),
                    path.join("mod.rs"),
                ));
            } else if path.extension().is_some_and(|e| e == "rs") {
                let name = path.file_stem().unwrap().to_string_lossy().into_owned();
                if name != "mod" {
                    files.push((name, path));
                }
            }
        }
        if dir == src {
            continue;
        }
        let names: BTreeSet<String> = files.iter().map(|(n, _)| n.clone()).collect();
        let module = dir
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('/', "::");
        let mut graph = BTreeMap::new();
        for (name, file) in &files {
            let text = std::fs::read_to_string(file).expect("readable");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            let mut deps = BTreeSet::new();
            for prefix in ["super::".to_owned(), format!("crate::{module}::")] {
                for (i, _) in code.match_indices(prefix.as_str()) {
                    let rest = &code[i + prefix.len()..];
                    let rest = rest.strip_prefix('{').unwrap_or(rest);
                    for part in rest.split(['}', ';']).next().unwrap_or_default().split(',') {
                        let word: String = part
                            .trim()
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        if names.contains(&word) && word != *name {
                            deps.insert(word);
                        }
                    }
                }
            }
            graph.insert(name.clone(), deps);
        }
        out.insert(module, graph);
    }
    out
}

#[test]
fn files_in_a_module_depend_one_way() {
    let graphs = inner_graphs(&src_of("greet-bench"));
    for module in [
        "cli",
        "diff",
        "flags",
        "harness",
        "scenario",
        "scenario::ladder",
        "scenario::techempower",
        "tools",
    ] {
        assert!(
            graphs.contains_key(module),
            "{module}/ read: {:?}",
            graphs.keys()
        );
    }
    // The bed's and the data model's directory modules, in their own crates, by the same rule.
    let bed = inner_graphs(&src_of("greet-bed"));
    assert!(
        bed.contains_key("server") && bed.contains_key("sample"),
        "{bed:?}"
    );
    let model = inner_graphs(&src_of("greet-model"));
    let stats = inner_graphs(&src_of("greet-stats"));
    assert!(stats.contains_key("paired"), "{stats:?}");
    assert!(
        model.contains_key("plan") && model.contains_key("results"),
        "{model:?}"
    );
    for (module, graph) in graphs.iter().chain(&bed).chain(&model).chain(&stats) {
        println!("{module}/");
        for (file, deps) in graph {
            let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
            println!("  {file:>10} -> {}", deps.join(", "));
        }
        for node in graph.keys() {
            if let Some(found) = cycle(graph, node, &mut Vec::new()) {
                panic!("import cycle in {module}/: {}", found.join(" -> "));
            }
        }
    }
}

/// Only the command line sees clap: the harness's `cli`, the flags several scenarios share
/// (`flags`) and each scenario's own `flags.rs`; the engine's agent.
#[test]
fn only_the_cli_sees_clap() {
    for (name, cli) in [
        ("greet-bench", &["cli", "flags"][..]),
        ("greet-load", &["agent"]),
        ("greet-bed", &[]),
        ("greet-model", &[]),
        ("greet-report", &[]),
        ("greet-stats", &[]),
    ] {
        let src = src_of(name);
        for file in sources(&src) {
            let text = std::fs::read_to_string(&file).expect("readable");
            let code = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .any(|l| l.contains("clap"));
            let flags = module(&src, &file) == "scenario" && file.ends_with("flags.rs");
            if !cli.contains(&module(&src, &file).as_str()) && !flags {
                assert!(!code, "{} uses clap", file.display());
            }
        }
    }
}

#[test]
fn the_reader_finds_uses() {
    let text = "use crate::a::B;\nuse crate::{b, c::D};\nfn f() { crate::e::g(); greet_crate::x(); }\n// crate::z\n#[cfg(test)]\nuse crate::t;";
    let found: Vec<String> = uses(text).into_iter().collect();
    assert_eq!(found, ["a", "b", "c", "e"]);
}
