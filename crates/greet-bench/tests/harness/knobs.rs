//! The knobs scenario against the real servers: hyper with one runtime knob, counted (cost),
//! timed (techempower) and checked row by row against the contract, then set beside its crate
//! at its defaults in one table of what the knob buys and gives up.

use crate::common::{release_run, turn};

#[test]
#[ignore = "needs valgrind and perf: apt-get install -y valgrind linux-perf (perf as root)"]
fn knobs_quick_sets_a_knob_against_its_crate_counted_timed_and_checked() {
    let _turn = turn();
    let args = [
        "knobs",
        "--quick",
        "--quiet",
        "--servers",
        "hyper",
        "--knobs",
        "pipeline-flush",
    ];
    let (stdout, results, html) = release_run("knobs", &args);
    let (plain, flush) = ("greet-hyper", "greet-hyper+pipeline-flush");

    // The contract: the crate answers every row; the knob gives up the answers to a refused
    // head (its help says so), and nothing else of these rows.
    let knobs = results.sections.knobs.clone().expect("knobs");
    let servers: Vec<&str> = knobs.servers.iter().map(|c| c.server.as_str()).collect();
    assert_eq!(servers, [plain, flush]);
    assert!(
        knobs.servers[0].failing.is_empty(),
        "{:?}",
        knobs.servers[0]
    );
    let given_up: Vec<&str> = knobs
        .given_up(&knobs.servers[1])
        .iter()
        .map(|f| f.row.as_str())
        .collect();
    assert!(
        given_up.contains(&"oversized_head_gets_431"),
        "{given_up:?}"
    );
    for kept in ["slow_head_is_cut", "idle_connection_is_closed", "ws_echoes"] {
        assert!(!given_up.contains(&kept), "{kept}: {given_up:?}");
    }

    // Counted: pipelined answers gathered into one write, a small share of the syscalls.
    let cost = results.sections.cost.clone().expect("cost");
    let syscalls = |server: &str| {
        let cell = cost
            .cells
            .iter()
            .find(|c| c.server == server && c.cell == "plaintext")
            .unwrap_or_else(|| panic!("no {server} plaintext: {:#?}", cost.cells));
        cell.runs[0].syscalls.expect("perf counted")
    };
    assert!(
        syscalls(flush) < 0.5 * syscalls(plain),
        "{} against {}",
        syscalls(flush),
        syscalls(plain)
    );

    // Timed: the knob against its crate, paired, on plaintext and json.
    let timed = results.sections.techempower.clone().expect("techempower");
    for test in ["plaintext", "json"] {
        assert!(
            timed
                .comparisons
                .iter()
                .any(|c| c.a.starts_with(&format!("{plain} {test}"))
                    && c.b.starts_with(&format!("{flush} {test}"))),
            "{test}: {:?}",
            timed.comparisons
        );
    }

    // One table sets the three side by side, in the terminal and in report.html.
    let table = stdout
        .split("What each knob buys")
        .nth(1)
        .expect("the table of what each knob buys");
    let row = table
        .lines()
        .find(|l| l.contains("pipeline-flush"))
        .unwrap_or_else(|| panic!("no row: {table}"));
    for wanted in [
        "plaintext: counted",
        "plaintext: throughput, timed",
        "Gives up",
    ] {
        assert!(table.contains(wanted), "{wanted}: {table}");
    }
    assert!(row.contains("oversized_head_gets_431"), "{row}");
    assert!(html.contains("id=\"knob-gains\""));
}
