//! Cost's run: every cell on every server, under each instrument that can count here, each
//! twice (N/4 requests, then N/4 + N, each on a fresh process), then what choosing each
//! server's crate costs. A load whose every request was not answered validly counts
//! nothing: its difference would not be N requests' cost.
use std::time::Instant;

use anyhow::{bail, Context, Result};
use greet_load::{Expect, Stop, Wire, Work};
use greet_probe::tls::Trust;
use greet_server::{Knob, ServerFlag};
use tokio::io::AsyncWriteExt;

use crate::harness::{Ask, Harness, Start, Subject, Wrap};
use crate::scenario::kit::{Book, Run};
use greet_bed::sample::count::{proc_totals, Instrument, Scratch, Totals};
use greet_bed::sample::tools::Tools;
use greet_bed::server::{build_args, dependencies, stripped_size};
use greet_model::plan::{self, Foreign, Placement};
use greet_model::results::Frame;

use super::{warm_up, Cell, Cost, CostCell, CrateCost, FunctionCost, PerRequest, Plan, Section};

/// The functions kept per cell, most instructions first.
const FUNCTIONS: usize = 5;

/// How the counts are taken here: the instruments that can count, and for syscalls either
/// perf or, where it cannot, the process's own counters.
struct Counting {
    /// Each instrument that runs a server; none: /proc, read before the server stops.
    each: Vec<Option<Instrument>>,
}

impl Run for Cost {
    /// Runs cost: every cell on every server, a repeat at a time, then each crate's costs.
    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        let mut skipped = Vec::new();
        let mut each = Vec::new();
        for instrument in [Instrument::Callgrind, Instrument::Dhat, Instrument::Perf] {
            match instrument.available() {
                Ok(()) => each.push(Some(instrument)),
                Err(why) => {
                    let counts = match instrument {
                        Instrument::Callgrind => "instructions and cycles",
                        Instrument::Dhat => "allocations",
                        Instrument::Perf => {
                            "syscalls from the tracepoint (read and write syscalls from /proc instead)"
                        }
                    };
                    let line = format!("{} not counted: {why}", counts);
                    if !skipped.contains(&line) {
                        harness.say("cost", &line);
                        skipped.push(line);
                    }
                    if instrument == Instrument::Perf {
                        each.push(None);
                    }
                }
            }
        }
        let counted = |i: Instrument| each.contains(&Some(i));
        let tools = Tools::here(
            counted(Instrument::Callgrind) || counted(Instrument::Dhat),
            counted(Instrument::Perf),
        );
        let counting = Counting { each };
        let (args, _) = harness.server_args(&plan.base.server);
        book.open(Section {
            connections: plan.connections,
            requests: plan.connections * plan.each,
            upload_bytes: plan.upload_bytes,
            instruments: counting
                .each
                .iter()
                .map(|i| i.map_or("proc", Instrument::name).to_owned())
                .collect(),
            skipped,
            tools,
            cells: Vec::new(),
            crates: Vec::new(),
            frame: Frame::new(plan.base.repeats),
        });
        let scratch = Scratch::new()?;
        let subjects = Subject::all(&plan.base);
        let mut checked: Vec<String> = Vec::new();
        for repeat in 1..=plan.base.repeats {
            for subject in &subjects {
                let name = subject.name();
                let cells: Vec<Cell> = plan
                    .cells
                    .iter()
                    .copied()
                    .filter(|c| c.for_references() || !is_reference(subject))
                    .collect();
                for cell in cells {
                    let one = One {
                        subject,
                        name: &name,
                        args: &args,
                        cell,
                        repeat,
                        checked: checked.contains(&name),
                    };
                    book.step(&name, async |book| {
                        let (per, n, connections) =
                            count_cell(harness, plan, &one, &counting, &scratch).await?;
                        harness.say(
                            &name,
                            &format!(
                                "{cell}: {} instructions, {} allocations, {} syscalls a request",
                                shown(per.instructions),
                                shown(per.allocations),
                                shown(per.syscalls)
                            ),
                        );
                        record(book.section(), &one, per, n, connections);
                        Ok(())
                    })
                    .await?;
                    checked.push(name.clone());
                }
            }
        }
        for subject in subjects.iter().filter(|s| matches!(s, Subject::Server(_))) {
            let Subject::Server(short) = subject else {
                continue;
            };
            if plan::is_peer(short) || short == plan::ANCHOR {
                continue;
            }
            let name = subject.name();
            book.step(&name, async |book| {
                let cost = crate_cost(harness, plan, subject, &args).await?;
                book.section().crates.push(cost);
                Ok(())
            })
            .await?;
        }
        Ok(())
    }
}

