//! Workloads: each profile on every server (over TLS for `json-tls`): each server started
//! and warmed up once for the profile, then measured in blocks, a slice of each server a
//! block in a Williams order (each server in each place, and after each other, alike), so
//! that a slow spell of the machine falls on a block's servers alike and cancels in their
//! ratio. Besides throughput and latency,
//! each run keeps the bytes per answer as they came, the server's CPU per request (its user
//! and system time over the load, over the load's requests) and the load generator's.

use anyhow::Result;
use greet_load::{Expect, Stop, Wire, Work};

use crate::harness::{server_args, Ask, Harness, Start, Subject};
use crate::scenario::kit::{Book, Members, Run};
use greet_model::plan::{self, Measure, Placement, BLOCKING_THREADS};
use greet_model::results::{block_throughputs, per_request_us, Frame, Repeated, Trial};
use greet_stats::paired::{self, Figure};
use greet_stats::{distinct, max_of, median};

use super::{Plan, Profile, ProfileComparisons, Section, WorkloadCell, Workloads};

impl Run for Workloads {
    /// Runs workloads: every profile on every server, a repeat at a time.
    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        let Measure {
            connections: concurrency,
            duration,
            warmup,
        } = plan.measure;
        let repeats = plan.base.repeats;
        let workers = harness.workers(None);
        let mut profiles = Vec::new();
        for &profile in &plan.profiles {
            let wire = Wire::new(profile.protocol(), &greet_probe::tls::Trust::Any)?
                .resuming(true)
                .websocket(profile.websocket());
            let message = (profile.headers(), profile.body(plan.upload_bytes));
            profiles.push((profile, wire, message));
        }
        // A server named twice is measured twice, the second as a server of its own (an A/A).
        let subjects = Subject::all(&plan.base);
        book.open(Section {
            frame: Frame {
                looks: plan.budget.looks(),
                ..Frame::new(repeats)
            },
            workers,
            concurrency,
            duration_s: duration.as_secs_f64(),
            warmup_s: warmup.as_secs_f64(),
            upload_bytes: plan.upload_bytes,
            upload_slice_s: plan.slice(Profile::Upload).as_secs_f64(),
            cells: subjects
                .iter()
                .flat_map(|subject| {
                    let server = subject.name();
                    plan.profiles
                        .iter()
                        .map(move |&p| WorkloadCell::new(server.clone(), p))
                })
                .collect(),
            ..Section::default()
        });
        let args = server_args(0, workers, BLOCKING_THREADS);
        // The budget spreads over the profiles: what one leaves, the next may use.
        let started = std::time::Instant::now();
        let until = |p: usize| {
            started
                + plan
                    .budget
                    .time
                    .mul_f64((p + 1) as f64 / profiles.len() as f64)
        };
        for (p, (profile, wire, (headers, body))) in profiles.iter().enumerate() {
            let path = profile.path();
            let duration = plan.slice(*profile);
            let ask = |stop| {
                let work = Work::Sessions {
                    users: concurrency,
                    stop,
                    streams: 1,
                    pipeline: 1,
                    requests_per_connection: profile.requests_per_connection(),
                };
                Ask {
                    wire: Some(wire),
                    message: Some((headers, body.as_ref())),
                    ..Ask::new(path, &Expect::Greeting, work)
                }
            };
            // Every server started and warmed once for the profile, then measured in blocks.
            let mut members = Members::new();
            for subject in &subjects {
                let name = subject.name();
                let foreign = plan::Foreign::default();
                members
                    .start(book, &name, async || {
                        // The first start of a subject passes the contract (over HTTP/1.1, on
                        // the greeting); each load then checks every answer it gets.
                        let start = Start {
                            checked: p > 0,
                            wire: Some(wire),
                            ..Start::new(subject, &args, &foreign, greet_core::paths::GREETINGS)
                        };
                        let up = harness.bring_up(Placement::Harness, &start).await?;
                        if !warmup.is_zero() {
                            let label = format!("{name} {profile} warm-up");
                            let warm = ask(Stop::After(warmup));
                            harness.load(Placement::Harness, &up, &warm, label).await?;
                        }
                        Ok(up)
                    })
                    .await?;
            }
            let figure = format!("{profile} throughput");
            let decided = |book: &mut Book<'_, Self>| book.decided(|f| f == figure);
            members
                .blocks(
                    book,
                    (repeats, plan.budget, until(p)),
                    decided,
                    async |book, s, block, up| {
                        let name = subjects[s].name();
                        let label = format!("{name} {profile} #{}", block + 1);
                        let loaded = harness
                            .measure(Placement::Harness, up, &ask(Stop::After(duration)), label)
                            .await?;
                        up.ensure_alive()?;
                        let run = loaded.run();
                        let client_cpu_us = per_request_us(loaded.client_cpu_s, run.load.requests);
                        harness.say(
                            &name,
                            &format!(
                                "{profile} block {}: {:.1} req/s, {:.2}% ok",
                                block + 1,
                                run.load.requests_per_s,
                                run.load.success_rate
                            ),
                        );
                        let cell = &mut book.section().cells[s * profiles.len() + p];
                        cell.runs.push(run);
                        cell.client_cpu_us_each.extend(client_cpu_us);
                        summarize(cell);
                        Ok(())
                    },
                )
                .await?;
            members.release(harness, book).await?;
        }
        Ok(())
    }

    fn compare(section: &mut Section) {
        fold(section);
    }
}

/// A cell's figures from its runs.
fn summarize(cell: &mut WorkloadCell) {
    let r = Repeated::of(&cell.runs);
    let med = |f: fn(&Trial) -> f64| median(&cell.runs.iter().map(f).collect::<Vec<_>>());
    let server: Vec<f64> = cell
        .runs
        .iter()
        .filter_map(Trial::server_us_per_request)
        .collect();
    cell.requests_per_s = r.requests_per_s;
    cell.success_rate = r.success_rate;
    cell.bytes_per_answer = r.bytes_per_answer;
    cell.p50_ms = med(|r| r.load.latency_ms.p50);
    cell.p99_ms = med(|r| r.load.latency_ms.p99);
    cell.server_cpu_us = (!server.is_empty()).then(|| median(&server));
    cell.client_cpu_us =
        (!cell.client_cpu_us_each.is_empty()).then(|| median(&cell.client_cpu_us_each));
    cell.rss_max_mib = cell
        .runs
        .iter()
        .map(|r| r.server.rss_max_mib)
        .fold(None, max_of);
}

/// Each cell's share of its profile's best, and every pair of servers per profile.
fn fold(section: &mut Section) {
    let profiles = distinct(section.cells.iter().map(|c| c.profile));
    section.comparisons = profiles
        .into_iter()
        .map(|profile| {
            let measured = |c: &&mut WorkloadCell| c.profile == profile && !c.runs.is_empty();
            // The best of the cell's league: at the defaults, or tuned.
            let mut bests = [0.0, 0.0];
            for cell in section.cells.iter_mut().filter(measured) {
                let league = &mut bests[usize::from(plan::is_tuned(&cell.server))];
                *league = f64::max(*league, cell.requests_per_s.median);
            }
            let mut samples = Vec::new();
            for cell in section.cells.iter_mut().filter(measured) {
                let best = bests[usize::from(plan::is_tuned(&cell.server))];
                cell.share_of_best = (best > 0.0).then(|| cell.requests_per_s.median / best);
                samples.push((cell.server.clone(), block_throughputs(&cell.runs)));
            }
            ProfileComparisons {
                profile,
                comparisons: paired::pairwise(Figure::RequestsPerS, &samples),
            }
        })
        .collect();
}
