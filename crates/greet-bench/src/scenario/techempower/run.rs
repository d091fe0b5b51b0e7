//! TechEmpower's tests: per server, json and plaintext (pipelined) once, and the database
//! tests (db, queries, fortunes, updates, cached queries) on each store (embedded SQLite;
//! PostgreSQL started here from the machine's packages, skipped in one line where it is not
//! installed). Keep-alive load at one concurrency per test; every answer checked as the
//! contract suite checks it (the exact page, message and rows).
//!
//! Each repeat starts a fresh server per store and loads each test on it in turn (warm-up,
//! then the measured part); repeats are the outer loop, then stores, then servers in a
//! Williams order ([`in_order`]), so a slow spell of the machine hits every server alike. Each cell's share is its median over
//! the best server's of its league (at the defaults, or with knobs) on the same test and
//! store, as TechEmpower's tables rank them, and every pair of servers is compared on its
//! runs paired by repeat (`greet_stats::paired`).

use anyhow::Result;
use greet_load::{Expect, Stop, Work};

use crate::harness::{server_args, Ask, Harness, Start, Subject};
use crate::scenario::kit::{in_order, Book, Run};
use greet_bed::server::provision::{self, Ready};
use greet_model::plan::{self, Placement, BLOCKING_THREADS};
use greet_model::results::{block_throughputs, Frame, Repeated, Transport, Trial};
use greet_stats::paired::Figure;

use super::{Plan, Section, TechEmpower, TechEmpowerCell, Test, NO_STORE};

impl Run for TechEmpower {
    /// Runs TechEmpower's tests: the stores made ready, then every server on each store, a
    /// repeat at a time.
    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        book.open(Section {
            // Only plaintext pipelines, at its own depth.
            transport: Transport {
                pipeline: 1,
                ..harness.transport()
            },
            frame: Frame::new(plan.base.repeats),
            concurrency: plan.measure.connections,
            plaintext_pipeline: plan.pipeline,
            rows: plan.rows,
            duration_s: plan.measure.duration.as_secs_f64(),
            warmup_s: plan.measure.warmup.as_secs_f64(),
            stores: plan.stores.iter().map(|s| s.name().to_owned()).collect(),
            ..Section::default()
        });
        // No test that reads a database: one store (the first) serves json and plaintext.
        let wanted = if plan.tests.iter().any(|t| t.uses_store()) {
            &plan.stores[..]
        } else {
            &plan.stores[..plan.stores.len().min(1)]
        };
        let prepared =
            provision::prepare_all("techempower", wanted, harness.store_cpus(), plan.base.place)
                .await;
        let te = book.section();
        te.store_notes = prepared.notes;
        te.store_nodes = prepared.nodes;
        te.stores.retain(|s| {
            wanted.iter().any(|w| w.name() == s) && !prepared.skipped.contains(&s.as_str())
        });
        for (name, err) in &prepared.failed {
            book.fail(name, err);
        }
        let stores = prepared.ready;
        // The tests each store's servers run: json and plaintext with the first store only; a
        // store left with none starts no server.
        let runs: Vec<(&Ready, Vec<Test>)> = stores
            .iter()
            .enumerate()
            .map(|(i, store)| {
                let tests = plan
                    .tests
                    .iter()
                    .copied()
                    .filter(|t| t.uses_store() || i == 0)
                    .collect();
                (store, tests)
            })
            .filter(|(_, tests): &(_, Vec<Test>)| !tests.is_empty())
            .collect();
        // A server named twice is measured as two (`greet-hyper#2`): an A/A check.
        let subjects = Subject::all(&plan.base);
        let servers: Vec<(&Subject, String)> = subjects.iter().map(|s| (s, s.name())).collect();
        for (store, tests) in &runs {
            for (subject, name) in &servers {
                for test in served(subject, tests) {
                    book.section().cells.push(TechEmpowerCell {
                        server: name.clone(),
                        store: store_of(test, store).to_owned(),
                        test: test.name().to_owned(),
                        target: test.path(plan.rows),
                        ..TechEmpowerCell::default()
                    });
                }
            }
        }
        for repeat in 1..=plan.base.repeats {
            for (store, tests) in &runs {
                for (subject, name) in in_order(&servers, repeat - 1) {
                    let tests = &served(subject, tests);
                    if tests.is_empty() {
                        continue;
                    }
                    let one = Server {
                        subject,
                        name,
                        store,
                        tests,
                        repeat,
                    };
                    let who = format!("{name} {}", store.name);
                    book.step(&who, async |book| {
                        run_repeat(harness, plan, &one, book).await
                    })
                    .await?;
                }
            }
        }
        let section = book.section();
        // What never ran (a server that failed before its first load) is not a cell.
        section.cells.retain(|c| !c.runs.is_empty());
        summarise(section, plan.by_crate);
        Ok(())
    }
}