fn shown(value: Option<f64>) -> String {
    value.map_or("-".to_owned(), |v| format!("{v:.1}"))
}

fn is_reference(subject: &Subject) -> bool {
    matches!(subject, Subject::Server(s) if plan::is_reference(s))
}

/// Loads of a cell under one instrument, before it fails: a request lost under valgrind's
/// slowness now and then (one in a few thousand, over a compressed body) is not the count's
/// concern, but a count must have every request answered.
const TRIES: usize = 2;

/// How long a store-bound request may wait for the pool under valgrind, milliseconds.
const STORE_PATIENCE_MS: u64 = 120_000;

/// One cell of one server in one repeat.
struct One<'a> {
    subject: &'a Subject,
    name: &'a str,
    args: &'a [String],
    cell: Cell,
    repeat: usize,
    /// The server has passed its contract check in this run.
    checked: bool,
}

/// Adds a count to its cell, opening the cell on its first repeat.
fn record(section: &mut Section, one: &One<'_>, per: PerRequest, n: usize, connections: usize) {
    let cell = one.cell.name();
    let at = section
        .cells
        .iter()
        .position(|c| c.server == one.name && c.cell == cell);
    let at = at.unwrap_or_else(|| {
        section.cells.push(CostCell {
            server: one.name.to_owned(),
            cell: cell.clone(),
            path: one.cell.path().to_owned(),
            protocol: one.cell.protocol(),
            requests: n,
            connections,
            runs: Vec::new(),
        });
        section.cells.len() - 1
    });
    section.cells[at].runs.push(per);
}

