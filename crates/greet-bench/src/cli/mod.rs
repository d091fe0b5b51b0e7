//! The command line: flags in, a [`Plan`] out (every default applied, from each scenario's
//! plan, whose constants the help text quotes too), then the outcome as an exit code. It runs
//! nothing itself: a run goes to `crate::run`, each other command to its module in
//! `crate::tools`.
//!
//! Each scenario's flags are in its folder (`scenario::<name>::Flags`), the flags several
//! share in `crate::flags`; `args` holds those of `compare`, `merge`, `kubernetes` and
//! `check`. With those, the only code that sees clap.

mod args;
mod help;

use std::process::ExitCode;

use anyhow::Context as _;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use greet_load::agent::ShardArgs;

use crate::diff as compare;
use crate::flags::{CommonArgs, ServersArgs};
use crate::plan::{self, Common};
use crate::run::{self, Verdict};
use crate::scenario::{
    business, capacity, ladder, loops, protocols, rate, soak, sweep, techempower, workloads, Kind,
    Plan, Planned,
};
use crate::tools::{self, kube, merge, Outcome};

use args::{CheckArgs, CompareArgs, KubernetesArgs, MergeArgs, ReportArgs};

/// Under `-h`: the first things to try.
const FIRST_EXAMPLES: &str = "\
Examples:
  greet-bench --quick           the comparison at smoke size: seconds once built
  greet-bench                   the original experiment; `all` runs every scenario
  greet-bench rate -h           a scenario's own flags (--help: every flag, grouped)";

/// Under `--help`.
const EXAMPLES: &str = "\
Examples:
  greet-bench                                   the original experiment on axum, actix-web, hyper
  greet-bench all                               every scenario, one report (about 20 minutes)
  greet-bench --servers axum,axum:/greetings/blocking   async against a 200-thread pool
  greet-bench --repeats 5 --concurrency 900     medians of 5 runs, and whether servers differ
  greet-bench --target mine=http://127.0.0.1:9000       a server the harness did not start
  greet-bench rate --rates 10k,50k              latency at fixed request rates (open loop)
  greet-bench rate --ramp 1k:10s,50k:30s        a ramping rate, reported second by second
  greet-bench capacity --slo 'p99<5ms'          the highest rate each server holds within it
  greet-bench business --stores postgres        /db, /queries, /business on PostgreSQL + Redis
  greet-bench techempower --tests fortunes      TechEmpower's tests (all seven by default)
  greet-bench --agents 2                        each level split over two agent processes
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
  130, 143  interrupted (SIGINT, SIGTERM); what was measured is kept, marked incomplete";

