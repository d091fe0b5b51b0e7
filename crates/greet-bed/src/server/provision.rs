//! The stores a store-bound scenario's servers use, ready before the first server starts:
//! embedded (nothing to do), PostgreSQL and Redis started here on loopback (pinned where the
//! harness says), servers given by URL, or, where the servers run as a swarm stack, the
//! stores' stack beside them. And each store's processes or containers sampled through a load.

use std::time::{Instant, SystemTime};

use anyhow::{Context, Result};
use greet_launch::process::pin_process_tree;
use greet_launch::stores::{Postgres, Redis};
use greet_server::ServerFlag;
use greet_store::{CacheKind, DatabaseUrl, RedisUrl, StoreKind};

use crate::sample::{self, Sampler};
use greet_model::plan::{Placement, Store};
use greet_model::results::{Sampled, StoreNode};

use super::stores::{DATABASE_URL, REDIS_URL};
use super::swarm::{self, Nodes, Stores, STORES_NETWORK, STORES_STACK};

/// A store ready for the servers: its flags, and what was started for it.
#[derive(Debug)]
pub struct Ready {
    /// Its name in the tables: `sqlite`, `postgres`.
    pub name: &'static str,
    /// The flags that point a server at it.
    pub args: Vec<String>,
    /// Started here: held until the scenario ends (dropping stops them).
    local: Option<(Postgres, Redis)>,
    /// Deployed as the stores' stack: held likewise (dropping removes it).
    stack: Option<Stores>,
}

