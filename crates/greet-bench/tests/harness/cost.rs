//! The cost scenario against the real servers: every cell counted under valgrind and perf, a
//! server named twice counted alike and called equal, the crates' costs, a ratio threshold on
//! the counts that holds on a rerun and trips on a larger count; and, without its
//! instruments, one line each for what it skipped while the rest is still counted.

use std::path::Path;

use greet_bench::scenario::cost::{CostCell, Section};
use greet_model::results::Mark;

use crate::common::{out_dir, release_run, results, turn, BENCH};

fn cell<'a>(cost: &'a Section, server: &str, cell: &str) -> &'a CostCell {
    cost.cells
        .iter()
        .find(|c| c.server == server && c.cell == cell)
        .unwrap_or_else(|| panic!("no {server} {cell}: {:#?}", cost.cells))
}

fn only(c: &CostCell) -> &greet_bench::scenario::cost::PerRequest {
    assert_eq!(c.runs.len(), 1, "{c:?}");
    &c.runs[0]
}

/// Within `share` of each other.
fn close(a: f64, b: f64, share: f64) -> bool {
    (a - b).abs() <= share * a.abs().max(b.abs())
}

#[test]
#[ignore = "needs valgrind and perf: apt-get install -y valgrind linux-perf (perf as root)"]
fn cost_quick_counts_every_cell_and_a_server_twice_alike() {
    let _turn = turn();
    // The release servers, as the harness builds them (a no-op once built): a debug build's
    // counts move with its timing by a few percent, a release build's by under one.
    let (stdout, results, html) = release_run(
        "cost",
        &[
            "cost",
            "--quick",
            // The default N (16 x 64): at the quick N of 64 what the two loads pay unevenly
            // at start-up moved hyper's baseline by 1.1% in 2 of 9 tries.
            "--each",
            "64",
            "--quiet",
            "--servers",
            "hyper,hyper,floor",
        ],
    );
    let cost = results.sections.cost.clone().expect("cost");
    assert!(cost.skipped.is_empty(), "{:?}", cost.skipped);
    assert_eq!(cost.instruments, ["callgrind", "dhat", "perf"]);
    // What counted, by version, and glibc's tunables taken: the note prints them.
    let tools = &cost.tools;
    assert!(
        tools.valgrind.is_some() && tools.perf.is_some(),
        "{tools:?}"
    );
    assert!(
        tools.glibc.is_some() && tools.vector_loops == Some(true),
        "{tools:?}"
    );
    for server in ["greet-hyper", "greet-hyper#2"] {
        for name in ["baseline", "plaintext", "json-tls"] {
            let c = cell(&cost, server, name);
            let run = only(c);
            let (ir, cycles) = (run.instructions.unwrap(), run.cycles.unwrap());
            assert!(ir > 1000.0 && cycles > ir, "{server} {name}: {run:?}");
            assert!(run.allocations.unwrap() >= 1.0, "{server} {name}: {run:?}");
            assert!(run.syscalls.unwrap() > 0.0, "{server} {name}: {run:?}");
            assert!(run.epoll_waits.is_some(), "{server} {name}: {run:?}");
            assert!(run.futexes.is_some(), "{server} {name}: {run:?}");
            assert!(run.cpu_us.unwrap() > 0.0, "{server} {name}: {run:?}");
            assert!(!run.functions.is_empty(), "{server} {name}");
        }
    }
    // The same binary twice: the same counts, to well under a percent.
    for name in ["baseline", "plaintext", "json-tls"] {
        let (a, b) = (
            only(cell(&cost, "greet-hyper", name)),
            only(cell(&cost, "greet-hyper#2", name)),
        );
        let (ia, ib) = (a.instructions.unwrap(), b.instructions.unwrap());
        assert!(close(ia, ib, 0.01), "{name}: {ia} against {ib}");
        let (aa, ab) = (a.allocations.unwrap(), b.allocations.unwrap());
        assert!(close(aa, ab, 0.01), "{name}: {aa} against {ab}");
    }
    // The floor serves plaintext from prebuilt answers: no allocation, far fewer instructions.
    let floor = only(cell(&cost, "greet-floor", "plaintext"));
    assert_eq!(floor.allocations, Some(0.0), "{floor:?}");
    let hyper = only(cell(&cost, "greet-hyper", "plaintext"));
    assert!(floor.instructions.unwrap() * 3.0 < hyper.instructions.unwrap());
    assert!(
        cost.cells
            .iter()
            .all(|c| c.server != "greet-floor" || c.cell == "plaintext"),
        "the floor takes only the routes it serves"
    );
    // Called equal in the scorecard: within the counts' band, on one run each.
    let row = results
        .scorecard
        .rows
        .iter()
        .find(|r| r.scenario == "cost" && r.figure == "baseline instructions")
        .expect("a row of instructions");
    assert_eq!(row.cells.len(), 2, "{row:?}");
    assert!(row.cells.iter().all(|c| c.mark == Mark::Equal), "{row:?}");
    let hyper = cost
        .crates
        .iter()
        .find(|c| c.server == "greet-hyper")
        .expect("hyper's crate costs");
    assert!(hyper.binary_bytes.unwrap() > 1 << 20, "{hyper:?}");
    assert!(hyper.dependencies.unwrap() > 50, "{hyper:?}");
    assert!(hyper.idle_kib.unwrap() > 0.0, "{hyper:?}");
    assert!(stdout.contains("Cost per request, counted"), "{stdout}");
    assert!(
        stdout.contains("epoll waits"),
        "the waits' column: {stdout}"
    );
    let version = tools.valgrind.as_deref().unwrap_or_default();
    assert!(
        stdout.contains(&format!("Counted with valgrind {version}")),
        "{stdout}"
    );
    assert!(html.contains("id=\"cost\""));
    gate_on_counts(&results);
}

