//! The scenarios' own rules: each is one folder that borrows from no other and asks nobody
//! where its load runs, is named once outside it (the list), and tells the report only what
//! its code does; the report names none.

use super::{sources, src_of};

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

/// The scenarios' names, from their folders.
fn scenario_names() -> Vec<String> {
    let dir = src_of("greet-bench").join("scenario");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("scenario/ readable")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // The kit every scenario is built with, not one of them.
        .filter(|name| name != "kit")
        .collect();
    names.sort();
    names
}

/// A scenario is one folder: what it is (`mod.rs`), its own flags (`flags.rs`, where clap
/// stays fenced), its run and its report; the layers below hold only what every scenario
/// shares (no file of theirs is named after one), no scenario borrows from another, and none
/// imports the list of scenarios it is on: only the kit (`scenario/kit/`).
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
    let (model, bed) = (src_of("greet-model"), src_of("greet-bed"));
    let layers = [
        model.join("plan"),
        model.join("results"),
        src_of("greet-report"),
        bed.join("server"),
        bed.join("sample"),
        src.join("harness"),
        src.join("flags"),
        src.join("open_loop"),
    ];
    for path in layers {
        let files = if path.is_dir() {
            sources(&path)
        } else {
            vec![path.with_extension("rs")]
        };
        assert!(files.iter().all(|f| f.exists()), "{} read", path.display());
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

/// A new scenario is its folder, its `pub mod` and one line of the list: outside its folder,
/// code names a scenario only in `scenario/mod.rs`'s `scenarios!` (each module once), and in
/// `merge`, the tool that makes agents' reports one ladder level. The command line's subcommands, `all`,
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

/// What a scenario tells the report of itself is what its code does: it measures a load
/// again under heavy steal (`measures_again`) where its folder calls `Harness::measure`, and
/// loads the stores (`stores`) where it names its stores (`fn stores`).
#[test]
fn a_scenario_says_what_its_code_does() {
    let src = src_of("greet-bench");
    let names = scenario_names();
    assert!(names.len() >= 10, "{names:?}");
    for name in &names {
        let folder = src.join("scenario").join(name);
        let code: String = sources(&folder)
            .iter()
            .map(|f| std::fs::read_to_string(f).expect("readable"))
            .collect();
        let about = std::fs::read_to_string(folder.join("mod.rs")).expect("mod.rs");
        assert_eq!(
            code.contains(".measure("),
            about.contains("measures_again: true"),
            "{name}: measures_again says what its run does"
        );
        assert_eq!(
            about.contains("fn stores("),
            about.contains("stores: true"),
            "{name}: stores says what it loads"
        );
    }
}

/// The report is a crate below the scenarios: its code names none of them; what it needs of
/// one, the scenario's `About` tells it through `Present`.
#[test]
fn the_report_names_no_scenario() {
    let names = scenario_names();
    for file in sources(&src_of("greet-report")) {
        let text = std::fs::read_to_string(&file).expect("readable");
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for name in &names {
                assert!(
                    !line.contains(&format!("\"{name}\"")),
                    "{} names {name}: {line}",
                    file.display()
                );
            }
        }
    }
}