/// The tests of `tests` server `subject` serves: a reference server has no store.
fn served(subject: &Subject, tests: &[Test]) -> Vec<Test> {
    let stored = !subject.short().is_some_and(plan::is_reference);
    tests
        .iter()
        .copied()
        .filter(|t| stored || !t.uses_store())
        .collect()
}

fn store_of(test: Test, store: &Ready) -> &'static str {
    if test.uses_store() {
        store.name
    } else {
        NO_STORE
    }
}

/// One repeat of one server on one store.
struct Server<'a> {
    subject: &'a Subject,
    name: &'a str,
    store: &'a Ready,
    tests: &'a [Test],
    repeat: usize,
}

/// Every test of one server on one store, once, on a fresh server (the first repeat passes
/// the whole contract first).
async fn run_repeat(
    harness: &Harness,
    plan: &Plan,
    one: &Server<'_>,
    book: &mut Book<'_, TechEmpower>,
) -> Result<()> {
    let mut args = server_args(0, harness.workers(None), BLOCKING_THREADS);
    args.extend(one.store.args.iter().cloned());
    let foreign = plan::Foreign::default();
    let first = one
        .tests
        .first()
        .map_or(String::new(), |t| t.path(plan.rows));
    let start = Start {
        checked: one.repeat > 1,
        join: one.store.network(),
        ..Start::new(one.subject, &args, &foreign, &first)
    };
    let mut up = harness.bring_up(plan.base.place, &start).await?;
    for test in one.tests {
        let path = test.path(plan.rows);
        let pipeline = match test {
            Test::Plaintext => plan.pipeline,
            _ => 1,
        };
        let ask = |stop| {
            let work = Work::Sessions {
                users: plan.measure.connections,
                stop,
                streams: harness.common.streams,
                pipeline,
                requests_per_connection: harness.common.requests_per_connection,
            };
            Ask::new(&path, &Expect::Greeting, work)
        };
        let label = format!(
            "{} {} {} #{}",
            one.name,
            test.name(),
            store_of(*test, one.store),
            one.repeat
        );
        if !plan.measure.warmup.is_zero() {
            let warm = ask(Stop::After(plan.measure.warmup));
            let label = format!("{label} warm-up");
            harness.load(Placement::Harness, &up, &warm, label).await?;
        }
        let measured = Ask {
            stores: test.uses_store().then_some(one.store),
            ..ask(Stop::After(plan.measure.duration))
        };
        let loaded = harness
            .measure(plan.base.place, &up, &measured, label)
            .await?;
        let run = loaded.run();
        up.ensure_alive()?;
        let store = store_of(*test, one.store);
        let cell = book
            .section()
            .cells
            .iter_mut()
            .find(|c| c.server == one.name && c.store == store && c.test == test.name())
            .expect("a cell per server, store and test");
        cell.runs.push(run);
        let r = Repeated::of(&cell.runs);
        cell.requests_per_s = r.requests_per_s;
        cell.success_rate = r.success_rate;
        cell.cpu_avg_pct = r.cpu_avg_pct;
        let median = Trial::median_of(&cell.runs);
        cell.p50_ms = median.load.latency_ms.p50;
        cell.p99_ms = median.load.latency_ms.p99;
    }
    harness.release(up).await
}

/// Each cell's share of the best server of its league on its test and store, and every pair
/// of servers compared there (`by_crate`: each server with knobs with its crate alone,
/// [`plan::against_its_crate`]).
fn summarise(section: &mut Section, by_crate: bool) {
    let keys = greet_stats::distinct(
        section
            .cells
            .iter()
            .map(|c| (c.store.clone(), c.test.clone())),
    );
    for (store, test) in keys {
        // The best server's of its league (at the defaults, or tuned), never a reference's:
        // the floor's share is then above 100%.
        let best = |tuned: bool| {
            section
                .cells
                .iter()
                .filter(|c| c.store == store && c.test == test)
                .filter(|c| plan::reference_role(&c.server).is_none())
                .filter(|c| plan::is_tuned(&c.server) == tuned)
                .map(|c| c.requests_per_s.median)
                .fold(0.0, f64::max)
        };
        let bests = [best(false), best(true)];
        let mut samples = Vec::new();
        for cell in section
            .cells
            .iter_mut()
            .filter(|c| c.store == store && c.test == test)
        {
            let best = bests[usize::from(plan::is_tuned(&cell.server))];
            cell.share_of_best = if best > 0.0 {
                cell.requests_per_s.median / best
            } else {
                0.0
            };
            let blocks = block_throughputs(&cell.runs);
            samples.push((format!("{} {test} {store}", cell.server), blocks));
        }
        let mut compared =
            crate::scenario::kit::contenders_pairwise(Figure::RequestsPerS, &samples);
        let server = |label: &str| label.split(' ').next().unwrap_or_default().to_owned();
        compared.retain(|c| !by_crate || plan::against_its_crate(&server(&c.a), &server(&c.b)));
        section.comparisons.extend(compared);
    }
}
