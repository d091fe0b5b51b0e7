//! The embedded database: SQLite through rusqlite (the library bundled, nothing to install).
//!
//! A query runs on the thread that asks, not on a pool thread: a primary-key read of a
//! table in SQLite's page cache takes microseconds, less than handing the request to
//! another thread and back. Connections are kept in a small free list (`--db-pool` of them
//! at most are kept), so each runtime worker reuses one with its prepared statements.
//!
//! The database is opened on first use ([`Lazy`]): a server that only greets makes no file,
//! seeds nothing and starts no thread. The first store-bound request makes the file and its
//! tables and starts putting in the 20,000 seed rows (about 8 ms of inserts) on a thread of
//! its own; it and any request that comes before the rows are in wait for them, within the
//! store timeout. A file named by `--database-url` is opened at start-up instead, so a path
//! that cannot be written fails there.
//!
//! `/updates` writes: the file is in WAL mode, so readers never wait for a writer, and the
//! writers of this process take turns on one lock before they begin, so none of them meets
//! SQLite's busy handler (which sleeps whole milliseconds); a writer waiting its turn waits
//! as a future, not holding its runtime thread. A file of the process's own is
//! thrown away at exit, so it is written without waiting for the disk.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::Notify;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior};

use crate::{seed, StoreError};
use greet_core::records::{self, Fortune, World};

/// A SQLite database, opened by the first caller.
pub(crate) struct Lazy {
    path: Option<PathBuf>,
    keep: usize,
    timeout: Duration,
    db: OnceLock<Result<Sqlite, StoreError>>,
}

impl Lazy {
    /// The database at `path` (a fresh file under the temp dir when there is none), not
    /// opened yet.
    pub(crate) fn new(path: Option<&Path>, keep: usize, timeout: Duration) -> Self {
        Self {
            path: path.map(Path::to_owned),
            keep,
            timeout,
            db: OnceLock::new(),
        }
    }

