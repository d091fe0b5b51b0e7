//! Business, the original's fourth experiment: per server, the store-bound endpoints (`/db`,
//! `/queries?queries=20`, `/business`) against the same server's ceiling (`/health`), on each
//! store (embedded SQLite; PostgreSQL + Redis, started here from the machine's packages unless
//! URLs are given), over grids of `--workers` and `--db-pool`.
//!
//! Each repeat of each setting starts a fresh server and loads every endpoint on it in turn
//! (warm-up, then the measured part), so an endpoint and its ceiling share a server. Per
//! store, repeats are the outer loop, then servers, then settings: a slow spell of the machine
//! hits every server and setting alike. The
//! store processes are sampled beside the server (pinned to the load generator's CPUs).
//!
//! With `--agents` each measurement runs from agents (the warm-up from the harness); with
//! `--swarm` the servers run as the server's stack and PostgreSQL and Redis as the stores'
//! stack (deployed once per run, each store watched by a task beside it), which the servers'
//! stacks join.

use std::time::{Instant, SystemTime};

use anyhow::{Context, Result};
use greet_launch::process::pin_process_tree;
use greet_launch::stores::{Postgres, Redis};
use greet_server::ServerFlag;
use greet_store::{CacheKind, DatabaseUrl, RedisUrl, StoreKind};

use crate::agents::{self, Spread};
use crate::server;
use crate::server::swarm::{Nodes, Stores, STORES_NETWORK};

use crate::compare::{pairwise, Figure};
use crate::harness::{server_args, Harness, Subject};
use crate::load::{Expect, Sessions, Stop};
use crate::plan::{self, package, Store, BLOCKING_THREADS};
use crate::results::{
    throughputs, Business, BusinessCell, CeilingFraction, Gain, PoolBest, PoolSetting, Repeated,
    Results, Sampled,
};
use crate::sample::{self, Sampler};

/// A store ready for the servers: its flags, and the servers started for it.
struct Ready {
    name: &'static str,
    args: Vec<String>,
    /// Held until the scenario ends: dropping stops them.
    local: Option<(Postgres, Redis)>,
    /// On a swarm, the stores' stack, held likewise: dropping removes it.
    stack: Option<Stores>,
}

