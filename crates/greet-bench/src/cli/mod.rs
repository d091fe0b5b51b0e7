//! The command line: flags in, a [`Plan`] out (every default applied, from [`crate::plan`]'s
//! constants, which the help text quotes too), then the run's outcome as an exit code. The only
//! module that sees clap.
//!
//! `args` holds the flags of each scenario and turns them into its plan; `values` parses
//! and prints flag values (levels, durations, rates, URLs) and formats the help's defaults.

mod args;
mod values;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use crate::agents;
use crate::diff;
use crate::gate;
use crate::load;
use crate::plan::{self, Common, Plan, Scenario, ScenarioKind};
use crate::report::comparison;
use crate::run::{self, Verdict};

use args::{
    AgentArgs, AllArgs, BusinessArgs, CompareArgs, LadderArgs, LoopsArgs, ProtocolsArgs, RateArgs,
    SoakArgs, SweepArgs,
};

const EXAMPLES: &str = "\
Examples:
  greet-bench                                   the original experiment on axum, actix-web, hyper
  greet-bench all                               every scenario, one report (about 11 minutes)
  greet-bench --servers axum,axum:/greetings/blocking   async against a 200-thread pool
  greet-bench --repeats 5 --concurrency 900     medians of 5 runs, and whether servers differ
  greet-bench --target mine=http://127.0.0.1:9000       a server the harness did not start
  greet-bench rate --rates 10k,50k              latency at fixed request rates (open loop)
  greet-bench business --stores postgres        /db, /queries, /business on PostgreSQL + Redis
  greet-bench loops --help                      a scenario's own flags
  greet-bench check http://127.0.0.1:8081       verify a running server against the contract
  greet-bench --repeats 5 --save-baseline main  keep this run as baseline main (results/baselines)
  greet-bench --repeats 5 --baseline main --threshold 'total<1.10x'   against it; exit 3 if slower
  greet-bench compare results/A results/B       two runs: ratios and verdicts (--format md|json)

Exit codes:
  0  every server measured (and every --threshold held)
  1  the run failed: a server failed, or the run could not be made (whatever the thresholds)
  2  bad usage: flags, or a file compare cannot read
  3  a --threshold was breached
  130  interrupted (Ctrl-C); what was measured is kept";

