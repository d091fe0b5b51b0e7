//! [`ServerConfig`]: the flags and environment variables of every server binary.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Parser;

use crate::knob::Knob;
use crate::statics::Statics;
use crate::tls::Tls;
use greet_core::ws::Sockets;
use greet_core::{Greeter, DEFAULT_BLOCKING_THREADS};
use greet_store::settings::{DEFAULT_POOL, DEFAULT_TIMEOUT};
use greet_store::{CacheKind, DatabaseUrl, RedisUrl, Settings, StoreError, StoreKind, Stores};

/// Configuration shared by the three servers; each flag can also come from its environment
/// variable. Defaults are the original experiment's (a 1 s delay, 200 blocking threads).
#[derive(Debug, Clone, Parser)]
#[command(
    version,
    about = "Serve the Greetings API: GET /greetings?name=X → \"<word> X!\" after a delay."
)]
pub struct ServerConfig {
    /// Address to listen on (images set 0.0.0.0)
    #[arg(long, env = "HOST", default_value_t = DEFAULT_HOST)]
    pub host: IpAddr,

    /// Port to listen on (0 picks a free one)
    #[arg(long, env = "PORT", default_value_t = DEFAULT_PORT)]
    pub port: u16,

    /// Delay before each greeting, in milliseconds (0 for "ceiling" runs)
    #[arg(long, env = "GREETING_DELAY_MS", default_value_t = DEFAULT_DELAY_MS)]
    pub delay_ms: u64,

    /// Worker threads of the server's runtime [default: available parallelism]
    #[arg(long, env = "WORKERS", default_value_t = default_workers(), hide_default_value = true)]
    pub workers: NonZeroUsize,

    /// Most threads of the pool behind /greetings/blocking
    #[arg(long, env = "BLOCKING_THREADS", default_value_t = DEFAULT_BLOCKING_THREADS)]
    pub blocking_threads: NonZeroUsize,

    /// Listen backlog (the kernel caps it at net.core.somaxconn)
    #[arg(long, env = "BACKLOG", default_value_t = DEFAULT_BACKLOG)]
    pub backlog: NonZeroU32,

    /// On SIGTERM or Ctrl-C, how long in-flight requests may take to finish, in seconds
    #[arg(long, env = "SHUTDOWN_TIMEOUT_SECS", default_value_t = DEFAULT_SHUTDOWN_TIMEOUT_SECS)]
    pub shutdown_timeout_secs: u64,

    /// Database behind /db, /queries, /fortunes, /updates, /cached-queries and /business: sqlite (embedded, made and seeded by the
    /// first request that needs it) or postgres (a server at --database-url, seeded if empty)
    #[arg(long, env = "STORE", default_value_t = StoreKind::Sqlite,
          value_parser = PossibleValuesParser::new(StoreKind::ALL.map(StoreKind::name))
              .map(|s| s.parse::<StoreKind>().expect("a possible value")))]
    pub store: StoreKind,

    /// sqlite://PATH or postgres://USER:PASSWORD@HOST:PORT/DB (the password may be left out)
    /// [sqlite default: a fresh file under the temp dir, made on first use, removed at exit]
    #[arg(long, env = "DATABASE_URL", value_name = "URL")]
    pub database_url: Option<DatabaseUrl>,

    /// Most database connections open at once
    #[arg(long, env = "DB_POOL", value_name = "N", default_value_t = DEFAULT_POOL)]
    pub db_pool: NonZeroUsize,

    /// Cache of /business visit counts: memory (in-process) or redis (at --redis-url)
    #[arg(long, env = "CACHE", default_value_t = CacheKind::Memory,
          value_parser = PossibleValuesParser::new(CacheKind::ALL.map(CacheKind::name))
              .map(|s| s.parse::<CacheKind>().expect("a possible value")))]
    pub cache: CacheKind,

    /// redis://HOST:PORT[/DB], for --cache redis
    #[arg(long, env = "REDIS_URL", value_name = "URL")]
    pub redis_url: Option<RedisUrl>,

    /// How long a request waits for the database or cache before a 503, in milliseconds;
    /// start-up waits 10 times this for them to come up
    #[arg(long, env = "DB_TIMEOUT_MS", value_name = "MS", default_value_t = DEFAULT_DB_TIMEOUT_MS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub db_timeout_ms: u64,

    /// Serve TLS 1.3/1.2 (HTTP/2 or HTTP/1.1 by ALPN) with this PEM certificate chain
    /// instead of cleartext; needs --tls-key
    #[arg(long, env = "TLS_CERT", value_name = "PATH", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The PEM private key of --tls-cert
    #[arg(long, env = "TLS_KEY", value_name = "PATH", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Serve TLS with a certificate made at start-up for localhost and 127.0.0.1; its SHA-256
    /// fingerprint is in the start-up line
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"])]
    pub tls_self_signed: bool,

    /// Directory served under /static/ [default: 20 files made at the first request, in
    /// a directory under the temp dir removed at exit]
    #[arg(long, env = "STATIC_DIR", value_name = "DIR")]
    pub static_dir: Option<PathBuf>,

    /// Largest body POST /upload takes (e.g. 64MiB, 1G, or bytes): a declared length over
    /// it is refused before a byte is read, a chunked one as it crosses it
    #[arg(long, env = "MAX_UPLOAD", value_name = "BYTES", default_value = "64MiB",
          value_parser = greet_cli::parse_bytes)]
    pub max_upload: u64,

    /// Compress answers of 1 KiB or more with br, gzip or deflate when the request's
    /// Accept-Encoding asks for one (on|off)
    #[arg(long, env = "COMPRESSION", value_name = "on|off", default_value = "on",
          action = clap::ArgAction::Set, value_parser = clap::builder::BoolishValueParser::new())]
    pub compression: bool,

    /// Settings a crate documents for speed, off here for what each gives up (said beside
    /// each); comma-separated; a server refuses a knob that is not its own
    #[arg(
        long = "knob",
        env = "KNOBS",
        value_name = "KNOB",
        value_delimiter = ',',
        value_enum
    )]
    pub knobs: Vec<Knob>,

    /// Probe this server's /health on --port (on 127.0.0.1 when --host is 0.0.0.0) and exit
    /// 0 if it answers 200, 1 otherwise; for images without curl
    #[arg(long)]
    pub health_check: bool,
}

