//! The command line: flags in, an [`Agenda`] out (every default applied, from each
//! scenario's plan, whose constants the help text quotes too), then the outcome as an exit
//! code. It runs nothing itself: a run goes to `crate::run`, each other command to its module
//! in `crate::tools`.
//!
//! Its subcommands are made from the list of scenarios (`scenario::Kind::ALL`), each from what
//! the scenario says of itself and its flags: the base's group (`crate::flags::BaseArgs`), its
//! own (`scenario::<name>::Flags`) and the run's (`crate::flags::CommonArgs`); the first is
//! the default, its flags the root's. `args` holds the flags of `compare`, `merge`,
//! `kubernetes`, `report` and `check`. With those, the only code that sees clap.

mod args;
mod help;

use std::process::ExitCode;

use anyhow::Context as _;
use clap::{ArgMatches, Args, Command, FromArgMatches, Subcommand};
use greet_load::agent::ShardArgs;

use crate::diff as compare;
use crate::flags::{help1, list, parse_repeats, parse_short, BaseArgs, CommonArgs, Own};
use crate::run::{self, Ending};
use crate::scenario::{Agenda, Kind, Listed, Visit};
use crate::tools::{self, kube, merge, Outcome};
use greet_model::plan::{self, Based, Common, Grounded};

use args::{CheckArgs, CompareArgs, KubernetesArgs, MergeArgs, ReportArgs};

/// Under `-h`: the first things to try.
const FIRST_EXAMPLES: &str = "\
Examples:
  greet-bench --quick           the comparison at smoke size: seconds once built
  greet-bench                   the original experiment; `all` runs every scenario
  greet-bench rate -h           a scenario's own flags (--help: every flag, grouped)";

/// What every run can end with.
const EXIT_CODES: &str = "\
Exit codes:
  0  every server measured (and every --threshold held)
  1  the run failed: a server failed, or the run could not be made (whatever the thresholds)
  2  bad usage: flags, or a file compare cannot read
  3  a --threshold was breached
  130, 143  interrupted (SIGINT, SIGTERM); what was measured is kept, marked incomplete";

/// What `greet-bench -h` says first.
const ABOUT: &str = "Compares axum, actix-web and hyper under identical load, as the Greetings \
                     API experiment compared Spring Boot's servers";

/// What `greet-bench --help` says first.
const LONG_ABOUT: &str = "Compares axum, actix-web and hyper under identical load, as the \
    Greetings API experiment compared Spring Boot's servers\n\nReproduces the Greetings API \
    experiments (Spring Boot's Tomcat / Jetty / Undertow) for the axum, actix-web and hyper \
    servers: the ladder of 100, 300, 900 and 2700 concurrent requests by default, or another \
    scenario, or all of them, each run ending with a scorecard. Results go to \
    results/TIMESTAMP/: results.json, CSVs, SVG charts and report.html.";

/// Under `--help`: a few ways in, the default scenario's examples and the first of every
/// other's, the tools, the exit codes.
fn examples() -> String {
    let mut lines: Vec<&str> = vec![
        "greet-bench                                   the original experiment on axum, actix-web, hyper",
        "greet-bench all                               every scenario, one report (about 55 minutes)",
    ];
    lines.extend(Kind::ALL[0].about().examples);
    lines.extend([
        "greet-bench --target mine=http://127.0.0.1:9000       a server the harness did not start",
        "greet-bench --agents 2                        each level split over two agent processes",
    ]);
    lines.extend(
        Kind::ALL[1..]
            .iter()
            .filter_map(|k| k.about().examples.first()),
    );
    lines.extend([
        "greet-bench loops --help                      a scenario's own flags",
        "greet-bench check http://127.0.0.1:8081       verify a running server against the contract",
        "greet-bench --repeats 5 --save-baseline main  keep this run as baseline main (results/baselines)",
        "greet-bench --repeats 5 --baseline main --threshold 'total<1.10x'   against it; exit 3 if slower",
        "greet-bench compare results/A results/B       two runs: ratios and verdicts (--format md|json)",
    ]);
    format!("Examples:\n  {}\n\n{EXIT_CODES}", lines.join("\n  "))
}

/// The commands that are not scenarios.
#[derive(Debug, Subcommand)]
enum Tool {
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
    Agent(Box<ShardArgs>),
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

/// A scenario's flags on a command: the base's, its own, the run's.
struct ScenarioArgs(Command);

impl Visit for ScenarioArgs {
    type Out = Command;

