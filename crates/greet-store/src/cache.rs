//! The visit counters of `/business`: in-process, or Redis `INCR` through redis-rs's
//! `ConnectionManager`, which reconnects by itself when Redis comes back.
//!
//! Both are bounded, so a client walking through unique names cannot grow them without end:
//! the in-process counters keep the [`MEMORY_NAMES`] most recently visited names and forget
//! the least recently visited one to make room (its count starts again at 1 if it comes
//! back); the Redis servers this project starts (compose, the harness, the tests) run with
//! `maxmemory` and the `allkeys-lru` policy, which does the same by memory.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lru::LruCache;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::StoreError;

/// Most names the in-process cache counts at once: 100,000 names take about 10 MiB.
pub const MEMORY_NAMES: NonZeroUsize = NonZeroUsize::new(100_000).expect("non-zero");

/// Why a count could not be had.
pub(crate) type Error = Box<dyn std::error::Error + Send + Sync>;

/// Where visits are counted. Cheap to clone.
#[derive(Clone)]
pub(crate) enum Cache {
    /// In-process counters, least recently visited forgotten first, behind one lock (held
    /// for one update).
    Memory(Arc<Memory>),
    /// Redis, one multiplexed connection shared by every request.
    Redis(ConnectionManager),
}

impl Cache {
    /// In-process counters of at most `names` names. Nothing is allocated until a visit.
    pub(crate) fn memory(names: NonZeroUsize) -> Self {
        Self::Memory(Arc::new(Memory {
            // Unbounded to the map, bounded here: `LruCache::new` would allocate room for
            // every name up front.
            counts: Mutex::new(LruCache::unbounded()),
            names,
        }))
    }

    /// Redis at `url`, connected on first use. Needs a Tokio runtime.
    pub(crate) fn redis(url: &str, timeout: Duration) -> Result<Self, StoreError> {
        let unavailable = |e: redis::RedisError| StoreError::Unavailable(format!("Redis: {e}"));
        let client = redis::Client::open(url).map_err(unavailable)?;
        let manager = ConnectionManager::new_lazy_with_config(client, manager_config(timeout))
            .map_err(unavailable)?;
        Ok(Self::Redis(manager))
    }

    /// Counts a visit of `name`; the count after it.
    pub(crate) async fn visit(&self, name: &str) -> Result<u64, Error> {
        match self {
            Self::Memory(memory) => Ok(memory.visit(name)),
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

/// The in-process counters.
pub(crate) struct Memory {
    counts: Mutex<LruCache<Box<str>, u64>>,
    names: NonZeroUsize,
}

impl Memory {
    fn visit(&self, name: &str) -> u64 {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = counts.get_mut(name) {
            *count += 1;
            return *count;
        }
        if counts.len() >= self.names.get() {
            counts.pop_lru();
        }
        counts.put(name.into(), 1);
        1
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_forgets_the_least_recently_visited_name() {
        let memory = Cache::memory(NonZeroUsize::new(3).unwrap());
        let Cache::Memory(memory) = &memory else {
            unreachable!()
        };
        for name in ["a", "b", "c", "a"] {
            memory.visit(name);
        }
        // Full: "b" was visited least recently, so "d" takes its place.
        assert_eq!(memory.visit("d"), 1);
        assert_eq!(memory.counts.lock().unwrap().len(), 3);
        assert_eq!(memory.visit("a"), 3);
        assert_eq!(memory.visit("c"), 2);
        assert_eq!(memory.visit("b"), 1, "forgotten, counted afresh");
    }
}
