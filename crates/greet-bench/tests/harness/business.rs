//! `greet-bench business --quick` end to end: every server on SQLite and on PostgreSQL +
//! Redis started by the harness (the tests that need them are `#[ignore]`d with what to
//! install), every JSON answer validated under load (a row of world, the count of rows,
//! the person's greeting, a visit count no other answer had), the fractions of the ceiling,
//! the best pools and the comparisons written, the store processes sampled; and, on any
//! machine, the default run without Redis: skipped in one line, the run goes on (business and
//! techempower alike).

use std::process::Command;

use crate::common::{
    assert_one_line_exit, bench_ok, bin_dir_args, out_dir, packages, results, BENCH,
};
use greet_bench::scenario::business::BusinessCell;
use greet_bench::scenario::business::Plan as Business;
use greet_launch::stores::{Postgres, Redis};

const STORES: [&str; 2] = ["sqlite", "postgres+redis"];

#[test]
#[ignore = "needs PostgreSQL and Redis: apt-get install -y postgresql redis-server"]
fn business_quick_measures_every_store_bound_endpoint_against_the_ceiling() {
    let out = out_dir("business");
    let run = bench_ok(&[
        "business",
        "--quick",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    let written = results(&out.join("results.json"));
    // The stores the harness started were pinned, beside the load generator, and say so.
    let cpus = &written.meta.cpus;
    assert_eq!(cpus.stores, cpus.load, "{cpus:?}");
    let business = written.sections.business.expect("business");
    assert!(
        business.frame.failures.is_empty(),
        "{:?}",
        business.frame.failures
    );
    assert_eq!(business.stores, STORES);
    let default = business.default;
    assert_eq!(default.db_pool, Business::DEFAULT_DB_POOL);
    assert_eq!(business.db_pools, [2, Business::DEFAULT_DB_POOL]);
    let store_bound = &Business::ENDPOINTS[1..];

    for server in packages() {
        for store in STORES {
            let cells: Vec<&BusinessCell> = business
                .cells
                .iter()
                .filter(|c| c.server == server && c.store == store)
                .collect();
            // /health once (it does not touch the pool), the others at each pool size.
            assert_eq!(cells.len(), 1 + store_bound.len() * 2, "{server} {store}");
            for cell in &cells {
                let what = format!(
                    "{server} {store} {} {}",
                    cell.endpoint,
                    cell.setting.label()
                );
                assert_eq!(cell.runs.len(), 2, "{what}");
                for run in &cell.runs {
                    // Every answer valid: the JSON checked field by field by the load itself.
                    assert!(run.load.requests > 0, "{what}: {run:?}");
                    assert_eq!(run.load.success_rate, 100.0, "{what}: {run:?}");
                    assert!(run.server.cpu_avg_pct.is_some(), "{what}");
                }
                let m = &cell.requests_per_s;
                assert!(
                    m.min > 0.0 && m.min <= m.median && m.median <= m.max,
                    "{what}: {m:?}"
                );
                // The harness's own PostgreSQL and Redis are sampled beside the server.
                let sampled = cell.store_processes.as_ref();
                if store == "sqlite" {
                    assert!(sampled.is_none() && cell.store_runs.is_empty(), "{what}");
                } else {
                    assert_eq!(cell.store_runs.len(), 2, "{what}");
                    assert!(
                        sampled.and_then(|s| s.rss_max_mib).is_some_and(|r| r > 1.0),
                        "{what}"
                    );
                    assert!(sampled.and_then(|s| s.cpu_avg_pct).is_some(), "{what}");
                }
            }
            for endpoint in store_bound {
                let fraction = business
                    .fractions
                    .iter()
                    .find(|f| f.server == server && f.store == store && f.endpoint == *endpoint)
                    .unwrap_or_else(|| panic!("{server} {store} {endpoint}: no fraction"));
                let ceiling = cells
                    .iter()
                    .find(|c| c.endpoint == "/health")
                    .expect("ceiling")
                    .requests_per_s
                    .median;
                assert_eq!(fraction.ceiling_requests_per_s, ceiling);
                assert!(
                    (fraction.fraction - fraction.requests_per_s / ceiling).abs() < 1e-9,
                    "{fraction:?}"
                );
                let best = business
                    .best_pools
                    .iter()
                    .find(|b| b.server == server && b.store == store && b.endpoint == *endpoint)
                    .expect("best pool");
                let highest = cells
                    .iter()
                    .filter(|c| c.endpoint == *endpoint)
                    .map(|c| c.requests_per_s.median)
                    .fold(0.0, f64::max);
                assert_eq!(best.gain.requests_per_s, highest, "{best:?}");
                // A block per repeat, but one the machine disturbed.
                let c = &best.gain.comparison;
                assert!(
                    c.judged.blocks <= 2 && c.ratios.len() == c.judged.blocks,
                    "{c:?}"
                );
            }
        }
    }
    // Three servers: three pairs per store and store-bound endpoint.
    assert_eq!(
        business.comparisons.len(),
        3 * STORES.len() * store_bound.len()
    );
    assert!(business
        .store_notes
        .iter()
        .any(|n| n.contains("started by the harness")));

    let csv = std::fs::read_to_string(out.join("business.csv")).expect("business.csv");
    let runs: usize = business.cells.iter().map(|c| c.runs.len()).sum();
    assert_eq!(csv.lines().count(), 1 + runs);
    for store in STORES {
        let chart = format!("business-{}.svg", store.replace('+', "-"));
        assert!(out.join(&chart).is_file(), "{chart}");
    }
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(html.contains("id=\"business\""));
    assert!(
        stdout.contains("as a fraction of the same server's /health"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
#[ignore = "needs PostgreSQL and Redis: apt-get install -y postgresql redis-server"]
fn stores_given_by_url_are_used_as_they_are() {
    let pg = Postgres::start().unwrap_or_else(|e| panic!("{e}"));
    let redis = Redis::start().unwrap_or_else(|e| panic!("{e}"));
    pg.create_database("given")
        .unwrap_or_else(|e| panic!("{e}"));
    let out = out_dir("business-urls");
    let (db, cache) = (pg.url("given"), redis.url());
    bench_ok(&[
        "business",
        "--quick",
        "--stores",
        "postgres",
        "--database-url",
        &db,
        "--redis-url",
        &cache,
        "--servers",
        "hyper",
        "--endpoints",
        "/health,/business?name=Ana",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let business = results(&out.join("results.json"))
        .sections
        .business
        .expect("business");
    assert!(
        business.frame.failures.is_empty(),
        "{:?}",
        business.frame.failures
    );
    assert_eq!(business.stores, ["postgres+redis"]);
    assert_eq!(
        business.store_notes,
        ["postgres+redis: the servers at the URLs given"]
    );
    // Ana is no known person: a random word, and every visit counted once.
    let cells: Vec<_> = business
        .cells
        .iter()
        .filter(|c| c.endpoint != "/health")
        .collect();
    assert_eq!(cells.len(), 2);
    for cell in cells {
        assert!(
            cell.runs.iter().all(|r| r.load.success_rate == 100.0),
            "{cell:?}"
        );
        // Not the harness's to sample.
        assert!(cell.store_processes.is_none());
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// Where Redis is not installed (here: not on an empty PATH), the default stores run what
/// they can: SQLite measured, PostgreSQL + Redis skipped in one line that says what to
/// install, exit 0. Asked for by name, the same store is an error.
#[test]
fn default_stores_that_are_not_installed_are_skipped_in_one_line() {
    let _beside = crate::common::beside_quiet();
    let empty = out_dir("no-path");
    std::fs::create_dir_all(&empty).unwrap();
    let run = |extra: &[&str], out: &std::path::Path| {
        Command::new(BENCH)
            .args(["business", "--quick", "--quiet", "--servers", "hyper"])
            .args(["--endpoints", "/health,/db"])
            .args(extra)
            .args(["--out", out.to_str().unwrap()])
            .args(bin_dir_args())
            .env("PATH", &empty)
            .output()
            .expect("greet-bench runs")
    };
    let out = out_dir("business-skip");
    let skipped = run(&[], &out);
    let stderr = assert_one_line_exit(&skipped, 0);
    assert!(
        stderr.contains("postgres+redis: skipped") && stderr.contains("apt-get install -y"),
        "{stderr}"
    );
    let business = results(&out.join("results.json"))
        .sections
        .business
        .expect("business");
    assert_eq!(business.stores, ["sqlite"]);
    assert!(
        business.frame.failures.is_empty(),
        "{:?}",
        business.frame.failures
    );
    assert!(business
        .cells
        .iter()
        .all(|c| c.store == "sqlite" && !c.runs.is_empty()));

    let asked = run(&["--stores", "postgres"], &out_dir("business-asked"));
    assert_ne!(asked.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&asked.stderr);
    assert!(stderr.contains("apt-get install -y"), "{stderr}");
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&empty);
}

/// TechEmpower's scenario on a machine without PostgreSQL and Redis (an empty PATH): json,
/// plaintext and the database tests on SQLite measured, PostgreSQL skipped in one line that
/// says what to install, exit 0.
#[test]
fn techempower_without_postgres_skips_it_in_one_line() {
    let _beside = crate::common::beside_quiet();
    let empty = out_dir("te-no-path");
    std::fs::create_dir_all(&empty).unwrap();
    let out = out_dir("techempower-skip");
    let run = Command::new(BENCH)
        .args(["techempower", "--quick", "--quiet", "--servers", "hyper"])
        .args(["--tests", "plaintext,fortunes"])
        .args(["--out", out.to_str().unwrap()])
        .args(bin_dir_args())
        .env("PATH", &empty)
        .output()
        .expect("greet-bench runs");
    let stderr = assert_one_line_exit(&run, 0);
    assert!(
        stderr.contains("techempower: postgres+redis: skipped")
            && stderr.contains("apt-get install -y"),
        "{stderr}"
    );
    let te = results(&out.join("results.json"))
        .sections
        .techempower
        .expect("techempower");
    assert_eq!(te.stores, ["sqlite"]);
    assert!(te.frame.failures.is_empty(), "{:?}", te.frame.failures);
    let cells: Vec<(&str, &str)> = te
        .cells
        .iter()
        .map(|c| (c.test.as_str(), c.store.as_str()))
        .collect();
    assert_eq!(cells, [("plaintext", "none"), ("fortunes", "sqlite")]);
    assert!(te.cells.iter().all(|c| !c.runs.is_empty()));
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&empty);
}