    fn visit<K: Listed>(self) -> Command {
        let cmd = BaseArgs::<K::Plan>::augment_args(self.0);
        let cmd = K::Flags::augment_args(cmd);
        CommonArgs::augment_args(cmd)
    }
}

/// A scenario's subcommand, its help from what it says of itself.
struct ScenarioCommand;

impl Visit for ScenarioCommand {
    type Out = Command;

    fn visit<K: Listed>(self) -> Command {
        let about = &K::ABOUT;
        // After the flags: each group's derive would set its own doc as the command's.
        ScenarioArgs(Command::new(about.name))
            .visit::<K>()
            .about(about.summary)
            .long_about(format!("{}\n\n{}", about.summary, about.detail))
    }
}

/// A run of one scenario, from its command's matches.
struct ReadPlan<'a>(&'a ArgMatches);

impl Visit for ReadPlan<'_> {
    type Out = Result<Agenda, clap::Error>;

    fn visit<K: Listed>(self) -> Result<Agenda, clap::Error> {
        let mut common = CommonArgs::from_arg_matches(self.0)?;
        let mut plan = K::Plan::defaults(common.quick);
        BaseArgs::<K::Plan>::from_arg_matches(self.0)?.apply(plan.base_mut());
        K::Flags::from_arg_matches(self.0)?.apply(&mut plan, &mut common);
        K::check(&plan)
            .map_err(|line| clap::Error::raw(clap::error::ErrorKind::ValueValidation, line))?;
        Ok(Agenda::of(common.plan(), K::planned(plan)))
    }
}

/// What the command line asks for.
#[derive(Debug)]
enum Action {
    /// A run of scenarios (boxed, as large as it is).
    Run(Box<Agenda>),
    /// Another command.
    Tool(Box<Tool>),
}

/// What `matches` ask for, every default applied.
fn action(matches: &ArgMatches) -> Result<Action, clap::Error> {
    let agenda = match matches.subcommand() {
        None => Kind::ALL[0].visit(ReadPlan(matches))?,
        Some((ALL, all)) => AllArgs::from_arg_matches(all)?.agenda(),
        Some((name, sub)) => match Kind::named(name) {
            Some(kind) => kind.visit(ReadPlan(sub))?,
            None => return Ok(Action::Tool(Box::new(Tool::from_arg_matches(matches)?))),
        },
    };
    Ok(Action::Run(Box::new(agenda)))
}

/// `all`'s subcommand.
const ALL: &str = "all";

/// The command line's commands: the default scenario's flags on the root, a subcommand a
/// scenario, `all`, the tools; their help shaped ([`help::shape`]) and the examples under it:
/// a few under `-h`, all under `--help`.
fn command() -> Command {
    // One usage line: the default scenario's flags, or a command's.
    let root = Command::new("greet-bench")
        .version(env!("CARGO_PKG_VERSION"))
        .override_usage("greet-bench [COMMAND] [OPTIONS]")
        .args_conflicts_with_subcommands(true);
    let mut root = Kind::ALL[0].visit(ScenarioArgs(root));
    for kind in Kind::ALL {
        root = root.subcommand(kind.visit(ScenarioCommand));
    }
    let names: Vec<&str> = Kind::ALL
        .iter()
        .filter(|k| k.about().in_all)
        .map(|k| k.name())
        .collect();
    let all = AllArgs::augment_args(Command::new(ALL))
        .about("Every scenario, in one run and one report")
        .long_about(format!(
            "Every scenario, in one run and one report\n\nEvery scenario ({}) with its \
             defaults, in one run and one report",
            names.join(", ")
        ));
    let root = Tool::augment_subcommands(root.subcommand(all))
        .about(ABOUT)
        .long_about(LONG_ABOUT);
    help::shape(root)
        .after_help(FIRST_EXAMPLES)
        .after_long_help(examples())
}

