//! Command-line parsing and the binary's `main`: flags in, exit code out.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::runner::{self, Scenario};
use crate::server::KNOWN;

/// Reproduces the Greetings API experiments (Spring Boot's Tomcat / Jetty / Undertow) for
/// the axum, actix-web and hyper servers: the ladder of 100, 300, 900 and 2700 concurrent
/// requests by default, or another scenario, or all of them.
#[derive(Debug, Parser)]
#[command(name = "greet-bench", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    ladder: LadderArgs,
}

/// The subcommands, as typed.
pub const SUBCOMMANDS: [&str; 7] = ["ladder", "loops", "soak", "sweep", "all", "check", "help"];

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
    /// Every scenario (ladder, loops, soak, sweep) with its defaults, in one run and one report
    All(AllArgs),
    /// Verify running servers against the contract (the quick cases) and exit 0 if all pass
    Check {
        /// Base URLs, e.g. http://127.0.0.1:8081
        #[arg(required = true, value_name = "URL")]
        urls: Vec<String>,
    },
}

/// Settings every scenario shares: where results go, pinning, building, output.
#[derive(Debug, Clone, Args)]
pub struct Common {
    /// Directory for results.json, the CSVs, the charts and report.html
    /// [default: results/<UTC timestamp>]
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Do not pin servers and load generator to separate CPUs
    #[arg(long)]
    pub no_pin: bool,

    /// No progress bars or status lines; the tables still go to stdout
    #[arg(long)]
    pub quiet: bool,

    /// Per-request timeout, connect included, in seconds
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_secs: u64,

    /// Directory holding prebuilt release server binaries (skips building them)
    #[arg(long)]
    pub bin_dir: Option<PathBuf>,

    /// Do not run `cargo build --release` for the servers first
    #[arg(long)]
    pub no_build: bool,
}

/// The settings of a ladder run.
#[derive(Debug, Clone, Args)]
pub struct LadderArgs {
    /// Servers to start, in order; an entry may name its own endpoint, e.g.
    /// `axum:/greetings/blocking` [default: axum,actix,hyper, or none when --target is given]
    #[arg(long, value_delimiter = ',', value_parser = parse_server)]
    pub servers: Option<Vec<ServerSpec>>,

    /// Concurrency levels; each sends as many requests as its concurrency
    /// [default: 100,300,900,2700; --quick: 10,50]
    #[arg(long, value_delimiter = ',', value_parser = parse_level)]
    pub concurrency: Option<Vec<usize>>,

    /// Path loaded (and validated) on every server without an endpoint of its own
    #[arg(long, default_value = greet_core::paths::GREETINGS, value_parser = parse_path)]
    pub endpoint: String,

    /// --delay-ms passed to the servers [default: 1000; --quick: 50]
    #[arg(long)]
    pub delay_ms: Option<u64>,

    /// --workers passed to the servers [default: the CPUs each server is pinned to]
    #[arg(long)]
    pub workers: Option<NonZeroUsize>,

    /// --blocking-threads passed to the servers
    #[arg(long, default_value_t = NonZeroUsize::new(200).expect("non-zero"))]
    pub blocking_threads: NonZeroUsize,

    /// Runs of each level; with more than one, figures are medians with their min–max
    #[arg(long, default_value_t = NonZeroUsize::MIN)]
    pub repeats: NonZeroUsize,

    /// Benchmark a server the harness did not start, as NAME=URL (repeatable); it gets the
    /// contract check and the ladder, but no start-up or /proc figures
    #[arg(long = "target", value_name = "NAME=URL", value_parser = parse_target)]
    pub targets: Vec<Target>,

    /// Run each server as a container of its image (greet-axum:latest…, built by
    /// docker/build-offline.sh) with compose.yaml's limits, on the host's network
    #[arg(long)]
    pub docker: bool,

    /// A smoke-sized run (levels 10 and 50 at a 50 ms delay) for tests
    #[arg(long)]
    pub quick: bool,

    /// The settings every scenario shares.
    #[command(flatten)]
    pub common: Common,
}

impl LadderArgs {
    /// The concurrency levels to run.
    pub fn levels(&self) -> Vec<usize> {
        self.concurrency.clone().unwrap_or_else(|| {
            if self.quick {
                vec![10, 50]
            } else {
                vec![100, 300, 900, 2700]
            }
        })
    }