impl Ready {
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

/// Starts (or points at) the store `store` names; `Err(Skipped)` for the default
/// PostgreSQL + Redis where they are not installed (asked for by name, that is an error).
/// On a swarm (`swarm`) PostgreSQL and Redis are deployed as the stores' stack instead.
async fn prepare(store: &Store, cpus: &[usize], swarm: bool) -> Result<Ready> {
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
        } if swarm => {
            let stack = tokio::task::spawn_blocking(|| Stores::deploy(&Nodes::read()?))
                .await
                .context("store deployment panicked")??;
            let (database, redis) = (server::stores::DATABASE_URL, server::stores::REDIS_URL);
            Ok(Ready {
                name: store.name(),
                args: store_args(
                    database.parse().map_err(anyhow::Error::msg)?,
                    redis.parse().map_err(anyhow::Error::msg)?,
                ),
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
                    let cpus = cpus.to_vec();
                    let (pg, redis) = tokio::task::spawn_blocking(move || {
                        let pg = Postgres::start().map_err(anyhow::Error::msg)?;
                        let redis = Redis::start().map_err(anyhow::Error::msg)?;
                        // Explicitly where results.json says (they would otherwise run
                        // wherever the harness's thread that started them may).
                        if !cpus.is_empty() {
                            for pid in [pg.pid(), redis.pid()].into_iter().flatten() {
                                pin_process_tree(pid, &cpus)
                                    .with_context(|| format!("pinning store {pid}"))?;
                            }
                        }
                        Ok::<_, anyhow::Error>((pg, redis))
                    })
                    .await
                    .context("store start-up panicked")??;
                    // The CLI takes both URLs or neither: without both, the harness's own.
                    let database_url = pg.url("postgres").parse().map_err(anyhow::Error::msg)?;
                    let redis_url = redis.url().parse().map_err(anyhow::Error::msg)?;
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

/// A default store that is not installed: what to install. Not a failure of the run.
#[derive(Debug)]
struct Skipped(String);

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PostgreSQL or Redis is not installed: {}", self.0)
    }
}

impl std::error::Error for Skipped {}

/// Runs the business scenario into `results.business`; false when a server or store failed.
pub async fn run(harness: &Harness, plan: &plan::Business, results: &mut Results) -> Result<bool> {
    let default = PoolSetting {
        workers: harness.workers(None),
        db_pool: plan::Business::DEFAULT_DB_POOL,
    };
    let workers = super::grid_with(&plan.workers, default.workers);
    let pools = super::grid_with(&plan.db_pools, default.db_pool);
    let settings: Vec<PoolSetting> = workers
        .iter()
        .flat_map(|&w| {
            pools.iter().map(move |&p| PoolSetting {
                workers: w,
                db_pool: p,
            })
        })
        .collect();
    results.business = Some(Business {
        transport: harness.transport(),
        concurrency: plan.measure.concurrency,
        duration_s: plan.measure.duration.as_secs_f64(),
        warmup_s: plan.measure.warmup.as_secs_f64(),
        repeats: plan.measure.repeats,
        stores: plan.stores.iter().map(|s| s.name().to_owned()).collect(),
        workers,
        db_pools: pools,
        default,
        ..Business::default()
    });
    if plan.swarm {
        let shorts: Vec<&str> = plan.servers.iter().map(String::as_str).collect();
        server::swarm::preflight(&shorts, false)?;
        let deployed = |s: &Store| {
            matches!(
                s,
                Store::Servers {
                    database_url: None,
                    ..
                }
            )
        };
        if plan.stores.iter().any(deployed) {
            server::swarm::preflight_stores()?;
        }
    }
    let mut all_ok = true;
    let mut stores = Vec::new();
    for store in &plan.stores {
        match prepare(store, harness.store_cpus(), plan.swarm).await {
            Ok(ready) => {
                let note = match (&ready.local, &ready.stack) {
                    (_, Some(stack)) => format!(
                        "{}: PostgreSQL and Redis as swarm stack {} (on nodes {})",
                        ready.name,
                        server::swarm::STORES_STACK,
                        stack.nodes().join(", ")
                    ),
                    (Some((pg, redis)), None) => format!(
                        "{}: PostgreSQL ({}) and Redis ({}) started by the harness on loopback, \
                         on the load generator's CPUs ({})",
                        ready.name,
                        pg.addr(),
                        redis.addr(),
                        if harness.store_cpus().is_empty() {
                            "not pinned".to_owned()
                        } else {
                            format!("{:?}", harness.store_cpus())
                        }
                    ),
                    (None, None) if ready.args.is_empty() => {
                        format!("{}: embedded, a fresh file per server", ready.name)
                    }
                    (None, None) => format!("{}: the servers at the URLs given", ready.name),
                };
                section(results).store_notes.push(note);
                stores.push(ready);
            }
            Err(err) if err.is::<Skipped>() => {
                let note = format!("{}: skipped, {err}", store.name());
                eprintln!("greet-bench: business: {note}");
                section(results).store_notes.push(note);
                section(results).stores.retain(|s| s != store.name());
            }
            Err(err) => {
                let failed = super::failure("business", store.name().to_owned(), &err);
                section(results).failures.push(failed);
                all_ok = false;
            }
        }
    }
    let servers: Vec<(&String, String)> = plan.servers.iter().map(|s| (s, package(s))).collect();
    for store in &stores {
        for (_, name) in &servers {
            add_cells(
                section(results),
                name,
                store.name,
                &settings,
                &plan.endpoints,
                default,
            );
        }
        // Repeats outermost, then servers, then settings: a slow spell of the machine hits
        // every server and setting alike, where runs of one server back to back would hand
        // the drift to the comparison between servers.
        let mut failed: Vec<&str> = Vec::new();
        for repeat in 1..=plan.measure.repeats {
            for (short, name) in &servers {
                if failed.contains(&name.as_str()) {
                    continue;
                }
                let one = Server {
                    short,
                    name,
                    store,
                    settings: &settings,
                    repeat,
                };
                if let Err(err) = run_repeat(harness, plan, &one, results).await {
                    let who = format!("{name} {}", store.name);
                    let failure = super::failure("business", who, &err);
                    let business = section(results);
                    business.failures.push(failure);
                    // What it measured before failing stays; settings it never reached go.
                    business.cells.retain(|c| {
                        !(c.server == *name && c.store == store.name && c.runs.is_empty())
                    });
                    failed.push(name);
                    all_ok = false;
                }
            }
            harness.save(results)?;
        }
        for (_, name) in &servers {
            summarise(section(results), name, store.name, default);
        }
        harness.save(results)?;
    }
    compare_servers(section(results), default);
    harness.save(results)?;
    Ok(all_ok)
}

fn section(results: &mut Results) -> &mut Business {
    results
        .business
        .as_mut()
        .expect("set when the scenario starts")
}

/// One repeat of one server on one store.
struct Server<'a> {
    short: &'a str,
    name: &'a str,
    store: &'a Ready,
    settings: &'a [PoolSetting],
    repeat: usize,
}

/// The cells of `server` on `store`, before any run.
fn add_cells(
    business: &mut Business,
    server: &str,
    store: &str,
    settings: &[PoolSetting],
    endpoints: &[String],
    default: PoolSetting,
) {
    for setting in settings {
        for endpoint in endpoints.iter().filter(|e| loads(e, *setting, default)) {
            business.cells.push(BusinessCell {
                server: server.to_owned(),
                store: store.to_owned(),
                endpoint: endpoint.clone(),
                setting: *setting,
                ..BusinessCell::default()
            });
        }
    }
}

/// Whether `endpoint` is loaded at `setting`: the ceiling does not touch the pool, so it is
/// loaded at the default pool only.
fn loads(endpoint: &str, setting: PoolSetting, default: PoolSetting) -> bool {
    !is_ceiling(endpoint) || setting.db_pool == default.db_pool
}

fn is_ceiling(endpoint: &str) -> bool {
    endpoint == greet_core::paths::HEALTH
}

/// Every setting of one server on one store, once: a fresh server per setting, each
/// endpoint loaded on it in turn. The first of them passes the whole contract first.
async fn run_repeat(
    harness: &Harness,
    plan: &plan::Business,
    one: &Server<'_>,
    results: &mut Results,
) -> Result<()> {
    for (i, setting) in one.settings.iter().enumerate() {
        let mut args = server_args(0, setting.workers, BLOCKING_THREADS);
        args.extend(ServerFlag::DbPool(setting.db_pool).args());
        args.extend(one.store.args.iter().cloned());
        let subject = Subject::Server(one.short.to_owned());
        let again = one.repeat > 1 || i > 0;
        let foreign = plan::Foreign::default();
        let mut up = if plan.swarm {
            let join = one.store.stack.as_ref().map(|_| STORES_NETWORK);
            harness
                .bring_up_swarm((&subject, join), &args, &foreign, &plan.endpoints[0])
                .await?
        } else {
            harness
                .bring_up(&subject, &args, &foreign, &plan.endpoints[0], again)
                .await?
        };
        let cells: Vec<(usize, String)> = section(results)
            .cells
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                c.server == one.name && c.store == one.store.name && c.setting == *setting
            })
            .map(|(index, c)| (index, c.endpoint.clone()))
            .collect();
        for (index, endpoint) in cells {
            let sessions = |stop| Sessions {
                addr: up.addr,
                target: endpoint.clone(),
                expect: Expect::for_target(&endpoint, &plan::Expect::Greeting),
                users: plan.measure.concurrency,
                stop,
                timeout: harness.timeout(),
                wire: harness.wire.clone(),
                streams: harness.common.streams,
            };
            let label = format!(
                "{} {} {endpoint} w={} pool={} #{}",
                one.name, one.store.name, setting.workers, setting.db_pool, one.repeat
            );
            if !plan.measure.warmup.is_zero() {
                let warm = sessions(Stop::After(plan.measure.warmup));
                harness
                    .keep_alive(&up, &warm, format!("{label} warm-up"))
                    .await;
            }
            let measured = sessions(Stop::After(plan.measure.duration));
            let (run, store_run) = if plan.agents > 0 {
                let protocol = harness.wire.protocol;
                let url = agents::url_for(plan.swarm, up.addr, &endpoint, protocol);
                let spread = Spread {
                    agents: plan.agents,
                    swarm: plan.swarm,
                };
                let start = agents::start_instant(plan.swarm);
                let stores = StoreWatch::start(one.store, start);
                let how = (&measured, url, &plan::Expect::Greeting);
                let ran = harness
                    .keep_alive_spread(&up, how, (spread, start), label)
                    .await;
                let store_run = stores.stop().await;
                (ran?.0, store_run)
            } else {
                let stores = StoreWatch::start(one.store, SystemTime::now());
                let (run, _) = harness.keep_alive(&up, &measured, label).await;
                (run, stores.stop().await)
            };
            up.ensure_alive()?;
            let cell = &mut section(results).cells[index];
            cell.runs.push(run);
            cell.store_runs.extend(store_run);
            let r = Repeated::of(&cell.runs);
            cell.requests_per_s = r.requests_per_s;
            cell.success_rate = r.success_rate;
            cell.cpu_avg_pct = r.cpu_avg_pct;
            cell.store_processes = (!cell.store_runs.is_empty())
                .then(|| Sampled::over(&cell.store_runs.iter().collect::<Vec<_>>()));
        }
        harness.release(up).await?;
    }
    Ok(())
}

