//! [`Settings`]: which database and cache a server uses, how many connections, how long it
//! waits; and the parsing of their URLs, so a bad URL is refused before anything starts.
//!
//! Parsing errors are `String`s: one line that clap prints beside the flag it belongs to;
//! nothing branches on them.

use std::fmt;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::StoreError;

/// Connections of the database pool unless `--db-pool` says otherwise. On the 2-CPU machine
/// the README's figures come from (`greet-bench business --db-pools 1,2,4,8,16,32`), one
/// connection served a third of four, and more than four gained nothing beyond the noise.
pub const DEFAULT_POOL: NonZeroUsize = NonZeroUsize::new(4).expect("non-zero");
/// How long a request waits for a store before it is answered 503.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(2000);
/// Start-up waits this many store timeouts for unreachable stores before it gives up.
pub const START_PATIENCE: u32 = 10;

/// The database behind the database routes and `/business`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StoreKind {
    /// Embedded: a file made and seeded by the first request that needs it; nothing to
    /// install.
    #[default]
    Sqlite,
    /// A PostgreSQL server at `--database-url`.
    Postgres,
}

/// The cache of visit counts behind `/business`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheKind {
    /// In-process counters.
    #[default]
    Memory,
    /// A Redis server at `--redis-url` (`INCR`).
    Redis,
}

/// Where the database is.
#[derive(Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// `sqlite://PATH`.
    Sqlite(PathBuf),
    /// `postgres://…` or `postgresql://…`, as given.
    Postgres(String),
}

/// Where Redis is: `redis://…`, as given.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisUrl(pub String);

/// The store settings of a server: one definition, read by every framework's server (the
/// flags that fill it are `greet-server`'s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Which database.
    pub store: StoreKind,
    /// Its URL; for SQLite, `None` is a fresh file under the temp dir.
    pub database_url: Option<DatabaseUrl>,
    /// Most database connections open at once (for SQLite: kept open).
    pub pool: NonZeroUsize,
    /// Which cache.
    pub cache: CacheKind,
    /// Its URL (Redis only).
    pub redis_url: Option<RedisUrl>,
    /// How long one request waits for a store.
    pub timeout: Duration,
}

impl Default for Settings {
    /// The embedded stores, [`DEFAULT_POOL`], [`DEFAULT_TIMEOUT`].
    fn default() -> Self {
        Self {
            store: StoreKind::default(),
            database_url: None,
            pool: DEFAULT_POOL,
            cache: CacheKind::default(),
            redis_url: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

impl Settings {
    /// How long start-up retries an unreachable store.
    pub fn start_patience(&self) -> Duration {
        self.timeout * START_PATIENCE
    }

    /// Whether start-up has servers to wait for ([`crate::Stores::prepare`]).
    pub fn has_servers(&self) -> bool {
        self.store == StoreKind::Postgres || self.cache == CacheKind::Redis
    }

    /// Refuses settings that do not fit together, in one line: a PostgreSQL store without
    /// a PostgreSQL URL, a Redis cache without a Redis URL, a URL of the other kind.
    pub fn check(&self) -> Result<(), StoreError> {
        self.fits()
            .map_err(|why| StoreError::Settings(why.to_owned()))
    }

    fn fits(&self) -> Result<(), &'static str> {
        match (self.store, &self.database_url) {
            (StoreKind::Postgres, None) => {
                return Err("--store postgres needs --database-url postgres://… (or DATABASE_URL)")
            }
            (StoreKind::Postgres, Some(DatabaseUrl::Sqlite(_))) => {
                return Err("--store postgres, but --database-url is a sqlite:// URL")
            }
            (StoreKind::Sqlite, Some(DatabaseUrl::Postgres(_))) => return Err(
                "--store sqlite, but --database-url is a postgres:// URL (add --store postgres)",
            ),
            _ => {}
        }
        if self.cache == CacheKind::Redis && self.redis_url.is_none() {
            return Err("--cache redis needs --redis-url redis://… (or REDIS_URL)");
        }
        if self.timeout.is_zero() {
            return Err("--db-timeout-ms must be at least 1");
        }
        Ok(())
    }
}

impl StoreKind {
    /// Every store, in the order `--help` lists them.
    pub const ALL: [Self; 2] = [Self::Sqlite, Self::Postgres];

    /// Its name as a flag value.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
        }
    }
}

impl CacheKind {
    /// Every cache, in the order `--help` lists them.
    pub const ALL: [Self; 2] = [Self::Memory, Self::Redis];

    /// Its name as a flag value.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Memory => "memory",
            Self::Redis => "redis",
        }
    }
}

/// The one of `all` named `s`, or a line naming them all.
fn by_name<T: Copy>(
    all: &[T],
    name: fn(T) -> &'static str,
    what: &str,
    s: &str,
) -> Result<T, StoreError> {
    all.iter().copied().find(|&t| name(t) == s).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|&t| name(t)).collect();
        StoreError::Settings(format!("unknown {what} '{s}' ({})", names.join(", ")))
    })
}

