//! Protocols: each server loaded with keep-alive connections at delay 0 over HTTP/1.1, h2c,
//! HTTP/1.1 over TLS and HTTP/2 over TLS, each protocol on a server of its own (over TLS with
//! `--tls-self-signed`), all started and warmed up first, then measured in blocks: every
//! server in every case once a block, in a Williams order, so a slow spell of the machine
//! falls on a block alike. With a list of `--streams`, each HTTP/2 protocol is
//! measured at each (a case: `h2c, 10 streams`). Each case's throughput is a fraction of the
//! same server's HTTP/1.1 in the same block, and the servers are compared on those
//! fractions, block by block: which keeps more of its HTTP/1.1.

use anyhow::Result;
use greet_load::{Expect, Stop, Wire, Work};

use crate::harness::{server_args, Ask, Harness, Start, Subject};
use crate::scenario::kit::{Book, Members, Run};
use greet_model::plan::{self, Measure, Placement, Protocol, BLOCKING_THREADS};
use greet_model::results::{block_throughputs, Frame, Gain, Repeated};
use greet_stats::paired::{self, Figure};

use super::report::{case as protocol_case, cases as protocol_cases};
use super::{Plan, ProtocolCell, ProtocolComparisons, ProtocolGain, Protocols, Section};

impl Run for Protocols {
    /// Runs protocols: every server over every case, a block at a time.
    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        let Measure {
            connections: concurrency,
            duration,
            warmup,
        } = plan.measure;
        let repeats = plan.base.repeats;
        let workers = harness.workers(None);
        let cases = protocol_cases(&plan.protocols, &harness.common.streams_each);
        // A server named twice is measured as two (`greet-hyper#2`): an A/A check.
        let subjects = Subject::all(&plan.base);
        let mut wires = Vec::new();
        for &(protocol, streams) in &cases {
            let wire = Wire::new(protocol, &greet_probe::tls::Trust::Any)?;
            wires.push((wire.resuming(harness.common.tls_resume), streams));
        }
        book.open(Section {
            frame: Frame {
                looks: plan.budget.looks(),
                ..Frame::new(repeats)
            },
            protocols: plan.protocols.clone(),
            streams: harness.common.streams,
            streams_each: harness.common.streams_each.clone(),
            workers,
            concurrency,
            duration_s: duration.as_secs_f64(),
            warmup_s: warmup.as_secs_f64(),
            cells: (subjects.iter())
                .flat_map(|subject| {
                    let name = subject.name();
                    cases.iter().map(move |&(protocol, streams)| ProtocolCell {
                        server: name.clone(),
                        protocol,
                        streams,
                        ..ProtocolCell::default()
                    })
                })
                .collect(),
            ..Section::default()
        });
        let target = greet_core::paths::GREETINGS;
        let args = server_args(0, workers, BLOCKING_THREADS);
        // Every server in every case started and warmed once, then measured in blocks: a
        // protocol and the same server's HTTP/1.1 in the same block, seconds apart.
        let ask = |wire, streams: usize, stop| {
            let work = Work::Sessions {
                users: concurrency,
                stop,
                streams,
                pipeline: harness.common.pipeline,
                requests_per_connection: harness.common.requests_per_connection,
            };
            Ask {
                wire: Some(wire),
                ..Ask::new(target, &Expect::Greeting, work)
            }
        };
        let mut members = Members::new();
        let mut cells = Vec::new();
        for (p, (wire, streams)) in wires.iter().enumerate() {
            for (s, subject) in subjects.iter().enumerate() {
                let name = subject.name();
                let case = protocol_case(wire.protocol, *streams);
                let foreign = plan::Foreign::default();
                members
                    .start(book, &name, async || {
                        let start = Start {
                            checked: p > 0,
                            wire: Some(wire),
                            ..Start::new(subject, &args, &foreign, target)
                        };
                        let up = harness.bring_up(Placement::Harness, &start).await?;
                        if !warmup.is_zero() {
                            let warm = ask(wire, *streams, Stop::After(warmup));
                            let label = format!("{name} {case} warm-up");
                            harness.load(Placement::Harness, &up, &warm, label).await?;
                        }
                        Ok(up)
                    })
                    .await?;
                cells.push((s, p));
            }
        }
        let until = std::time::Instant::now() + plan.budget.time;
        let decided = |book: &mut Book<'_, Self>| book.decided(|_| true);
        members
            .blocks(
                book,
                (repeats, plan.budget, until),
                decided,
                async |book, m, block, up| {
                    let (s, p) = cells[m];
                    let (wire, streams) = &wires[p];
                    let name = subjects[s].name();
                    let case = protocol_case(wire.protocol, *streams);
                    let label = format!("{name} {case} #{}", block + 1);
                    let measured = ask(wire, *streams, Stop::After(duration));
                    let run = harness
                        .measure(Placement::Harness, up, &measured, label)
                        .await?
                        .run();
                    up.ensure_alive()?;
                    harness.say(
                        &name,
                        &format!(
                            "{case} block {}: {:.1} req/s, {:.2}% ok",
                            block + 1,
                            run.load.requests_per_s,
                            run.load.success_rate
                        ),
                    );
                    let cell = &mut book.section().cells[s * wires.len() + p];
                    cell.runs.push(run);
                    let r = Repeated::of(&cell.runs);
                    cell.requests_per_s = r.requests_per_s;
                    cell.success_rate = r.success_rate;
                    cell.cpu_avg_pct = r.cpu_avg_pct;
                    Ok(())
                },
            )
            .await?;
        members.release(harness, book).await
    }

    fn compare(section: &mut Section) {
        fold(section);
    }
}

/// Each server's protocols against its HTTP/1.1, and the servers against each other.
fn fold(section: &mut Section) {
    let http1 = Protocol::Http1;
    let cells = &section.cells;
    let of = |server: &str, (protocol, streams): (Protocol, usize)| {
        cells
            .iter()
            .find(|c| c.server == server && c.protocol == protocol && c.streams == streams)
    };
    let mut servers: Vec<&str> = cells.iter().map(|c| c.server.as_str()).collect();
    servers.dedup();
    let mut gains = Vec::new();
    let mut comparisons = Vec::new();
    for (protocol, streams) in section.cases().into_iter().filter(|c| c.0 != http1) {
        let case = protocol_case(protocol, streams);
        let mut fractions = Vec::new();
        for &server in &servers {
            let (Some(cell), Some(base)) =
                (of(server, (protocol, streams)), of(server, (http1, 1)))
            else {
                continue;
            };
            if cell.runs.is_empty() || base.runs.is_empty() {
                continue;
            }
            gains.push(ProtocolGain {
                server: server.to_owned(),
                protocol,
                streams,
                gain: Gain::of((&case, &cell.runs), (http1.name(), &base.runs)),
            });
            // Run by run within a repeat: the same spell of the machine on both; a run the
            // machine disturbed, on either side, leaves its block out.
            let per_run: Vec<f64> = block_throughputs(&cell.runs)
                .iter()
                .zip(block_throughputs(&base.runs))
                .map(|(p, h)| if h > 0.0 { p / h } else { 0.0 })
                .collect();
            fractions.push((server.to_owned(), per_run));
        }
        comparisons.push(ProtocolComparisons {
            protocol,
            streams,
            comparisons: paired::pairwise(Figure::ShareOfHttp1, &fractions),
        });
    }
    section.of_http1 = gains;
    section.comparisons = comparisons;
}