    /// The delay the servers run with.
    pub fn delay(&self) -> u64 {
        self.delay_ms.unwrap_or(if self.quick { 50 } else { 1000 })
    }
}

/// The settings of a loops run.
#[derive(Debug, Clone, Args)]
pub struct LoopsArgs {
    /// Servers, in order [default: axum,actix,hyper]
    #[arg(long, value_delimiter = ',', value_parser = parse_short)]
    pub servers: Option<Vec<String>>,

    /// Shapes as USERSxLOOPS, each user sending LOOPS requests back to back on its own
    /// keep-alive connection [default: 100x1000,1000x100 (the original's); --quick: 10x100,50x20]
    #[arg(long, value_delimiter = ',', value_parser = parse_shape)]
    pub shapes: Option<Vec<(usize, usize)>>,

    /// Runs of each shape per server
    #[arg(long, default_value_t = NonZeroUsize::new(3).expect("non-zero"))]
    pub repeats: NonZeroUsize,

    /// --delay-ms passed to the servers
    #[arg(long, default_value_t = 0)]
    pub delay_ms: u64,

    /// --workers passed to the servers [default: the CPUs each server is pinned to]
    #[arg(long)]
    pub workers: Option<NonZeroUsize>,

    /// A smoke-sized run for tests
    #[arg(long)]
    pub quick: bool,

    /// The settings every scenario shares.
    #[command(flatten)]
    pub common: Common,
}

/// The settings of a soak run.
#[derive(Debug, Clone, Args)]
pub struct SoakArgs {
    /// Servers, in order [default: axum,actix,hyper]
    #[arg(long, value_delimiter = ',', value_parser = parse_short)]
    pub servers: Option<Vec<String>>,

    /// Connections, one level after another on the same server process
    /// [default: 50,100,200 (the original's); --quick: 10,20]
    #[arg(long, value_delimiter = ',', value_parser = parse_level)]
    pub concurrency: Option<Vec<usize>>,

    /// Paths loaded, each on a freshly started server
    #[arg(long, value_delimiter = ',', value_parser = parse_path,
          default_value = "/greetings,/greetings/blocking")]
    pub endpoints: Vec<String>,

    /// How long each level runs, e.g. 10s, 500ms, 2m [default: 10s; --quick: 300ms]
    #[arg(long, value_parser = parse_duration, conflicts_with = "requests")]
    pub duration: Option<Duration>,

    /// Bound each level by a request count instead of a duration (ab's -n)
    #[arg(long)]
    pub requests: Option<NonZeroUsize>,

    /// Runs of each level
    #[arg(long, default_value_t = NonZeroUsize::MIN)]
    pub repeats: NonZeroUsize,

    /// --delay-ms passed to the servers
    #[arg(long, default_value_t = 0)]
    pub delay_ms: u64,

    /// --workers passed to the servers [default: the CPUs each server is pinned to]
    #[arg(long)]
    pub workers: Option<NonZeroUsize>,

    /// --blocking-threads passed to the servers
    #[arg(long, default_value_t = NonZeroUsize::new(200).expect("non-zero"))]
    pub blocking_threads: NonZeroUsize,

    /// A smoke-sized run for tests
    #[arg(long)]
    pub quick: bool,

    /// The settings every scenario shares.
    #[command(flatten)]
    pub common: Common,
}

/// The settings of a sweep run.
#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    /// Servers, in order [default: axum,actix,hyper]
    #[arg(long, value_delimiter = ',', value_parser = parse_short)]
    pub servers: Option<Vec<String>>,

    /// Paths loaded: /health is the ceiling (no work), /greetings/blocking is also swept over
    /// --blocking-threads
    #[arg(long, value_delimiter = ',', value_parser = parse_path,
          default_value = "/health,/greetings,/greetings/blocking")]
    pub endpoints: Vec<String>,

    /// The --workers grid; the default setting (the CPUs each server is pinned to) is always
    /// measured [default: 1,2,4; --quick: 1,2]
    #[arg(long, value_delimiter = ',', value_parser = parse_count)]
    pub workers: Option<Vec<usize>>,

    /// The --blocking-threads grid for /greetings/blocking; the default (200) is always
    /// measured [default: 2,200; --quick: 200]
    #[arg(long, value_delimiter = ',', value_parser = parse_count)]
    pub blocking_threads: Option<Vec<usize>>,

    /// Keep-alive connections of each load [default: 100; --quick: 20]
    #[arg(long, value_parser = parse_level)]
    pub concurrency: Option<usize>,

    /// Measured part of each run, e.g. 1s, 500ms [default: 500ms; --quick: 100ms]
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,

    /// Unmeasured load before each run [default: 200ms; --quick: none]
    #[arg(long, value_parser = parse_warmup)]
    pub warmup: Option<Duration>,

    /// Runs of each setting, each on a freshly started server; 4 or more can tell a gain from noise [default: 4; --quick: 2]
    #[arg(long)]
    pub repeats: Option<NonZeroUsize>,

    /// A smoke-sized run for tests
    #[arg(long)]
    pub quick: bool,

    /// The settings every scenario shares.
    #[command(flatten)]
    pub common: Common,
}