impl Ready {
    /// The network a server joins to reach it, when it is a stack of its own.
    pub fn network(&self) -> Option<&'static str> {
        self.stack.as_ref().map(|_| STORES_NETWORK)
    }

    /// One line saying where it is, for the report's notes.
    pub fn note(&self, cpus: &[usize]) -> String {
        match (&self.local, &self.stack) {
            (_, Some(stack)) => format!(
                "{}: PostgreSQL and Redis as swarm stack {STORES_STACK} (on nodes {})",
                self.name,
                stack
                    .nodes()
                    .iter()
                    .map(|n| n.node.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (Some((pg, redis)), None) => format!(
                "{}: PostgreSQL ({}) and Redis ({}) started by the harness on loopback, on the \
                 load generator's CPUs ({})",
                self.name,
                pg.addr(),
                redis.addr(),
                if cpus.is_empty() {
                    "not pinned".to_owned()
                } else {
                    format!("{cpus:?}")
                }
            ),
            (None, None) if self.args.is_empty() => {
                format!("{}: embedded, a fresh file per server", self.name)
            }
            (None, None) => format!("{}: the servers at the URLs given", self.name),
        }
    }

    fn pids(&self) -> Vec<u32> {
        self.local
            .iter()
            .flat_map(|(pg, redis)| [pg.pid(), redis.pid()])
            .flatten()
            .collect()
    }
}

/// The flags of a server on PostgreSQL and Redis at these URLs.
fn store_args(database_url: DatabaseUrl, redis_url: RedisUrl) -> Vec<String> {
    ServerFlag::command_line(&[
        ServerFlag::Store(StoreKind::Postgres),
        ServerFlag::DatabaseUrl(database_url),
        ServerFlag::Cache(CacheKind::Redis),
        ServerFlag::RedisUrl(redis_url),
    ])
}

/// Checks, before anything runs, that the stores of `stores` can be had at `place`: on a
/// swarm, the stores' images are there and no stores' stack is deployed.
pub fn preflight(stores: &[Store], place: Placement) -> Result<()> {
    let deployed = |s: &Store| {
        matches!(
            s,
            Store::Servers {
                database_url: None,
                ..
            }
        )
    };
    if matches!(place, Placement::Swarm(_)) && stores.iter().any(deployed) {
        swarm::preflight_stores()?;
    }
    Ok(())
}

/// What [`prepare_all`] made of a scenario's stores.
#[derive(Debug, Default)]
pub struct Prepared {
    /// The stores ready, in order.
    pub ready: Vec<Ready>,
    /// A line per store for the report: where it is, or why it was skipped.
    pub notes: Vec<String>,
    /// The stores skipped (not installed, not asked for by name), by name.
    pub skipped: Vec<&'static str>,
    /// The stores that failed: name and why.
    pub failed: Vec<(&'static str, anyhow::Error)>,
    /// On a swarm: the node each deployed store ran on.
    pub nodes: Vec<StoreNode>,
}

/// Every store of `stores` as [`prepare`] makes it, a skipped one said on stderr in one line
/// (`scenario: store: skipped, why`).
pub async fn prepare_all(
    scenario: &str,
    stores: &[Store],
    cpus: &[usize],
    place: Placement,
) -> Prepared {
    let mut prepared = Prepared::default();
    for store in stores {
        match prepare(store, cpus, place).await {
            Ok(ready) => {
                prepared.notes.push(ready.note(cpus));
                prepared
                    .nodes
                    .extend(ready.stack.iter().flat_map(Stores::nodes));
                prepared.ready.push(ready);
            }
            Err(err) if err.is::<Skipped>() => {
                let note = format!("{}: skipped, {err}", store.name());
                eprintln!("greet-bench: {scenario}: {note}");
                prepared.notes.push(note);
                prepared.skipped.push(store.name());
            }
            Err(err) => prepared.failed.push((store.name(), err)),
        }
    }
    prepared
}

/// Starts (or points at) the store `store` names, pinned to `cpus` when started here;
/// `Err(Skipped)` for the default PostgreSQL + Redis where they are not installed (asked for
/// by name, that is an error). Where the servers run as a swarm stack, PostgreSQL and Redis
/// are deployed as the stores' stack instead.
pub async fn prepare(store: &Store, cpus: &[usize], place: Placement) -> Result<Ready> {
    match store {
        Store::Sqlite => Ok(Ready {
            name: store.name(),
            args: Vec::new(),
            local: None,
            stack: None,
        }),
        Store::Servers {
            database_url: None,
            redis_url: None,
            ..
        } if matches!(place, Placement::Swarm(_)) => {
            let stack = tokio::task::spawn_blocking(|| Stores::deploy(&Nodes::read()?))
                .await
                .context("store deployment panicked")??;
            Ok(Ready {
                name: store.name(),
                args: store_args(DATABASE_URL.parse()?, REDIS_URL.parse()?),
                local: None,
                stack: Some(stack),
            })
        }
        Store::Servers {
            database_url,
            redis_url,
            optional,
        } => {
            if database_url.is_none() || redis_url.is_none() {
                if let Some(install) = greet_launch::stores::missing_packages() {
                    let missing = Skipped(install);
                    if *optional {
                        return Err(missing.into());
                    }
                    anyhow::bail!("{missing}");
                }
            }
            let (database_url, redis_url, local) = match (database_url, redis_url) {
                (Some(db), Some(redis)) => (db.clone(), redis.clone(), None),
                _ => {
                    let (pg, redis) = start_here(cpus.to_vec()).await?;
                    // The CLI takes both URLs or neither: without both, the harness's own.
                    let database_url = pg.url("postgres").parse()?;
                    let redis_url = redis.url().parse()?;
                    (database_url, redis_url, Some((pg, redis)))
                }
            };
            Ok(Ready {
                name: store.name(),
                args: store_args(database_url, redis_url),
                local,
                stack: None,
            })
        }
    }
}

/// PostgreSQL and Redis started on loopback, pinned to `cpus` (where results.json says: they
/// would otherwise run wherever the harness's thread that started them may).
async fn start_here(cpus: Vec<usize>) -> Result<(Postgres, Redis)> {
    tokio::task::spawn_blocking(move || {
        let pg = Postgres::start()?;
        let redis = Redis::start()?;
        if !cpus.is_empty() {
            for pid in [pg.pid(), redis.pid()].into_iter().flatten() {
                pin_process_tree(pid, &cpus).with_context(|| format!("pinning store {pid}"))?;
            }
        }
        Ok::<_, anyhow::Error>((pg, redis))
    })
    .await
    .context("store start-up panicked")?
}

/// A default store that is not installed: what to install. Not a failure of the run.
#[derive(Debug)]
pub struct Skipped(String);

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PostgreSQL or Redis is not installed: {}", self.0)
    }
}

impl std::error::Error for Skipped {}

/// A store's servers sampled through one load: their processes here, or their containers'
/// watch tasks on a swarm.
#[derive(Debug)]
pub enum StoreSampling<'a> {
    /// Nothing to sample: embedded, or given by URL.
    None,
    /// Processes started here, as one group.
    Processes(Sampler),
    /// The stores' stack's containers, from `Instant`.
    Stack(&'a Stores, Instant),
}

impl<'a> StoreSampling<'a> {
    /// Starts sampling `store`'s servers, from `at`.
    pub fn start(store: &'a Ready, at: SystemTime) -> Self {
        if let Some(stack) = &store.stack {
            return Self::Stack(stack, sample::instant_at(at));
        }
        let pids = store.pids();
        if pids.is_empty() {
            Self::None
        } else {
            Self::Processes(Sampler::start_processes(pids))
        }
    }

    /// What it saw: the processes as one group, or the containers' figures added up.
    pub async fn stop(self) -> Option<Sampled> {
        match self {
            Self::None => None,
            Self::Processes(sampler) => Some(sampler.stop().sampled()),
            Self::Stack(stack, from) => {
                let to = Instant::now();
                let mut each = Vec::new();
                for (_, watch) in &stack.watched {
                    each.push(watch.window_covered(from, to).await);
                }
                Some(Sampled::together(&each))
            }
        }
    }
}