/// The command line parsed, its help shaped ([`help::shape`]); bad usage said in one line,
/// a flag of another command named as such.
fn parse() -> Result<Action, ExitCode> {
    let args: Vec<String> = std::env::args().collect();
    let root = command();
    let matched = root
        .clone()
        .try_get_matches_from(&args)
        .and_then(|m| action(&m));
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
        let known = first == "help" || command().find_subcommand(&first).is_some();
        if !first.starts_with('-') && !known {
            let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
            eprintln!(
                "greet-bench: error: unknown scenario {first:?}: the scenarios are {} ({} is \
                 the default) and all; check verifies running servers (see --help)",
                names.join(", "),
                names[0]
            );
            return ExitCode::from(2);
        }
    }
    let agenda = match parse() {
        Ok(Action::Run(agenda)) => *agenda,
        Ok(Action::Tool(tool)) => return tool.run(),
        Err(code) => return code,
    };
    if let Err(why) = check_baseline(&agenda.common) {
        return usage(&format!("{why:#}"));
    }
    if let Err(why) = agenda.check_transport() {
        return usage(&why.to_string());
    }
    match run::run(agenda) {
        Ok(Ending::AllMeasured) => ExitCode::SUCCESS,
        Ok(Ending::SomeFailed) => ExitCode::FAILURE,
        Ok(Ending::Interrupted(signal)) => ExitCode::from(signal.exit_code()),
        Ok(Ending::ThresholdBreached) => ExitCode::from(3),
        Err(err) => {
            eprintln!("greet-bench: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

impl Tool {
    /// Runs it, its outcome as an exit code.
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
    #[arg(long, value_delimiter = ',', value_parser = parse_short,
          help = help1("Servers, in order; floor (the workspace's reference server) and nginx \
                        join the scenarios that take references, never ranked",
                       list(&plan::SERVERS)))]
    servers: Option<Vec<String>>,

    #[arg(long, value_parser = parse_repeats,
          help = "Blocks of each figure in every scenario; 6 or more can decide a verdict \
                  [default: each scenario's own]")]
    repeats: Option<usize>,

    #[command(flatten)]
    common: CommonArgs,
}