/// Compares axum, actix-web and hyper under identical load, as the Greetings API experiment
/// compared Spring Boot's servers
///
/// Reproduces the Greetings API experiments (Spring Boot's Tomcat / Jetty / Undertow) for
/// the axum, actix-web and hyper servers: the ladder of 100, 300, 900 and 2700 concurrent
/// requests by default, or another scenario, or all of them, each run ending with a
/// scorecard. Results go to results/TIMESTAMP/: results.json, CSVs, SVG charts and
/// report.html.
#[derive(Debug, Parser)]
#[command(name = "greet-bench", version, args_conflicts_with_subcommands = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    ladder: ladder::Flags,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The original experiment (the default): fresh connections at 100 to 2700 at once
    ///
    /// Each server in turn, started, verified, loaded at each concurrency level (one request
    /// per fresh connection), sampled, stopped
    Ladder(ladder::Flags),
    /// The JMeter experiment: keep-alive users in loops, zero delay
    ///
    /// T users each sending L requests back to back over keep-alive, zero delay, repeated;
    /// throughput per run, medians, and whether servers differ
    Loops(loops::Flags),
    /// The siege / ab experiment: keep-alive load for a time, counting threads
    ///
    /// Load for a duration (or a count) at each concurrency on the async and the blocking
    /// endpoint, zero delay, counting the server's threads
    Soak(soak::Flags),
    /// The tuning experiment: --workers and --blocking-threads grids
    ///
    /// Zero-delay load on the ceiling (/health) and greeting endpoints over a grid of
    /// --workers and, on the blocking endpoint, --blocking-threads; the best setting per
    /// server and its gain over the default
    Sweep(sweep::Flags),
    /// Store-bound endpoints on SQLite and PostgreSQL + Redis
    ///
    /// Each server's store-bound endpoints (/db, /queries, /business) against its own ceiling
    /// (/health), on SQLite and on PostgreSQL + Redis (started by the harness), over --workers
    /// and --db-pool grids
    Business(business::Flags),
    /// Open loop: latency and CPU per request at fixed request rates
    ///
    /// After a closed-loop probe for each server's capacity, levels at fixed request rates
    /// (fractions of that capacity, or --rates), each request on a schedule and its latency
    /// counted from its intended send time (no coordinated omission); the server's CPU per
    /// request at each rate
    Rate(rate::Flags),
    /// The highest rate each server holds within a latency objective
    ///
    /// The highest open-loop rate held within --slo (p99<5ms by default), every answer valid
    /// and at most 1% sent late: a closed-loop probe, an open-loop ramp to past it (where the
    /// objective first breaks is the knee), then searches that settle around the knee, whose
    /// capacities the servers are compared on
    Capacity(capacity::Flags),
    /// Keep-alive throughput over HTTP/1.1, h2c, HTTPS and h2
    ///
    /// Keep-alive throughput at zero delay over HTTP/1.1, h2c, HTTP/1.1 over TLS and HTTP/2
    /// over TLS, each a fraction of the same server's HTTP/1.1, and the servers compared on
    /// those fractions
    Protocols(protocols::Flags),
    /// TechEmpower's seven tests, on SQLite and PostgreSQL
    ///
    /// TechEmpower's seven tests (json, plaintext pipelined 16 deep, db, queries, fortunes,
    /// updates, cached-queries), the database ones on SQLite and PostgreSQL: each server's
    /// keep-alive throughput and latency per test, its share of the best, and verdicts
    #[command(name = "techempower")]
    TechEmpower(techempower::Flags),
    /// HttpArena's profiles: JSON, compression, uploads, static, TLS, WebSocket
    ///
    /// What HttpArena scores besides a hello: a keep-alive baseline, short-lived connections,
    /// a JSON POST, compressed answers, a 20 MB upload, a static file, JSON over TLS and
    /// WebSocket echo, on every server: throughput and its share of the best, latency, bytes
    /// per answer, server and client CPU per request, peak memory, verdicts
    Workloads(workloads::Flags),
    /// Every scenario, in one run and one report
    ///
    /// Every scenario (ladder, loops, soak, sweep, business, rate, capacity, protocols,
    /// techempower, workloads) with its defaults, in one run and one report
    All(AllArgs),
    /// Compare two runs: NEW/OLD per figure, with verdicts
    ///
    /// Every figure both runs have, NEW/OLD, with a verdict where both sides have runs enough
    /// (Mann-Whitney), what differs between the runs themselves, and both scorecards
    Compare(CompareArgs),
    /// Draw a run again: its tables, scorecard and report, with this greet-bench
    ///
    /// Reads a run's results.json, prints its tables and scorecard, and writes report.html,
    /// the CSVs and the charts again (into --out, or the run's folder); nothing is measured
    Report(ReportArgs),
    /// One agent's share of a level, as --agents runs it
    ///
    /// The same flags as the greet-agent binary a cluster runs: waits for --start-at, sends
    /// its share (fresh connections, --keep-alive users, or an open-loop --rate), and prints
    /// its whole tally as JSON on stdout, in lines of at most 4 KiB (exit 0 however many
    /// requests failed)
    Agent(ShardArgs),
    /// Merge agents' reports into one level
    ///
    /// The lines the agents printed, from files or stdin (`kubectl logs -l
    /// job-name=greet-load`, `docker service logs`). Every agent must be there exactly once;
    /// the figures, then each agent's, as text or JSON
    Merge(MergeArgs),
    /// Print Kubernetes manifests for one ladder level on a cluster
    ///
    /// The server as a Deployment and Service, PostgreSQL and Redis as StatefulSets, the load
    /// as an Indexed Job of agents (then `kubectl logs -l job-name=greet-load --tail=-1 |
    /// greet-bench merge`)
    Kubernetes(KubernetesArgs),
    /// Verify running servers against the contract
    ///
    /// The contract's quick cases against each URL; exit 0 if all pass
    Check(CheckArgs),
}

