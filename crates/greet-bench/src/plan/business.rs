//! The business plan: stores, endpoints and the workers × pool grid.

use std::time::Duration;

use greet_store::{DatabaseUrl, RedisUrl};

use super::{Measure, Measured, Placement, SERVERS};

/// The stores a business run loads the servers on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Store {
    /// The embedded default: SQLite and in-process counters.
    Sqlite,
    /// PostgreSQL and Redis: at these URLs, or (`None`) started by the harness.
    Servers {
        /// PostgreSQL's URL for the servers.
        database_url: Option<DatabaseUrl>,
        /// Redis's URL for the servers.
        redis_url: Option<RedisUrl>,
        /// Not asked for by name (the default stores): where PostgreSQL or Redis is not
        /// installed, skipped in one line with what to install, and the run goes on.
        optional: bool,
    },
}

impl Store {
    /// The default stores of a scenario that loads the database routes: the embedded one, and
    /// PostgreSQL + Redis started by the harness where installed (skipped in one line where
    /// not).
    pub fn defaults() -> Vec<Store> {
        vec![
            Store::Sqlite,
            Store::Servers {
                database_url: None,
                redis_url: None,
                optional: true,
            },
        ]
    }

    /// Its name in the tables: `sqlite`, `postgres+redis`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Servers { .. } => "postgres+redis",
        }
    }
}

/// Business, the original's fourth experiment: each server's store-bound endpoints against its
/// own ceiling (`/health`), on each store, over grids of `--workers` and `--db-pool`.
#[derive(Debug, Clone, PartialEq)]
pub struct Business {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// The stores, in order.
    pub stores: Vec<Store>,
    /// Paths loaded on each server; `/health` is the ceiling the others are set against.
    pub endpoints: Vec<String>,
    /// The `--workers` grid (the default setting is always added).
    pub workers: Vec<usize>,
    /// The `--db-pool` grid (the servers' default is always added).
    pub db_pools: Vec<usize>,
    /// How each setting is measured.
    pub measure: Measure,
    /// Where each measurement runs (the warm-ups run from the harness), and on a swarm the
    /// servers and the stores.
    pub place: Placement,
}

impl Business {
    /// The ceiling, TechEmpower's single and 20-query tests, and the business call (a known
    /// person, so the greeting is the stored one).
    pub const ENDPOINTS: [&'static str; 4] = [
        greet_core::paths::HEALTH,
        greet_core::paths::DB,
        "/queries?queries=20",
        "/business?name=user-00042",
    ];
    /// The `--db-pool` grid.
    pub const DB_POOLS: [usize; 3] = [1, 4, 16];
    /// `--quick` `--db-pool` grid.
    pub const QUICK_DB_POOLS: [usize; 1] = [2];
    /// The servers' default pool.
    pub const DEFAULT_DB_POOL: usize = greet_store::settings::DEFAULT_POOL.get();
    /// The defaults, or the `--quick` sizes: both stores, the servers started by the harness
    /// where they are installed.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            stores: Store::defaults(),
            endpoints: Self::ENDPOINTS.map(String::from).to_vec(),
            workers: Vec::new(),
            db_pools: if quick {
                Self::QUICK_DB_POOLS.to_vec()
            } else {
                Self::DB_POOLS.to_vec()
            },
            measure: Self::measure(quick),
            place: Placement::Harness,
        }
    }
}

impl Measured for Business {
    /// The original's 100 connections.
    const MEASURE: Measure = Measure {
        concurrency: 100,
        duration: Duration::from_millis(500),
        // Fills the pool and the statement caches.
        warmup: Duration::from_millis(200),
        repeats: 4,
    };
    const QUICK_MEASURE: Measure = Measure {
        concurrency: 10,
        duration: Duration::from_millis(100),
        warmup: Duration::from_millis(50),
        repeats: 2,
    };
}
