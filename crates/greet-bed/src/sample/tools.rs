//! What the counts were taken with: the versions of glibc, valgrind and perf, and whether
//! glibc took the vector-loop tunables ([`VECTOR_LOOPS`]) the instruction counts rely on. A
//! valgrind release changes how some instructions are counted and a glibc release its string
//! routines, so two runs' counts compare only where these agree: a run records them, and its
//! tables print them rather than assume them.

use std::process::Command;

use serde::{Deserialize, Serialize};

use super::count::VECTOR_LOOPS;

/// glibc's dynamic loader on x86-64: it tells its version (`--version`) and the tunables it
/// takes (`--list-tunables`, glibc 2.33 and later), by absolute path, so with any `PATH`.
const LOADER: &str = "/lib64/ld-linux-x86-64.so.2";

/// The tools behind a run's counts; none where one could not be asked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tools {
    /// glibc's version (`2.36`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glibc: Option<String>,
    /// valgrind's version (`3.19.0`), where it counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valgrind: Option<String>,
    /// perf's version, where it counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf: Option<String>,
    /// Whether glibc's loader lists both [`VECTOR_LOOPS`] tunables at the values set: glibc
    /// ignores a tunable it does not know or a value past its bounds, silently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_loops: Option<bool>,
}

impl Tools {
    /// This machine's, asking valgrind and perf only where they counted.
    pub fn here(valgrind: bool, perf: bool) -> Tools {
        let said = |program: &str, args: &[&str], env: Option<(&str, &str)>| {
            let mut cmd = Command::new(program);
            cmd.args(args);
            if let Some((k, v)) = env {
                cmd.env(k, v);
            }
            let out = cmd.output().ok().filter(|o| o.status.success())?;
            Some(String::from_utf8_lossy(&out.stdout).into_owned())
        };
        Tools {
            glibc: said(LOADER, &["--version"], None).and_then(|t| glibc_version(&t)),
            valgrind: valgrind
                .then(|| said("valgrind", &["--version"], None))
                .flatten()
                .and_then(|t| after(&t, "valgrind-")),
            perf: perf
                .then(|| said("perf", &["--version"], None))
                .flatten()
                .and_then(|t| after(&t, "perf version ")),
            vector_loops: said(
                LOADER,
                &["--list-tunables"],
                Some(("GLIBC_TUNABLES", VECTOR_LOOPS)),
            )
            .map(|t| vector_loops_taken(&t)),
        }
    }

    /// The tools in a few words for a table's note: `valgrind 3.19.0, perf 6.1 on glibc 2.36`
    /// and what became of the tunables, or none where nothing was recorded (an older run).
    pub fn describe(&self) -> Option<String> {
        let named: Vec<String> = [("valgrind", &self.valgrind), ("perf", &self.perf)]
            .into_iter()
            .filter_map(|(tool, v)| v.as_ref().map(|v| format!("{tool} {v}")))
            .collect();
        let glibc = self.glibc.as_ref().map(|v| format!("glibc {v}"));
        let tools = match (named.is_empty(), glibc) {
            (true, None) => None,
            (true, Some(glibc)) => Some(format!("on {glibc}")),
            (false, None) => Some(named.join(", ")),
            (false, Some(glibc)) => Some(format!("{} on {glibc}", named.join(", "))),
        };
        let loops = match self.vector_loops {
            Some(true) => Some(
                "glibc took the tunables that keep memset and memcpy on their vector loops under \
                 callgrind (valgrind counts a rep-prefixed fill or copy once a byte)",
            ),
            Some(false) => Some(
                "glibc did NOT take the tunables that keep memset and memcpy on their vector \
                 loops: where they fill or copy large blocks, callgrind counts a byte an \
                 instruction",
            ),
            None => None,
        };
        match (tools, loops) {
            (None, None) => None,
            (Some(t), None) => Some(format!("Counted with {t}.")),
            (None, Some(l)) => Some(format!("{}{}.", l[..1].to_uppercase(), &l[1..])),
            (Some(t), Some(l)) => Some(format!("Counted with {t}; {l}.")),
        }
    }
}

