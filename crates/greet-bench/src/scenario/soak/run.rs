//! Soak, the siege / ab experiment: at each concurrency, keep-alive load for a duration (or a
//! request count) on the async and on the blocking endpoint, zero delay, each endpoint on a
//! freshly started server whose threads are counted throughout: live, peak, and every thread
//! id seen since start (threads started).
//!
//! Repeats are the outer loop, then servers (in a Williams order, [`in_order`]), then
//! endpoints: each repeat starts every server
//! afresh for each endpoint and runs every concurrency on it, so a slow spell of the machine
//! hits every server alike, where one server's runs back to back would hand the drift to the
//! comparison between servers.
use std::collections::BTreeSet;

use anyhow::Result;
use greet_load::Stop;

use crate::harness::{Ask, Harness, Start, Subject};
use crate::scenario::kit::{in_order, Book, Run};
use greet_bed::sample;
use greet_model::results::{block_throughputs, Frame, Repeated};
use greet_stats::paired::{Comparison, Figure};
use greet_stats::{distinct, max_of};

use super::{Plan, Section, Soak, SoakBound, SoakCell};

impl Run for Soak {
    /// Runs soak: every endpoint of every server, a repeat at a time.
    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        let (args, workers) = harness.server_args(&plan.base.server);
        book.open(Section {
            transport: harness.transport(),
            frame: Frame::new(plan.base.repeats),
            duration_s: match plan.bound {
                SoakBound::Duration(d) => Some(d.as_secs_f64()),
                SoakBound::Requests(_) => None,
            },
            requests: match plan.bound {
                SoakBound::Requests(n) => Some(n),
                SoakBound::Duration(_) => None,
            },
            delay_ms: plan.base.server.delay_ms,
            workers,
            blocking_threads: plan.base.server.blocking_threads,
            ..Section::default()
        });
        let subjects = Subject::all(&plan.base);
        for repeat in 1..=plan.base.repeats {
            for subject in in_order(&subjects, repeat - 1) {
                let name = subject.name();
                for (i, endpoint) in plan.endpoints.iter().enumerate() {
                    let one = Endpoint {
                        subject,
                        name: &name,
                        endpoint,
                        check: i == 0 && repeat == 1,
                        repeat,
                    };
                    let who = format!("{name} {endpoint}");
                    book.step(&who, async |book| {
                        run_endpoint(harness, plan, &one, &args, book).await
                    })
                    .await?;
                }
            }
        }
        Ok(())
    }

    fn compare(section: &mut Section) {
        section.comparisons = comparisons(&section.cells);
    }
}

struct Endpoint<'a> {
    subject: &'a Subject,
    name: &'a str,
    endpoint: &'a str,
    check: bool,
    repeat: usize,
}

async fn run_endpoint(
    harness: &Harness,
    plan: &Plan,
    one: &Endpoint<'_>,
    args: &[String],
    book: &mut Book<'_, Soak>,
) -> Result<()> {
    // The endpoint after the first is checked on a server of the workspace by the contract
    // already passed; a target, which is not restarted, is checked once.
    let start = Start {
        checked: !one.check,
        ..Start::new(one.subject, args, &plan.base.foreign, one.endpoint)
    };
    let mut up = harness.bring_up(plan.base.place, &start).await?;
    let pid = up.pid();
    let threads_at_start = pid.and_then(sample::read).map(|r| r.threads);
    let mut seen: BTreeSet<u32> = pid
        .map(greet_probe::procfs::tasks)
        .unwrap_or_default()
        .into_iter()
        .collect();
    let stop = match plan.bound {
        SoakBound::Duration(d) => Stop::After(d),
        SoakBound::Requests(n) => Stop::Total(n),
    };
    for &concurrency in &plan.levels {
        let work = harness.sessions(concurrency, stop);
        let ask = Ask::new(one.endpoint, &plan.base.foreign.expect, work);
        let repeat = one.repeat;
        let label = format!("{} {} c={concurrency}", one.name, one.endpoint);
        let loaded = harness.load(plan.base.place, &up, &ask, label).await?;
        let (run, maxima) = (loaded.run(), loaded.maxima());
        harness.say(
            one.name,
            &format!(
                "{} c={concurrency} run {repeat}: {:.1} req/s, {:.2}% ok, {} threads",
                one.endpoint,
                run.load.requests_per_s,
                run.load.success_rate,
                maxima
                    .threads_last
                    .map_or("-".to_owned(), |t| t.to_string())
            ),
        );
        let cells = &mut book.section().cells;
        let at = cells
            .iter()
            .position(|c| {
                c.server == one.name && c.endpoint == one.endpoint && c.concurrency == concurrency
            })
            .unwrap_or_else(|| {
                cells.push(SoakCell {
                    server: one.name.to_owned(),
                    endpoint: one.endpoint.to_owned(),
                    concurrency,
                    threads_at_start,
                    ..SoakCell::default()
                });
                cells.len() - 1
            });
        let cell = &mut cells[at];
        cell.node = up.node();
        if pid.is_some() {
            // Each repeat is a fresh process: its own thread ids, the most of any repeat kept.
            seen.extend(&maxima.thread_ids);
            cell.threads_live = maxima.threads_last;
            cell.threads_peak = cell.threads_peak.max(maxima.threads);
            cell.threads_total = cell.threads_total.max(Some(seen.len() as u64));
        }
        cell.cpu_max_pct = max_of(cell.cpu_max_pct, run.server.cpu_max_pct);
        cell.rss_max_mib = max_of(cell.rss_max_mib, run.server.rss_max_mib);
        cell.runs.push(run);
        let r = Repeated::of(&cell.runs);
        cell.hits = r.hits;
        cell.success_rate = r.success_rate;
        cell.requests_per_s = r.requests_per_s;
        cell.average_s = r.average_s;
        cell.cpu_avg_pct = r.cpu_avg_pct;
        cell.bytes_per_answer = r.bytes_per_answer;
        book.save()?;
        up.ensure_alive()?;
        crate::scenario::kit::settle(crate::scenario::kit::Leftover::KeepAlive).await;
    }
    harness.release(up).await
}

/// Every pair of servers at each endpoint and concurrency.
fn comparisons(cells: &[SoakCell]) -> Vec<Comparison> {
    distinct(cells.iter().map(|c| (c.endpoint.as_str(), c.concurrency)))
        .into_iter()
        .flat_map(|(endpoint, concurrency)| {
            let samples: Vec<(String, Vec<f64>)> = cells
                .iter()
                .filter(|c| c.endpoint == endpoint && c.concurrency == concurrency)
                .map(|c| {
                    (
                        format!("{} {endpoint} c={concurrency}", c.server),
                        block_throughputs(&c.runs),
                    )
                })
                .collect();
            crate::scenario::kit::contenders_pairwise(Figure::RequestsPerS, &samples)
        })
        .collect()
}