/// Reproduces the Greetings API experiments (Spring Boot's Tomcat / Jetty / Undertow) for
/// the axum, actix-web and hyper servers: the ladder of 100, 300, 900 and 2700 concurrent
/// requests by default, or another scenario, or all of them. Results go to
/// results/TIMESTAMP/: results.json, CSVs, SVG charts and report.html.
#[derive(Debug, Parser)]
#[command(
    name = "greet-bench",
    version,
    args_conflicts_with_subcommands = true,
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    ladder: LadderArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The original experiment, and the default: each server in turn, started, verified,
    /// loaded at each concurrency level (one request per fresh connection), sampled, stopped
    Ladder(LadderArgs),
    /// The JMeter experiment: T users each sending L requests back to back over keep-alive,
    /// zero delay, repeated; throughput per run, medians, and whether servers differ
    Loops(LoopsArgs),
    /// The siege / ab experiment: load for a duration (or a count) at each concurrency on the
    /// async and the blocking endpoint, zero delay, counting the server's threads
    Soak(SoakArgs),
    /// The tuning experiment: zero-delay load on the ceiling (/health) and greeting endpoints
    /// over a grid of --workers and, on the blocking endpoint, --blocking-threads; the best
    /// setting per server and its gain over the default
    Sweep(SweepArgs),
    /// The tuning experiment's business endpoint: each server's store-bound endpoints (/db,
    /// /queries, /business) against its own ceiling (/health), on SQLite and on PostgreSQL +
    /// Redis (started by the harness), over --workers and --db-pool grids
    Business(BusinessArgs),
    /// Open-loop load: after a closed-loop probe for each server's capacity, levels at fixed
    /// request rates (fractions of that capacity, or --rates), each request on a schedule and
    /// its latency counted from its intended send time (no coordinated omission)
    Rate(RateArgs),
    /// Keep-alive throughput at zero delay over HTTP/1.1, h2c, HTTP/1.1 over TLS and HTTP/2
    /// over TLS, each a fraction of the same server's HTTP/1.1, and the servers compared on
    /// those fractions
    Protocols(ProtocolsArgs),
    /// Every scenario (ladder, loops, soak, sweep, business, rate) with its defaults, in one
    /// run and one report
    All(AllArgs),
    /// Compare two runs: every figure both have, NEW/OLD, with a verdict where both sides
    /// have runs enough (Mann-Whitney), and what differs between the runs themselves
    Compare(CompareArgs),
    /// One agent's share of a level, as --agents runs it and as a cluster job would: waits
    /// for --start-at, sends its share (fresh connections, --keep-alive users, or an open-loop
    /// --rate), and prints its whole tally as one line of JSON on stdout (exit 0 however many
    /// requests failed)
    Agent(AgentArgs),
    /// Merge agents' reports into one level: the lines `greet-bench agent` printed, from
    /// files or stdin (`kubectl logs -l job-name=greet-load`, `docker service logs`). Every
    /// agent must be there exactly once; the figures, then each agent's, as text or JSON
    Merge {
        /// Files holding the agents' output (their other lines are skipped) [default: stdin]
        #[arg(value_name = "FILE")]
        files: Vec<std::path::PathBuf>,

        /// Print the merged level as JSON (the ladder's level in results.json) instead
        #[arg(long)]
        json: bool,
    },
    /// Print Kubernetes manifests for one ladder level on a cluster: the server as a
    /// Deployment and Service, PostgreSQL and Redis as StatefulSets, the load as an Indexed
    /// Job of agents (then `kubectl logs -l job-name=greet-load --tail=-1 | greet-bench merge`)
    Kubernetes {
        /// The server
        #[arg(long, default_value = "hyper", value_parser = ["axum", "actix", "hyper"])]
        server: String,
        /// Agents: the Job's pods, each with its share of the level
        #[arg(long, value_name = "N", default_value_t = 4, value_parser = values::parse_agents)]
        agents: usize,
        /// The level's concurrency (one request per fresh connection)
        #[arg(long, default_value_t = 2700, value_parser = values::parse_level)]
        concurrency: usize,
        /// The server's greeting delay
        #[arg(long, default_value_t = plan::DELAY_MS)]
        delay_ms: u64,
    },
    /// Watch a container from beside it: its CPU %, memory and tasks from its control group,
    /// one line every interval until it ends (what --swarm runs on a server's node, the
    /// host's /sys/fs/cgroup mounted read-only)
    Watch {
        /// The container's ID (12 hex digits or more)
        #[arg(long, value_name = "ID")]
        container: String,
        /// Where the host's cgroup hierarchy is mounted
        #[arg(long, value_name = "DIR", default_value = "/sys/fs/cgroup")]
        cgroups: std::path::PathBuf,
        /// How often to read it
        #[arg(long, value_parser = values::parse_duration, default_value = "500ms")]
        interval: std::time::Duration,
    },
    /// Verify running servers against the contract (the quick cases) and exit 0 if all pass
    Check {
        /// Base URLs, e.g. http://127.0.0.1:8081, or https://127.0.0.1:8443 for a TLS port
        #[arg(required = true, value_name = "URL")]
        urls: Vec<String>,

        /// Also over HTTP/2: h2c on an http:// URL (every answer as over HTTP/1.1), or h2 on an
        /// https:// one, whose contract is checked over HTTP/1.1 and HTTP/2 with TLS (the same
        /// answers over both; the raw HTTP/1.1 cases need cleartext) [default: http1 for
        /// http:// URLs, h2 for https://]
        #[arg(long, value_name = "PROTOCOL")]
        protocol: Option<plan::Protocol>,
    },
}

/// What the command line asks for.
#[derive(Debug)]
enum Action {
    /// A run of scenarios.
    Run(Plan),
    /// `check URL…`, over a protocol.
    Check(Vec<String>, Option<plan::Protocol>),
    /// `compare OLD NEW`.
    Compare(CompareArgs),
    /// `agent …`.
    Agent(AgentArgs),
    /// `merge [FILE]…`.
    Merge(Vec<std::path::PathBuf>, bool),
    /// `kubernetes …`.
    Kubernetes(crate::kube::Kubernetes),
    /// `watch --container ID …`: the container, where its cgroups are, how often.
    Watch(String, std::path::PathBuf, std::time::Duration),
}