/// What the command line asks for.
#[derive(Debug)]
enum Action {
    /// A run of scenarios (boxed, as large as it is).
    Run(Box<Plan>),
    /// Another command (boxed: it holds every scenario's flags).
    Tool(Box<Command>),
}

impl Cli {
    /// What the command line asks for, every default applied.
    fn action(self) -> Action {
        Action::Run(Box::new(match self.command {
            None => one(self.ladder.plan(), Planned::Ladder),
            Some(Command::Ladder(args)) => one(args.plan(), Planned::Ladder),
            Some(Command::Loops(args)) => one(args.plan(), Planned::Loops),
            Some(Command::Soak(args)) => one(args.plan(), Planned::Soak),
            Some(Command::Sweep(args)) => one(args.plan(), Planned::Sweep),
            Some(Command::Business(args)) => one(args.plan(), Planned::Business),
            Some(Command::Rate(args)) => one(args.plan(), Planned::Rate),
            Some(Command::Capacity(args)) => one(args.plan(), Planned::Capacity),
            Some(Command::Protocols(args)) => one(args.plan(), Planned::Protocols),
            Some(Command::TechEmpower(args)) => one(args.plan(), Planned::TechEmpower),
            Some(Command::Workloads(args)) => one(args.plan(), Planned::Workloads),
            Some(Command::All(args)) => args.plan(),
            Some(tool) => return Action::Tool(Box::new(tool)),
        }))
    }
}

/// A run of one scenario: `plan` as `scenario` wraps it.
fn one<P>((common, plan): (Common, P), scenario: fn(P) -> Planned) -> Plan {
    Plan {
        common,
        scenarios: vec![scenario(plan)],
    }
}

/// The command line's commands, their help shaped ([`help::shape`]) and the examples under
/// it: a few under `-h`, all under `--help`.
fn command() -> clap::Command {
    help::shape(Cli::command())
        .after_help(FIRST_EXAMPLES)
        .after_long_help(EXAMPLES)
}

