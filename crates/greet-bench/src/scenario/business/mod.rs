//! Business, the tuning experiment's business endpoint: each server's store-bound
//! endpoints against its own ceiling (`/health`), on each store, over grids of `--workers`
//! and `--db-pool`.

mod flags;
mod report;
mod run;

use std::time::Duration;

use greet_model::plan::{Base, Based, Measure, Measured, Store, Takes, GRID_REPEATS};

pub(crate) use flags::Flags;
pub use report::*;

use super::kit::{About, Scenario};

/// The business scenario.
#[derive(Debug)]
pub(crate) struct Business;

impl Scenario for Business {
    const ABOUT: About = About {
        name: "business",
        block: "a repeat on a store: each server at every pool setting (settings in a Williams \
                order too), a fresh process each",
        title: "Business (a database and a cache against the ceiling)",
        summary: "Store-bound endpoints on SQLite and PostgreSQL + Redis",
        detail: "Each server's store-bound endpoints (/db, /queries, /business) against its own \
                 ceiling (/health), on SQLite and on PostgreSQL + Redis (started by the \
                 harness), over --workers and --db-pool grids",
        examples: &[
            "greet-bench business --quick                  on SQLite, nothing to install",
            "greet-bench business --stores postgres        on PostgreSQL + Redis, started by the harness",
        ],
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
}

/// Business, the original's fourth experiment: each server's store-bound endpoints against its
/// own ceiling (`/health`), on each store, over grids of `--workers` and `--db-pool`.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario's plan holds (each measurement runs where its placement says; the
    /// warm-ups run from the harness).
    pub base: Base,
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
}

impl Based for Plan {
    const TAKES: Takes = Takes {
        place: true,
        ..Takes::SERVERS_ONLY
    };
    const REPEATS_HELP: &'static str = GRID_REPEATS;

    /// The defaults, or the `--quick` sizes: both stores, the servers started by the harness
    /// where they are installed.
    fn defaults(quick: bool) -> Self {
        Self {
            base: Self::grid(quick),
            stores: Store::defaults(),
            endpoints: Self::ENDPOINTS.map(String::from).to_vec(),
            workers: Vec::new(),
            db_pools: if quick {
                Self::QUICK_DB_POOLS.to_vec()
            } else {
                Self::DB_POOLS.to_vec()
            },
            measure: Self::measure(quick),
        }
    }
}

impl Measured for Plan {
    /// The original's 100 connections.
    const MEASURE: Measure = Measure {
        connections: 100,
        duration: Duration::from_millis(500),
        // Fills the pool and the statement caches.
        warmup: Duration::from_millis(200),
    };
    const QUICK_MEASURE: Measure = Measure {
        connections: 10,
        duration: Duration::from_millis(100),
        warmup: Duration::from_millis(50),
    };
}
