//! The store-bound endpoints of the Greetings API, the same for every framework: TechEmpower's
//! database tests (`/db`, `/queries`, `/fortunes`, `/updates`, `/cached-queries`) and
//! `/business` (the original study's "business" call: one database read and one cache
//! update, as JSON).
//!
//! Layout:
//! - [`settings`]: [`Settings`] (which database and cache, pool size, timeout) and the
//!   parsing of their URLs; the flags themselves are `greet-server`'s.
//! - [`seed`]: the one schema file (`schema.sql`); the rows, the JSON bodies and
//!   TechEmpower's `?queries=N` rule are `greet_core::records`', which clients check
//!   answers against without a database client.
//! - `sqlite` / `postgres`: the two databases; `cache`: in-process counters or Redis;
//!   `fortunes`: the fortunes page's template.
//! - [`Stores`]: what a server holds, with [`Stores::prepare`] (start-up: wait for the
//!   servers, create and seed the tables) and the six endpoints, each a future that owns
//!   what it needs, gives up after the timeout with a 503, and never panics on input.
//!
//! Handlers stay framework glue: they route to [`Stores::db`], [`Stores::queries`],
//! [`Stores::fortunes`], [`Stores::updates`], [`Stores::cached_queries`] and
//! [`Stores::business`] and turn the [`Reply`] into their framework's response.

pub mod seed;
pub mod settings;

mod cache;
mod error;
mod fortunes;
mod postgres;
mod sqlite;

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

use greet_core::name::name_from_query;
use greet_core::records::{self, rows_from_query, Business, World, COUNT_KEY, QUERIES_KEY};
use greet_core::{GreetError, Reply, WORDS};
use serde::Serialize;

pub use cache::MEMORY_NAMES;
pub use error::StoreError;
pub use settings::{CacheKind, DatabaseUrl, RedisUrl, Settings, StoreKind};

use cache::Cache;
use postgres::Postgres;

/// The database and cache a server answers from. Cheap to clone; clones share connections.
#[derive(Clone)]
pub struct Stores {
    db: Database,
    cache: Cache,
    timeout: Duration,
    /// `world` as `/cached-queries` reads it: filled from the database by the first request
    /// that needs it, then kept (writes of `/updates` after that are not seen, as a cache's).
    cached: Arc<OnceCell<Arc<[World]>>>,
}

impl std::fmt::Debug for Stores {
    /// Which database and cache, not their connections.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let db = match self.db {
            Database::Sqlite(_) => StoreKind::Sqlite,
            Database::Postgres(_) => StoreKind::Postgres,
        };
        let cache = match self.cache {
            Cache::Memory(_) => CacheKind::Memory,
            Cache::Redis(_) => CacheKind::Redis,
        };
        f.debug_struct("Stores")
            .field("db", &db)
            .field("cache", &cache)
            .field("timeout", &self.timeout)
            .finish()
    }
}

#[derive(Clone)]
enum Database {
    Sqlite(Arc<sqlite::Lazy>),
    Postgres(Postgres),
}

/// What the endpoints return. Boxed: a store-bound request's future (a timeout, a pool
/// checkout, a Redis round trip) is kilobytes, and a router that awaits it inline would
/// carry that size in every request it serves, each sleeping `/greetings` among them.
pub type ReplyFuture = Pin<Box<dyn Future<Output = Reply> + Send + 'static>>;

impl Stores {
    /// Start-up, before a server listens: waits for PostgreSQL and Redis (retrying for
    /// [`Settings::start_patience`]), creates the tables and seeds them. Idempotent and safe
    /// when several servers start at once. Nothing to do for the embedded stores, which
    /// are made on first use. Run it on a runtime of its own: it keeps no connection.
    pub async fn prepare(settings: &Settings) -> Result<(), StoreError> {
        settings.check()?;
        let deadline = Instant::now() + settings.start_patience();
        if let Some(DatabaseUrl::Postgres(url)) = &settings.database_url {
            let pg = Postgres::new(url, 1, settings.timeout)?;
            retry(deadline, || pg.seed()).await.map_err(|e| {
                StoreError::Unavailable(format!("PostgreSQL at {}: {}", redacted(url), chain(&*e)))
            })?;
        }
        if let (CacheKind::Redis, Some(RedisUrl(url))) = (settings.cache, &settings.redis_url) {
            retry(deadline, || cache::ping(url, settings.timeout))
                .await
                .map_err(|e| {
                    StoreError::Unavailable(format!("Redis at {}: {}", redacted(url), chain(&*e)))
                })?;
        }
        Ok(())
    }