impl AllArgs {
    fn agenda(self) -> Agenda {
        let quick = self.common.quick;
        Agenda::all(self.common.plan(), quick, self.servers, self.repeats)
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
    use crate::scenario::rate::Rates;
    use crate::scenario::soak::SoakBound;
    use crate::scenario::{business, capacity, ladder, loops, rate, soak, sweep, Planned};
    use greet_model::plan::{Bins, Contract, Expect, Measured};

    fn parsed(args: &[&str]) -> Result<Action, clap::Error> {
        command()
            .try_get_matches_from(std::iter::once("greet-bench").chain(args.iter().copied()))
            .and_then(|m| action(&m))
    }

    fn plan(args: &[&str]) -> Agenda {
        match parsed(args).expect("good flags") {
            Action::Run(agenda) => *agenda,
            Action::Tool(tool) => panic!("a plan, not {tool:?}"),
        }
    }

    fn only(plan: Agenda) -> Planned {
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
        assert_eq!(capacity.base.repeats, 6);
        for bad in ["p98<5ms", "p99", "p99<", "p99<fast", "p99>5ms"] {
            let err = parsed(&["capacity", "--slo", bad]).expect_err("refused");
            assert!(
                err.to_string().contains("is not an objective"),
                "{bad}: {err}"
            );
        }
        let err = parsed(&["capacity", "--slo", "p99<5"]).expect_err("a bound without a unit");
        assert!(
            err.to_string()
                .contains("needs a unit, ms or s (e.g. p99<5ms)"),
            "{err}"
        );
        assert_eq!(
            plan(&["all", "--quick"]),
            Agenda::all(Common::default(), true, None, None)
        );
        assert_eq!(plan(&[]).common, Common::default());
    }

    /// The upload's slices are at least a second (but under `--quick`), or `--duration` where
    /// it asks for more; every other profile's are `--duration`'s.
    #[test]
    fn the_upload_is_measured_in_slices_it_can_fill() {
        use greet_model::plan::Profile;
        let slices = |args: &[&str]| {
            let Planned::Workloads(plan) = only(plan(args)) else {
                panic!("not workloads")
            };
            (plan.slice(Profile::Upload), plan.slice(Profile::Baseline))
        };
        let ms = Duration::from_millis;
        assert_eq!(slices(&["workloads"]), (ms(1000), ms(250)));
        assert_eq!(
            slices(&["workloads", "--duration", "2s"]),
            (ms(2000), ms(2000))
        );
        assert_eq!(slices(&["workloads", "--quick"]), (ms(150), ms(150)));
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
        let in_all = Kind::ALL.iter().filter(|k| k.about().in_all).count();
        assert_eq!(all.scenarios.len(), in_all);
        for scenario in &all.scenarios {
            let (base, kind) = (scenario.base(), scenario.kind());
            assert_eq!(base.repeats, 3, "{kind:?}");
            let want = if kind.about().references {
                ["hyper", "floor"].as_slice()
            } else {
                ["hyper"].as_slice()
            };
            assert_eq!(base.shorts(), want, "{kind:?}");
        }
        let joining = Kind::ALL.iter().filter(|k| k.about().references).count();
        assert!((1..Kind::ALL.len()).contains(&joining), "{joining}");
    }

    #[test]
    fn explicit_flags_win_over_quick_sizes() {
        let Planned::Ladder(ladder) = only(plan(&["ladder", "--quick", "--concurrency", "7"]))
        else {
            panic!("not a ladder")
        };
        assert_eq!(
            (ladder.levels, ladder.base.server.delay_ms),
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
            (loops.base.repeats, loops.base.server.delay_ms),
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
            (sweep.workers, sweep.base.repeats),
            (vec![1, 3], <sweep::Plan as Measured>::QUICK_REPEATS)
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
        assert_eq!(ladder.base.servers[1].short, "hyper");
        assert_eq!(
            ladder.base.servers[2].endpoint.as_deref(),
            Some("/greetings/blocking")
        );
        let Planned::Ladder(ladder) = only(plan(&["--target", "jvm=http://127.0.0.1:9000/"]))
        else {
            panic!("not a ladder")
        };
        assert!(ladder.base.servers.is_empty(), "only the target");
        assert_eq!(ladder.base.foreign.targets[0].url, "http://127.0.0.1:9000");
        assert_eq!(
            (&ladder.base.foreign.expect, ladder.base.foreign.contract),
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
        assert!(soak.base.servers.is_empty(), "only the target");
        assert_eq!(soak.base.foreign.expect, Expect::Pattern("^Hi".into()));
        assert_eq!(soak.base.foreign.contract, Contract::Full);
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
            (loops.base.servers.len(), &loops.base.foreign.expect),
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
        let subcommands: Vec<String> = command()
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
        // All but knobs, whose builds take too long to run unasked.
        let in_all: Vec<&str> = Kind::ALL
            .iter()
            .map(|k| k.name())
            .filter(|n| *n != "knobs")
            .collect();
        assert_eq!(all, in_all);
        // knobs is the scenarios that judge each part, then its own.
        let knobs: Vec<&str> = plan(&["knobs", "--quick", "--servers", "hyper"])
            .scenarios
            .iter()
            .map(|s| s.kind().name())
            .collect();
        assert_eq!(knobs, ["cost", "techempower", "knobs"]);
        let contract = plan(&["knobs", "--servers", "hyper", "--parts", "contract"]);
        assert_eq!(only(contract).kind().name(), "knobs");
        // No knob of the list is the crate's: refused, rather than a run of the crate alone.
        let refused = parsed(&["knobs", "--servers", "actix", "--knobs", "pipeline-flush"])
            .expect_err("pipeline-flush is hyper's and axum's");
        assert!(
            refused.to_string().contains("none of them applies"),
            "{refused}"
        );
    }

    #[test]
    fn where_the_load_runs_is_one_placement_from_the_same_flags() {
        use greet_model::plan::Placement;
        use std::num::NonZeroUsize;
        let n = |n| NonZeroUsize::new(n).unwrap();
        let Planned::Ladder(ladder) = only(plan(&["--agents", "2"])) else {
            panic!("not a ladder")
        };
        assert_eq!(ladder.base.place, Placement::Local(n(2)));
        let Planned::Soak(soak) = only(plan(&["soak", "--swarm"])) else {
            panic!("not soak")
        };
        assert_eq!(soak.base.place, Placement::Swarm(n(1)));
        let Planned::Rate(rate) = only(plan(&["rate", "--swarm", "--agents", "3"])) else {
            panic!("not rate")
        };
        assert_eq!(rate.base.place, Placement::Swarm(n(3)));
        let Planned::Business(business) = only(plan(&["business"])) else {
            panic!("not business")
        };
        assert_eq!(business.base.place, Placement::Harness);
        let both = parsed(&["--docker", "--swarm"]);
        assert!(both.is_err(), "--docker and --swarm conflict");
        assert!(
            parsed(&["loops", "--agents", "2"]).is_err(),
            "loops has no agents"
        );
    }
}
