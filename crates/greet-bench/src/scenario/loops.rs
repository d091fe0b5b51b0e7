//! Loops, the JMeter experiment: T virtual users each send L requests back to back over their
//! own keep-alive connection; servers are compared on per-run throughput.
//!
//! Repeats are the outer loop, then servers: each repeat starts every server afresh and runs
//! every shape on it, so a slow spell of the machine hits every server alike, where one
//! server's runs back to back would hand the drift to the comparison between servers.

use anyhow::Result;

use crate::compare::{self, Figure};
use crate::harness::{server_args, Harness, Subject};
use crate::load::{Expect, Sessions, Stop};
use crate::plan;
use crate::results::{throughputs, LoopServer, LoopShape, Loops, Repeated, Results};

/// Runs loops into `results.loops`; false when a server failed.
pub async fn run(harness: &Harness, plan: &plan::Loops, results: &mut Results) -> Result<bool> {
    let workers = harness.workers(plan.workers);
    results.loops = Some(Loops {
        transport: harness.transport(),
        delay_ms: plan.delay_ms,
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
    let mut failed: Vec<String> = Vec::new();
    for repeat in 1..=plan.repeats {
        for subject in &subjects {
            let name = subject.name();
            if failed.contains(&name) {
                continue;
            }
            let outcome = run_repeat(harness, plan, workers, subject, &name, repeat, results).await;
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
                shape.comparisons = compare::pairwise(Figure::RequestsPerS, &samples);
            }
            harness.save(results)?;
        }
    }
    Ok(failed.is_empty())
}

fn section(results: &mut Results) -> &mut Loops {
    results.loops.as_mut().expect("set when loops start")
}

/// Repeat `repeat` of every shape on a fresh process of `subject` (checked in the first).
async fn run_repeat(
    harness: &Harness,
    plan: &plan::Loops,
    workers: usize,
    subject: &Subject,
    name: &str,
    repeat: usize,
    results: &mut Results,
) -> Result<()> {
    let args = server_args(plan.delay_ms, workers, plan::BLOCKING_THREADS);
    let target = greet_core::paths::GREETINGS;
    let mut up = harness
        .bring_up(subject, &args, &plan.foreign, target, repeat > 1)
        .await?;
    for (index, &(users, loops)) in plan.shapes.iter().enumerate() {
        let sessions = Sessions {
            addr: up.addr,
            target: target.to_owned(),
            expect: Expect::for_target(target, &plan.foreign.expect),
            users,
            stop: Stop::Each(loops),
            timeout: harness.timeout(),
            wire: harness.wire.clone(),
            streams: harness.common.streams,
        };
        let label = format!("{name} {users}x{loops} #{repeat}");
        let (run, _) = harness.keep_alive(&up, &sessions, label).await;
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
