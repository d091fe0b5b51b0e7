//! PostgreSQL through tokio-postgres, with a deadpool pool of `--db-pool` connections and
//! prepared statements cached per connection.
//!
//! The pool opens connections on first use (on whichever runtime thread asks first), and a
//! connection found closed when taken is replaced, so a restarted server is used again
//! without a restart of ours.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use futures_util::future::try_join_all;
use tokio_postgres::types::ToSql;
use tokio_postgres::NoTls;

use crate::settings::DatabaseUrl;
use crate::{seed, StoreError};
use greet_core::records::{self, Fortune, World};

const SELECT_WORLD: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
const SELECT_FORTUNES: &str = "SELECT id, message FROM fortune";
const SELECT_ALL_WORLDS: &str = "SELECT id, randomnumber FROM world ORDER BY id";
/// One statement for all of a request's writes (TechEmpower allows batching them). The ids
/// come sorted, which makes two requests that share rows likely, not certain, to lock them in
/// one order (the join's order is the planner's): a deadlock's victim goes again.
const UPDATE_WORLDS: &str = "UPDATE world SET randomnumber = w.r \
     FROM unnest($1::int4[], $2::int4[]) AS w(id, r) WHERE world.id = w.id";
/// Attempts at a request's writes when PostgreSQL ends them as a deadlock's victim.
const UPDATE_ATTEMPTS: usize = 3;
const SELECT_WORD: &str = "SELECT word FROM person WHERE name = $1";
/// Seeding takes this advisory lock, so servers starting at once do not race on the schema.
const SEED_LOCK: i64 = 0x0067_7265_6574; // "greet"

/// A pool of connections to one database. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Postgres {
    pool: Pool,
}

/// Why a request could not be answered from PostgreSQL.
pub(crate) type Error = Box<dyn std::error::Error + Send + Sync>;

impl Postgres {
    /// A pool of at most `size` connections to `url`; nothing is opened yet.
    pub(crate) fn new(url: &str, size: usize, timeout: Duration) -> Result<Self, StoreError> {
        let mut config = DatabaseUrl::postgres_config(url);
        config.connect_timeout(timeout);
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(size)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(timeout))
            .create_timeout(Some(timeout))
            .recycle_timeout(Some(timeout))
            .build()
            .map_err(|e| StoreError::Unavailable(format!("PostgreSQL pool: {e}")))?;
        Ok(Self { pool })
    }

    /// Creates the tables and the seed rows that are missing, under an advisory lock.
    pub(crate) async fn seed(&self) -> Result<(), Error> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SEED_LOCK])
            .await?;
        tx.batch_execute(seed::SCHEMA).await?;
        let worlds: i64 = tx
            .query_one("SELECT count(*) FROM world", &[])
            .await?
            .get(0);
        if worlds < i64::from(records::WORLD_ROWS) {
            let ids: Vec<i32> = (1..=records::WORLD_ROWS).collect();
            let numbers: Vec<i32> = ids.iter().copied().map(records::world_number).collect();
            tx.execute(
                "INSERT INTO world (id, randomnumber) \
                 SELECT * FROM unnest($1::int4[], $2::int4[]) ON CONFLICT DO NOTHING",
                &[&ids, &numbers],
            )
            .await?;
        }
        let people: i64 = tx
            .query_one("SELECT count(*) FROM person", &[])
            .await?
            .get(0);
        if people < i64::from(records::PEOPLE) {
            let names: Vec<String> = (1..=records::PEOPLE).map(records::person_name).collect();
            let words: Vec<&str> = (1..=records::PEOPLE).map(records::person_word).collect();
            tx.execute(
                "INSERT INTO person (name, word) \
                 SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT DO NOTHING",
                &[&names, &words],
            )
            .await?;
        }
        let fortunes: i64 = tx
            .query_one("SELECT count(*) FROM fortune", &[])
            .await?
            .get(0);
        if fortunes < records::FORTUNES.len() as i64 {
            let (ids, messages): (Vec<i32>, Vec<&str>) = records::FORTUNES.into_iter().unzip();
            tx.execute(
                "INSERT INTO fortune (id, message) \
                 SELECT * FROM unnest($1::int4[], $2::text[]) ON CONFLICT DO NOTHING",
                &[&ids, &messages],
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// World rows `ids`, in order: the reads go out together on one connection, which
    /// tokio-postgres pipelines.
    pub(crate) async fn worlds(&self, ids: &[i32]) -> Result<Vec<World>, Error> {
        let client = self.pool.get().await?;
        select_worlds(&client, ids).await
    }

    /// World rows `ids`, each read with a query of its own (pipelined on one connection),
    /// then each given its number in `writes` (ids in order, each once) by one statement.
    pub(crate) async fn update_worlds(&self, ids: &[i32], writes: &[World]) -> Result<(), Error> {
        let client = self.pool.get().await?;
        select_worlds(&client, ids).await?;
        let update = client.prepare_cached(UPDATE_WORLDS).await?;
        let (ids, numbers): (Vec<i32>, Vec<i32>) =
            writes.iter().map(|w| (w.id, w.random_number)).unzip();
        let mut attempt = 1;
        loop {
            match client.execute(&update, &[&ids, &numbers]).await {
                Err(err)
                    if attempt < UPDATE_ATTEMPTS
                        && err.code()
                            == Some(&tokio_postgres::error::SqlState::T_R_DEADLOCK_DETECTED) =>
                {
                    attempt += 1;
                }
                done => return done.map(drop).map_err(Into::into),
            }
        }
    }

    /// Every row of `fortune`, in the table's order.
    pub(crate) async fn fortunes(&self) -> Result<Vec<Fortune>, Error> {
        let client = self.pool.get().await?;
        let select = client.prepare_cached(SELECT_FORTUNES).await?;
        Ok(client
            .query(&select, &[])
            .await?
            .iter()
            .map(|row| Fortune {
                id: row.get(0),
                message: row.get(1),
            })
            .collect())
    }

    /// Every row of `world`, by id.
    pub(crate) async fn all_worlds(&self) -> Result<Vec<World>, Error> {
        let client = self.pool.get().await?;
        let select = client.prepare_cached(SELECT_ALL_WORLDS).await?;
        Ok(client
            .query(&select, &[])
            .await?
            .iter()
            .map(|row| World {
                id: row.get(0),
                random_number: row.get(1),
            })
            .collect())
    }

    /// The stored word of `name`, if `name` is a known person.
    pub(crate) async fn word(&self, name: &str) -> Result<Option<String>, Error> {
        let client = self.pool.get().await?;
        let select = client.prepare_cached(SELECT_WORD).await?;
        Ok(client
            .query_opt(&select, &[&name])
            .await?
            .map(|row| row.get(0)))
    }
}

/// World rows `ids`, in order: the reads go out together on `client`, which tokio-postgres
/// pipelines.
async fn select_worlds(
    client: &deadpool_postgres::ClientWrapper,
    ids: &[i32],
) -> Result<Vec<World>, Error> {
    let select = client.prepare_cached(SELECT_WORLD).await?;
    let params: Vec<[&(dyn ToSql + Sync); 1]> = ids.iter().map(|id| [id as _]).collect();
    let rows = try_join_all(params.iter().map(|p| client.query_one(&select, p))).await?;
    Ok(rows
        .iter()
        .map(|row| World {
            id: row.get(0),
            random_number: row.get(1),
        })
        .collect())
}