/// The settings of `all`.
#[derive(Debug, Clone, Args)]
pub struct AllArgs {
    /// Servers, in order [default: axum,actix,hyper]
    #[arg(long, value_delimiter = ',', value_parser = parse_short)]
    pub servers: Option<Vec<String>>,

    /// Every scenario smoke-sized, for tests
    #[arg(long)]
    pub quick: bool,

    /// The settings every scenario shares.
    #[command(flatten)]
    pub common: Common,
}

/// A server to start: its short name and, optionally, its own endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// `axum`, `actix` or `hyper`.
    pub short: String,
    /// Path to load instead of `--endpoint`.
    pub endpoint: Option<String>,
}

/// A server someone else started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Its name in the tables.
    pub name: String,
    /// Its base URL, `http://host:port`.
    pub url: String,
}

fn parse_server(text: &str) -> Result<ServerSpec, String> {
    let (short, endpoint) = match text.split_once(':') {
        Some((short, endpoint)) => (short, Some(parse_path(endpoint)?)),
        None => (text, None),
    };
    let short = short.strip_prefix("greet-").unwrap_or(short);
    if !KNOWN.contains(&short) {
        return Err(format!(
            "unknown server {short:?}: known are {}",
            KNOWN.join(", ")
        ));
    }
    Ok(ServerSpec {
        short: short.to_owned(),
        endpoint,
    })
}

fn parse_short(text: &str) -> Result<String, String> {
    let spec = parse_server(text)?;
    if spec.endpoint.is_some() {
        return Err(format!(
            "{text:?}: only the ladder takes an endpoint per server"
        ));
    }
    Ok(spec.short)
}

fn parse_shape(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{text:?} is not a shape USERSxLOOPS, e.g. 100x1000");
    let (users, loops) = text.trim().split_once(['x', 'X']).ok_or_else(bad)?;
    match (users.parse::<usize>(), loops.parse::<usize>()) {
        (Ok(u), Ok(l)) if (1..=100_000).contains(&u) && l >= 1 => Ok((u, l)),
        _ => Err(bad()),
    }
}

fn parse_count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=4096).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a thread count from 1 to 4096")),
    }
}

/// `10s`, `500ms`, `2m`, or plain seconds (`1.5`); zero is refused.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let d = parse_any_duration(text)?;
    if d.is_zero() {
        return Err(format!("{text:?}: a duration must be more than zero"));
    }
    Ok(d)
}

fn parse_warmup(text: &str) -> Result<Duration, String> {
    parse_any_duration(text)
}

fn parse_any_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * scale <= 86_400.0 => {
            Ok(Duration::from_secs_f64(v * scale))
        }
        _ => Err(format!(
            "{text:?} is not a duration (e.g. 10s, 500ms, 2m, up to a day)"
        )),
    }
}

fn parse_path(text: &str) -> Result<String, String> {
    if text.starts_with('/') && !text.contains(char::is_whitespace) {
        Ok(text.to_owned())
    } else {
        Err(format!("{text:?} is not a path (it must start with /)"))
    }
}

fn parse_level(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=100_000).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a concurrency from 1 to 100000")),
    }
}

fn parse_target(text: &str) -> Result<Target, String> {
    let (name, url) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?} is not NAME=URL"))?;
    if name.is_empty() {
        return Err(format!("{text:?} has an empty NAME"));
    }
    if !url.starts_with("http://") {
        return Err(format!("{url:?} is not an http:// URL"));
    }
    Ok(Target {
        name: name.to_owned(),
        url: url.trim_end_matches('/').to_owned(),
    })
}