/// What one request of `one`'s cell costs its server: under each instrument, a fresh
/// process loaded with N/4 requests and another with N/4 + N ([`warm_up`]). With the
/// cell's N and connections.
async fn count_cell(
    harness: &Harness,
    plan: &Plan,
    one: &One<'_>,
    counting: &Counting,
    scratch: &Scratch,
) -> Result<(PerRequest, usize, usize)> {
    let cell = one.cell;
    let (connections, each) = cell.size(plan);
    let wire = Wire::new(cell.protocol(), &Trust::Any)?
        .resuming(true)
        .websocket(cell.websocket());
    let (headers, body) = (cell.headers(), cell.body(plan.upload_bytes));
    let foreign = Foreign::default();
    let mut per = Totals::default();
    let mut checked = one.checked;
    for instrument in &counting.each {
        // DHAT counts what goes through malloc; mimalloc takes its memory from the system
        // itself, so DHAT would read no allocation at all: none is better than a wrong zero.
        let mimalloc = plan::knobs_of(one.name).contains(&Knob::Mimalloc.name());
        if *instrument == Some(Instrument::Dhat) && mimalloc {
            continue;
        }
        let each = each * instrument.map_or(1, Instrument::scale);
        let mut totals = [Totals::default(), Totals::default()];
        // Under valgrind the first query's seed of 20,000 rows takes tens of seconds, and a
        // request queued on the pool behind it outlasts the 2 s default: it was answered 503
        // (1 of 4096 on axum's db). What a query costs is the count's concern, not how long
        // one waits.
        let args: Vec<String> = match instrument {
            Some(_) if cell.stored() => one
                .args
                .iter()
                .cloned()
                .chain(ServerFlag::DbTimeoutMs(STORE_PATIENCE_MS).args())
                .collect(),
            _ => one.args.to_vec(),
        };
        let warm = warm_up(each);
        for (i, requests) in [warm, warm + each].into_iter().enumerate() {
            let tool = instrument.map_or("proc", Instrument::name);
            let mut tries = 0;
            totals[i] = loop {
                tries += 1;
                let out = scratch.file(&format!(
                    "{}-{cell}-{tool}-{requests}-{}",
                    one.name.replace(['/', ':', '#'], "_"),
                    one.repeat
                ));
                let wrap = instrument.map(|i| Wrap {
                    prefix: i.prefix(&out),
                    slowdown: i.slowdown(),
                    forks: i.forks(),
                });
                let start = Start {
                    checked,
                    wire: Some(&wire),
                    wrap: wrap.as_ref(),
                    ..Start::new(one.subject, &args, &foreign, greet_core::paths::GREETINGS)
                };
                checked = true;
                let mut up = harness.bring_up(Placement::Harness, &start).await?;
                let work = Work::Sessions {
                    users: connections,
                    stop: Stop::Each(requests),
                    streams: 1,
                    pipeline: cell.pipeline(),
                    requests_per_connection: cell.requests_per_connection(),
                };
                let ask = Ask {
                    wire: Some(&wire),
                    message: Some((&headers, body.as_ref())),
                    ..Ask::new(cell.path(), &Expect::Greeting, work)
                };
                let label = format!("{} {cell} {tool} {}", one.name, connections * requests);
                let trial = harness
                    .load(Placement::Harness, &up, &ask, label)
                    .await?
                    .run();
                let want = (connections * requests) as u64;
                if trial.load.ok() != want {
                    let why = format!(
                        "{cell} under {tool}: {} of {want} requests answered validly ({:?}), so \
                         the difference would not be N requests' cost",
                        trial.load.ok(),
                        trial.load.errors
                    );
                    harness.release(up).await?;
                    if tries < TRIES {
                        harness.say(one.name, &format!("{why}; once more, on a fresh process"));
                        continue;
                    }
                    bail!("{why}");
                }
                let own = match instrument {
                    None => Some(
                        up.pid()
                            .and_then(proc_totals)
                            .context("the server's /proc could not be read")?,
                    ),
                    Some(_) => None,
                };
                up.ensure_alive()?;
                harness.release(up).await?;
                let counted = match (instrument, own) {
                    (Some(instrument), _) => instrument.read(&out)?,
                    (None, Some(own)) => own,
                    (None, None) => unreachable!("read above"),
                };
                break counted;
            };
        }
        per = per.and(totals[1].per_request(&totals[0], connections * each));
    }
    let mut functions: Vec<FunctionCost> = per
        .functions
        .iter()
        .map(|(function, &instructions)| FunctionCost {
            function: function.clone(),
            instructions,
        })
        .collect();
    functions.sort_by(|a, b| b.instructions.total_cmp(&a.instructions));
    functions.truncate(FUNCTIONS);
    Ok((
        PerRequest {
            instructions: per.instructions,
            cycles: per.cycles,
            allocations: per.allocations,
            alloc_bytes: per.bytes,
            syscalls: per.syscalls,
            epoll_waits: per.epoll_waits,
            futexes: per.futexes,
            switches: per.switches,
            cpu_us: per.cpu_s.map(|s| s * 1e6),
            functions,
        },
        connections * each,
        connections,
    ))
}

