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
//! Where each measurement runs is the plan's placement (the warm-ups run from the harness);
//! the stores are ready before the first server starts, wherever the servers run
//! (`greet_bed::server::provision`), and sampled beside each measurement.

use anyhow::Result;
use greet_load::{Expect, Stop};
use greet_server::ServerFlag;

use crate::harness::{server_args, Ask, Harness, Start, Subject};
use crate::scenario::kit::{in_order, Book, Run};
use greet_bed::server::provision::{self, Ready};
use greet_model::plan::{self, Placement, BLOCKING_THREADS};
use greet_model::results::{block_throughputs, Frame, Gain, Repeated, Sampled};
use greet_stats::paired::{pairwise, Figure};

use super::{Business, BusinessCell, CeilingFraction, Plan, PoolBest, PoolSetting, Section};

impl Run for Business {
    /// Runs business: the stores made ready, then on each store every server, a repeat at a
    /// time.
    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        let default = PoolSetting {
            workers: harness.workers(None),
            db_pool: Plan::DEFAULT_DB_POOL,
        };
        let workers = crate::scenario::kit::grid_with(&plan.workers, default.workers);
        let pools = crate::scenario::kit::grid_with(&plan.db_pools, default.db_pool);
        let settings: Vec<PoolSetting> = workers
            .iter()
            .flat_map(|&w| {
                pools.iter().map(move |&p| PoolSetting {
                    workers: w,
                    db_pool: p,
                })
            })
            .collect();
        book.open(Section {
            transport: harness.transport(),
            frame: Frame::new(plan.base.repeats),
            concurrency: plan.measure.connections,
            duration_s: plan.measure.duration.as_secs_f64(),
            warmup_s: plan.measure.warmup.as_secs_f64(),
            stores: plan.stores.iter().map(|s| s.name().to_owned()).collect(),
            workers,
            db_pools: pools,
            default,
            ..Section::default()
        });
        let prepared = provision::prepare_all(
            "business",
            &plan.stores,
            harness.store_cpus(),
            plan.base.place,
        )
        .await;
        let business = book.section();
        business.store_notes = prepared.notes;
        business.store_nodes = prepared.nodes;
        business
            .stores
            .retain(|s| !prepared.skipped.contains(&s.as_str()));
        for (name, err) in &prepared.failed {
            book.fail(name, err);
        }
        let stores = prepared.ready;
        // A server named twice is measured as two (`greet-hyper#2`): an A/A check.
        let subjects = Subject::all(&plan.base);
        let servers: Vec<(&Subject, String)> = subjects.iter().map(|s| (s, s.name())).collect();
        for store in &stores {
            for (_, name) in &servers {
                add_cells(
                    book.section(),
                    name,
                    store.name,
                    &settings,
                    &plan.endpoints,
                    default,
                );
            }
            // Repeats outermost, then servers, then settings, each in a Williams order
            // ([`in_order`]): a slow spell of the machine hits every server and setting alike,
            // where runs of one server back to back would hand the drift to the comparison
            // between servers.
            for repeat in 1..=plan.base.repeats {
                for (subject, name) in in_order(&servers, repeat - 1) {
                    let one = Server {
                        subject,
                        name,
                        store,
                        settings: &settings,
                        repeat,
                    };
                    let who = format!("{name} {}", store.name);
                    book.step(&who, async |book| {
                        let outcome = run_repeat(harness, plan, &one, book).await;
                        if outcome.is_err() {
                            // What it measured before failing stays; settings it never reached
                            // go.
                            book.section().cells.retain(|c| {
                                !(c.server == *name && c.store == store.name && c.runs.is_empty())
                            });
                        }
                        outcome
                    })
                    .await?;
                }
            }
            for (_, name) in &servers {
                summarise(book.section(), name, store.name, default);
            }
            book.save()?;
        }
        compare_servers(book.section(), default);
        Ok(())
    }
}

/// One repeat of one server on one store.
struct Server<'a> {
    subject: &'a Subject,
    name: &'a str,
    store: &'a Ready,
    settings: &'a [PoolSetting],
    repeat: usize,
}

/// The cells of `server` on `store`, before any run.
fn add_cells(
    business: &mut Section,
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
    plan: &Plan,
    one: &Server<'_>,
    book: &mut Book<'_, Business>,
) -> Result<()> {
    let first = in_order(one.settings, 0).next();
    for setting in in_order(one.settings, one.repeat - 1) {
        let mut args = server_args(0, setting.workers, BLOCKING_THREADS);
        args.extend(ServerFlag::DbPool(setting.db_pool).args());
        args.extend(one.store.args.iter().cloned());
        let foreign = plan::Foreign::default();
        let start = Start {
            checked: one.repeat > 1 || Some(setting) != first,
            join: one.store.network(),
            ..Start::new(one.subject, &args, &foreign, &plan.endpoints[0])
        };
        let mut up = harness.bring_up(plan.base.place, &start).await?;
        let cells: Vec<(usize, String)> = book
            .section()
            .cells
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                c.server == one.name && c.store == one.store.name && c.setting == *setting
            })
            .map(|(index, c)| (index, c.endpoint.clone()))
            .collect();
        for (index, endpoint) in cells {
            let ask = |stop| {
                let work = harness.sessions(plan.measure.connections, stop);
                Ask::new(&endpoint, &Expect::Greeting, work)
            };
            let label = format!(
                "{} {} {endpoint} w={} pool={} #{}",
                one.name, one.store.name, setting.workers, setting.db_pool, one.repeat
            );
            if !plan.measure.warmup.is_zero() {
                let warm = ask(Stop::After(plan.measure.warmup));
                let label = format!("{label} warm-up");
                harness.load(Placement::Harness, &up, &warm, label).await?;
            }
            let measured = Ask {
                stores: Some(one.store),
                ..ask(Stop::After(plan.measure.duration))
            };
            let loaded = harness
                .measure(plan.base.place, &up, &measured, label)
                .await?;
            let (run, store_run) = (loaded.run(), loaded.stores);
            up.ensure_alive()?;
            let cell = &mut book.section().cells[index];
            cell.node = up.node();
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

/// The fractions of the ceiling and the best pools of one server on one store.
fn summarise(business: &mut Section, server: &str, store: &str, default: PoolSetting) {
    let mine: Vec<&BusinessCell> = business
        .cells
        .iter()
        .filter(|c| c.server == server && c.store == store && !c.runs.is_empty())
        .collect();
    let ceiling = mine
        .iter()
        .find(|c| is_ceiling(&c.endpoint) && c.setting == default)
        .map(|c| c.requests_per_s.median);
    let endpoints = greet_stats::distinct(
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
fn compare_servers(business: &mut Section, default: PoolSetting) {
    let keys = greet_stats::distinct(
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
                    block_throughputs(&c.runs),
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
