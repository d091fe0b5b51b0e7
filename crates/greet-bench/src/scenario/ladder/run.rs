//! The ladder, the original experiment: each server in turn verified (on a process of its
//! own), started, loaded at each concurrency level (one request per fresh connection) while
//! sampled, stopped.

use anyhow::{Context, Result};
use greet_load::Work;

use crate::harness::{mode, Ask, Harness, Start, Subject, Up};
use crate::scenario::kit::{Book, Run};
use greet_model::plan::package;
use greet_model::results::{Frame, Trial};
use greet_stats::paired::{self, Comparison, Figure};

use super::{Ladder, LadderServer, Level, Plan, Section};

/// One server (or target) of the ladder, on its endpoint.
#[derive(Debug, Clone)]
struct Entry {
    name: String,
    endpoint: String,
    subject: Subject,
}

/// The entries to run: each server on its endpoint, then each target.
fn entries(plan: &Plan) -> Vec<Entry> {
    let servers = plan.base.servers.iter().map(|spec| {
        let (name, endpoint) = match &spec.endpoint {
            Some(endpoint) => (
                format!("{}:{endpoint}", package(&spec.short)),
                endpoint.clone(),
            ),
            None => (package(&spec.short), plan.endpoint.clone()),
        };
        Entry {
            name,
            endpoint,
            subject: Subject::Server(spec.short.clone()),
        }
    });
    let targets = plan.base.foreign.targets.iter().map(|target| Entry {
        name: target.name.clone(),
        endpoint: plan.endpoint.clone(),
        subject: Subject::Target(target.clone()),
    });
    servers.chain(targets).collect()
}

impl Run for Ladder {
    /// Runs the ladder: each entry in turn, at every level.
    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        let (args, workers) = harness.server_args(&plan.base.server);
        book.open(Section {
            transport: harness.transport(),
            frame: Frame::new(plan.base.repeats),
            mode: mode(plan.base.place, plan.containers.as_ref()),
            delay_ms: plan.base.server.delay_ms,
            workers,
            blocking_threads: plan.base.server.blocking_threads,
            concurrency: plan.levels.clone(),
            timeout_s: harness.timeout().as_secs_f64(),
            servers: Vec::new(),
            comparisons: Vec::new(),
        });
        for entry in entries(plan) {
            book.section().servers.push(LadderServer {
                name: entry.name.clone(),
                endpoint: entry.endpoint.clone(),
                ..LadderServer::default()
            });
            book.once(&entry.name, async |book| {
                run_entry(harness, plan, &args, &entry, book).await
            })
            .await?;
        }
        Ok(())
    }

    fn compare(section: &mut Section) {
        section.comparisons = comparisons(&section.servers, &section.concurrency);
    }
}

/// The entry being run: the last one.
fn current<'a>(book: &'a mut Book<'_, Ladder>) -> &'a mut LadderServer {
    book.section()
        .servers
        .last_mut()
        .expect("pushed before it runs")
}

async fn run_entry(
    harness: &Harness,
    plan: &Plan,
    args: &[String],
    entry: &Entry,
    book: &mut Book<'_, Ladder>,
) -> Result<()> {
    let start = Start {
        containers: plan.containers.as_ref(),
        ..Start::new(&entry.subject, args, &plan.base.foreign, &entry.endpoint)
    };
    let mut up = harness.bring_up(plan.base.place, &start).await?;
    record_start(harness, entry, &up, current(book));
    for &concurrency in &plan.levels {
        let mut runs = Vec::new();
        for _ in 0..plan.base.repeats {
            let (run, note) = measure(harness, plan, entry, &up, concurrency)
                .await
                .with_context(|| format!("concurrency {concurrency}"))?;
            harness.say(
                &entry.name,
                &format!(
                    "c={concurrency}: {:.2}% ok, total {:.4} s, average {:.4} s{note}",
                    run.load.success_rate, run.load.total_s, run.load.average_s,
                ),
            );
            runs.push(run);
            if let Err(died) = up.ensure_alive() {
                record_level(book, concurrency, runs);
                return Err(died.context(format!("at concurrency {concurrency}")));
            }
        }
        record_level(book, concurrency, runs);
        book.save()?;
        crate::scenario::kit::settle(crate::scenario::kit::Leftover::Fresh).await;
    }
    harness.release(up).await
}

/// What is known of a server before its first level: where it listens, its start-up time
/// and idle memory, the node it runs on.
fn record_start(harness: &Harness, entry: &Entry, up: &Up, record: &mut LadderServer) {
    record.addr = Some(up.addr.to_string());
    let Some(server) = &up.server else { return };
    let startup = server.startup();
    record.node = up.node();
    record.startup_s = Some(startup.as_secs_f64());
    record.idle_rss_mib = up.idle_rss_mib();
    harness.say(
        &entry.name,
        &format!(
            "started in {:.1} ms (pid {})",
            startup.as_secs_f64() * 1000.0,
            server.pid()
        ),
    );
}

fn record_level(book: &mut Book<'_, Ladder>, concurrency: usize, runs: Vec<Trial>) {
    let record = current(book);
    record.levels.push(Level {
        concurrency,
        run: Trial::median_of(&runs),
        runs: if runs.len() > 1 { runs } else { Vec::new() },
    });
    record.fold_maxima();
}

/// One run of one level, with the server sampled throughout when the harness started it,
/// and how it was spread.
async fn measure(
    harness: &Harness,
    plan: &Plan,
    entry: &Entry,
    up: &Up,
    concurrency: usize,
) -> Result<(Trial, String)> {
    let work = Work::Fresh {
        concurrency,
        requests: concurrency,
    };
    let ask = Ask::new(&entry.endpoint, &plan.base.foreign.expect, work);
    let label = format!("{} c={concurrency}", entry.name);
    let loaded = harness.load(plan.base.place, up, &ask, label).await?;
    Ok((loaded.run(), loaded.note()))
}

/// Every pair of servers at each level, on per-run total time, when levels were repeated.
fn comparisons(servers: &[LadderServer], levels: &[usize]) -> Vec<Comparison> {
    levels
        .iter()
        .flat_map(|&level| {
            let samples: Vec<(String, Vec<f64>)> = servers
                .iter()
                .filter_map(|s| {
                    let l = s.levels.iter().find(|l| l.concurrency == level)?;
                    (!l.runs.is_empty()).then(|| {
                        let totals = l.runs.iter().map(|r| r.load.total_s).collect();
                        (format!("{} c={level}", s.name), totals)
                    })
                })
                .collect();
            paired::pairwise(Figure::TotalS, &samples)
        })
        .collect()
}
