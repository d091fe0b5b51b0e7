//! [`ServerFlag`]: a server's settings as a program that starts servers (the harness) passes
//! them, typed, and spelled with the flag names [`ServerConfig`] defines: nobody copies a flag
//! name, and a renamed flag breaks no caller.

use clap::CommandFactory;
use greet_store::{CacheKind, DatabaseUrl, RedisUrl, StoreKind};

use crate::{Knob, ServerConfig};

/// One setting of a server's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerFlag {
    /// `--delay-ms`.
    DelayMs(u64),
    /// `--workers`.
    Workers(usize),
    /// `--blocking-threads`.
    BlockingThreads(usize),
    /// `--store`.
    Store(StoreKind),
    /// `--database-url`, password included.
    DatabaseUrl(DatabaseUrl),
    /// `--db-pool`.
    DbPool(usize),
    /// `--db-timeout-ms`.
    DbTimeoutMs(u64),
    /// `--cache`.
    Cache(CacheKind),
    /// `--redis-url`, password included.
    RedisUrl(RedisUrl),
    /// `--tls-self-signed`: TLS with a certificate made at start-up.
    TlsSelfSigned,
    /// `--knob`, comma-separated.
    Knobs(Vec<Knob>),
}

impl ServerFlag {
    /// Its field in [`ServerConfig`], which is clap's id of the flag.
    fn id(&self) -> &'static str {
        match self {
            Self::DelayMs(_) => "delay_ms",
            Self::Workers(_) => "workers",
            Self::BlockingThreads(_) => "blocking_threads",
            Self::Store(_) => "store",
            Self::DatabaseUrl(_) => "database_url",
            Self::DbPool(_) => "db_pool",
            Self::DbTimeoutMs(_) => "db_timeout_ms",
            Self::Cache(_) => "cache",
            Self::RedisUrl(_) => "redis_url",
            Self::TlsSelfSigned => "tls_self_signed",
            Self::Knobs(_) => "knobs",
        }
    }

    /// Its value; none for a switch.
    fn value(&self) -> Option<String> {
        Some(match self {
            Self::DelayMs(n) | Self::DbTimeoutMs(n) => n.to_string(),
            Self::Workers(n) | Self::BlockingThreads(n) | Self::DbPool(n) => n.to_string(),
            Self::Store(kind) => kind.name().to_owned(),
            Self::DatabaseUrl(url) => url.unredacted(),
            Self::Cache(kind) => kind.name().to_owned(),
            Self::RedisUrl(url) => url.0.clone(),
            Self::TlsSelfSigned => return None,
            Self::Knobs(knobs) => knobs.iter().map(|k| k.name()).collect::<Vec<_>>().join(","),
        })
    }

    /// `["--delay-ms", "1000"]`: the flag as [`ServerConfig`] names it, and its value (a
    /// switch has none).
    pub fn args(&self) -> Vec<String> {
        self.args_of(&ServerConfig::command())
    }

    /// The command line of `flags`, in order.
    pub fn command_line(flags: &[ServerFlag]) -> Vec<String> {
        let command = ServerConfig::command();
        flags
            .iter()
            .flat_map(|flag| flag.args_of(&command))
            .collect()
    }

    fn args_of(&self, command: &clap::Command) -> Vec<String> {
        // `id()` is checked against clap's ids by the test below: a renamed field fails it.
        let long = command
            .get_arguments()
            .find(|arg| arg.get_id() == self.id())
            .and_then(|arg| arg.get_long())
            .expect("every ServerFlag is a flag of ServerConfig");
        std::iter::once(format!("--{long}"))
            .chain(self.value())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn every_flag_reads_back_as_the_setting_it_names() {
        let db: DatabaseUrl = "postgres://greet:secret@127.0.0.1:5432/greet"
            .parse()
            .unwrap();
        let redis: RedisUrl = "redis://:secret@127.0.0.1:6379/0".parse().unwrap();
        let flags = [
            ServerFlag::DelayMs(7),
            ServerFlag::Workers(3),
            ServerFlag::BlockingThreads(5),
            ServerFlag::Store(StoreKind::Postgres),
            ServerFlag::DatabaseUrl(db.clone()),
            ServerFlag::DbPool(9),
            ServerFlag::DbTimeoutMs(11),
            ServerFlag::Cache(CacheKind::Redis),
            ServerFlag::RedisUrl(redis.clone()),
            ServerFlag::TlsSelfSigned,
            ServerFlag::Knobs(vec![Knob::PipelineFlush, Knob::NoHeadTimeout]),
        ];
        let line = ServerFlag::command_line(&flags);
        assert_eq!(line[..2], ["--delay-ms", "7"]);
        let config =
            ServerConfig::try_parse_from(std::iter::once("greet-x".to_owned()).chain(line))
                .expect("the server reads what ServerFlag writes");
        assert_eq!(config.delay_ms, 7);
        assert_eq!(config.workers.get(), 3);
        assert_eq!(config.blocking_threads.get(), 5);
        assert_eq!(config.store, StoreKind::Postgres);
        assert_eq!(config.database_url, Some(db));
        assert_eq!(config.db_pool.get(), 9);
        assert_eq!(config.db_timeout_ms, 11);
        assert_eq!(config.cache, CacheKind::Redis);
        assert_eq!(config.redis_url, Some(redis));
        assert!(config.tls_self_signed);
        assert_eq!(config.knobs, [Knob::PipelineFlush, Knob::NoHeadTimeout]);
    }
}