/// The stores watched through one measurement: their processes here, or their containers'
/// watch tasks on a swarm.
enum StoreWatch<'a> {
    None,
    Processes(Sampler),
    Stack(&'a Stores, Instant),
}

impl<'a> StoreWatch<'a> {
    /// Starts watching `store`'s servers, from `at`.
    fn start(store: &'a Ready, at: SystemTime) -> Self {
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
    async fn stop(self) -> Option<Sampled> {
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

/// The fractions of the ceiling and the best pools of one server on one store.
fn summarise(business: &mut Business, server: &str, store: &str, default: PoolSetting) {
    let mine: Vec<&BusinessCell> = business
        .cells
        .iter()
        .filter(|c| c.server == server && c.store == store && !c.runs.is_empty())
        .collect();
    let ceiling = mine
        .iter()
        .find(|c| is_ceiling(&c.endpoint) && c.setting == default)
        .map(|c| c.requests_per_s.median);
    let endpoints = crate::stats::distinct(
        mine.iter()
            .filter(|c| !is_ceiling(&c.endpoint))
            .map(|c| c.endpoint.clone()),
    );
    let mut fractions = Vec::new();
    let mut bests = Vec::new();
    for endpoint in endpoints {
        let of: Vec<&&BusinessCell> = mine.iter().filter(|c| c.endpoint == endpoint).collect();
        let Some(base) = of.iter().find(|c| c.setting == default) else {
            continue;
        };
        if let Some(ceiling) = ceiling.filter(|c| *c > 0.0) {
            fractions.push(CeilingFraction {
                server: server.to_owned(),
                store: store.to_owned(),
                endpoint: endpoint.clone(),
                requests_per_s: base.requests_per_s.median,
                ceiling_requests_per_s: ceiling,
                fraction: base.requests_per_s.median / ceiling,
            });
        }
        let top = of
            .iter()
            .max_by(|a, b| a.requests_per_s.median.total_cmp(&b.requests_per_s.median))
            .expect("the default is among them");
        bests.push(PoolBest {
            server: server.to_owned(),
            store: store.to_owned(),
            endpoint,
            setting: top.setting,
            gain: Gain::of(
                (&top.setting.label(), &top.runs),
                (&base.setting.label(), &base.runs),
            ),
        });
    }
    business.fractions.extend(fractions);
    business.best_pools.extend(bests);
}

/// Every pair of servers on each store and store-bound endpoint, at the default setting.
fn compare_servers(business: &mut Business, default: PoolSetting) {
    let keys = crate::stats::distinct(
        business
            .cells
            .iter()
            .filter(|c| !is_ceiling(&c.endpoint))
            .map(|c| (c.store.clone(), c.endpoint.clone())),
    );
    for (store, endpoint) in keys {
        let samples: Vec<(String, Vec<f64>)> = business
            .cells
            .iter()
            .filter(|c| {
                c.store == store
                    && c.endpoint == endpoint
                    && c.setting == default
                    && !c.runs.is_empty()
            })
            .map(|c| {
                (
                    format!("{} {store} {endpoint}", c.server),
                    throughputs(&c.runs),
                )
            })
            .collect();
        business
            .comparisons
            .extend(pairwise(Figure::RequestsPerS, &samples));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_is_loaded_at_the_default_pool_only() {
        let default = PoolSetting {
            workers: 1,
            db_pool: 4,
        };
        let other = PoolSetting {
            workers: 1,
            db_pool: 16,
        };
        assert!(loads("/health", default, default));
        assert!(!loads("/health", other, default));
        assert!(loads("/db", other, default));
    }
}