    /// The stores `settings` describe, nothing opened yet: the embedded database is made and
    /// seeded by the first request that needs it, PostgreSQL and Redis are connected on first
    /// use (call this inside the Tokio runtime that will serve). A SQLite file named by the
    /// settings is opened here, so a path that cannot be written is refused at start-up.
    pub fn new(settings: &Settings) -> Result<Self, StoreError> {
        settings.check()?;
        let timeout = settings.timeout;
        let keep = settings.pool.get();
        let db = match &settings.database_url {
            Some(DatabaseUrl::Postgres(url)) => {
                Database::Postgres(Postgres::new(url, keep, timeout)?)
            }
            Some(DatabaseUrl::Sqlite(path)) => {
                let db = sqlite::Lazy::new(Some(path), keep, timeout);
                db.get()?;
                Database::Sqlite(Arc::new(db))
            }
            None => Database::Sqlite(Arc::new(sqlite::Lazy::new(None, keep, timeout))),
        };
        let cache = match &settings.redis_url {
            Some(RedisUrl(url)) if settings.cache == CacheKind::Redis => {
                Cache::redis(url, timeout)?
            }
            _ => Cache::memory(cache::MEMORY_NAMES),
        };
        Ok(Self {
            db,
            cache,
            timeout,
            cached: Arc::default(),
        })
    }

    /// `GET /db`: one random row.
    pub fn db(&self) -> ReplyFuture {
        let stores = self.clone();
        Box::pin(async move {
            match stores.worlds(1).await {
                Ok(rows) => json(&rows[0]),
                Err(err) => err.into(),
            }
        })
    }

    /// `GET /queries?queries=N`: N random rows, N read as [`rows_from_query`] says.
    pub fn queries(&self, query: Option<&str>) -> ReplyFuture {
        let n = rows_from_query(query, QUERIES_KEY);
        let stores = self.clone();
        Box::pin(async move {
            match stores.worlds(n).await {
                Ok(rows) => json(&rows),
                Err(err) => err.into(),
            }
        })
    }

    /// `GET /fortunes`: every row of `fortune` and one added, sorted by message, as an HTML
    /// page.
    pub fn fortunes(&self) -> ReplyFuture {
        let stores = self.clone();
        Box::pin(async move {
            let rows = within(stores.timeout, GreetError::DatabaseUnavailable, async {
                match &stores.db {
                    Database::Sqlite(db) => {
                        db.ready().await?.fortunes().map_err(postgres::Error::from)
                    }
                    Database::Postgres(db) => db.fortunes().await,
                }
            });
            match rows.await {
                Ok(rows) => match fortunes::page(rows) {
                    Ok(page) => Reply::html(page),
                    Err(err) => {
                        tracing::debug!(%err, "fortunes page");
                        GreetError::DatabaseUnavailable.into()
                    }
                },
                Err(err) => err.into(),
            }
        })
    }

    /// `GET /updates?queries=N`: N random rows, each read, given a new random number and
    /// written back; the answer is the rows as written. N as [`rows_from_query`] says.
    pub fn updates(&self, query: Option<&str>) -> ReplyFuture {
        let n = rows_from_query(query, QUERIES_KEY);
        let stores = self.clone();
        Box::pin(async move {
            let (ids, answer, writes) = new_numbers(n);
            let written = within(stores.timeout, GreetError::DatabaseUnavailable, async {
                match &stores.db {
                    Database::Sqlite(db) => db
                        .ready()
                        .await?
                        .update_worlds(&ids, &writes)
                        .await
                        .map_err(postgres::Error::from),
                    Database::Postgres(db) => db.update_worlds(&ids, &writes).await,
                }
            });
            match written.await {
                Ok(()) => json(&answer),
                Err(err) => err.into(),
            }
        })
    }