impl FromStr for StoreKind {
    type Err = StoreError;
    fn from_str(s: &str) -> Result<Self, StoreError> {
        by_name(&Self::ALL, Self::name, "store", s)
    }
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CacheKind {
    type Err = StoreError;
    fn from_str(s: &str) -> Result<Self, StoreError> {
        by_name(&Self::ALL, Self::name, "cache", s)
    }
}

impl fmt::Display for CacheKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DatabaseUrl {
    type Err = StoreError;
    /// `sqlite://PATH` (`sqlite:///abs/path` or `sqlite://relative`), or a PostgreSQL URL
    /// that tokio-postgres accepts.
    fn from_str(s: &str) -> Result<Self, StoreError> {
        let bad = |why: String| StoreError::Settings(why);
        if let Some(path) = s.strip_prefix("sqlite://") {
            if path.is_empty() {
                return Err(bad(
                    "sqlite:// URL without a path (sqlite:///path/to/file.db)".into(),
                ));
            }
            return Ok(Self::Sqlite(PathBuf::from(path)));
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            let config = tokio_postgres::Config::from_str(s)
                .map_err(|e| bad(format!("bad PostgreSQL URL: {e}")))?;
            if config.get_hosts().is_empty() {
                return Err(bad("PostgreSQL URL without a host".into()));
            }
            return Ok(Self::Postgres(s.to_owned()));
        }
        Err(bad(
            "database URL must start with sqlite:// or postgres://".into()
        ))
    }
}

impl DatabaseUrl {
    /// The URL as given, password included: for a command line that hands it on, never for a
    /// log (`Display` leaves the password out).
    pub fn unredacted(&self) -> String {
        match self {
            Self::Sqlite(path) => format!("sqlite://{}", path.display()),
            Self::Postgres(url) => url.clone(),
        }
    }

    /// The parsed PostgreSQL configuration (checked when the URL was parsed).
    pub(crate) fn postgres_config(url: &str) -> tokio_postgres::Config {
        tokio_postgres::Config::from_str(url).expect("checked by DatabaseUrl::from_str")
    }
}

impl fmt::Debug for DatabaseUrl {
    /// Without the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sqlite(path) => write!(f, "sqlite://{}", path.display()),
            Self::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl FromStr for RedisUrl {
    type Err = StoreError;
    fn from_str(s: &str) -> Result<Self, StoreError> {
        if !(s.starts_with("redis://")
            || s.starts_with("redis+unix://")
            || s.starts_with("unix://"))
        {
            return Err(StoreError::Settings(
                "Redis URL must start with redis://".into(),
            ));
        }
        redis::Client::open(s).map_err(|e| StoreError::Settings(format!("bad Redis URL: {e}")))?;
        Ok(Self(s.to_owned()))
    }
}

impl fmt::Debug for RedisUrl {
    /// Without the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact(&self.0))
    }
}

impl fmt::Display for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// `scheme://user:secret@host…` → `scheme://user:***@host…`, for logs and errors.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let userinfo = &rest[..at];
            let user = userinfo.split(':').next().unwrap_or("");
            let hidden = if userinfo.contains(':') { ":***" } else { "" };
            format!("{scheme}://{user}{hidden}{}", &rest[at..])
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_or_say_why() {
        assert_eq!(
            "sqlite:///tmp/x.db".parse::<DatabaseUrl>(),
            Ok(DatabaseUrl::Sqlite("/tmp/x.db".into()))
        );
        assert!(matches!(
            "postgres://u:p@127.0.0.1:5432/db".parse::<DatabaseUrl>(),
            Ok(DatabaseUrl::Postgres(_))
        ));
        for bad in [
            "sqlite://",
            "mysql://x/y",
            "postgres://u@h:notaport/db",
            "127.0.0.1",
        ] {
            let err = bad.parse::<DatabaseUrl>().expect_err(bad);
            assert!(matches!(err, StoreError::Settings(_)), "{err:?}");
            assert!(!err.to_string().contains('\n'), "{err}");
        }
        assert!("redis://127.0.0.1:6379".parse::<RedisUrl>().is_ok());
        assert!("http://127.0.0.1:6379".parse::<RedisUrl>().is_err());
        assert!("redis://:6379:x".parse::<RedisUrl>().is_err());
    }

    #[test]
    fn kinds_read_their_own_names() {
        for kind in StoreKind::ALL {
            assert_eq!(kind.name().parse::<StoreKind>(), Ok(kind));
        }
        for kind in CacheKind::ALL {
            assert_eq!(kind.to_string().parse::<CacheKind>(), Ok(kind));
        }
        assert_eq!(
            "mysql".parse::<StoreKind>(),
            Err(StoreError::Settings(
                "unknown store 'mysql' (sqlite, postgres)".to_owned()
            ))
        );
    }

    #[test]
    fn passwords_stay_out_of_logs() {
        let url: DatabaseUrl = "postgres://greet:s3cret@db:5432/greet".parse().unwrap();
        assert_eq!(url.to_string(), "postgres://greet:***@db:5432/greet");
        assert_eq!(redact("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        assert_eq!(redact("redis://:pw@h/0"), "redis://:***@h/0");
    }

    #[test]
    fn settings_that_do_not_fit_are_refused() {
        let pg: DatabaseUrl = "postgres://h/db".parse().unwrap();
        let cases = [
            Settings {
                store: StoreKind::Postgres,
                ..Settings::default()
            },
            Settings {
                database_url: Some(pg),
                ..Settings::default()
            },
            Settings {
                cache: CacheKind::Redis,
                ..Settings::default()
            },
            Settings {
                timeout: Duration::ZERO,
                ..Settings::default()
            },
        ];
        for s in cases {
            assert!(matches!(s.check(), Err(StoreError::Settings(_))), "{s:?}");
        }
        assert_eq!(Settings::default().check(), Ok(()));
    }
}
