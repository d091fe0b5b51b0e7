//! Loops, the JMeter experiment: T virtual users each send L requests back to back over their
//! own keep-alive connection; each shape is run `repeats` times against one server process,
//! and servers are compared on per-run throughput.

use anyhow::Result;

use crate::bench::{server_args, Bench};
use crate::compare::{self, Figure};
use crate::load::{Expect, Sessions, Stop};
use crate::plan::{self, package};
use crate::results::{throughputs, LoopServer, LoopShape, Loops, Repeated, Results};

/// Runs loops into `results.loops`; false when a server failed.
pub async fn run(bench: &Bench, plan: &plan::Loops, results: &mut Results) -> Result<bool> {
    let workers = bench.workers(plan.workers);
    results.loops = Some(Loops {
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
    let mut all_ok = true;
    for short in &plan.servers {
        let name = package(short);
        let outcome = run_server(bench, plan, workers, short, &name, results).await;
        let loops = section(results);
        if let Err(err) = outcome {
            loops
                .failures
                .push(super::failure("loops", name.clone(), &err));
            all_ok = false;
        }
        for shape in &mut loops.shapes {
            let samples: Vec<(String, Vec<f64>)> = shape
                .servers
                .iter()
                .map(|s| (s.name.clone(), throughputs(&s.runs)))
                .collect();
            shape.comparisons = compare::pairwise(Figure::RequestsPerS, &samples);
        }
        bench.save(results)?;
    }
    Ok(all_ok)
}

fn section(results: &mut Results) -> &mut Loops {
    results.loops.as_mut().expect("set when loops start")
}

async fn run_server(
    bench: &Bench,
    plan: &plan::Loops,
    workers: usize,
    short: &str,
    name: &str,
    results: &mut Results,
) -> Result<()> {
    let args = server_args(plan.delay_ms, workers, plan::BLOCKING_THREADS);
    let mut server = bench.start(short, args).await?;
    bench.check(name, &server.base_url()).await?;
    let target = greet_core::paths::GREETINGS;
    for (index, &(users, loops)) in plan.shapes.iter().enumerate() {
        let sessions = Sessions {
            addr: server.addr(),
            target: target.to_owned(),
            expect: Expect::for_target(target),
            users,
            stop: Stop::Each(loops),
            timeout: bench.timeout(),
        };
        for repeat in 1..=plan.repeats {
            let label = format!("{name} {users}x{loops} #{repeat}");
            let (run, _) = bench.keep_alive(&server, &sessions, label).await;
            bench.say(
                name,
                &format!(
                    "{users} users x {loops} loops, run {repeat}: {:.1} req/s, {:.2}% ok",
                    run.load.requests_per_s, run.load.success_rate
                ),
            );
            let shape = &mut section(results).shapes[index];
            if shape.servers.last().is_none_or(|s| s.name != name) {
                shape.servers.push(LoopServer {
                    name: name.to_owned(),
                    ..LoopServer::default()
                });
            }
            let record = shape.servers.last_mut().expect("pushed");
            record.runs.push(run);
            record.requests_per_s = Repeated::of(&record.runs).requests_per_s;
            bench.save(results)?;
            bench.ensure_alive(&mut server)?;
            super::settle().await;
        }
    }
    bench.stop(server).await
}