    /// `GET /cached-queries?count=N`: N random rows from this process's copy of `world`
    /// (read from the database once). N as [`rows_from_query`] says.
    pub fn cached_queries(&self, query: Option<&str>) -> ReplyFuture {
        let n = rows_from_query(query, COUNT_KEY);
        let stores = self.clone();
        Box::pin(async move {
            let table = stores
                .cached
                .get_or_try_init(|| {
                    within(stores.timeout, GreetError::DatabaseUnavailable, async {
                        let rows = match &stores.db {
                            Database::Sqlite(db) => db
                                .ready()
                                .await?
                                .all_worlds()
                                .map_err(postgres::Error::from)?,
                            Database::Postgres(db) => db.all_worlds().await?,
                        };
                        // An empty table is not kept: the next request reads it again.
                        if rows.is_empty() {
                            return Err(postgres::Error::from("the world table is empty"));
                        }
                        Ok::<_, postgres::Error>(Arc::from(rows))
                    })
                })
                .await;
            match table {
                Ok(table) => {
                    let rows: Vec<World> = (0..n)
                        .map(|_| table[rand::random_range(..table.len())])
                        .collect();
                    json(&rows)
                }
                Err(err) => err.into(),
            }
        })
    }

    /// `GET /business?name=X`: the person's word from the database and a visit counted in
    /// the cache, both at once; names read and refused exactly as `/greetings` does.
    pub fn business(&self, query: Option<&str>) -> ReplyFuture {
        let name = name_from_query(query);
        let stores = self.clone();
        Box::pin(async move {
            let name = match name {
                Ok(name) => name,
                Err(err) => return err.into(),
            };
            match stores.business_of(name).await {
                Ok(body) => json(&body),
                Err(err) => err.into(),
            }
        })
    }

    async fn business_of(&self, name: Cow<'static, str>) -> Result<Business, GreetError> {
        let word = within(self.timeout, GreetError::DatabaseUnavailable, async {
            match &self.db {
                Database::Sqlite(db) => {
                    db.ready().await?.word(&name).map_err(postgres::Error::from)
                }
                Database::Postgres(db) => db.word(&name).await,
            }
        });
        let visits = within(
            self.timeout,
            GreetError::CacheUnavailable,
            self.cache.visit(&name),
        );
        let (word, visits) = tokio::join!(word, visits);
        let (word, visits) = (word?, visits?);
        let word = word.unwrap_or_else(|| WORDS[rand::random_range(..WORDS.len())].to_owned());
        Ok(Business {
            greeting: format!("{word} {name}!"),
            name: name.into_owned(),
            visits,
        })
    }

    async fn worlds(&self, n: usize) -> Result<Vec<World>, GreetError> {
        let ids = random_ids(n);
        within(self.timeout, GreetError::DatabaseUnavailable, async {
            match &self.db {
                Database::Sqlite(db) => db
                    .ready()
                    .await?
                    .worlds(&ids)
                    .map_err(postgres::Error::from),
                Database::Postgres(db) => db.worlds(&ids).await,
            }
        })
        .await
    }
}

/// `n` random world ids, each drawn on its own (so one may come twice, as TechEmpower's).
fn random_ids(n: usize) -> Vec<i32> {
    (0..n)
        .map(|_| rand::random_range(1..=records::WORLD_ROWS))
        .collect()
}

/// `n` random world ids; the answer `/updates` sends for them, each row with a new random
/// number; and the writes that make the table agree with that answer: ids in order (so
/// concurrent requests lock shared rows in one order), each once (an id drawn twice keeps
/// one new number, in the answer too).
fn new_numbers(n: usize) -> (Vec<i32>, Vec<World>, Vec<World>) {
    let ids = random_ids(n);
    let numbers: std::collections::BTreeMap<i32, i32> = ids
        .iter()
        .map(|&id| (id, rand::random_range(1..=records::WORLD_ROWS)))
        .collect();
    let answer = ids
        .iter()
        .map(|id| World {
            id: *id,
            random_number: numbers[id],
        })
        .collect();
    let writes = numbers
        .into_iter()
        .map(|(id, random_number)| World { id, random_number })
        .collect();
    (ids, answer, writes)
}