/// The command line parsed, its help shaped ([`help::shape`]); bad usage said in one line,
/// a flag of another command named as such.
fn parse() -> Result<Cli, ExitCode> {
    let args: Vec<String> = std::env::args().collect();
    let root = command();
    let matched = root
        .clone()
        .try_get_matches_from(&args)
        .and_then(|m| Cli::from_arg_matches(&m));
    matched.map_err(|err| {
        if !err.use_stderr() {
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        match help::elsewhere(&root, &err, &args) {
            Some(line) => eprintln!("greet-bench: error: {line}"),
            None => eprintln!("greet-bench: {} (see --help)", greet_cli::one_line(&err)),
        }
        ExitCode::from(2)
    })
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
            let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
            eprintln!(
                "greet-bench: error: unknown scenario {first:?}: the scenarios are {} (ladder is \
                 the default) and all; check verifies running servers (see --help)",
                names.join(", ")
            );
            return ExitCode::from(2);
        }
    }
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let plan = match cli.action() {
        Action::Run(plan) => *plan,
        Action::Tool(tool) => return tool.run(),
    };
    if let Err(why) = check_baseline(&plan.common) {
        return usage(&format!("{why:#}"));
    }
    if let Err(why) = plan.check_transport() {
        return usage(&why.to_string());
    }
    match run::run(plan) {
        Ok(Verdict::AllMeasured) => ExitCode::SUCCESS,
        Ok(Verdict::SomeFailed) => ExitCode::FAILURE,
        Ok(Verdict::Interrupted(signal)) => ExitCode::from(signal.exit_code()),
        Ok(Verdict::ThresholdBreached) => ExitCode::from(3),
        Err(err) => {
            eprintln!("greet-bench: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

impl Command {
    /// Runs a command that is not a scenario, its outcome as an exit code.
    fn run(self) -> ExitCode {
        let outcome = match self {
            Self::Agent(args) => return greet_load::agent::load("greet-bench agent", &args),
            Self::Compare(args) => match args.runs() {
                Ok((old, new)) => {
                    let noise = args.noise.unwrap_or(compare::NOISE);
                    let how = (noise, &args.vary[..], args.format);
                    tools::compare::run((&old, &new), how, &args.thresholds)
                }
                Err(why) => Outcome::Usage(why.to_owned()),
            },
            Self::Merge(args) => merge::run(&args.files, args.json),
            Self::Report(args) => tools::report::run(&args.run, args.out.as_deref()),
            Self::Kubernetes(args) => {
                print!("{}", kube::manifests(&args.plan()));
                Outcome::Done
            }
            Self::Check(args) => tools::check::run(&args.urls, args.protocol),
            scenario => unreachable!("{scenario:?} is a scenario, run from its plan"),
        };
        match outcome {
            Outcome::Done => ExitCode::SUCCESS,
            Outcome::Failed => ExitCode::FAILURE,
            Outcome::Usage(why) => usage(&why),
            Outcome::Breached => ExitCode::from(3),
        }
    }
}

/// A run's ratio thresholds need a baseline, and the baseline must be readable: said before
/// anything is measured.
fn check_baseline(common: &Common) -> anyhow::Result<()> {
    match (&common.baseline, common.thresholds.iter().find(|t| t.ratio)) {
        (None, Some(t)) => anyhow::bail!(
            "{:?}: a ratio (x) compares two runs: add --baseline NAME, or use compare",
            t.text
        ),
        (Some(name), _) => compare::read(&plan::baseline_dir(name))
            .map(|_| ())
            .with_context(|| format!("baseline {name}")),
        (None, None) => Ok(()),
    }
}

/// The settings of `all`.
#[derive(Debug, Clone, clap::Args)]
struct AllArgs {
    #[command(flatten)]
    servers: ServersArgs,

    #[arg(long, value_parser = crate::flags::parse_repeats,
          help = "Runs of each figure in every scenario; 4 or more can tell a difference from \
                  noise [default: each scenario's own]")]
    repeats: Option<usize>,

    #[command(flatten)]
    common: CommonArgs,
}

impl AllArgs {
    fn plan(self) -> Plan {
        let quick = self.common.quick;
        Plan::all(
            self.common.plan(),
            quick,
            self.servers.given(),
            self.repeats,
        )
    }
}

/// Bad usage: one line, exit 2.
fn usage(why: &str) -> ExitCode {
    eprintln!("greet-bench: error: {why}");
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::flags::parse_duration;
    use crate::plan::{Bins, Contract, Expect, Measured, Served};
    use crate::scenario::rate::Rates;
    use crate::scenario::soak::SoakBound;

    fn plan(args: &[&str]) -> Plan {
        match Cli::try_parse_from(std::iter::once("greet-bench").chain(args.iter().copied()))
            .expect("good flags")
            .action()
        {
            Action::Run(plan) => *plan,
            Action::Tool(tool) => panic!("a plan, not {tool:?}"),
        }
    }

    fn only(plan: Plan) -> Planned {
        assert_eq!(plan.scenarios.len(), 1);
        plan.scenarios.into_iter().next().expect("one")
    }

    #[test]
    fn no_flags_are_the_defaults_of_the_plan() {
        assert_eq!(
            only(plan(&[])),
            Planned::Ladder(ladder::Plan::defaults(false))
        );
        assert_eq!(
            only(plan(&["ladder"])),
            Planned::Ladder(ladder::Plan::defaults(false))
        );
        assert_eq!(
            only(plan(&["--quick"])),
            Planned::Ladder(ladder::Plan::defaults(true))
        );
        assert_eq!(
            only(plan(&["loops"])),
            Planned::Loops(loops::Plan::defaults(false))
        );
        assert_eq!(
            only(plan(&["soak", "--quick"])),
            Planned::Soak(soak::Plan::defaults(true))
        );
        assert_eq!(
            only(plan(&["sweep"])),
            Planned::Sweep(sweep::Plan::defaults(false))
        );
        assert_eq!(
            only(plan(&["business", "--quick"])),
            Planned::Business(business::Plan::defaults(true))
        );
        assert_eq!(
            only(plan(&["rate", "--quick"])),
            Planned::Rate(rate::Plan::defaults(true))
        );
        let Planned::Rate(rate) = only(plan(&["rate", "--rates", "5k,2.5k,300"])) else {
            panic!("not rate")
        };
        assert_eq!(rate.rates, Rates::Fixed(vec![5000.0, 2500.0, 300.0]));
        let Planned::Rate(rate) = only(plan(&["rate", "--of-capacity", "50,90%"])) else {
            panic!("not rate")
        };
        assert_eq!(rate.rates, Rates::OfCapacity(vec![0.5, 0.9]));
        let Planned::Rate(rate) = only(plan(&["rate", "--ramp", "5k,50k:30s"])) else {
            panic!("not rate")
        };
        let ramp = greet_load::schedule::Ramp {
            start: 5000.0,
            stages: vec![(50_000.0, Duration::from_secs(30))],
        };
        assert_eq!(rate.rates, Rates::Ramp(ramp));
        assert_eq!(
            only(plan(&["capacity", "--quick"])),
            Planned::Capacity(capacity::Plan::defaults(true))
        );
        let Planned::Capacity(capacity) =
            only(plan(&["capacity", "--slo", "p999<20ms", "--repeats", "6"]))
        else {
            panic!("not capacity")
        };
        assert_eq!((capacity.slo.percentile, capacity.slo.ms), (99.9, 20.0));
        assert_eq!(capacity.slo.to_string(), "p999<20ms");
        assert_eq!(capacity.repeats, 6);
        for bad in ["p98<5ms", "p99", "p99<", "p99<fast", "p99>5ms"] {
            let err = Cli::try_parse_from(["greet-bench", "capacity", "--slo", bad])
                .expect_err("refused");
            assert!(
                err.to_string().contains("is not an objective"),
                "{bad}: {err}"
            );
        }
        let err = Cli::try_parse_from(["greet-bench", "capacity", "--slo", "p99<5"])
            .expect_err("a bound without a unit");
        assert!(
            err.to_string()
                .contains("needs a unit, ms or s (e.g. p99<5ms)"),
            "{err}"
        );
        assert_eq!(
            plan(&["all", "--quick"]),
            Plan::all(Common::default(), true, None, None)
        );
        assert_eq!(plan(&[]).common, Common::default());
    }

    /// `all --repeats` reaches every scenario; `all --servers` leaves the reference servers
    /// out of the scenarios they cannot join.
    #[test]
    fn all_takes_repeats_and_gives_references_where_they_fit() {
        let all = plan(&[
            "all",
            "--quick",
            "--repeats",
            "3",
            "--servers",
            "hyper,floor",
        ]);
        assert_eq!(all.scenarios.len(), Kind::ALL.len());
        for scenario in &all.scenarios {
            let (repeats, servers) = match scenario {
                Planned::Ladder(p) => (
                    p.repeats,
                    p.servers.iter().map(|s| s.short.clone()).collect(),
                ),
                Planned::Loops(p) => (p.repeats, p.servers.clone()),
                Planned::Soak(p) => (p.repeats, p.servers.clone()),
                Planned::Sweep(p) => (p.measure.repeats, p.servers.clone()),
                Planned::Business(p) => (p.measure.repeats, p.servers.clone()),
                Planned::Rate(p) => (p.repeats, p.servers.clone()),
                Planned::Capacity(p) => (p.repeats, p.servers.clone()),
                Planned::Protocols(p) => (p.measure.repeats, p.servers.clone()),
                Planned::TechEmpower(p) => (p.measure.repeats, p.servers.clone()),
                Planned::Workloads(p) => (p.measure.repeats, p.servers.clone()),
            };
            let kind = scenario.kind();
            assert_eq!(repeats, 3, "{kind:?}");
            let joins = matches!(kind, Kind::Soak | Kind::Capacity | Kind::TechEmpower);
            let want: Vec<String> = if joins {
                vec!["hyper".into(), "floor".into()]
            } else {
                vec!["hyper".into()]
            };
            assert_eq!(servers, want, "{kind:?}");
        }
    }

    #[test]
    fn explicit_flags_win_over_quick_sizes() {
        let Planned::Ladder(ladder) = only(plan(&["ladder", "--quick", "--concurrency", "7"]))
        else {
            panic!("not a ladder")
        };
        assert_eq!(
            (ladder.levels, ladder.server.delay_ms),
            (vec![7], ladder::Plan::QUICK_DELAY_MS)
        );
        let Planned::Soak(soak) = only(plan(&["soak", "--requests", "10"])) else {
            panic!("not soak")
        };
        assert_eq!(soak.bound, SoakBound::Requests(10));
        let Planned::Loops(loops) = only(plan(&["loops", "--shapes", "10x5,2X3"])) else {
            panic!("not loops")
        };
        assert_eq!(loops.shapes, [(10, 5), (2, 3)]);
        assert_eq!(
            (loops.repeats, loops.server.delay_ms),
            (loops::Plan::REPEATS, 0)
        );
        let Planned::Soak(soak) = only(plan(&["soak", "--duration", "1.5s"])) else {
            panic!("not soak")
        };
        assert_eq!(soak.bound, SoakBound::Duration(Duration::from_millis(1500)));
        assert_eq!(soak.endpoints, ["/greetings", "/greetings/blocking"]);
        let Planned::Sweep(sweep) = only(plan(&["sweep", "--quick", "--workers", "1,3"])) else {
            panic!("not sweep")
        };
        assert_eq!(
            (sweep.workers, sweep.measure.repeats),
            (vec![1, 3], sweep::Plan::QUICK_MEASURE.repeats)
        );
    }

    #[test]
    fn servers_endpoints_and_targets() {
        let Planned::Ladder(ladder) = only(plan(&[
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
        let Planned::Ladder(ladder) = only(plan(&["--target", "jvm=http://127.0.0.1:9000/"]))
        else {
            panic!("not a ladder")
        };
        assert!(ladder.servers.is_empty(), "only the target");
        assert_eq!(ladder.foreign.targets[0].url, "http://127.0.0.1:9000");
        assert_eq!(
            (&ladder.foreign.expect, ladder.foreign.contract),
            (&Expect::Greeting, Contract::Light)
        );
        let Planned::Soak(soak) = only(plan(&[
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
        let Planned::Loops(loops) = only(plan(&[
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
        let help = command().render_long_help().to_string();
        assert!(
            help.contains("[default: 100,300,900,2700; --quick: 10,50]"),
            "{help}"
        );
        assert!(help.contains("Examples:"), "{help}");
        let mut cli = command();
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
        let mut expected: Vec<String> = Kind::ALL.iter().map(|k| k.name().to_owned()).collect();
        let tools = [
            "all",
            "compare",
            "report",
            "agent",
            "merge",
            "kubernetes",
            "check",
        ];
        expected.extend(tools.map(String::from));
        assert_eq!(subcommands, expected);
        let all: Vec<&str> = plan(&["all"])
            .scenarios
            .iter()
            .map(|s| s.kind().name())
            .collect();
        assert_eq!(all, expected[..Kind::ALL.len()]);
    }

    #[test]
    fn where_the_load_runs_is_one_placement_from_the_same_flags() {
        use crate::plan::Placement;
        use std::num::NonZeroUsize;
        let n = |n| NonZeroUsize::new(n).unwrap();
        let Planned::Ladder(ladder) = only(plan(&["--agents", "2"])) else {
            panic!("not a ladder")
        };
        assert_eq!(ladder.place, Placement::Local(n(2)));
        let Planned::Soak(soak) = only(plan(&["soak", "--swarm"])) else {
            panic!("not soak")
        };
        assert_eq!(soak.place, Placement::Swarm(n(1)));
        let Planned::Rate(rate) = only(plan(&["rate", "--swarm", "--agents", "3"])) else {
            panic!("not rate")
        };
        assert_eq!(rate.place, Placement::Swarm(n(3)));
        let Planned::Business(business) = only(plan(&["business"])) else {
            panic!("not business")
        };
        assert_eq!(business.place, Placement::Harness);
        let both = Cli::try_parse_from(["greet-bench", "--docker", "--swarm"]);
        assert!(both.is_err(), "--docker and --swarm conflict");
        assert!(
            Cli::try_parse_from(["greet-bench", "loops", "--agents", "2"]).is_err(),
            "loops has no agents"
        );
    }
}