impl Cli {
    /// What the command line asks for, every default applied.
    fn action(self) -> Action {
        let one = |(common, scenario): (Common, Scenario)| Plan {
            common,
            scenarios: vec![scenario],
        };
        let ladder = |args: LadderArgs| {
            let (common, plan) = args.plan();
            (common, Scenario::Ladder(plan))
        };
        Action::Run(match self.command {
            None => one(ladder(self.ladder)),
            Some(Command::Ladder(args)) => one(ladder(args)),
            Some(Command::Loops(args)) => {
                let (common, plan) = args.plan();
                one((common, Scenario::Loops(plan)))
            }
            Some(Command::Soak(args)) => {
                let (common, plan) = args.plan();
                one((common, Scenario::Soak(plan)))
            }
            Some(Command::Sweep(args)) => {
                let (common, plan) = args.plan();
                one((common, Scenario::Sweep(plan)))
            }
            Some(Command::Business(args)) => {
                let (common, plan) = args.plan();
                one((common, Scenario::Business(plan)))
            }
            Some(Command::Rate(args)) => {
                let (common, plan) = args.plan();
                one((common, Scenario::Rate(plan)))
            }
            Some(Command::Protocols(args)) => {
                let (common, plan) = args.plan();
                one((common, Scenario::Protocols(plan)))
            }
            Some(Command::All(args)) => args.plan(),
            Some(Command::Check { urls, protocol }) => return Action::Check(urls, protocol),
            Some(Command::Compare(args)) => return Action::Compare(args),
            Some(Command::Agent(args)) => return Action::Agent(args),
            Some(Command::Merge { files, json }) => return Action::Merge(files, json),
            Some(Command::Watch {
                container,
                cgroups,
                interval,
            }) => return Action::Watch(container, cgroups, interval),
            Some(Command::Kubernetes {
                server,
                agents,
                concurrency,
                delay_ms,
            }) => {
                return Action::Kubernetes(crate::kube::Kubernetes {
                    server,
                    agents,
                    concurrency,
                    delay_ms,
                    ..Default::default()
                })
            }
        })
    }
}

/// The binary's `main`: parses flags, runs, and turns the outcome into an exit code
/// (0 all servers measured, 1 a server failed or the run could not be made, 2 bad usage,
/// 3 a threshold breached, 130 interrupted).
pub fn main() -> ExitCode {
    // Clap would call a stray word an unexpected argument; say what it is meant to be.
    if let Some(first) = std::env::args().nth(1) {
        let known = first == "help"
            || Cli::command()
                .get_subcommands()
                .any(|c| c.get_name() == first);
        if !first.starts_with('-') && !known {
            let names: Vec<&str> = ScenarioKind::ALL.iter().map(|k| k.name()).collect();
            eprintln!(
                "greet-bench: error: unknown scenario {first:?}: the scenarios are {} (ladder is \
                 the default) and all; check verifies running servers (see --help)",
                names.join(", ")
            );
            return ExitCode::from(2);
        }
    }
    let cli: Cli = match greet_server::cli::parse_args("greet-bench") {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let plan = match cli.action() {
        Action::Run(plan) => {
            if let Err(why) = check_baseline(&plan.common).and_then(|()| check_transport(&plan)) {
                return usage(&why);
            }
            plan
        }
        Action::Check(urls, protocol) => return check(&urls, protocol),
        Action::Compare(args) => return compare(&args),
        Action::Agent(args) => return agent(args),
        Action::Watch(container, cgroups, interval) => {
            let mut out = std::io::stdout().lock();
            let wait = std::time::Duration::from_secs(10);
            return match crate::sample::watch_container(
                &cgroups, &container, interval, wait, &mut out,
            ) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("greet-bench watch: error: {err}");
                    ExitCode::FAILURE
                }
            };
        }
        Action::Merge(files, json) => return merge(&files, json),
        Action::Kubernetes(k) => {
            print!("{}", crate::kube::manifests(&k));
            return ExitCode::SUCCESS;
        }
    };
    match run::run(plan) {
        Ok(Verdict::AllMeasured) => ExitCode::SUCCESS,
        Ok(Verdict::SomeFailed) => ExitCode::FAILURE,
        Ok(Verdict::Interrupted) => ExitCode::from(130),
        Ok(Verdict::ThresholdBreached) => ExitCode::from(3),
        Err(err) => {
            eprintln!("greet-bench: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// `greet-bench compare OLD NEW`: the table, then each threshold; exit 2 when a run cannot
/// be read, 3 when a threshold is breached.
fn compare(args: &CompareArgs) -> ExitCode {
    let (old, new) = match (&args.baseline, &args.runs[..]) {
        (Some(name), [new]) => (plan::baseline_dir(name), new.clone()),
        (None, [old, new]) => (old.clone(), new.clone()),
        (Some(_), _) => return usage("compare --baseline NAME takes one run, NEW"),
        (None, _) => return usage("compare takes two runs, OLD NEW (or --baseline NAME NEW)"),
    };
    let (old, new) = match (diff::read(&old), diff::read(&new)) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(err), _) | (_, Err(err)) => return usage(&format!("{err:#}")),
    };
    let noise = args.noise.unwrap_or(diff::NOISE);
    let compared = match diff::diff(&old, &new, noise, &args.vary) {
        Ok(compared) => compared,
        Err(err) => return usage(&format!("{err:#}")),
    };
    print!("{}", comparison::render(&compared, args.format));
    let checked = gate::check_ratios(&args.thresholds, Some(&compared));
    for threshold in &checked {
        eprintln!("{threshold}");
    }
    if checked.iter().all(|t| t.held) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    }
}