/// `compare --threshold 'instructions<1.01x'`: a rerun of the same counts holds (exit 0), a
/// count 2% higher breaches it (exit 3).
fn gate_on_counts(results: &greet_bench::Results) {
    let dir = out_dir("cost-gate");
    let write = |name: &str, results: &greet_bench::Results| {
        let at = dir.join(name);
        std::fs::create_dir_all(&at).expect("mkdir");
        let json = serde_json::to_string(results).expect("json");
        std::fs::write(at.join("results.json"), json).expect("write");
        at
    };
    let old = write("old", results);
    let mut more = results.clone();
    for c in &mut more.sections.cost.as_mut().expect("cost").cells {
        for run in &mut c.runs {
            run.instructions = run.instructions.map(|i| i * 1.02);
        }
    }
    let new = write("new", &more);
    let compare = |new: &Path| {
        std::process::Command::new(BENCH)
            .arg("compare")
            .args([&old, new])
            .args(["--threshold", "instructions<1.01x"])
            .output()
            .expect("greet-bench runs")
    };
    let rerun = compare(&old);
    assert_eq!(rerun.status.code(), Some(0), "{rerun:?}");
    let grown = compare(&new);
    assert_eq!(grown.status.code(), Some(3), "{grown:?}");
    let said = String::from_utf8_lossy(&grown.stdout);
    assert!(said.contains("instructions"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_valgrind_or_perf_the_cost_run_says_what_it_skipped_and_counts_the_rest() {
    let out = out_dir("cost-bare");
    // A PATH with neither valgrind nor perf on it.
    let empty = out_dir("cost-empty-path");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let mut args = vec![
        "cost",
        "--quick",
        "--quiet",
        "--servers",
        "hyper",
        "--cells",
        "baseline",
        "--out",
        out.to_str().unwrap(),
    ];
    let bins = crate::common::bin_dir_args();
    args.extend(bins.iter().map(String::as_str));
    let run = std::process::Command::new(crate::common::BENCH)
        .args(&args)
        .env("PATH", &empty)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("greet-bench runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let results = results(&out.join("results.json"));
    let cost = results.sections.cost.expect("cost");
    assert_eq!(cost.instruments, ["proc"], "{cost:?}");
    // Neither counted, so neither's version; glibc's loader is asked by its path.
    let tools = &cost.tools;
    assert_eq!((&tools.valgrind, &tools.perf), (&None, &None), "{tools:?}");
    assert!(tools.glibc.is_some(), "{tools:?}");
    let said = cost.skipped.join("\n");
    assert!(said.contains("apt-get install -y valgrind"), "{said}");
    assert!(said.contains("apt-get install -y linux-perf"), "{said}");
    assert_eq!(cost.skipped.len(), 3, "a line each: {said}");
    let run = only(cell(&cost, "greet-hyper", "baseline"));
    assert_eq!((run.instructions, run.allocations), (None, None), "{run:?}");
    assert_eq!((run.epoll_waits, run.futexes), (None, None), "{run:?}");
    assert!(
        run.syscalls.unwrap() > 0.0,
        "read and write syscalls from /proc: {run:?}"
    );
    // Named as the other count they are, so never compared with perf's.
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(
        html.contains("read/write syscalls"),
        "the column names them"
    );
    assert!(html.contains("never compared with it"), "the note says why");
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&empty);
}
