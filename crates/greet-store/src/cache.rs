//! The visit counters of `/business`: in-process, or Redis `INCR` through redis-rs's
//! `ConnectionManager`, which reconnects by itself when Redis comes back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

/// Why a count could not be had.
pub(crate) type Error = Box<dyn std::error::Error + Send + Sync>;

/// Where visits are counted. Cheap to clone.
#[derive(Clone)]
pub(crate) enum Cache {
    /// In-process counters, one map behind one lock (held for one hash-map update).
    Memory(Arc<Mutex<HashMap<Box<str>, u64>>>),
    /// Redis, one multiplexed connection shared by every request.
    Redis(ConnectionManager),
}

impl Cache {
    /// In-process counters.
    pub(crate) fn memory() -> Self {
        Self::Memory(Arc::default())
    }

    /// Redis at `url`, connected on first use. Needs a Tokio runtime.
    pub(crate) fn redis(url: &str, timeout: Duration) -> Result<Self, String> {
        let client = redis::Client::open(url).map_err(|e| format!("Redis: {e}"))?;
        let manager = ConnectionManager::new_lazy_with_config(client, manager_config(timeout))
            .map_err(|e| format!("Redis: {e}"))?;
        Ok(Self::Redis(manager))
    }

    /// Counts a visit of `name`; the count after it.
    pub(crate) async fn visit(&self, name: &str) -> Result<u64, Error> {
        match self {
            Self::Memory(counts) => {
                let mut counts = counts.lock().unwrap_or_else(|e| e.into_inner());
                let count = match counts.get_mut(name) {
                    Some(count) => count,
                    None => counts.entry(name.into()).or_default(),
                };
                *count += 1;
                Ok(*count)
            }
            Self::Redis(manager) => {
                let mut conn = manager.clone();
                let count: u64 = redis::cmd("INCR")
                    .arg(key(name))
                    .query_async(&mut conn)
                    .await?;
                Ok(count)
            }
        }
    }
}

/// The Redis key of `name`'s visits.
fn key(name: &str) -> String {
    format!("visits:{name}")
}

/// Connect and answer within `timeout`; after a lost connection, a few quick retries, then
/// the next request tries again.
fn manager_config(timeout: Duration) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout))
        .set_number_of_retries(2)
        .set_min_delay(Duration::from_millis(10))
        .set_max_delay(Duration::from_millis(200))
}

/// Waits until Redis at `url` answers `PING`, for up to `patience`.
pub(crate) async fn ping(url: &str, timeout: Duration) -> Result<(), Error> {
    let client = redis::Client::open(url)?;
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout));
    let mut conn = client
        .get_multiplexed_async_connection_with_config(&config)
        .await?;
    let _: String = redis::cmd("PING").query_async(&mut conn).await?;
    Ok(())
}
