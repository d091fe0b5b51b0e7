//! The business plan: stores, endpoints and the workers × pool grid.

use std::time::Duration;

use crate::plan::{Measure, Measured, Placement, Store, SERVERS};

/// Business, the original's fourth experiment: each server's store-bound endpoints against its
/// own ceiling (`/health`), on each store, over grids of `--workers` and `--db-pool`.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
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

impl Plan {
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

impl Measured for Plan {
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
