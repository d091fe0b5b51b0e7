//! The stores a scenario loads the database routes on.

use greet_store::{DatabaseUrl, RedisUrl};

/// A store the database routes are loaded on.
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