/// The binary's `main`: parses flags, runs, and turns the outcome into an exit code
/// (0 all servers measured, 1 a server failed or the run could not be made, 2 bad flags,
/// 130 interrupted).
pub fn main() -> ExitCode {
    // Clap would call a stray word an unexpected argument; say what it is meant to be.
    if let Some(first) = std::env::args().nth(1) {
        if !first.starts_with('-') && !SUBCOMMANDS.contains(&first.as_str()) {
            eprintln!(
                "greet-bench: error: unknown scenario {first:?}: the scenarios are ladder (the \
                 default), loops, soak, sweep and all (see --help)"
            );
            return ExitCode::from(2);
        }
    }
    let cli: Cli = match greet_core::cli::parse_args("greet-bench") {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let (common, scenarios) = match cli.command {
        Some(Command::Check { urls }) => return check(&urls),
        Some(command) => scenarios(command),
        None => scenarios(Command::Ladder(cli.ladder)),
    };
    match runner::run(common, scenarios) {
        Ok(runner::Verdict::AllMeasured) => ExitCode::SUCCESS,
        Ok(runner::Verdict::SomeFailed) => ExitCode::FAILURE,
        Ok(runner::Verdict::Interrupted) => ExitCode::from(130),
        Err(err) => {
            eprintln!("greet-bench: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// The shared settings and the scenarios a command runs.
fn scenarios(command: Command) -> (Common, Vec<Scenario>) {
    match command {
        Command::Ladder(args) => (args.common.clone(), vec![Scenario::Ladder(args)]),
        Command::Loops(args) => (args.common.clone(), vec![Scenario::Loops(args)]),
        Command::Soak(args) => (args.common.clone(), vec![Scenario::Soak(args)]),
        Command::Sweep(args) => (args.common.clone(), vec![Scenario::Sweep(args)]),
        Command::All(all) => (all.common.clone(), every_scenario(&all)),
        Command::Check { .. } => unreachable!("handled by main"),
    }
}

/// `all`: each scenario with its defaults (or `--quick` sizes), on `all`'s servers.
fn every_scenario(all: &AllArgs) -> Vec<Scenario> {
    let mut flags = vec!["greet-bench"];
    if all.quick {
        flags.push("--quick");
    }
    let mut ladder = Defaults::<LadderArgs>::parse_from(&flags).args;
    let mut loops = Defaults::<LoopsArgs>::parse_from(&flags).args;
    let mut soak = Defaults::<SoakArgs>::parse_from(&flags).args;
    let mut sweep = Defaults::<SweepArgs>::parse_from(&flags).args;
    ladder.servers = all.servers.as_ref().map(|servers| {
        servers
            .iter()
            .map(|short| ServerSpec {
                short: short.clone(),
                endpoint: None,
            })
            .collect()
    });
    loops.servers.clone_from(&all.servers);
    soak.servers.clone_from(&all.servers);
    sweep.servers.clone_from(&all.servers);
    ladder.common = all.common.clone();
    loops.common = all.common.clone();
    soak.common = all.common.clone();
    sweep.common = all.common.clone();
    vec![
        Scenario::Ladder(ladder),
        Scenario::Loops(loops),
        Scenario::Soak(soak),
        Scenario::Sweep(sweep),
    ]
}

/// One scenario's flags parsed on their own: its defaults, the same as on the command line.
#[derive(Debug, Parser)]
struct Defaults<T: Args> {
    #[command(flatten)]
    args: T,
}

/// `greet-bench check URL…`: one line per server, exit 1 if any fails.
fn check(urls: &[String]) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("greet-bench: error: {err}");
            return ExitCode::FAILURE;
        }
    };
    let mut ok = true;
    for url in urls {
        match runtime.block_on(greet_conformance::check(url)) {
            Ok(()) => println!("{url}: contract check passed"),
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
    use super::*;

    fn parse_cli(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("greet-bench").chain(args.iter().copied()))
    }

    fn parse(args: &[&str]) -> Result<LadderArgs, clap::Error> {
        let cli = parse_cli(args)?;
        Ok(match cli.command {
            Some(Command::Ladder(args)) => args,
            Some(_) => panic!("not a ladder"),
            None => cli.ladder,
        })
    }

    #[test]
    fn defaults_are_the_original_experiment() {
        let args = parse(&[]).unwrap();
        assert_eq!(args.levels(), [100, 300, 900, 2700]);
        assert_eq!(args.servers, None);
        assert_eq!((args.endpoint.as_str(), args.delay()), ("/greetings", 1000));
        assert_eq!(parse(&["ladder"]).unwrap().levels(), args.levels());
        let quick = parse(&["--quick"]).unwrap();
        assert_eq!((quick.levels(), quick.delay()), (vec![10, 50], 50));
        // An explicit flag wins over --quick's sizes.
        let mixed = parse(&["ladder", "--quick", "--concurrency", "7"]).unwrap();
        assert_eq!(mixed.levels(), [7]);
    }

    #[test]
    fn servers_with_endpoints() {
        let args = parse(&["--servers", "axum,greet-hyper,axum:/greetings/blocking"]).unwrap();
        let servers = args.servers.unwrap();
        assert_eq!(servers.len(), 3);
        assert_eq!(servers[1].short, "hyper");
        assert_eq!(servers[2].endpoint.as_deref(), Some("/greetings/blocking"));
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            &["--servers", "tomcat"][..],
            &["--servers", "axum:greetings"],
            &["--concurrency", "0"],
            &["--concurrency", "10,x"],
            &["--target", "nourl"],
            &["--target", "a=https://x"],
            &["--repeats", "0"],
            &["--timeout-secs", "0"],
            &["--endpoint", "greetings"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn scenario_flags() {
        let Some(Command::Loops(loops)) = parse_cli(&["loops", "--shapes", "10x5,2X3"])
            .unwrap()
            .command
        else {
            panic!("not loops")
        };
        assert_eq!(loops.shapes, Some(vec![(10, 5), (2, 3)]));
        assert_eq!((loops.repeats.get(), loops.delay_ms), (3, 0));
        let Some(Command::Soak(soak)) = parse_cli(&["soak", "--duration", "1.5s"]).unwrap().command
        else {
            panic!("not soak")
        };
        assert_eq!(soak.duration, Some(Duration::from_millis(1500)));
        assert_eq!(soak.endpoints, ["/greetings", "/greetings/blocking"]);
        let Some(Command::Sweep(sweep)) =
            parse_cli(&["sweep", "--workers", "1,3"]).unwrap().command
        else {
            panic!("not sweep")
        };
        assert_eq!(sweep.workers, Some(vec![1, 3]));
        let every = every_scenario(&AllArgs {
            servers: Some(vec!["hyper".into()]),
            quick: true,
            common: parse(&[]).unwrap().common,
        });
        assert_eq!(every.len(), 4);
        for scenario in &every {
            match scenario {
                Scenario::Ladder(a) => {
                    assert!(a.quick && a.servers.as_ref().unwrap()[0].short == "hyper")
                }
                Scenario::Loops(a) => assert!(a.quick && a.servers == Some(vec!["hyper".into()])),
                Scenario::Soak(a) => assert!(a.quick && a.servers.is_some()),
                Scenario::Sweep(a) => assert!(a.quick && a.servers.is_some()),
            }
        }
    }

    #[test]
    fn rejects_bad_scenario_flags() {
        for bad in [
            &["soak", "--duration", "0"][..],
            &["soak", "--duration", "0ms"],
            &["soak", "--duration", "ten"],
            &["soak", "--duration", "1s", "--requests", "10"],
            &["soak", "--requests", "0"],
            &["soak", "--concurrency", ""],
            &["sweep", "--workers", ""],
            &["sweep", "--workers", "0"],
            &["sweep", "--blocking-threads", ","],
            &["sweep", "--duration", "0s"],
            &["loops", "--shapes", "100"],
            &["loops", "--shapes", "0x10"],
            &["loops", "--shapes", ""],
            &["loops", "--servers", "axum:/health"],
            &["loops", "--repeats", "0"],
        ] {
            assert!(parse_cli(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
    }

    #[test]
    fn targets() {
        let args = parse(&["--target", "jvm=http://127.0.0.1:9000/"]).unwrap();
        assert_eq!(
            args.targets,
            [Target {
                name: "jvm".into(),
                url: "http://127.0.0.1:9000".into()
            }]
        );
    }
}
