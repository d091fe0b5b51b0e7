//! The business plan: stores, endpoints and the workers × pool grid.

use std::time::Duration;

use super::SERVERS;

/// The stores a business run loads the servers on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Store {
    /// The embedded default: SQLite and in-process counters.
    Sqlite,
    /// PostgreSQL and Redis: at these URLs, or (`None`) started by the harness.
    Servers {
        /// `--database-url` for the servers.
        database_url: Option<String>,
        /// `--redis-url` for the servers.
        redis_url: Option<String>,
        /// Not asked for by name (the default stores): where PostgreSQL or Redis is not
        /// installed, skipped in one line with what to install, and the run goes on.
        optional: bool,
    },
}

impl Store {
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
    /// Keep-alive connections of each load.
    pub concurrency: usize,
    /// Measured part of each load.
    pub duration: Duration,
    /// Unmeasured load before it.
    pub warmup: Duration,
    /// Runs of each setting, each on a fresh server.
    pub repeats: usize,
}

impl Business {
    /// The ceiling, TechEmpower's single and 20-query tests, and the business call (a known
    /// person, so the greeting is the stored one).
    pub const ENDPOINTS: [&'static str; 4] = [
        greet_core::paths::HEALTH,
        "/db",
        "/queries?queries=20",
        "/business?name=user-00042",
    ];
    /// The `--db-pool` grid.
    pub const DB_POOLS: [usize; 3] = [1, 4, 16];
    /// `--quick` `--db-pool` grid.
    pub const QUICK_DB_POOLS: [usize; 1] = [2];
    /// The servers' default pool.
    pub const DEFAULT_DB_POOL: usize = greet_store::settings::DEFAULT_POOL.get();
    /// Connections: the original's 100.
    pub const CONCURRENCY: usize = 100;
    /// `--quick` connections.
    pub const QUICK_CONCURRENCY: usize = 10;
    /// Measured part of each load.
    pub const DURATION: Duration = Duration::from_millis(500);
    /// `--quick` measured part.
    pub const QUICK_DURATION: Duration = Duration::from_millis(100);
    /// Warm-up before each load: fills the pool and the statement caches.
    pub const WARMUP: Duration = Duration::from_millis(200);
    /// `--quick` warm-up.
    pub const QUICK_WARMUP: Duration = Duration::from_millis(50);
    /// Runs per setting: 4 a side is the fewest a rank test can separate at 0.05.
    pub const REPEATS: usize = 4;
    /// `--quick` runs per setting.
    pub const QUICK_REPEATS: usize = 2;

    /// The defaults, or the `--quick` sizes: both stores, the servers started by the harness
    /// where they are installed.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            stores: vec![
                Store::Sqlite,
                Store::Servers {
                    database_url: None,
                    redis_url: None,
                    optional: true,
                },
            ],
            endpoints: Self::ENDPOINTS.map(String::from).to_vec(),
            workers: Vec::new(),
            db_pools: if quick {
                Self::QUICK_DB_POOLS.to_vec()
            } else {
                Self::DB_POOLS.to_vec()
            },
            concurrency: if quick {
                Self::QUICK_CONCURRENCY
            } else {
                Self::CONCURRENCY
            },
            duration: if quick {
                Self::QUICK_DURATION
            } else {
                Self::DURATION
            },
            warmup: if quick {
                Self::QUICK_WARMUP
            } else {
                Self::WARMUP
            },
            repeats: if quick {
                Self::QUICK_REPEATS
            } else {
                Self::REPEATS
            },
        }
    }
}