/// `fut` within `timeout`; a store error or a timeout is `unavailable` (a 503), and is logged
/// at debug level only: under a store outage every request fails, and per-request logging
/// would distort the comparison.
async fn within<T, E: std::fmt::Display>(
    timeout: Duration,
    unavailable: GreetError,
    fut: impl Future<Output = Result<T, E>>,
) -> Result<T, GreetError> {
    match tokio::time::timeout(timeout, fut).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => {
            tracing::debug!(%err, "{unavailable}");
            Err(unavailable)
        }
        Err(_) => {
            tracing::debug!("{unavailable}: timed out");
            Err(unavailable)
        }
    }
}

/// Calls `attempt` until it succeeds or `deadline` passes, pausing between attempts.
async fn retry<F, Fut, E>(deadline: Instant, mut attempt: F) -> Result<(), E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), E>>,
{
    let mut pause = Duration::from_millis(50);
    loop {
        match attempt().await {
            Ok(()) => return Ok(()),
            Err(err) if Instant::now() + pause >= deadline => return Err(err),
            Err(_) => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
        }
    }
}

/// An error and its sources on one line, each said once: drivers wrap the reason
/// ("connection refused") in errors that do not repeat it.
fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut line = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !line.contains(&text) {
            line = format!("{line}: {text}");
        }
        source = cause.source();
    }
    line.replace('\n', " ")
}

fn redacted(url: &str) -> String {
    match url.parse::<DatabaseUrl>() {
        Ok(db) => db.to_string(),
        Err(_) => url
            .parse::<RedisUrl>()
            .map_or_else(|_| url.to_owned(), |r| r.to_string()),
    }
}