/// A run's ratio thresholds need a baseline, and the baseline must be readable: said before
/// anything is measured.
fn check_baseline(common: &Common) -> Result<(), String> {
    match (&common.baseline, common.thresholds.iter().find(|t| t.ratio)) {
        (None, Some(t)) => Err(format!(
            "{:?}: a ratio (x) compares two runs: add --baseline NAME, or use compare",
            t.text
        )),
        (Some(name), _) => diff::read(&plan::baseline_dir(name))
            .map(|_| ())
            .map_err(|err| format!("baseline {name}: {err:#}")),
        (None, None) => Ok(()),
    }
}

/// A `--protocol` or `--streams` the run cannot honour, as one line.
fn check_transport(plan: &Plan) -> Result<(), String> {
    let (protocol, streams) = (plan.common.protocol, plan.common.streams);
    let varied = |s: &Scenario| matches!(s, Scenario::Protocols(_));
    if streams > 1 && !protocol.http2() && !plan.scenarios.iter().any(varied) {
        return Err(format!(
            "--streams {streams} shares HTTP/2 connections: use it with --protocol h2c or h2, \
             not {protocol}"
        ));
    }
    let targets = plan.scenarios.iter().flat_map(Scenario::targets);
    if let Some(t) = targets
        .into_iter()
        .find(|t| t.url.starts_with("https://") != protocol.tls())
    {
        return Err(format!(
            "--target {}={}: the load goes over --protocol {protocol}; an https:// target \
             needs https or h2, an http:// one http1 or h2c",
            t.name, t.url
        ));
    }
    if protocol != plan::Protocol::Http1 {
        if let Some(peer) = plan.binaries().into_iter().find(|s| plan::is_peer(s)) {
            return Err(format!(
                "--protocol {protocol}: {peer} (a JVM peer) serves HTTP/1.1 in cleartext only; \
                 leave it out or use --protocol http1"
            ));
        }
    }
    Ok(())
}

/// The contract check of the server at `url` over `protocol`; on success, what was checked
/// beyond HTTP/1.1 in cleartext.
async fn check_one(url: &str, protocol: Option<plan::Protocol>) -> Result<String, String> {
    use greet_conformance::protocols::{answers_alike, tls_answers_alike};
    use plan::Protocol::{H2c, Http1, Https, H2};
    let tls = url.starts_with("https://");
    match (tls, protocol) {
        (false, None | Some(Http1)) => greet_conformance::check(url)
            .await
            .map(|()| String::new())
            .map_err(|e| e.to_string()),
        (false, Some(H2c)) => {
            greet_conformance::check(url)
                .await
                .map_err(|e| e.to_string())?;
            let addr = greet_conformance::resolve(url).await?;
            answers_alike(addr, None).await?;
            Ok(" (and the same over h2c)".to_owned())
        }
        (true, None | Some(Https | H2)) => {
            let addr = greet_conformance::resolve(url).await?;
            let trust = greet_probe::tls::Trust::Any;
            tls_answers_alike(addr, &trust).await?;
            Ok(" over https and h2 (the same answers on both)".to_owned())
        }
        (_, Some(p)) => Err(format!(
            "--protocol {p} needs an {} URL",
            if p.tls() { "https://" } else { "http://" }
        )),
    }
}

