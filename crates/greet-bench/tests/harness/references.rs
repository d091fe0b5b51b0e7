//! The reference servers beside the contenders: the floor (`greet-floor`) and the anchor
//! (Debian's nginx) in soak, techempower and capacity, shown in the scorecard as references,
//! never ranked, each server with its share of the floor; refused where they cannot join.

use crate::common::{assert_one_line_error, bench_ok, out_dir, results};
use greet_bench::Results;

fn run(args: &[&str], name: &str) -> Results {
    let out = out_dir(name);
    let mut all = args.to_vec();
    all.extend(["--quick", "--quiet", "--servers", "hyper,floor,nginx"]);
    all.extend(["--out", out.to_str().expect("utf-8")]);
    bench_ok(&all);
    let results = results(&out.join("results.json"));
    let _ = std::fs::remove_dir_all(&out);
    results
}

/// The scorecard ranks the servers only, names the references, gives each server its share
/// of the floor and says so in words.
fn assert_references_stand_apart(results: &Results, scenario: &str) {
    let card = &results.scorecard;
    assert_eq!(card.servers, ["greet-hyper"], "{card:?}");
    assert_eq!(card.references, ["greet-floor", "nginx"], "{card:?}");
    let rows: Vec<_> = card
        .rows
        .iter()
        .filter(|r| r.scenario == scenario)
        .collect();
    assert!(!rows.is_empty(), "{card:?}");
    for row in rows.iter().filter(|r| r.references.len() == 2) {
        let hyper = row.cell("greet-hyper").expect("hyper's cell");
        assert!(hyper.of_floor.is_some_and(|s| s > 0.0), "{row:?}");
        assert!(row.references.iter().all(|c| c.share > 0.0), "{row:?}");
    }
    assert!(rows.iter().any(|r| r.references.len() == 2), "{card:?}");
    assert!(
        card.words
            .iter()
            .any(|w| w.starts_with("Against the floor") && w.contains("greet-hyper")),
        "{:?}",
        card.words
    );
    assert!(
        card.words
            .iter()
            .any(|w| w.starts_with("nginx, the outside anchor")),
        "{:?}",
        card.words
    );
}

#[test]
#[ignore = "needs nginx: apt-get install -y nginx-light"]
fn the_floor_and_nginx_join_soak_on_the_greeting_endpoints() {
    let results = run(&["soak"], "ref-soak");
    let soak = results.sections.soak.as_ref().expect("soak");
    assert!(soak.frame.failures.is_empty(), "{:?}", soak.frame.failures);
    for server in ["greet-floor", "nginx"] {
        let cells: Vec<_> = soak.cells.iter().filter(|c| c.server == server).collect();
        assert_eq!(cells.len(), 4, "{server}: two endpoints at two levels");
        for cell in cells {
            assert_eq!(cell.success_rate, 100.0, "{server}: {cell:?}");
            assert!(cell.hits > 0, "{server}: {cell:?}");
        }
    }
    // Never a contender: no comparison names them.
    assert!(
        soak.comparisons
            .iter()
            .all(|c| !c.a.starts_with("greet-floor") && !c.b.starts_with("nginx")),
        "{:?}",
        soak.comparisons
    );
    assert_references_stand_apart(&results, "soak");
}

#[test]
#[ignore = "needs nginx: apt-get install -y nginx-light"]
fn the_floor_and_nginx_take_json_and_plaintext_in_techempower() {
    let results = run(&["techempower"], "ref-te");
    let te = results.sections.techempower.as_ref().expect("techempower");
    assert!(te.frame.failures.is_empty(), "{:?}", te.frame.failures);
    for server in ["greet-floor", "nginx"] {
        let mut tests: Vec<&str> = te
            .cells
            .iter()
            .filter(|c| c.server == server)
            .map(|c| c.test.as_str())
            .collect();
        tests.sort_unstable();
        assert_eq!(tests, ["json", "plaintext"], "{server}: no store");
        for cell in te.cells.iter().filter(|c| c.server == server) {
            for run in &cell.runs {
                assert_eq!(run.load.success_rate, 100.0, "{server}: {cell:?}");
            }
        }
    }
    assert!(te
        .cells
        .iter()
        .any(|c| c.server == "greet-hyper" && c.test == "db"));
    // "% of best" is of the best server's, a reference's share standing beside it.
    for test in ["json", "plaintext"] {
        let hyper = te
            .cells
            .iter()
            .find(|c| c.server == "greet-hyper" && c.test == test);
        assert_eq!(hyper.map(|c| c.share_of_best), Some(1.0), "{test}");
    }
    assert_references_stand_apart(&results, "techempower");
}

#[test]
#[ignore = "needs nginx: apt-get install -y nginx-light"]
fn the_floor_and_nginx_have_a_capacity() {
    let results = run(&["capacity"], "ref-cap");
    let cap = results.sections.capacity.as_ref().expect("capacity");
    assert!(cap.frame.failures.is_empty(), "{:?}", cap.frame.failures);
    for server in ["greet-floor", "nginx"] {
        let s = cap
            .servers
            .iter()
            .find(|s| s.server == server)
            .expect(server);
        assert!(s.capacity_rps > 0.0 && s.probe_rps > 0.0, "{s:?}");
    }
    assert_references_stand_apart(&results, "capacity");
}

#[test]
fn a_reference_is_refused_where_it_cannot_join() {
    for (args, needle) in [
        (
            &["ladder", "--servers", "hyper,floor"][..],
            "joins soak, capacity, techempower",
        ),
        (&["rate", "--servers", "hyper,nginx"][..], "not rate"),
        (&["all", "--servers", "floor,nginx"][..], "measured against"),
        (
            &["soak", "--servers", "floor", "--protocol", "h2"][..],
            "cleartext only",
        ),
    ] {
        let line = assert_one_line_error(args);
        assert!(line.contains(needle), "{args:?}: {line}");
    }
}
