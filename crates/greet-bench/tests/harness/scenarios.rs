//! The loops, soak, sweep, techempower, workloads and all scenarios end to end (business
//! has tests/harness/business.rs, rate tests/harness/rate.rs), each at its `--quick` size
//! against the real server binaries.

use std::process::Output;

use crate::common::{assert_balanced, bench, out_dir, packages, results, undisturbed};
use greet_bench::scenario::Kind;
use greet_bench::Results;
use greet_model::results::{Mark, Trial};
use greet_stats::paired::{Comparison, Figure, Word, FEWEST_BLOCKS};
use greet_stats::Summary;

/// Runs a scenario into a fresh directory; its stdout, results and report.html.
pub(crate) fn scenario(name: &str, args: &[&str]) -> (String, Results, String) {
    let out = out_dir(name);
    let mut all = args.to_vec();
    all.extend([
        "--quick",
        "--quiet",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    let run: Output = bench(&all);
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "{args:?}\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let results = results(&out.join("results.json"));
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    for svg in html.split("<svg ").skip(1) {
        let svg = svg.split("</svg>").next().expect("split");
        assert_balanced(&format!("<svg {svg}</svg>"), "chart in report.html");
    }
    let _ = std::fs::remove_dir_all(&out);
    (stdout, results, html)
}

/// A keep-alive run: every request answered and validated, a throughput, a latency.
fn assert_clean_run(run: &Trial, what: &str) {
    let f = &run.load;
    assert!(f.requests > 0, "{what}: {run:?}");
    assert_eq!(f.success_rate, 100.0, "{what}: {run:?}");
    assert!(f.requests_per_s > 0.0, "{what}: {run:?}");
    assert!(f.average_s > 0.0, "{what}: {run:?}");
    assert!(
        f.latency_ms.p99 >= f.average_s * 1000.0 * 0.5,
        "{what}: {run:?}"
    );
    assert!(f.connects >= 1, "{what}: {run:?}");
    assert!(
        run.server.cpu_avg_pct.is_some_and(|c| c >= 0.0),
        "{what}: {run:?}"
    );
}

/// A summary's median sits inside its range.
fn assert_summary(s: &Summary, what: &str) {
    assert!(
        0.0 < s.min && s.min <= s.median && s.median <= s.max,
        "{what}: {s:?}"
    );
    assert!(s.min <= s.mean && s.mean <= s.max, "{what}: {s:?}");
}

/// A comparison of throughput carries its blocks' ratios, its interval and its word: one
/// block per run but those the machine disturbed ([`Trial::disturbed`]).
fn assert_comparison(c: &Comparison, runs: usize) {
    let j = &c.judged;
    assert!(
        j.blocks == 0 || (j.ratio > 0.0 && j.low <= j.ratio && j.ratio <= j.high),
        "{c:?}"
    );
    assert!(j.blocks <= runs && c.ratios.len() == j.blocks, "{c:?}");
    assert!(j.level >= 0.95, "{c:?}");
    assert_eq!(c.figure, Figure::RequestsPerS, "{c:?}");
    if runs < FEWEST_BLOCKS {
        // Too few blocks for a 95% interval: never a verdict.
        assert_eq!(c.word(), Word::Undecided, "{c:?}");
    }
}

#[test]
fn loops_quick_measures_every_shape_on_every_server() {
    let (stdout, results, html) = scenario("loops", &["loops"]);
    assert!(
        results.sections.ladder.is_none()
            && results.sections.soak.is_none()
            && results.sections.sweep.is_none()
    );
    assert_eq!(results.meta.scenarios, ["loops"]);
    let loops = results.sections.loops.expect("loops");
    assert_eq!((loops.frame.repeats, loops.delay_ms), (3, 0));
    assert!(
        loops.frame.failures.is_empty(),
        "{:?}",
        loops.frame.failures
    );
    assert_eq!(loops.shapes.len(), 2);
    for shape in &loops.shapes {
        let names: Vec<_> = shape.servers.iter().map(|s| s.name.clone()).collect();
        assert_eq!(names, packages());
        for server in &shape.servers {
            assert_eq!(server.runs.len(), 3);
            for run in &server.runs {
                assert_clean_run(run, "loops");
                assert_eq!(
                    run.load.requests,
                    (shape.users * shape.loops) as u64,
                    "{run:?}"
                );
                // Keep-alive: one connection per user.
                assert_eq!(run.load.connects, shape.users as u64, "{run:?}");
            }
            assert_summary(&server.requests_per_s, "loops");
        }
        // Every load says where it ran in the run, and each block's order read back from
        // those places is the Williams order the harness gives it.
        for block in 0..3 {
            let mut ran: Vec<(u64, usize)> = (shape.servers.iter().enumerate())
                .map(|(i, s)| (s.runs[block].seq.expect("each load's place"), i))
                .collect();
            ran.sort_unstable();
            let order: Vec<usize> = ran.iter().map(|&(_, i)| i).collect();
            assert_eq!(order, greet_stats::order::williams(3, block), "{ran:?}");
        }
        assert_eq!(shape.comparisons.len(), 3, "every pair");
        for c in &shape.comparisons {
            assert_comparison(c, 3);
            let runs = |name: &str| {
                let server = shape.servers.iter().find(|s| s.name == name);
                &server.expect("a compared server").runs
            };
            assert_eq!(
                c.judged.blocks,
                undisturbed(runs(&c.a), runs(&c.b)),
                "{c:?}"
            );
        }
    }
    assert!(stdout.contains("Application | first | second | third | average | median"));
    assert!(stdout.contains("undecided"));
    assert!(html.contains("id=\"loops\"") && html.contains("<svg "));
    assert!(
        html.contains("paired blocks"),
        "the report says how servers are compared"
    );
}

/// A server named three times is three servers of their own in every scenario (here loops and
/// protocols, one restarting its servers each block, one keeping them up together): an A/A
/// check, with a best chosen among copies.
#[test]
fn a_server_named_three_times_is_measured_as_three() {
    let names = ["greet-hyper", "greet-hyper#2", "greet-hyper#3"];
    let (_, results, _) = scenario(
        "loops-a-a",
        &["loops", "--servers", "hyper,hyper,hyper", "--repeats", "2"],
    );
    let loops = results.sections.loops.expect("loops");
    assert!(loops.frame.block.contains("repeat"), "{:?}", loops.frame);
    for shape in &loops.shapes {
        let got: Vec<&str> = shape.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(got, names);
        assert!(shape.servers.iter().all(|s| s.runs.len() == 2));
        assert_eq!(shape.comparisons.len(), 3, "every pair");
    }
    let (_, results, _) = scenario(
        "protocols-a-a",
        &[
            "protocols",
            "--servers",
            "hyper,hyper,hyper",
            "--protocols",
            "http1,h2c",
        ],
    );
    let protocols = results.sections.protocols.expect("protocols");
    let mut got: Vec<&str> = protocols.cells.iter().map(|c| c.server.as_str()).collect();
    got.dedup();
    assert_eq!(got, names);
}

#[test]
fn soak_quick_counts_threads_on_both_endpoints() {
    let (stdout, results, html) = scenario("soak", &["soak"]);
    let soak = results.sections.soak.expect("soak");
    assert_eq!(soak.duration_s, Some(0.3));
    assert!(soak.frame.failures.is_empty(), "{:?}", soak.frame.failures);
    assert_eq!(soak.cells.len(), 3 * 2 * 2, "servers x endpoints x levels");
    for cell in &soak.cells {
        let what = format!("{} {} c={}", cell.server, cell.endpoint, cell.concurrency);
        assert!(cell.hits > 0, "{what}");
        assert_eq!(cell.success_rate, 100.0, "{what}");
        assert_summary(&cell.requests_per_s, &what);
        assert!(cell.average_s > 0.0, "{what}");
        let count = |n: Option<u64>| n.unwrap_or_else(|| panic!("{what}: threads counted"));
        let (start, live, peak, total) = (
            count(cell.threads_at_start),
            count(cell.threads_live),
            count(cell.threads_peak),
            count(cell.threads_total),
        );
        assert!(start >= 1 && live >= 1, "{what}");
        assert!(
            peak >= live && total >= peak,
            "{what}: {live} {peak} {total}"
        );
        assert!(cell.cpu_avg_pct.is_some_and(|c| c > 0.0), "{what}");
        assert!(cell.rss_max_mib.is_some_and(|m| m > 0.0), "{what}");
        for run in &cell.runs {
            assert_clean_run(run, &what);
        }
        if cell.endpoint == "/greetings/blocking" {
            // Each blocking request holds a pool thread: the pool has grown past start-up.
            assert!(total > start, "{what}: {start} -> {total}");
        }
    }
    // One run per level: comparisons are recorded, and none can be a verdict.
    assert!(!soak.comparisons.is_empty());
    for c in &soak.comparisons {
        assert_comparison(c, 1);
    }
    assert!(stdout.contains("Threads at start | Live | Peak | Total started"));
    assert!(stdout.contains("/greetings/blocking: requests/sec, average seconds"));
    assert!(html.contains("id=\"soak\"") && html.matches("<svg ").count() == 2);
}

#[test]
fn sweep_quick_finds_a_best_setting_per_server_and_endpoint() {
    let (stdout, results, html) = scenario("sweep", &["sweep"]);
    let sweep = results.sections.sweep.expect("sweep");
    assert!(
        sweep.frame.failures.is_empty(),
        "{:?}",
        sweep.frame.failures
    );
    assert_eq!(sweep.workers, [1, 2]);
    let default = sweep.default;
    let cells = &sweep.cells;
    assert!(
        cells.iter().any(|c| c.setting.workers == default.workers),
        "the default setting is always measured"
    );
    // Per server: /health and /greetings at 2 worker counts, /greetings/blocking at 2 x 1.
    assert_eq!(cells.len(), 3 * (2 + 2 + 2));
    for cell in cells {
        assert_eq!(cell.runs.len(), 2, "{cell:?}");
        for run in &cell.runs {
            assert_clean_run(run, "sweep");
        }
        assert_summary(&cell.requests_per_s, "sweep");
    }
    assert_eq!(sweep.best.len(), 3 * 3, "servers x endpoints");
    for b in &sweep.best {
        let same: Vec<_> = cells
            .iter()
            .filter(|c| c.server == b.server && c.endpoint == b.endpoint)
            .collect();
        // The best is the highest median, and the baseline the default setting's: both found
        // here from the cells, not taken from the harness's own pick.
        let highest = same
            .iter()
            .map(|c| c.requests_per_s.median)
            .fold(0.0, f64::max);
        let base = same
            .iter()
            .find(|c| c.setting.is_default(&default))
            .map(|c| c.requests_per_s.median)
            .expect("the default cell");
        assert_eq!(b.gain.requests_per_s, highest, "{b:?}");
        assert_eq!(b.gain.default_requests_per_s, base, "{b:?}");
        assert!((b.gain.gain - highest / base).abs() < 1e-9, "{b:?}");
        assert_comparison(&b.gain.comparison, 2);
    }
    assert!(stdout.contains("Best setting") && stdout.contains("--workers"));
    assert!(html.contains("id=\"sweep\"") && html.matches("<svg ").count() == 3);
}

#[test]
fn all_quick_runs_every_scenario_into_one_report() {
    let (stdout, results, html) = scenario("all", &["all", "--servers", "hyper"]);
    // Every scenario but knobs, whose builds take too long to run unasked.
    let names: Vec<&str> = Kind::ALL
        .iter()
        .map(|k| k.name())
        .filter(|n| *n != "knobs")
        .collect();
    assert_eq!(results.meta.scenarios, names);
    assert!(results.sections.knobs.is_none());
    let ladder = results.sections.ladder.expect("ladder");
    assert_eq!(ladder.servers[0].name, "greet-hyper");
    assert_eq!(ladder.servers[0].levels.len(), 2);
    assert!(
        results.sections.loops.is_some()
            && results.sections.soak.is_some()
            && results.sections.sweep.is_some()
    );
    assert!(results.sections.rate.is_some() && results.sections.business.is_some());
    let capacity = results.sections.capacity.expect("capacity");
    assert!(
        capacity.frame.failures.is_empty(),
        "{:?}",
        capacity.frame.failures
    );
    assert!(
        capacity.servers[0].capacity_rps > 0.0,
        "{:?}",
        capacity.servers
    );
    let protocols = results.sections.protocols.expect("protocols");
    assert_eq!(protocols.cells.len(), 4, "hyper over the four protocols");
    let workloads = results.sections.workloads.expect("workloads");
    assert_eq!(workloads.cells.len(), 8, "hyper on the eight profiles");
    for id in &names {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(stdout.contains("Application | numRequests") && stdout.contains("Best setting"));
    // The scorecard has a row from every scenario; one server is alone on each.
    let card = &results.scorecard;
    assert_eq!(card.servers, ["greet-hyper"]);
    for name in &results.meta.scenarios {
        assert!(
            card.rows.iter().any(|r| &r.scenario == name),
            "no scorecard row from {name}: {card:#?}"
        );
    }
    for row in &card.rows {
        assert_eq!(row.cells.len(), 1, "{row:?}");
        assert_eq!((row.cells[0].share, row.cells[0].mark), (1.0, Mark::Alone));
    }
    assert!(
        card.words.is_empty(),
        "nothing to tell apart: {:?}",
        card.words
    );
    let printed = stdout
        .split("Scorecard:")
        .nth(1)
        .expect("the scorecard is printed");
    assert!(
        !printed.contains("Application |"),
        "the scorecard ends the tables"
    );
    assert!(
        html.find("id=\"scorecard\"").expect("a scorecard")
            < html.find("id=\"ladder\"").expect("the ladder")
    );
}

/// Every profile on every server, every answer valid as the load checks it (the greeting
/// by name, the upload's count, the exact JSON, each echo whole): compression shows as fewer
/// bytes per answer than the page, the upload's answer is its count, each echo its message;
/// CPU per request is measured on both sides; shares and comparisons per profile.
#[test]
fn workloads_quick_runs_every_profile_on_every_server() {
    use greet_bench::scenario::workloads::Profile;
    let (stdout, results, html) = scenario("workloads", &["workloads"]);
    let workloads = results.sections.workloads.expect("workloads");
    assert!(
        workloads.frame.failures.is_empty(),
        "{:?}",
        workloads.frame.failures
    );
    assert_eq!(workloads.cells.len(), 3 * Profile::ALL.len());
    for cell in &workloads.cells {
        let what = format!("{} {}", cell.server, cell.profile);
        assert_eq!(cell.runs.len(), 1, "{what}");
        assert_clean_run(&cell.runs[0], &what);
        assert!(
            cell.p50_ms > 0.0 && cell.p50_ms <= cell.p99_ms,
            "{what}: {cell:?}"
        );
        assert!(
            cell.server_cpu_us.is_some_and(|us| us > 0.0),
            "{what}: {cell:?}"
        );
        assert!(
            cell.client_cpu_us.is_some_and(|us| us > 0.0),
            "{what}: {cell:?}"
        );
        let share = cell.share_of_best.expect("a share");
        assert!(share > 0.0 && share <= 1.0, "{what}: {share}");
        let bytes = cell.bytes_per_answer.expect("bytes counted");
        let page = greet_core::records::FORTUNES_PAGE.len() as f64;
        match cell.profile {
            Profile::Compressed => assert!(bytes < page * 0.7, "{what}: {bytes} bytes"),
            Profile::Websocket => assert_eq!(bytes, 64.0, "{what}"),
            Profile::JsonTls => assert_eq!(bytes, 27.0, "{what}"),
            Profile::ShortLived => {
                let load = &cell.runs[0].load;
                assert!(load.connects * 10 >= load.requests, "{what}: {load:?}");
            }
            _ => {}
        }
    }
    for profile in Profile::ALL {
        let best = workloads
            .cells
            .iter()
            .filter(|c| c.profile == profile)
            .filter_map(|c| c.share_of_best)
            .fold(0.0, f64::max);
        assert_eq!(best, 1.0, "{profile}: one server is the best");
    }
    assert_eq!(workloads.comparisons.len(), Profile::ALL.len());
    for c in workloads.comparisons.iter().flat_map(|c| &c.comparisons) {
        assert_comparison(c, 1);
    }
    assert!(
        stdout.contains("Workloads:") && stdout.contains("Client CPU/req"),
        "{stdout}"
    );
    assert!(html.contains("id=\"workloads\""));
}

/// The TechEmpower section of a run on `stores`: every test of every server measured with
/// every answer valid (the exact page, message and rows, checked by the load), plaintext
/// pipelined, json and plaintext once, each share against the best, every pair compared.
fn assert_techempower(results: Results, stdout: &str, html: &str, stores: &[&str]) {
    let te = results.sections.techempower.expect("techempower");
    assert!(te.frame.failures.is_empty(), "{:?}", te.frame.failures);
    assert_eq!(te.stores, stores);
    assert_eq!((te.plaintext_pipeline, te.transport.pipeline), (16, 1));
    let tests = greet_bench::scenario::techempower::Test::ALL;
    let mut keys = Vec::new();
    for test in tests {
        let on: Vec<&str> = if test.uses_store() {
            stores.to_vec()
        } else {
            vec!["none"]
        };
        for store in on {
            keys.push((test.name(), store));
            let cells: Vec<_> = te
                .cells
                .iter()
                .filter(|c| c.test == test.name() && c.store == store)
                .collect();
            assert_eq!(cells.len(), 3, "{} {store}: a cell per server", test.name());
            for cell in &cells {
                let what = format!("{} {} {store}", cell.server, test.name());
                assert_eq!(cell.target, test.path(20), "{what}");
                assert_eq!(cell.runs.len(), 2, "{what}");
                for run in &cell.runs {
                    assert_clean_run(run, &what);
                }
                assert_summary(&cell.requests_per_s, &what);
                assert!(cell.p50_ms > 0.0 && cell.p99_ms >= cell.p50_ms, "{what}");
                assert!(
                    cell.share_of_best > 0.0 && cell.share_of_best <= 1.0,
                    "{what}"
                );
            }
            let best = cells.iter().filter(|c| c.share_of_best == 1.0).count();
            assert_eq!(best, 1, "{} {store}: one best server", test.name());
        }
    }
    assert_eq!(te.cells.len(), 3 * keys.len());
    assert_eq!(
        te.comparisons.len(),
        3 * keys.len(),
        "three pairs per test and store"
    );
    assert!(
        stdout.contains("% of best") && stdout.contains("fortunes"),
        "{stdout}"
    );
    assert!(html.contains("id=\"techempower\"") && html.contains("share of the best"));
}

#[test]
fn techempower_quick_measures_every_test_on_every_server() {
    let (stdout, results, html) = scenario("techempower", &["techempower", "--stores", "sqlite"]);
    assert_techempower(results, &stdout, &html, &["sqlite"]);
}

#[test]
#[ignore = "needs PostgreSQL and Redis: apt-get install -y postgresql redis-server"]
fn techempower_quick_runs_the_database_tests_on_postgres_too() {
    let (stdout, results, html) = scenario("techempower-pg", &["techempower"]);
    assert_techempower(results, &stdout, &html, &["sqlite", "postgres+redis"]);
}
