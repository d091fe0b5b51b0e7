//! TechEmpower's seven tests (json, plaintext pipelined, db, queries, fortunes, updates,
//! cached queries) on every server, the database ones on each store.

mod flags;
mod report;
mod run;

use std::time::Duration;

use greet_core::paths;

use greet_model::plan::{Base, Based, Measure, Measured, Store, Takes, GRID_REPEATS};

pub(crate) use flags::Flags;
pub use report::*;

use super::kit::{About, Part, Scenario, Study};

/// The techempower scenario.
#[derive(Debug)]
pub(crate) struct TechEmpower;

impl Scenario for TechEmpower {
    const ABOUT: About = About {
        name: "techempower",
        block: "a repeat on a store: each server started afresh, every test on it",
        title: "TechEmpower (their seven tests: json, plaintext, db, queries, fortunes, updates, \
                cached queries)",
        summary: "TechEmpower's seven tests, on SQLite and PostgreSQL",
        detail: "TechEmpower's seven tests (json, plaintext pipelined 16 deep, db, queries, \
                 fortunes, updates, cached-queries), the database ones on SQLite and PostgreSQL: \
                 each server's keep-alive throughput and latency per test, its share of the best, \
                 and verdicts",
        examples: &[
            "greet-bench techempower --tests json,plaintext",
            "greet-bench techempower --stores postgres     the database tests on PostgreSQL",
        ],
        references: true,
        measures_again: true,
        stores: true,
        ..About::DEFAULT
    };
    type Plan = Plan;
    type Flags = Flags;
    type Section = Section;

    fn stores(plan: &Plan) -> &[Store] {
        &plan.stores
    }

    /// A study's timed part: plaintext and json, which read no store, in the study's blocks.
    fn part(study: &Study) -> Option<(Part, Plan)> {
        let mut plan = Plan::defaults(study.quick);
        plan.base.set_servers(&study.servers);
        plan.base.repeats = study.blocks;
        plan.tests = vec![Test::Plaintext, Test::Json];
        // Neither test reads a store: SQLite, embedded, is opened by nothing.
        plan.stores = vec![Store::Sqlite];
        plan.by_crate = true;
        Some((Part::Timed, plan))
    }
}

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
    pub fn path(self, rows: usize) -> String {
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

/// TechEmpower's tests on every server: keep-alive load at one number of connections per
/// test, plaintext pipelined, each database test on each store.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario's plan holds (each measurement runs where its placement says; the
    /// warm-ups run from the harness).
    pub base: Base,
    /// The stores the database tests run on, in order (json and plaintext run once).
    pub stores: Vec<Store>,
    /// The tests, in order.
    pub tests: Vec<Test>,
    /// Rows per request of queries, updates and cached queries.
    pub rows: usize,
    /// Requests each plaintext connection has in flight.
    pub pipeline: usize,
    /// How each test is measured: keep-alive connections, duration, warm-up.
    pub measure: Measure,
    /// The timed part of a study: a server with knobs is compared only with its crate at its
    /// defaults (and the crates with each other), not with every server
    /// ([`greet_model::plan::against_its_crate`]).
    pub by_crate: bool,
}

impl Plan {
    /// TechEmpower's plaintext depth.
    pub const PIPELINE: usize = 16;
    /// Rows per request: the count TechEmpower's published queries and updates tables use.
    pub const ROWS: usize = 20;
}

impl Based for Plan {
    const TAKES: Takes = Takes {
        place: true,
        ..Takes::SERVERS_ONLY
    };
    const REPEATS_HELP: &'static str = GRID_REPEATS;

    /// The defaults, or the `--quick` sizes: both stores, PostgreSQL started by the harness
    /// where it is installed and skipped in one line where not.
    fn defaults(quick: bool) -> Self {
        Self {
            base: Self::grid(quick),
            stores: Store::defaults(),
            tests: Test::ALL.to_vec(),
            rows: Self::ROWS,
            pipeline: Self::PIPELINE,
            measure: Self::measure(quick),
            by_crate: false,
        }
    }
}

impl Measured for Plan {
    /// TechEmpower measures 15 s at each of 16–512 connections (plaintext 256–16,384) on
    /// dedicated machines; here one level that fills two cores, short enough for `all`
    /// (3 servers × 12 test-store pairs × 10 blocks of 1 s, enough for a family to decide).
    const MEASURE: Measure = Measure {
        connections: 256,
        duration: Duration::from_secs(1),
        warmup: Duration::from_millis(300),
    };
    const QUICK_MEASURE: Measure = Measure {
        connections: 16,
        duration: Duration::from_millis(100),
        warmup: Duration::from_millis(50),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_test_has_a_route_and_a_name_that_reads_back() {
        for test in Test::ALL {
            assert_eq!(Test::named(test.name()), Some(test));
            let path = test.path(20);
            let route = path.split('?').next().unwrap_or_default();
            assert!(paths::ALL.contains(&route), "{path}");
        }
        assert_eq!(Test::CachedQueries.path(5), "/cached-queries?count=5");
        assert!(!Test::Plaintext.uses_store() && Test::Fortunes.uses_store());
    }
}