fn json(value: &impl Serialize) -> Reply {
    // Serializing these plain structs cannot fail.
    Reply::json(serde_json::to_string(value).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::START_PATIENCE;

    #[tokio::test]
    async fn embedded_stores_answer_every_endpoint() {
        let stores = Stores::new(&Settings::default()).unwrap();
        // Asked at once, before the seed thread is done: the request waits for the rows.
        let db = stores.db().await;
        assert_eq!(
            (db.status, db.content_type),
            (200, greet_core::JSON_CONTENT_TYPE)
        );
        let row: World = serde_json::from_str(&db.body).unwrap();
        assert_eq!(row.random_number, records::world_number(row.id));

        let rows: Vec<World> =
            serde_json::from_str(&stores.queries(Some("queries=20")).await.body).unwrap();
        assert_eq!(rows.len(), 20);
        assert!(rows
            .iter()
            .all(|r| r.random_number == records::world_number(r.id)));

        for visits in 1..=3 {
            let reply = stores.business(Some("name=user-00042")).await;
            let body: Business = serde_json::from_str(&reply.body).unwrap();
            let word = records::person_word(42);
            assert_eq!(
                body,
                Business {
                    name: "user-00042".into(),
                    greeting: format!("{word} user-00042!"),
                    visits,
                }
            );
        }
        let bad = stores.business(Some("name=%ZZ")).await;
        assert_eq!(bad.status, 400);
        let unknown: Business =
            serde_json::from_str(&stores.business(Some("name=Jo%C3%A3o")).await.body).unwrap();
        assert_eq!((unknown.name.as_str(), unknown.visits), ("João", 1));
        assert!(unknown.greeting.ends_with(" João!"));
    }

    #[tokio::test]
    async fn techempower_endpoints_answer_from_the_embedded_database() {
        let stores = Stores::new(&Settings::default()).unwrap();
        let page = stores.fortunes().await;
        assert_eq!(
            (page.status, page.content_type, &*page.body),
            (200, greet_core::HTML_CONTENT_TYPE, records::FORTUNES_PAGE)
        );

        let cached: Vec<World> =
            serde_json::from_str(&stores.cached_queries(Some("count=30")).await.body).unwrap();
        assert_eq!(cached.len(), 30);
        assert!(cached.iter().all(World::is_seeded), "{cached:?}");

        let reply = stores.updates(Some("queries=500")).await;
        assert_eq!(
            (reply.status, reply.content_type),
            (200, greet_core::JSON_CONTENT_TYPE)
        );
        let answer: Vec<World> = serde_json::from_str(&reply.body).unwrap();
        assert_eq!(answer.len(), 500);
        assert!(answer.iter().all(World::is_valid));
        // The table now holds what was answered, and most rows changed (a new number equals
        // the old one once in 10,000 draws).
        let Database::Sqlite(db) = &stores.db else {
            unreachable!()
        };
        let ids: Vec<i32> = answer.iter().map(|w| w.id).collect();
        assert_eq!(db.ready().await.unwrap().worlds(&ids).unwrap(), answer);
        let changed = answer.iter().filter(|w| !w.is_seeded()).count();
        assert!(changed > 490, "{changed} of 500 changed");

        // The cache was filled before the writes and keeps what it read.
        let cached: Vec<World> =
            serde_json::from_str(&stores.cached_queries(Some("count=500")).await.body).unwrap();
        assert!(cached.iter().all(World::is_seeded));
    }

    #[test]
    fn an_id_drawn_twice_is_written_once_with_the_number_answered() {
        let (ids, answer, writes) = new_numbers(500);
        assert_eq!(ids, answer.iter().map(|w| w.id).collect::<Vec<_>>());
        assert!(writes.windows(2).all(|w| w[0].id < w[1].id));
        for row in &answer {
            assert!(writes.contains(row), "{row:?}");
        }
        // 500 draws of 10,000 ids repeat one with probability ~99.6%: usually exercised.
        assert_eq!(
            writes.len(),
            ids.iter().collect::<std::collections::HashSet<_>>().len()
        );
    }

    #[tokio::test]
    async fn the_temp_database_is_made_on_first_use_and_goes_with_the_stores() {
        let stores = Stores::new(&Settings::default()).unwrap();
        let Database::Sqlite(db) = &stores.db else {
            unreachable!()
        };
        assert!(!db.is_open(), "nothing is opened before a request needs it");
        assert_eq!(stores.db().await.status, 200);
        let path = db.get().unwrap().path().to_owned();
        assert!(path.exists());
        let clone = stores.clone();
        drop(stores);
        assert!(path.exists(), "a clone still uses it");
        let wal = path.with_extension("sqlite-wal");
        assert!(wal.exists(), "WAL mode: {}", wal.display());
        drop(clone);
        assert!(!path.exists(), "{}", path.display());
        assert!(!wal.exists(), "{}", wal.display());
    }

    #[test]
    fn a_sqlite_file_that_cannot_be_made_is_refused_at_once() {
        let path = std::env::temp_dir().join("greet-no-such-dir/x.sqlite");
        let settings = Settings {
            database_url: Some(format!("sqlite://{}", path.display()).parse().unwrap()),
            ..Settings::default()
        };
        let err = Stores::new(&settings).expect_err("refused");
        assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
        let err = err.to_string();
        assert!(err.starts_with("SQLite database "), "{err}");
        assert!(err.contains("greet-no-such-dir"), "{err}");
    }

    #[tokio::test]
    async fn unreachable_stores_are_503_within_the_timeout() {
        // Nothing listens on port 1; the pool gives up on connecting at once.
        let settings = Settings {
            store: StoreKind::Postgres,
            database_url: Some("postgres://greet@127.0.0.1:1/greet".parse().unwrap()),
            cache: CacheKind::Redis,
            redis_url: Some("redis://127.0.0.1:1".parse().unwrap()),
            timeout: Duration::from_millis(300),
            ..Settings::default()
        };
        let stores = Stores::new(&settings).unwrap();
        let start = Instant::now();
        let db = stores.db().await;
        assert_eq!(db.status, 503);
        assert_eq!(db.body, GreetError::DatabaseUnavailable.reason());
        let business = stores.business(Some("name=Ana")).await;
        assert_eq!(business.status, 503);
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );

        let start = Instant::now();
        let err = Stores::prepare(&settings).await.unwrap_err();
        assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
        let err = err.to_string();
        assert!(
            err.starts_with("PostgreSQL at postgres://greet@127.0.0.1:1/greet: "),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
        // Start-up waits START_PATIENCE timeouts, then says why.
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(300) * START_PATIENCE / 2,
            "{waited:?}"
        );
        assert!(
            waited < Duration::from_millis(300) * START_PATIENCE * 2,
            "{waited:?}"
        );
    }
}