/// The version in the loader's `--version` line: `… stable release version 2.36.`
fn glibc_version(text: &str) -> Option<String> {
    let line = text.lines().next()?;
    let version = line.split("release version ").nth(1)?;
    let version = version.trim().trim_end_matches('.');
    (!version.is_empty()).then(|| version.to_owned())
}

/// The first line's text after `prefix`: `valgrind-3.19.0` → `3.19.0`.
fn after(text: &str, prefix: &str) -> Option<String> {
    let rest = text.lines().next()?.trim().strip_prefix(prefix)?;
    (!rest.is_empty()).then(|| rest.to_owned())
}

/// Whether `--list-tunables` (`glibc.cpu.x86_rep_movsb_threshold: 0x10000000000 (min: …)`)
/// shows every tunable of [`VECTOR_LOOPS`] at the value set there.
fn vector_loops_taken(list: &str) -> bool {
    VECTOR_LOOPS.split(':').all(|setting| {
        let Some((name, value)) = setting.split_once('=') else {
            return false;
        };
        let Ok(wanted) = value.parse::<u64>() else {
            return false;
        };
        list.lines().any(|line| {
            let Some(shown) = line
                .trim()
                .strip_prefix(name)
                .and_then(|r| r.strip_prefix(": "))
            else {
                return false;
            };
            let hex = shown.split_whitespace().next().unwrap_or_default();
            u64::from_str_radix(hex.trim_start_matches("0x"), 16) == Ok(wanted)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_what_the_tools_say() {
        let loader = "ld.so (Debian GLIBC 2.36-9+deb12u14) stable release version 2.36.\n\
                      Copyright (C) 2022 Free Software Foundation, Inc.\n";
        assert_eq!(glibc_version(loader).as_deref(), Some("2.36"));
        assert_eq!(glibc_version("ld.so: no version\n"), None);
        assert_eq!(
            after("valgrind-3.19.0\n", "valgrind-").as_deref(),
            Some("3.19.0")
        );
        assert_eq!(
            after("perf version 6.1.158\n", "perf version ").as_deref(),
            Some("6.1.158")
        );
        assert_eq!(after("something else\n", "valgrind-"), None);
    }

    #[test]
    fn the_tunables_count_as_taken_only_at_the_values_set() {
        let taken = "glibc.cpu.x86_rep_movsb_threshold: 0x10000000000 (min: 0x200, max: \
                     0xffffffffffffffff)\n\
                     glibc.cpu.x86_rep_stosb_threshold: 0x10000000000 (min: 0x1, max: \
                     0xffffffffffffffff)\n";
        assert!(vector_loops_taken(taken));
        // glibc's own thresholds: the setting was ignored.
        let ignored = "glibc.cpu.x86_rep_movsb_threshold: 0x840 (min: 0x200, max: 0x1)\n\
                       glibc.cpu.x86_rep_stosb_threshold: 0x10000000000 (min: 0x1, max: 0x1)\n";
        assert!(!vector_loops_taken(ignored));
        assert!(!vector_loops_taken("glibc.malloc.arena_max: 0x0\n"));
    }

    #[test]
    fn this_machine_says_its_glibc_and_takes_the_tunables() {
        // Every machine this project counts on is x86-64 with glibc 2.33 or later.
        let tools = Tools::here(false, false);
        assert!(tools.glibc.is_some(), "{tools:?}");
        assert_eq!(tools.vector_loops, Some(true), "{tools:?}");
        assert_eq!((tools.valgrind, tools.perf), (None, None), "not asked");
    }

    #[test]
    fn the_note_says_what_was_recorded_and_nothing_else() {
        assert_eq!(Tools::default().describe(), None, "an older run");
        let tools = Tools {
            glibc: Some("2.36".into()),
            valgrind: Some("3.19.0".into()),
            perf: None,
            vector_loops: Some(true),
        };
        let note = tools.describe().expect("a note");
        assert!(
            note.starts_with("Counted with valgrind 3.19.0 on glibc 2.36; glibc took"),
            "{note}"
        );
        let ignored = Tools {
            vector_loops: Some(false),
            ..Tools::default()
        };
        assert!(ignored.describe().expect("a note").contains("did NOT take"));
    }
}