const DEFAULT_HOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
const DEFAULT_PORT: u16 = 8080;
const DEFAULT_DELAY_MS: u64 = greet_core::DEFAULT_DELAY.as_millis() as u64;
const DEFAULT_BACKLOG: NonZeroU32 = NonZeroU32::new(4096).expect("non-zero");
const DEFAULT_SHUTDOWN_TIMEOUT_SECS: u64 = 10;
const DEFAULT_DB_TIMEOUT_MS: u64 = DEFAULT_TIMEOUT.as_millis() as u64;

fn default_workers() -> NonZeroUsize {
    std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
}

impl Default for ServerConfig {
    /// The command line's defaults, without reading arguments or environment.
    fn default() -> Self {
        Self {
            host: DEFAULT_HOST,
            port: DEFAULT_PORT,
            delay_ms: DEFAULT_DELAY_MS,
            workers: default_workers(),
            blocking_threads: DEFAULT_BLOCKING_THREADS,
            backlog: DEFAULT_BACKLOG,
            shutdown_timeout_secs: DEFAULT_SHUTDOWN_TIMEOUT_SECS,
            store: StoreKind::Sqlite,
            database_url: None,
            db_pool: DEFAULT_POOL,
            cache: CacheKind::Memory,
            redis_url: None,
            db_timeout_ms: DEFAULT_DB_TIMEOUT_MS,
            tls_cert: None,
            tls_key: None,
            tls_self_signed: false,
            static_dir: None,
            max_upload: greet_core::upload::DEFAULT_MAX_UPLOAD,
            compression: true,
            knobs: Vec::new(),
            health_check: false,
        }
    }
}

