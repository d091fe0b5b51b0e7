//! Loops, the JMeter experiment: T virtual users each send L requests back to back over their
//! own keep-alive connection; servers are compared on per-run throughput.
//!
//! Repeats are the outer loop, then servers in a Williams order ([`in_order`]): each repeat
//! starts every server afresh and runs every shape on it, so a slow spell of the machine hits
//! every server alike, where one server's runs back to back would hand the drift to the
//! comparison between servers.

use anyhow::Result;
use greet_load::Stop;

use crate::harness::{Ask, Harness, Start, Subject};
use crate::scenario::kit::{in_order, Book, Run};
use greet_model::plan::Placement;
use greet_model::results::{block_throughputs, Frame, Repeated};
use greet_stats::paired::{self, Figure};

use super::{LoopServer, LoopShape, Loops, Plan, Section};

impl Run for Loops {
    /// Runs loops: every shape on every server, a repeat at a time.
    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        let (args, workers) = harness.server_args(&plan.base.server);
        book.open(Section {
            transport: harness.transport(),
            frame: Frame::new(plan.base.repeats),
            delay_ms: plan.base.server.delay_ms,
            workers,
            shapes: plan
                .shapes
                .iter()
                .map(|&(users, loops)| LoopShape {
                    users,
                    loops,
                    ..LoopShape::default()
                })
                .collect(),
        });
        let subjects = Subject::all(&plan.base);
        for repeat in 1..=plan.base.repeats {
            for subject in in_order(&subjects, repeat - 1) {
                let name = subject.name();
                let one = Repeat {
                    subject,
                    name: &name,
                    args: &args,
                    repeat,
                };
                book.step(&name, async |book| {
                    run_repeat(harness, plan, &one, book).await
                })
                .await?;
            }
        }
        Ok(())
    }

    /// Every pair of servers in each shape, on per-run throughput.
    fn compare(section: &mut Section) {
        for shape in &mut section.shapes {
            let samples: Vec<(String, Vec<f64>)> = shape
                .servers
                .iter()
                .map(|s| (s.name.clone(), block_throughputs(&s.runs)))
                .collect();
            shape.comparisons = paired::pairwise(Figure::RequestsPerS, &samples);
        }
    }
}

/// One repeat of one server.
struct Repeat<'a> {
    subject: &'a Subject,
    name: &'a str,
    args: &'a [String],
    repeat: usize,
}

/// Repeat `one` of every shape on a fresh process of its subject (checked in the first).
async fn run_repeat(
    harness: &Harness,
    plan: &Plan,
    one: &Repeat<'_>,
    book: &mut Book<'_, Loops>,
) -> Result<()> {
    let (name, repeat) = (one.name, one.repeat);
    let path = greet_core::paths::GREETINGS;
    let start = Start {
        checked: repeat > 1,
        ..Start::new(one.subject, one.args, &plan.base.foreign, path)
    };
    let mut up = harness.bring_up(Placement::Harness, &start).await?;
    for (index, &(users, loops)) in plan.shapes.iter().enumerate() {
        let work = harness.sessions(users, Stop::Each(loops));
        let ask = Ask::new(path, &plan.base.foreign.expect, work);
        let label = format!("{name} {users}x{loops} #{repeat}");
        let run = harness
            .measure(Placement::Harness, &up, &ask, label)
            .await?
            .run();
        harness.say(
            name,
            &format!(
                "{users} users x {loops} loops, run {repeat}: {:.1} req/s, {:.2}% ok",
                run.load.requests_per_s, run.load.success_rate
            ),
        );
        let shape = &mut book.section().shapes[index];
        let at = match shape.servers.iter().position(|s| s.name == name) {
            Some(at) => at,
            None => {
                shape.servers.push(LoopServer {
                    name: name.to_owned(),
                    ..LoopServer::default()
                });
                shape.servers.len() - 1
            }
        };
        let record = &mut shape.servers[at];
        record.runs.push(run);
        record.requests_per_s = Repeated::of(&record.runs).requests_per_s;
        book.save()?;
        up.ensure_alive()?;
        crate::scenario::kit::settle(crate::scenario::kit::Leftover::KeepAlive).await;
    }
    harness.release(up).await
}
