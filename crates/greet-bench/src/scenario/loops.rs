//! Loops, the JMeter experiment: T virtual users each send L requests back to back over their
//! own keep-alive connection; each shape is run `--repeats` times against one server process,
//! and servers are compared on per-run throughput.

use anyhow::Result;

use crate::cli::LoopsArgs;
use crate::compare;
use crate::load::{Sessions, Stop};
use crate::results::{LoopServer, LoopShape, Loops, Results};
use crate::runner::{server_args, Bench};
use crate::server;
use crate::stats;

/// The original's shapes: 100 threads × 1000 loops, 1000 threads × 100 loops.
pub const SHAPES: [(usize, usize); 2] = [(100, 1000), (1000, 100)];
/// `--quick` shapes.
pub const QUICK_SHAPES: [(usize, usize); 2] = [(10, 100), (50, 20)];

/// Runs loops into `results.loops`; false when a server failed.
pub async fn run(bench: &Bench, args: &LoopsArgs, results: &mut Results) -> Result<bool> {
    let shapes = args.shapes.clone().unwrap_or_else(|| {
        if args.quick {
            QUICK_SHAPES.to_vec()
        } else {
            SHAPES.to_vec()
        }
    });
    let workers = args
        .workers
        .map_or_else(|| bench.default_workers(), |w| w.get());
    results.loops = Some(Loops {
        delay_ms: args.delay_ms,
        workers,
        repeats: args.repeats.get(),
        shapes: shapes
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
    for short in super::servers(&args.servers) {
        let name = server::package(&short);
        let outcome = run_server(bench, args, workers, &short, &name, results).await;
        let loops = results.loops.as_mut().expect("set above");
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
                .map(|s| (s.name.clone(), stats::throughputs(&s.runs)))
                .collect();
            shape.comparisons = compare::pairwise(&samples);
        }
        bench.save(results)?;
    }
    Ok(all_ok)
}

async fn run_server(
    bench: &Bench,
    args: &LoopsArgs,
    workers: usize,
    short: &str,
    name: &str,
    results: &mut Results,
) -> Result<()> {
    let mut process = bench
        .start(short, server_args(args.delay_ms, workers, 200))
        .await?;
    super::check(&process).await?;
    bench.say(name, "contract check passed");
    let shape_count = results.loops.as_ref().map_or(0, |l| l.shapes.len());
    for index in 0..shape_count {
        let (users, loops) = {
            let shape = &results.loops.as_ref().expect("set").shapes[index];
            (shape.users, shape.loops)
        };
        let sessions = Sessions {
            addr: process.addr(),
            path: greet_core::paths::GREETINGS.to_owned(),
            users,
            stop: Stop::Each(loops),
            timeout: bench.timeout(),
        };
        for repeat in 1..=args.repeats.get() {
            let label = format!("{name} {users}x{loops} #{repeat}");
            let (run, _) = super::keep_alive(bench, &process, &sessions, label).await;
            bench.say(
                name,
                &format!(
                    "{users} users x {loops} loops, run {repeat}: {:.1} req/s, {:.2}% ok",
                    run.requests_per_s, run.success_rate
                ),
            );
            let shape = &mut results.loops.as_mut().expect("set").shapes[index];
            if shape.servers.last().is_none_or(|s| s.name != name) {
                shape.servers.push(LoopServer {
                    name: name.to_owned(),
                    ..LoopServer::default()
                });
            }
            let server = shape.servers.last_mut().expect("pushed");
            server.runs.push(run);
            server.requests_per_s = stats::repeated(&server.runs).requests_per_s;
            bench.save(results)?;
            bench.ensure_alive(&mut process)?;
            super::settle().await;
        }
    }
    bench.stop(process).await
}