/// What choosing `subject`'s crate costs: its binary stripped, its dependencies, the memory
/// an idle connection holds, and with `--build` its build times.
async fn crate_cost(
    harness: &Harness,
    plan: &Plan,
    subject: &Subject,
    args: &[String],
) -> Result<CrateCost> {
    let Subject::Server(short) = subject else {
        bail!("not a server of the workspace");
    };
    let binary = harness.binaries.locate(short)?.path;
    let binary_bytes = stripped_size(&binary).ok();
    let dependencies = dependencies(short);
    let idle_kib = Some(idle_kib(harness, subject, args, plan.idle).await?);
    let (build_s, rebuild_s) = if plan.build {
        let (build, rebuild) = build_times(harness, short)?;
        (Some(build), Some(rebuild))
    } else {
        (None, None)
    };
    Ok(CrateCost {
        server: subject.name(),
        binary_bytes,
        dependencies,
        idle_kib,
        idle_connections: plan.idle,
        build_s,
        rebuild_s,
    })
}

/// The resident memory each idle keep-alive connection holds, KiB: a fresh server (no
/// instrument), one connection answered once, then `connections` more, each answered once
/// and left idle; the growth over their count.
async fn idle_kib(
    harness: &Harness,
    subject: &Subject,
    args: &[String],
    connections: usize,
) -> Result<f64> {
    let foreign = Foreign::default();
    let start = Start {
        checked: true,
        ..Start::new(subject, args, &foreign, greet_core::paths::HEALTH)
    };
    let up = harness.bring_up(Placement::Harness, &start).await?;
    let pid = up.pid().context("the server's process")?;
    let rss = || greet_probe::procfs::status(pid).map(|s| s.rss_kib as f64);
    let mut open = vec![answered(up.addr).await?];
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let before = rss().context("the server's /proc")?;
    for _ in 0..connections {
        open.push(answered(up.addr).await?);
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let after = rss().context("the server's /proc")?;
    drop(open);
    harness.release(up).await?;
    Ok((after - before).max(0.0) / connections.max(1) as f64)
}

/// A keep-alive connection to `addr` that has had one `GET /health` answered.
async fn answered(addr: std::net::SocketAddr) -> Result<tokio::net::TcpStream> {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .context("an idle connection")?;
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await?;
    let (mut buf, mut res) = (Vec::new(), greet_probe::http1::Response::default());
    let options = greet_probe::http1::Options::default();
    greet_probe::http1::read(&mut stream, &mut buf, &mut res, options)
        .await
        .context("an idle connection's answer")?;
    if res.status() != 200 {
        bail!("an idle connection's /health answered {}", res.status());
    }
    Ok(stream)
}

/// A clean release build of server `short`'s package (with its build knobs) in a target
/// directory of its own, and its rebuild after one of its sources is touched, in seconds;
/// the directory removed after.
fn build_times(harness: &Harness, short: &str) -> Result<(f64, f64)> {
    let package = &plan::binary(short);
    let root = greet_bed::server::workspace_root().context("the workspace is not here to build")?;
    let target = std::env::temp_dir().join(format!("greet-bench-build-{package}"));
    let _ = std::fs::remove_dir_all(&target);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let build = || -> Result<f64> {
        let started = Instant::now();
        let mut cmd = std::process::Command::new(&cargo);
        cmd.current_dir(&root)
            .args(["build", "--release", "--locked", "-p", package])
            .args(build_args(short))
            .env("CARGO_TARGET_DIR", &target)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        greet_bed::server::without_cargo_run_env(&mut cmd);
        if !cmd.status()?.success() {
            bail!("cargo build -p {package} failed");
        }
        Ok(started.elapsed().as_secs_f64())
    };
    harness.say(package, "a clean release build, timed");
    let clean = build();
    let touched = root.join("crates").join(package).join("src").join("lib.rs");
    let rebuild = clean.as_ref().ok().map(|_| {
        let file = std::fs::File::options().append(true).open(&touched)?;
        file.set_modified(std::time::SystemTime::now())?;
        build()
    });
    let _ = std::fs::remove_dir_all(&target);
    Ok((clean?, rebuild.context("no rebuild")??))
}
