//! The TechEmpower plan: their seven tests, on each store.

use std::time::Duration;

use greet_core::paths;

use crate::plan::{Measure, Measured, Placement, Store, SERVERS};

/// One of TechEmpower's seven test types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Test {
    /// `/json`.
    Json,
    /// `/plaintext`, pipelined.
    Plaintext,
    /// `/db`: one row.
    Db,
    /// `/queries?queries=N`.
    Queries,
    /// `/fortunes`.
    Fortunes,
    /// `/updates?queries=N`.
    Updates,
    /// `/cached-queries?count=N`.
    CachedQueries,
}

impl Test {
    /// Every test, in TechEmpower's order.
    pub const ALL: [Test; 7] = [
        Self::Json,
        Self::Plaintext,
        Self::Db,
        Self::Queries,
        Self::Fortunes,
        Self::Updates,
        Self::CachedQueries,
    ];

    /// Its name, as `--tests` takes it and the tables show it (TechEmpower's own, but for
    /// `queries` for their `query`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Plaintext => "plaintext",
            Self::Db => "db",
            Self::Queries => "queries",
            Self::Fortunes => "fortunes",
            Self::Updates => "updates",
            Self::CachedQueries => "cached-queries",
        }
    }

    /// The test named `name`.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether it reads the database (and so runs on each store).
    pub fn uses_store(self) -> bool {
        !matches!(self, Self::Json | Self::Plaintext)
    }

    /// The path and query it loads, `rows` rows for the tests that take a count.
    pub fn target(self, rows: usize) -> String {
        match self {
            Self::Json => paths::JSON.to_owned(),
            Self::Plaintext => paths::PLAINTEXT.to_owned(),
            Self::Db => paths::DB.to_owned(),
            Self::Queries => format!("{}?queries={rows}", paths::QUERIES),
            Self::Fortunes => paths::FORTUNES.to_owned(),
            Self::Updates => format!("{}?queries={rows}", paths::UPDATES),
            Self::CachedQueries => format!("{}?count={rows}", paths::CACHED_QUERIES),
        }
    }
}

/// TechEmpower's tests on every server: keep-alive load at one concurrency per test,
/// plaintext pipelined, each database test on each store.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// The stores the database tests run on, in order (json and plaintext run once).
    pub stores: Vec<Store>,
    /// The tests, in order.
    pub tests: Vec<Test>,
    /// Rows per request of queries, updates and cached queries.
    pub rows: usize,
    /// Requests each plaintext connection has in flight.
    pub pipeline: usize,
    /// How each test is measured: keep-alive connections, duration, warm-up, repeats.
    pub measure: Measure,
    /// Where each measurement runs (warm-ups run from the harness).
    pub place: Placement,
}

impl Plan {
    /// TechEmpower's plaintext depth.
    pub const PIPELINE: usize = 16;
    /// Rows per request: the count TechEmpower's published queries and updates tables use.
    pub const ROWS: usize = 20;

    /// The defaults, or the `--quick` sizes: both stores, PostgreSQL started by the harness
    /// where it is installed and skipped in one line where not.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            stores: Store::defaults(),
            tests: Test::ALL.to_vec(),
            rows: Self::ROWS,
            pipeline: Self::PIPELINE,
            measure: Self::measure(quick),
            place: Placement::Harness,
        }
    }
}

impl Measured for Plan {
    /// TechEmpower measures 15 s at each of 16–512 connections (plaintext 256–16,384) on
    /// dedicated machines; here one level that fills two cores, short enough for `all`
    /// (3 servers × 12 test-store pairs × 4 runs of 1 s, the fewest a rank test separates).
    const MEASURE: Measure = Measure {
        concurrency: 256,
        duration: Duration::from_secs(1),
        warmup: Duration::from_millis(300),
        repeats: 4,
    };
    const QUICK_MEASURE: Measure = Measure {
        concurrency: 16,
        duration: Duration::from_millis(100),
        warmup: Duration::from_millis(50),
        repeats: 2,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_test_has_a_route_and_a_name_that_reads_back() {
        for test in Test::ALL {
            assert_eq!(Test::named(test.name()), Some(test));
            let target = test.target(20);
            let path = target.split('?').next().unwrap_or_default();
            assert!(paths::ALL.contains(&path), "{target}");
        }
        assert_eq!(Test::CachedQueries.target(5), "/cached-queries?count=5");
        assert!(!Test::Plaintext.uses_store() && Test::Fortunes.uses_store());
    }
}