    /// The database, opened by the first call (the file, its tables, the seed thread
    /// started). A failure is kept: the file will not appear by retrying. A file named by
    /// the settings is opened at start-up, which a failure ends; the default one is made by
    /// a request, and its failure is logged once.
    pub(crate) fn get(&self) -> Result<&Sqlite, StoreError> {
        self.db
            .get_or_init(|| {
                let opened = Sqlite::open(self.path.as_deref(), self.keep, self.timeout);
                if let (Err(err), None) = (&opened, &self.path) {
                    tracing::error!(%err, "the database routes will answer 503");
                }
                opened
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The database, once its seed rows are in.
    pub(crate) async fn ready(&self) -> Result<&Sqlite, StoreError> {
        let db = self.get()?;
        db.seeded().await?;
        Ok(db)
    }

    /// Whether the database has been opened.
    #[cfg(test)]
    pub(crate) fn is_open(&self) -> bool {
        self.db.get().is_some()
    }
}

/// A SQLite database file and the connections open on it. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Sqlite {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    keep: usize,
    timeout: Duration,
    /// The file was made for this process (no `--database-url`): removed when dropped.
    owned: bool,
    /// Taken by `/updates` before it begins to write: one writer at a time in this process.
    writer: tokio::sync::Mutex<()>,
    /// Shared with the seeding thread, which holds no [`Inner`] when it says it is done:
    /// the last handle dropped after the seed is the one that removes an owned file.
    seeded: Arc<Seeded>,
}

/// How the seeding thread ended, and a wake-up for those waiting on it.
#[derive(Default)]
struct Seeded {
    done: OnceLock<Result<(), StoreError>>,
    now: Notify,
}

impl Sqlite {
    /// Opens (creating, with the schema) the database at `path`, or at a fresh file under
    /// the temp dir when there is none, and starts putting in the seed rows that are missing.
    fn open(path: Option<&Path>, keep: usize, timeout: Duration) -> Result<Self, StoreError> {
        let (path, owned) = match path {
            Some(path) => (path.to_owned(), false),
            None => (fresh_path(), true),
        };
        let sqlite = Self {
            inner: Arc::new(Inner {
                path,
                idle: Mutex::new(Vec::new()),
                keep,
                timeout,
                owned,
                writer: tokio::sync::Mutex::new(()),
                seeded: Arc::default(),
            }),
        };
        let why = |e: rusqlite::Error| {
            StoreError::Unavailable(format!(
                "SQLite database {}: {e}",
                sqlite.inner.path.display()
            ))
        };
        let mut conn = sqlite.create().map_err(why)?;
        let (inner, seeded) = (
            Arc::downgrade(&sqlite.inner),
            Arc::clone(&sqlite.inner.seeded),
        );
        std::thread::Builder::new()
            .name("sqlite-seed".into())
            .spawn(move || {
                let done = seed_rows(&mut conn)
                    .map_err(|e| StoreError::Unavailable(format!("SQLite seed: {e}")));
                match &done {
                    Ok(()) => {
                        if let Some(inner) = inner.upgrade() {
                            inner.put_back(conn);
                        }
                    }
                    Err(err) => tracing::error!(
                        %err,
                        "SQLite seed failed: the database routes will answer 503"
                    ),
                }
                let _ = seeded.done.set(done);
                seeded.now.notify_waiters();
            })
            .map_err(|e| StoreError::Unavailable(format!("SQLite seed thread: {e}")))?;
        Ok(sqlite)
    }

    /// Waits until the seed rows are in (at once, after the first few milliseconds).
    pub(crate) async fn seeded(&self) -> Result<(), StoreError> {
        let seeded = &self.inner.seeded;
        loop {
            if let Some(done) = seeded.done.get() {
                return done.clone();
            }
            let woken = seeded.now.notified();
            tokio::pin!(woken);
            // Registered before the second look, so a seed that ends in between wakes it.
            woken.as_mut().enable();
            if seeded.done.get().is_none() {
                woken.await;
            }
        }
    }

    /// The file's path.
    #[cfg(test)]
    pub(crate) fn path(&self) -> &Path {
        &self.inner.path
    }

    fn connect(&self) -> rusqlite::Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.inner.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(self.inner.timeout)?;
        // Per connection. WAL's NORMAL loses no committed write on a crash of the process;
        // a file of the process's own needs no sync at all.
        let sync = if self.inner.owned { "OFF" } else { "NORMAL" };
        conn.execute_batch(&format!("PRAGMA synchronous = {sync};"))?;
        Ok(conn)
    }

    /// The file and its tables; the connection that made them, for the seed.
    fn create(&self) -> rusqlite::Result<Connection> {
        let conn = self.connect()?;
        // Kept in the file: every later connection is in WAL mode too.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.execute_batch(seed::SCHEMA)?;
        Ok(conn)
    }

    /// Runs `f` on a connection of the free list (or a new one), then keeps the connection
    /// for the next caller unless `keep` are kept already.
    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> rusqlite::Result<T> {
        let idle = self
            .inner
            .idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let conn = match idle {
            Some(conn) => conn,
            None => self.connect()?,
        };
        let out = f(&conn);
        self.inner.put_back(conn);
        out
    }

    /// World rows `ids`, in order.
    pub(crate) fn worlds(&self, ids: &[i32]) -> rusqlite::Result<Vec<World>> {
        self.with(|conn| {
            let mut select =
                conn.prepare_cached("SELECT id, randomnumber FROM world WHERE id = ?1")?;
            ids.iter()
                .map(|id| {
                    select.query_row([id], |r| {
                        Ok(World {
                            id: r.get(0)?,
                            random_number: r.get(1)?,
                        })
                    })
                })
                .collect()
        })
    }

    /// World rows `ids`, each read with a query of its own, then each given its number in
    /// `writes` (ids in order, each once) in the same transaction.
    pub(crate) async fn update_worlds(
        &self,
        ids: &[i32],
        writes: &[World],
    ) -> rusqlite::Result<()> {
        let _turn = self.inner.writer.lock().await;
        self.with(|conn| {
            let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
            {
                let mut select =
                    tx.prepare_cached("SELECT randomnumber FROM world WHERE id = ?1")?;
                for id in ids {
                    select.query_row([id], |r| r.get::<_, i32>(0))?;
                }
                let mut update =
                    tx.prepare_cached("UPDATE world SET randomnumber = ?2 WHERE id = ?1")?;
                for row in writes {
                    update.execute((row.id, row.random_number))?;
                }
            }
            tx.commit()
        })
    }

    /// Every row of `fortune`, in the table's order.
    pub(crate) fn fortunes(&self) -> rusqlite::Result<Vec<Fortune>> {
        self.with(|conn| {
            conn.prepare_cached("SELECT id, message FROM fortune")?
                .query_map([], |r| {
                    Ok(Fortune {
                        id: r.get(0)?,
                        message: r.get(1)?,
                    })
                })?
                .collect()
        })
    }

    /// Every row of `world`, by id.
    pub(crate) fn all_worlds(&self) -> rusqlite::Result<Vec<World>> {
        self.with(|conn| {
            conn.prepare_cached("SELECT id, randomnumber FROM world ORDER BY id")?
                .query_map([], |r| {
                    Ok(World {
                        id: r.get(0)?,
                        random_number: r.get(1)?,
                    })
                })?
                .collect()
        })
    }

    /// The stored word of `name`, if `name` is a known person.
    pub(crate) fn word(&self, name: &str) -> rusqlite::Result<Option<String>> {
        self.with(|conn| {
            conn.prepare_cached("SELECT word FROM person WHERE name = ?1")?
                .query_row([name], |r| r.get(0))
                .optional()
        })
    }
}

impl Inner {
    /// Keeps `conn` for the next caller unless `keep` are kept already.
    fn put_back(&self, conn: Connection) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < self.keep {
            idle.push(conn);
        }
    }
}

/// The seed rows that are missing, in one transaction.
fn seed_rows(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    let worlds: i64 = tx.query_row("SELECT count(*) FROM world", [], |r| r.get(0))?;
    if worlds < i64::from(records::WORLD_ROWS) {
        let mut insert = tx.prepare(
            "INSERT INTO world (id, randomnumber) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
        )?;
        for id in 1..=records::WORLD_ROWS {
            insert.execute((id, records::world_number(id)))?;
        }
    }
    let people: i64 = tx.query_row("SELECT count(*) FROM person", [], |r| r.get(0))?;
    if people < i64::from(records::PEOPLE) {
        let mut insert =
            tx.prepare("INSERT INTO person (name, word) VALUES (?1, ?2) ON CONFLICT DO NOTHING")?;
        for i in 1..=records::PEOPLE {
            insert.execute((records::person_name(i), records::person_word(i)))?;
        }
    }
    let fortunes: i64 = tx.query_row("SELECT count(*) FROM fortune", [], |r| r.get(0))?;
    if fortunes < records::FORTUNES.len() as i64 {
        let mut insert =
            tx.prepare("INSERT INTO fortune (id, message) VALUES (?1, ?2) ON CONFLICT DO NOTHING")?;
        for row in records::FORTUNES {
            insert.execute(row)?;
        }
    }
    tx.commit()
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.owned {
            self.idle
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
            // WAL's two files beside the database go with it.
            for suffix in ["", "-wal", "-shm"] {
                let mut path = self.path.clone().into_os_string();
                path.push(suffix);
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// A path no other server of this or another process uses.
fn fresh_path() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("greet-{}-{n}.sqlite", std::process::id()))
}