/// `greet-bench agent`: its shard run, its report printed; exit 1 with one line when it
/// cannot run (the server's name does not resolve, a bad index).
fn agent(args: AgentArgs) -> ExitCode {
    let tls = args.url.starts_with("https://");
    let protocol = args.protocol.unwrap_or(if tls {
        plan::Protocol::H2
    } else {
        plan::Protocol::Http1
    });
    if protocol.tls() != tls {
        return usage(&format!(
            "--protocol {protocol} does not go with {}: https:// needs https or h2, http:// \
             http1 or h2c",
            args.url
        ));
    }
    let work =
        match (args.rate, args.keep_alive) {
            (Some(rate), _) => agents::Work::Paced(agents::Schedule {
                rate,
                duration: args.duration.unwrap_or_default(),
                connections: args.connections.unwrap_or(1),
            }),
            (None, Some(users)) => agents::Work::Sessions {
                users,
                stop: match (args.duration, args.requests, args.each) {
                    (Some(d), None, None) => load::Stop::After(d),
                    (None, Some(n), None) => load::Stop::Total(n),
                    (None, None, Some(n)) => load::Stop::Each(n),
                    _ => return usage(
                        "--keep-alive needs one of --duration, --requests and --each: when the \
                         users stop",
                    ),
                },
                streams: args.streams,
            },
            (None, None) => agents::Work::Fresh {
                concurrency: args.concurrency.unwrap_or(1),
                requests: args.requests.or(args.concurrency).unwrap_or(1),
            },
        };
    let run = async {
        let wait = args.wait.unwrap_or_default();
        let addr = agents::reach(&args.url, protocol, wait).await?;
        let shard = agents::Shard {
            url: args.url.clone(),
            expect: args.expect.unwrap_or_default(),
            protocol,
            timeout: args.timeout,
            work,
            index: args
                .slot
                .as_deref()
                .map_or(args.index, agents::swarm::index_of_slot),
            agents: args.agents,
            start_at_ms: args
                .start_at
                .unwrap_or_else(|| agents::unix_ms(std::time::SystemTime::now())),
        };
        agents::run_shard(&shard, addr).await
    };
    let report = tokio::runtime::Runtime::new()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| runtime.block_on(run));
    match report.and_then(|r| Ok(serde_json::to_string(&r)?)) {
        Ok(json) => {
            println!("{}{json}", agents::REPORT_PREFIX);
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("greet-bench agent: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// `greet-bench merge`: the agents' reports in `files` (stdin when none) as one level;
/// exit 1 with one line when a report is missing, repeated or unreadable.
fn merge(files: &[std::path::PathBuf], json: bool) -> ExitCode {
    use std::io::Read as _;
    let mut text = String::new();
    let read = if files.is_empty() {
        std::io::stdin()
            .read_to_string(&mut text)
            .map(drop)
            .map_err(|e| format!("stdin: {e}"))
    } else {
        files.iter().try_for_each(|file| {
            let part =
                std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
            text.push_str(&part);
            text.push('\n');
            Ok(())
        })
    };
    if let Err(why) = read {
        return usage(&why);
    }
    let reports = match agents::gather_reports(&text) {
        Ok(reports) => reports,
        Err(err) => {
            eprintln!("greet-bench merge: error: {err:#}");
            return ExitCode::FAILURE;
        }
    };
    let (tally, agents) = agents::merge(&reports);
    let level = crate::results::Level {
        concurrency: reports.iter().map(|r| r.concurrency).sum(),
        run: crate::results::Run {
            load: tally.figures(),
            agents,
            ..Default::default()
        },
        runs: Vec::new(),
    };
    if json {
        match serde_json::to_string_pretty(&level) {
            Ok(text) => println!("{text}"),
            Err(err) => {
                eprintln!("greet-bench merge: error: {err}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        for table in crate::report::table::ladder::merged("agents", &level) {
            println!("{}\n{}", table.title, table.text());
        }
    }
    ExitCode::SUCCESS
}

/// Bad usage: one line, exit 2.
fn usage(why: &str) -> ExitCode {
    eprintln!("greet-bench: error: {why}");
    ExitCode::from(2)
}

/// `greet-bench check URL…`: one line per server, exit 1 if any fails.
fn check(urls: &[String], protocol: Option<plan::Protocol>) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("greet-bench: error: {err}");
            return ExitCode::FAILURE;
        }
    };
    let mut ok = true;
    for url in urls {
        match runtime.block_on(check_one(url, protocol)) {
            Ok(how) => println!("{url}: contract check passed{how}"),
            Err(err) => {
                ok = false;
                println!("{url}: {err}");
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::values::parse_duration;
    use super::*;
    use crate::plan::{
        Bins, Business, Contract, Expect, Ladder, Loops, Measured, Rate, Rates, Soak, SoakBound,
        Sweep,
    };

    fn plan(args: &[&str]) -> Plan {
        match Cli::try_parse_from(std::iter::once("greet-bench").chain(args.iter().copied()))
            .expect("good flags")
            .action()
        {
            Action::Run(plan) => plan,
            Action::Check(..)
            | Action::Compare(_)
            | Action::Agent(_)
            | Action::Merge(..)
            | Action::Kubernetes(_)
            | Action::Watch(..) => panic!("a plan, not another command"),
        }
    }

    fn only(plan: Plan) -> Scenario {
        assert_eq!(plan.scenarios.len(), 1);
        plan.scenarios.into_iter().next().expect("one")
    }

    #[test]
    fn no_flags_are_the_defaults_of_the_plan() {
        assert_eq!(only(plan(&[])), Scenario::Ladder(Ladder::defaults(false)));
        assert_eq!(
            only(plan(&["ladder"])),
            Scenario::Ladder(Ladder::defaults(false))
        );
        assert_eq!(
            only(plan(&["--quick"])),
            Scenario::Ladder(Ladder::defaults(true))
        );
        assert_eq!(
            only(plan(&["loops"])),
            Scenario::Loops(Loops::defaults(false))
        );
        assert_eq!(
            only(plan(&["soak", "--quick"])),
            Scenario::Soak(Soak::defaults(true))
        );
        assert_eq!(
            only(plan(&["sweep"])),
            Scenario::Sweep(Sweep::defaults(false))
        );
        assert_eq!(
            only(plan(&["business", "--quick"])),
            Scenario::Business(Business::defaults(true))
        );
        assert_eq!(
            only(plan(&["rate", "--quick"])),
            Scenario::Rate(Rate::defaults(true))
        );
        let Scenario::Rate(rate) = only(plan(&["rate", "--rates", "5k,2.5k,300"])) else {
            panic!("not rate")
        };
        assert_eq!(rate.rates, Rates::Fixed(vec![5000.0, 2500.0, 300.0]));
        let Scenario::Rate(rate) = only(plan(&["rate", "--of-capacity", "50,90%"])) else {
            panic!("not rate")
        };
        assert_eq!(rate.rates, Rates::OfCapacity(vec![0.5, 0.9]));
        assert_eq!(
            plan(&["all", "--quick"]),
            Plan::all(Common::default(), true, None)
        );
        assert_eq!(plan(&[]).common, Common::default());
    }

    #[test]
    fn explicit_flags_win_over_quick_sizes() {
        let Scenario::Ladder(ladder) = only(plan(&["ladder", "--quick", "--concurrency", "7"]))
        else {
            panic!("not a ladder")
        };
        assert_eq!(
            (ladder.levels, ladder.delay_ms),
            (vec![7], Ladder::QUICK_DELAY_MS)
        );
        let Scenario::Soak(soak) = only(plan(&["soak", "--requests", "10"])) else {
            panic!("not soak")
        };
        assert_eq!(soak.bound, SoakBound::Requests(10));
        let Scenario::Loops(loops) = only(plan(&["loops", "--shapes", "10x5,2X3"])) else {
            panic!("not loops")
        };
        assert_eq!(loops.shapes, [(10, 5), (2, 3)]);
        assert_eq!((loops.repeats, loops.delay_ms), (Loops::REPEATS, 0));
        let Scenario::Soak(soak) = only(plan(&["soak", "--duration", "1.5s"])) else {
            panic!("not soak")
        };
        assert_eq!(soak.bound, SoakBound::Duration(Duration::from_millis(1500)));
        assert_eq!(soak.endpoints, ["/greetings", "/greetings/blocking"]);
        let Scenario::Sweep(sweep) = only(plan(&["sweep", "--quick", "--workers", "1,3"])) else {
            panic!("not sweep")
        };
        assert_eq!(
            (sweep.workers, sweep.measure.repeats),
            (vec![1, 3], Sweep::QUICK_MEASURE.repeats)
        );
    }

    #[test]
    fn servers_endpoints_and_targets() {
        let Scenario::Ladder(ladder) = only(plan(&[
            "--servers",
            "axum,greet-hyper,axum:/greetings/blocking",
        ])) else {
            panic!("not a ladder")
        };
        assert_eq!(ladder.servers[1].short, "hyper");
        assert_eq!(
            ladder.servers[2].endpoint.as_deref(),
            Some("/greetings/blocking")
        );
        let Scenario::Ladder(ladder) = only(plan(&["--target", "jvm=http://127.0.0.1:9000/"]))
        else {
            panic!("not a ladder")
        };
        assert!(ladder.servers.is_empty(), "only the target");
        assert_eq!(ladder.foreign.targets[0].url, "http://127.0.0.1:9000");
        assert_eq!(
            (&ladder.foreign.expect, ladder.foreign.contract),
            (&Expect::Greeting, Contract::Light)
        );
        let Scenario::Soak(soak) = only(plan(&[
            "soak",
            "--target",
            "t=http://h:1",
            "--expect",
            "^Hi",
            "--contract",
            "full",
        ])) else {
            panic!("not soak")
        };
        assert!(soak.servers.is_empty(), "only the target");
        assert_eq!(soak.foreign.expect, Expect::Pattern("^Hi".into()));
        assert_eq!(soak.foreign.contract, Contract::Full);
        let Scenario::Loops(loops) = only(plan(&[
            "loops",
            "--servers",
            "hyper",
            "--expect",
            "any",
            "--target",
            "t=http://h:1",
        ])) else {
            panic!("not loops")
        };
        assert_eq!(
            (loops.servers.len(), &loops.foreign.expect),
            (1, &Expect::Any)
        );
        let all = plan(&["all", "--servers", "hyper", "--no-pin", "--bin-dir", "/b"]);
        assert_eq!(all.binaries(), ["hyper"]);
        assert_eq!(
            (all.common.pin, all.common.bins),
            (false, Bins::Dir("/b".into()))
        );
    }

    #[test]
    fn the_help_quotes_the_plans_defaults() {
        use clap::CommandFactory;
        let help = Cli::command().render_long_help().to_string();
        assert!(
            help.contains("[default: 100,300,900,2700; --quick: 10,50]"),
            "{help}"
        );
        assert!(help.contains("Examples:"), "{help}");
        let mut cli = Cli::command();
        let sweep = cli
            .find_subcommand_mut("sweep")
            .expect("sweep")
            .render_long_help()
            .to_string();
        assert!(sweep.contains("[default: 2,200; --quick: 200]"), "{sweep}");
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
    }

    #[test]
    fn the_subcommands_are_the_scenarios_all_and_the_tools() {
        let subcommands: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .collect();
        let mut expected: Vec<String> = ScenarioKind::ALL
            .iter()
            .map(|k| k.name().to_owned())
            .collect();
        let tools = [
            "all",
            "compare",
            "agent",
            "merge",
            "kubernetes",
            "watch",
            "check",
        ];
        expected.extend(tools.map(String::from));
        assert_eq!(subcommands, expected);
        let all: Vec<&str> = plan(&["all"])
            .scenarios
            .iter()
            .map(Scenario::name)
            .collect();
        assert_eq!(all, expected[..ScenarioKind::ALL.len()]);
    }
}