impl ServerConfig {
    /// The address to listen on.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::new(self.host, self.port)
    }

    /// Whether `--knob` turned `knob` on.
    pub fn knob(&self, knob: Knob) -> bool {
        self.knobs.contains(&knob)
    }

    /// The delay before each greeting.
    pub fn delay(&self) -> Duration {
        Duration::from_millis(self.delay_ms)
    }

    /// How long a graceful shutdown waits for in-flight requests.
    pub fn shutdown_timeout(&self) -> Duration {
        Duration::from_secs(self.shutdown_timeout_secs)
    }

    /// The TLS these settings ask for, if any: read from the PEM files, or made now
    /// (`--tls-self-signed`, a new certificate each call). Errors name the file and reason.
    pub fn tls(&self) -> anyhow::Result<Option<Tls>> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Tls::from_pem_files(cert, key).map(Some),
            _ if self.tls_self_signed => Tls::self_signed().map(Some),
            _ => Ok(None),
        }
    }

    /// The greeter these settings describe.
    pub fn greeter(&self) -> Greeter {
        Greeter::new(self.delay(), self.blocking_threads)
    }

    /// The store settings.
    pub fn store_settings(&self) -> Settings {
        Settings {
            store: self.store,
            database_url: self.database_url.clone(),
            pool: self.db_pool,
            cache: self.cache,
            redis_url: self.redis_url.clone(),
            timeout: Duration::from_millis(self.db_timeout_ms),
        }
    }

    /// Start-up, before binding: waits for PostgreSQL and Redis when they are configured
    /// and seeds the database, on a thread and runtime of its own ([`Stores::prepare`]).
    pub fn prepare_stores(&self) -> Result<(), StoreError> {
        let settings = self.store_settings();
        settings.check()?;
        if !settings.has_servers() {
            return Ok(());
        }
        // A thread of its own, so that this may be called from inside a runtime (tests).
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|e| StoreError::Unavailable(format!("runtime: {e}")))?
                        .block_on(Stores::prepare(&settings))
                })
                .join()
                .unwrap_or_else(|_| {
                    Err(StoreError::Unavailable(
                        "store preparation panicked".to_owned(),
                    ))
                })
        })
    }

    /// What a server's handlers hold. Nothing is opened here but a SQLite file named by
    /// `--database-url`: the embedded database is made on first use, PostgreSQL and Redis
    /// connect on first use, so call this inside the runtime that serves.
    pub fn api(&self) -> std::io::Result<Api> {
        let stores = Stores::new(&self.store_settings()).map_err(std::io::Error::other)?;
        Ok(Api {
            greeter: self.greeter(),
            stores,
            max_upload: self.max_upload,
            statics: Statics::open(self.static_dir.as_deref())?,
            sockets: Sockets::default(),
        })
    }
}

/// What every server's handlers hold: the greeter, the stores, the static files and the
/// open sockets. Cheap to clone; clones
/// share the blocking pool and the connections.
#[derive(Debug, Clone)]
pub struct Api {
    /// `/greetings` and `/greetings/blocking`.
    pub greeter: Greeter,
    /// The database routes and `/business`.
    pub stores: Stores,
    /// The largest body `POST /upload` takes (`--max-upload`).
    pub max_upload: u64,
    /// What `GET /static/<path>` serves.
    pub statics: Statics,
    /// The WebSockets `GET /ws` has open, closed together on shutdown.
    pub sockets: Sockets,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_defaults() {
        let parsed =
            ServerConfig::try_parse_from(["greet", "--port", "0", "--delay-ms", "5"]).unwrap();
        assert_eq!(parsed.port, 0);
        assert_eq!(parsed.delay(), Duration::from_millis(5));
        let d = ServerConfig::default();
        assert_eq!(
            (d.port, d.delay_ms, d.blocking_threads.get()),
            (8080, 1000, 200)
        );
        assert_eq!((d.backlog.get(), d.shutdown_timeout_secs), (4096, 10));
        assert!(d.compression);
        let parsed = ServerConfig::try_parse_from(["greet"]).unwrap();
        assert_eq!(
            parsed.max_upload, d.max_upload,
            "the flag's default is the constant"
        );
        let parsed = ServerConfig::try_parse_from(["greet", "--max-upload", "1G"]).unwrap();
        assert_eq!(parsed.max_upload, 1 << 30);
        for (value, on) in [("off", false), ("on", true), ("false", false)] {
            let parsed = ServerConfig::try_parse_from(["greet", "--compression", value]);
            assert_eq!(parsed.unwrap().compression, on, "{value}");
        }
    }

    #[test]
    fn rejects_bad_values() {
        for args in [
            &["greet", "--port", "70000"][..],
            &["greet", "--workers", "0"],
            &["greet", "--blocking-threads", "0"],
            &["greet", "--backlog", "-1"],
            &["greet", "--host", "nowhere"],
            &["greet", "--bogus"],
            &["greet", "--store", "mysql"],
            &["greet", "--cache", "disk"],
            &["greet", "--compression", "gzip"],
            &["greet", "--max-upload", "lots"],
            &["greet", "--db-pool", "0"],
            &["greet", "--db-timeout-ms", "0"],
            &["greet", "--database-url", "mysql://h/db"],
            &["greet", "--redis-url", "http://h"],
            &["greet", "--tls-cert", "c.pem"],
            &["greet", "--tls-key", "k.pem"],
            &[
                "greet",
                "--tls-self-signed",
                "--tls-cert",
                "c.pem",
                "--tls-key",
                "k.pem",
            ],
        ] {
            assert!(ServerConfig::try_parse_from(args).is_err(), "{args:?}");
        }
    }
}
