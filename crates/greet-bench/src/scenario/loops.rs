//! Loops, the JMeter experiment: T virtual users each send L requests back to back over their
//! own keep-alive connection; servers are compared on per-run throughput.
//!
//! Repeats are the outer loop, then servers: each repeat starts every server afresh and runs
//! every shape on it, so a slow spell of the machine hits every server alike, where one
//! server's runs back to back would hand the drift to the comparison between servers.

use anyhow::Result;
use greet_load::{Stop, Work};

use crate::harness::{Ask, Harness, Start, Subject};
use crate::plan::{self, Placement};
use crate::results::{throughputs, LoopServer, LoopShape, Loops, Repeated, Results};
use crate::stats::mann_whitney::{self, Figure};

/// Runs loops into `results.loops`; false when a server failed.
pub(crate) async fn run(
    harness: &Harness,
    plan: &plan::Loops,
    results: &mut Results,
) -> Result<bool> {
    let (args, workers) = harness.server_args(&plan.server);
    results.loops = Some(Loops {
        transport: harness.transport(),
        delay_ms: plan.server.delay_ms,
        workers,
        repeats: plan.repeats,
        shapes: plan
            .shapes
            .iter()
            .map(|&(users, loops)| LoopShape {
                users,
                loops,
                ..LoopShape::default()
            })
            .collect(),
        failures: Vec::new(),
    });
    let subjects = Subject::all(&plan.servers, &plan.foreign);
    let shorts: Vec<&str> = plan.servers.iter().map(String::as_str).collect();
    let targets = !plan.foreign.targets.is_empty();
    harness.preflight(Placement::Harness, &shorts, targets, None)?;
    let mut failed: Vec<String> = Vec::new();
    for repeat in 1..=plan.repeats {
        for subject in &subjects {
            let name = subject.name();
            if failed.contains(&name) {
                continue;
            }
            let one = Repeat {
                subject,
                name: &name,
                args: &args,
                repeat,
            };
            let outcome = run_repeat(harness, plan, &one, results).await;
            let loops = section(results);
            if let Err(err) = outcome {
                loops
                    .failures
                    .push(super::failure("loops", name.clone(), &err));
                failed.push(name);
            }
            for shape in &mut loops.shapes {
                let samples: Vec<(String, Vec<f64>)> = shape
                    .servers
                    .iter()
                    .map(|s| (s.name.clone(), throughputs(&s.runs)))
                    .collect();
                shape.comparisons = mann_whitney::pairwise(Figure::RequestsPerS, &samples);
            }
            harness.save(results)?;
        }
    }
    Ok(failed.is_empty())
}

fn section(results: &mut Results) -> &mut Loops {
    results.loops.as_mut().expect("set when loops start")
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
    plan: &plan::Loops,
    one: &Repeat<'_>,
    results: &mut Results,
) -> Result<()> {
    let (name, repeat) = (one.name, one.repeat);
    let target = greet_core::paths::GREETINGS;
    let start = Start {
        checked: repeat > 1,
        ..Start::new(one.subject, one.args, &plan.foreign, target)
    };
    let mut up = harness.bring_up(Placement::Harness, &start).await?;
    for (index, &(users, loops)) in plan.shapes.iter().enumerate() {
        let work = Work::Sessions {
            users,
            stop: Stop::Each(loops),
            streams: harness.common.streams,
            pipeline: harness.common.pipeline,
        };
        let ask = Ask::new(target, &plan.foreign.expect, work);
        let label = format!("{name} {users}x{loops} #{repeat}");
        let run = harness
            .load(Placement::Harness, &up, &ask, label)
            .await?
            .run();
        harness.say(
            name,
            &format!(
                "{users} users x {loops} loops, run {repeat}: {:.1} req/s, {:.2}% ok",
                run.load.requests_per_s, run.load.success_rate
            ),
        );
        let shape = &mut section(results).shapes[index];
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
        harness.save(results)?;
        up.ensure_alive()?;
        super::settle(super::Leftover::KeepAlive).await;
    }
    harness.release(up).await
}
