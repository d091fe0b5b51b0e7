//! The harness's modules (and the load engine's, `greet-load`) depend on each other one way
//! only, so do the files inside each directory module; only the CLI sees clap (the agent's
//! command line, in the engine); and no scenario asks where its load runs.
//! `cargo test -p greet-bench --test harness layering:: -- --nocapture` prints the module graphs.

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

/// The `src` of workspace crate `name`.
fn src_of(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .join("src")
}

/// The harness's sources, and the load engine's.
const CRATES: [&str; 2] = ["greet-bench", "greet-load"];

fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in sources(src) {
        let from = module(src, &file);
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
    for name in CRATES {
        let graph = graph(&src_of(name));
        println!("{name}:");
        for (module, deps) in &graph {
            let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
            println!("{module:>10} -> {}", deps.join(", "));
        }
        assert!(graph.len() >= 12, "every module of {name} read: {graph:?}");
        for node in graph.keys() {
            if let Some(found) = cycle(&graph, node, &mut Vec::new()) {
                panic!("import cycle in {name}: {}", found.join(" -> "));
            }
        }
    }
    // The bottom of the harness knows nothing above it.
    let bench = graph(&src_of("greet-bench"));
    assert!(bench["stats"].is_empty(), "{:?}", bench["stats"]);
    assert!(bench["plan"].is_empty(), "{:?}", bench["plan"]);
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

/// Where a load runs is the harness's to know: no scenario's run names agents or a swarm, so
/// a new place to run touches no scenario. (Its section and tables do: they record what each
/// agent counted.)
#[test]
fn no_scenario_asks_where_its_load_runs() {
    let scenarios = src_of("greet-bench").join("scenario");
    let runs = sources(&scenarios)
        .into_iter()
        .filter(|f| f.ends_with("run.rs") || f.ends_with("scenario/mod.rs"));
    for file in runs {
        let text = std::fs::read_to_string(&file)
            .expect("readable")
            .to_lowercase();
        for word in ["agent", "swarm"] {
            assert!(!text.contains(word), "{} names {word}", file.display());
        }
    }
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
        "plan",
        "report",
        "results",
        "sample",
        "scenario",
        "scenario::ladder",
        "scenario::techempower",
        "server",
        "stats",
        "tools",
    ] {
        assert!(
            graphs.contains_key(module),
            "{module}/ read: {:?}",
            graphs.keys()
        );
    }
    for (module, graph) in &graphs {
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

/// The scenarios' names, from their folders.
fn scenario_names() -> Vec<String> {
    let dir = src_of("greet-bench").join("scenario");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("scenario/ readable")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A scenario is one folder: what it is (`mod.rs`), its own flags (`flags.rs`, where clap
/// stays fenced), its run and its report; the layers below hold only what every scenario
/// shares (no file of theirs is named after one), no scenario borrows from another, and none
/// imports the list of scenarios it is on: only the kit (`scenario/kit.rs`).
#[test]
fn a_scenario_is_one_folder_and_borrows_from_none() {
    let src = src_of("greet-bench");
    let names = scenario_names();
    assert!(names.len() >= 9, "{names:?}");
    for name in &names {
        let folder = src.join("scenario").join(name);
        for file in ["mod", "flags", "run", "report"] {
            let path = folder.join(format!("{file}.rs"));
            assert!(path.exists(), "{} is missing", path.display());
        }
        for file in sources(&folder) {
            let text = std::fs::read_to_string(&file).expect("readable");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for other in names.iter().filter(|n| *n != name) {
                for borrowed in [
                    format!("crate::scenario::{other}"),
                    format!("super::super::{other}"),
                    format!("super::{other}::"),
                ] {
                    assert!(
                        !code.contains(&borrowed),
                        "{} borrows from {other}",
                        file.display()
                    );
                }
            }
            // Back to the list: `super::super::…`, or `crate::scenario::` but for the kit.
            let list = code
                .match_indices("crate::scenario::")
                .any(|(at, _)| !code[at + "crate::scenario::".len()..].starts_with("kit::"));
            // A folder's mod.rs is a child of the list: there `super::` is the list itself.
            let up = code.contains("super::super::")
                || (file.ends_with("mod.rs")
                    && code
                        .match_indices("super::")
                        .any(|(at, _)| !code[at + "super::".len()..].starts_with("kit::")));
            assert!(
                !list && !up,
                "{} imports the list of scenarios, not the kit",
                file.display()
            );
        }
    }
    for layer in ["plan", "results", "report", "harness", "flags", "open_loop"] {
        let path = src.join(layer);
        let files = if path.is_dir() {
            sources(&path)
        } else {
            vec![src.join(format!("{layer}.rs"))]
        };
        for file in files {
            let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
            assert!(
                !names.contains(&stem),
                "{} is named after a scenario",
                file.display()
            );
        }
    }
}

#[test]
fn the_reader_finds_uses() {
    let text = "use crate::a::B;\nuse crate::{b, c::D};\nfn f() { crate::e::g(); greet_crate::x(); }\n// crate::z\n#[cfg(test)]\nuse crate::t;";
    let found: Vec<String> = uses(text).into_iter().collect();
    assert_eq!(found, ["a", "b", "c", "e"]);
}

/// A new scenario is its folder and one line of the list: outside its folder, code names a
/// scenario only in `scenario/mod.rs`'s `scenarios!` (each module once), and in `merge`, the
/// tool that makes agents' reports one ladder level. The command line's subcommands, `all`,
/// the report's order and the sections of results.json all come from the list.
#[test]
fn a_scenario_is_named_once_outside_its_folder() {
    let src = src_of("greet-bench");
    let names = scenario_names();
    for name in &names {
        let folder = src.join("scenario").join(name);
        let path = format!("{name}::");
        let mut places = Vec::new();
        for file in sources(&src)
            .into_iter()
            .filter(|f| !f.starts_with(&folder))
        {
            let text = std::fs::read_to_string(&file).expect("readable");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                // `ladder::`, `scenario::ladder::`; not another crate's `greet_x::protocols::`.
                let named = line.match_indices(&path).any(|(at, _)| {
                    let before = &line[..at];
                    !before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
                        && (!before.ends_with("::") || before.ends_with("scenario::"))
                });
                if named {
                    let relative = file.strip_prefix(&src).expect("under src");
                    places.push(relative.display().to_string());
                }
            }
        }
        let allowed: &[&str] = if name == "ladder" {
            &["scenario/mod.rs", "tools/merge.rs"]
        } else {
            &["scenario/mod.rs"]
        };
        assert_eq!(
            places.iter().filter(|p| *p == "scenario/mod.rs").count(),
            1,
            "{name}: one line in the list"
        );
        for place in &places {
            assert!(allowed.contains(&place.as_str()), "{place} names {name}");
        }
    }
}
