//! The ladder, the original experiment: each server in turn verified (on a process of its
//! own), started, loaded at each concurrency level (one request per fresh connection) while
//! sampled, stopped. With `--repeats`, the whole ladder again, each server started afresh:
//! repeats are blocks, the servers in a Williams order in each.

use anyhow::{Context, Result};
use greet_load::Work;

use crate::harness::{mode, Ask, Harness, Start, Subject, Up};
use crate::scenario::kit::{in_order, Book, Run};
use greet_model::plan::package;
use greet_model::results::{Frame, Trial};
use greet_stats::paired::{self, Comparison, Figure};

use super::{Ladder, LadderServer, Plan, Section};

/// One server (or target) of the ladder, on its endpoint.
#[derive(Debug, Clone)]
struct Entry {
    name: String,
    endpoint: String,
    subject: Subject,
}

/// The entries to run: each server on its endpoint, then each target. A server named again
/// on the same endpoint is measured as one more (`greet-hyper#2`): an A/A check.
fn entries(plan: &Plan) -> Vec<Entry> {
    let specs = &plan.base.servers;
    let servers = specs.iter().enumerate().map(|(i, spec)| {
        let (name, endpoint) = match &spec.endpoint {
            Some(endpoint) => (
                format!("{}:{endpoint}", package(&spec.short)),
                endpoint.clone(),
            ),
            None => (package(&spec.short), plan.endpoint.clone()),
        };
        let before = (specs[..i].iter())
            .filter(|s| s.short == spec.short && s.endpoint == spec.endpoint)
            .count();
        let (name, subject) = match before {
            0 => (name, Subject::Server(spec.short.clone())),
            n => (
                format!("{name}#{}", n + 1),
                Subject::Again(spec.short.clone(), n + 1),
            ),
        };
        Entry {
            name,
            endpoint,
            subject,
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
    /// Runs the ladder: each entry at every level, a repeat at a time.
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
        let entries = entries(plan);
        for entry in &entries {
            book.section().servers.push(LadderServer {
                name: entry.name.clone(),
                endpoint: entry.endpoint.clone(),
                ..LadderServer::default()
            });
        }
        // Repeats outermost, each entry started afresh in each: a repeat is a block, every
        // server close together in time (in a Williams order), so a drift of the machine
        // falls on all alike where one server's repeats back to back would hand it to the
        // comparison between servers.
        for repeat in 0..plan.base.repeats.max(1) {
            for entry in in_order(&entries, repeat) {
                book.step(&entry.name, async |book| {
                    run_entry(harness, plan, &args, entry, repeat, book).await
                })
                .await?;
            }
        }
        Ok(())
    }

    fn compare(section: &mut Section) {
        section.comparisons = comparisons(&section.servers, &section.concurrency);
    }
}

/// The record of entry `name`.
fn record<'a>(book: &'a mut Book<'_, Ladder>, name: &str) -> &'a mut LadderServer {
    (book.section().servers.iter_mut())
        .find(|s| s.name == name)
        .expect("pushed before it runs")
}

/// Repeat `repeat` (from 0) of `entry`: started (and verified, the first time), loaded at
/// each level, stopped.
async fn run_entry(
    harness: &Harness,
    plan: &Plan,
    args: &[String],
    entry: &Entry,
    repeat: usize,
    book: &mut Book<'_, Ladder>,
) -> Result<()> {
    let start = Start {
        containers: plan.containers.as_ref(),
        checked: repeat > 0,
        ..Start::new(&entry.subject, args, &plan.base.foreign, &entry.endpoint)
    };
    let mut up = harness.bring_up(plan.base.place, &start).await?;
    let repeated = plan.base.repeats > 1;
    record_start(harness, entry, &up, repeated, record(book, &entry.name));
    for (index, &concurrency) in plan.levels.iter().enumerate() {
        let (run, note) = measure(harness, plan, entry, &up, concurrency)
            .await
            .with_context(|| format!("concurrency {concurrency}"))?;
        let of = if repeated {
            format!(", run {}", repeat + 1)
        } else {
            String::new()
        };
        harness.say(
            &entry.name,
            &format!(
                "c={concurrency}{of}: {:.2}% ok, total {:.4} s, average {:.4} s{note}",
                run.load.success_rate, run.load.total_s, run.load.average_s,
            ),
        );
        record(book, &entry.name).add(index, concurrency, run, repeated);
        up.ensure_alive()
            .with_context(|| format!("at concurrency {concurrency}"))?;
        book.save()?;
        crate::scenario::kit::settle(crate::scenario::kit::Leftover::Fresh).await;
    }
    harness.release(up).await
}

/// What is known of a server before its first level: where it listens, its start-up time
/// (each start's, where `repeated`) and idle memory (the first start's), the node it runs on.
fn record_start(
    harness: &Harness,
    entry: &Entry,
    up: &Up,
    repeated: bool,
    record: &mut LadderServer,
) {
    record.addr = Some(up.addr.to_string());
    let Some(server) = &up.server else { return };
    let startup = server.startup().as_secs_f64();
    record.node = up.node();
    if repeated {
        record.startups_s.push(startup);
    }
    record.startup_s = Some(if repeated {
        greet_stats::median(&record.startups_s)
    } else {
        startup
    });
    if record.idle_rss_mib.is_none() {
        record.idle_rss_mib = up.idle_rss_mib();
    }
    harness.say(
        &entry.name,
        &format!(
            "started in {:.1} ms (pid {})",
            startup * 1000.0,
            server.pid()
        ),
    );
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
