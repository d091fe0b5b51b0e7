//! The command line: flags in, a [`Plan`] out (every default applied, from [`crate::plan`]'s
//! constants, which the help text quotes too), then the run's outcome as an exit code. The only
//! module that sees clap.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::plan::{
    self, Bins, Business, Common, Contract, Expect, Foreign, Ladder, Loops, Plan, Rate, Rates,
    Scenario, ServerSpec, Soak, SoakBound, Store, Sweep, Target,
};
use crate::run::{self, Verdict};

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
  greet-bench check http://127.0.0.1:8081       verify a running server against the contract";

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

/// The subcommands, as typed.
const SUBCOMMANDS: [&str; 9] = [
    "ladder", "loops", "soak", "sweep", "business", "rate", "all", "check", "help",
];

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
    /// Every scenario (ladder, loops, soak, sweep, business, rate) with its defaults, in one
    /// run and one report
    All(AllArgs),
    /// Verify running servers against the contract (the quick cases) and exit 0 if all pass
    Check {
        /// Base URLs, e.g. http://127.0.0.1:8081
        #[arg(required = true, value_name = "URL")]
        urls: Vec<String>,
    },
}

/// `text [default: normal; --quick: quick]`.
fn help(text: &str, normal: impl std::fmt::Display, quick: impl std::fmt::Display) -> String {
    format!("{text} [default: {normal}; --quick: {quick}]")
}

/// `text [default: value]`.
fn help1(text: &str, value: impl std::fmt::Display) -> String {
    format!("{text} [default: {value}]")
}

fn list<T: std::fmt::Display>(values: &[T]) -> String {
    values
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn shapes(values: &[(usize, usize)]) -> String {
    values
        .iter()
        .map(|(u, l)| format!("{u}x{l}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn millis(d: Duration) -> String {
    format!("{}ms", d.as_millis())
}

/// Settings every scenario shares: where results go, pinning, building, output.
#[derive(Debug, Clone, Args)]
struct CommonArgs {
    /// Directory for results.json, the CSVs, the charts and report.html
    /// [default: results/UTC-TIMESTAMP]
    #[arg(long)]
    out: Option<PathBuf>,

    /// Do not pin servers and load generator to separate CPUs
    #[arg(long)]
    no_pin: bool,

    /// No progress bars or status lines; the tables still go to stdout
    #[arg(long)]
    quiet: bool,

    #[arg(long, value_parser = clap::value_parser!(u64).range(1..),
          help = help1("Per-request timeout, connect included, in seconds", Common::TIMEOUT.as_secs()))]
    timeout_secs: Option<u64>,

    /// Directory holding prebuilt release server binaries (nothing is built); without it, the
    /// harness builds them in its workspace, or finds them beside itself or on PATH
    #[arg(long)]
    bin_dir: Option<PathBuf>,

    /// Do not run `cargo build --release` for the servers first
    #[arg(long)]
    no_build: bool,
}

impl CommonArgs {
    fn plan(self) -> Common {
        Common {
            out: self.out,
            pin: !self.no_pin,
            quiet: self.quiet,
            timeout: self
                .timeout_secs
                .map_or(Common::TIMEOUT, Duration::from_secs),
            bins: match (self.bin_dir, self.no_build) {
                (Some(dir), _) => Bins::Dir(dir),
                (None, true) => Bins::NoBuild,
                (None, false) => Bins::Build,
            },
        }
    }
}

/// The settings of a ladder run.
#[derive(Debug, Clone, Args)]
struct LadderArgs {
    #[arg(long, value_delimiter = ',', value_parser = parse_server,
          help = help1("Servers to start, in order; an entry may name its own endpoint, e.g. \
                        axum:/greetings/blocking (none when only --target is given); tomcat and \
                        jetty are the original's servers, built with the machine's JDK",
                       list(&plan::SERVERS)))]
    servers: Option<Vec<ServerSpec>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_level,
          help = help("Concurrency levels; each sends as many requests as its concurrency",
                      list(&Ladder::LEVELS), list(&Ladder::QUICK_LEVELS)))]
    concurrency: Option<Vec<usize>>,

    #[arg(long, value_parser = parse_path,
          help = help1("Path and query loaded (and validated) on every server without an \
                        endpoint of its own", greet_core::paths::GREETINGS))]
    endpoint: Option<String>,

    #[arg(long, help = help("--delay-ms passed to the servers", plan::DELAY_MS, Ladder::QUICK_DELAY_MS))]
    delay_ms: Option<u64>,

    /// --workers passed to the servers [default: the CPUs each server is pinned to]
    #[arg(long, value_parser = parse_count)]
    workers: Option<usize>,

    #[arg(long, value_parser = parse_count,
          help = help1("--blocking-threads passed to the servers", plan::BLOCKING_THREADS))]
    blocking_threads: Option<usize>,

    #[arg(long, value_parser = parse_repeats,
          help = help1("Runs of each level; with more than one, figures are medians and every \
                        pair of servers is compared on total time", 1))]
    repeats: Option<usize>,

    #[command(flatten)]
    foreign: ForeignArgs,

    /// Run each server as a container of its image (greet-axum:latest…, built by
    /// docker/build-offline.sh) with compose.yaml's limits, on the host's network; sampled from
    /// /proc where its process is this host's, and through the engine's stats always
    #[arg(long)]
    docker: bool,

    /// With --docker: run the containers on this Docker network and load them at their
    /// address there (the engine may be another host's: DOCKER_HOST)
    #[arg(long, value_name = "NAME", requires = "docker")]
    docker_network: Option<String>,

    /// A smoke-sized run, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

impl LadderArgs {
    fn plan(self) -> (Common, Ladder) {
        let mut plan = Ladder::defaults(self.quick);
        match self.servers {
            Some(servers) => plan.servers = servers,
            None if !self.foreign.target.is_empty() => plan.servers.clear(),
            None => {}
        }
        plan.foreign = self.foreign.plan();
        set(&mut plan.levels, self.concurrency);
        set(&mut plan.endpoint, self.endpoint);
        set(&mut plan.delay_ms, self.delay_ms);
        plan.workers = self.workers;
        set(&mut plan.blocking_threads, self.blocking_threads);
        set(&mut plan.repeats, self.repeats);
        plan.docker = self.docker;
        plan.docker_network = self.docker_network;
        (self.common.plan(), plan)
    }
}

/// Servers the harness did not start, and how every answer is judged.
#[derive(Debug, Clone, Args)]
struct ForeignArgs {
    /// Load a server the harness did not start, as NAME=URL (repeatable): a JVM app, a
    /// compose service, a server on another host. No start-up or /proc figures
    #[arg(long, value_name = "NAME=URL", value_parser = parse_target)]
    target: Vec<Target>,

    /// What a valid answer is, under load and in the check: a regular expression its body
    /// must match (with a 2xx status), or `any` for any 2xx [default: the greeting, `<word>
    /// <name>!`]
    #[arg(long, value_name = "REGEX|any", value_parser = parse_expect)]
    expect: Option<Expect>,

    /// How a --target is verified first: `light` (its endpoint answers 2xx and the expected
    /// body) or `full` (the whole contract suite, as the workspace's servers get)
    #[arg(long, value_name = "light|full", value_parser = parse_contract, default_value = "light")]
    contract: Contract,
}

impl ForeignArgs {
    fn plan(self) -> Foreign {
        Foreign {
            targets: self.target,
            expect: self.expect.unwrap_or_default(),
            contract: self.contract,
        }
    }
}

fn parse_expect(text: &str) -> Result<Expect, String> {
    if text == "any" {
        return Ok(Expect::Any);
    }
    regex::bytes::Regex::new(text)
        .map(|_| Expect::Pattern(text.to_owned()))
        .map_err(|e| {
            let why = e.to_string();
            let why = why.lines().last().unwrap_or("invalid").trim().to_owned();
            format!("{text:?} is not a regular expression ({why})")
        })
}

fn refuse_target(_: &str) -> Result<String, String> {
    Err(
        "this scenario starts each server afresh with every setting: it cannot load a \
         --target (ladder, loops, soak and rate can)"
            .to_owned(),
    )
}

fn parse_contract(text: &str) -> Result<Contract, String> {
    match text {
        "light" => Ok(Contract::Light),
        "full" => Ok(Contract::Full),
        _ => Err(format!("{text:?}: the contract checks are light and full")),
    }
}

/// An explicit flag wins over the default (and over `--quick`'s size).
fn set<T>(field: &mut T, given: Option<T>) {
    if let Some(value) = given {
        *field = value;
    }
}

/// The settings of a loops run.
#[derive(Debug, Clone, Args)]
struct LoopsArgs {
    #[arg(long, value_delimiter = ',', value_parser = parse_short,
          help = help1("Servers, in order", list(&plan::SERVERS)))]
    servers: Option<Vec<String>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_shape,
          help = help("Shapes as USERSxLOOPS, each user sending LOOPS requests back to back on \
                       its own keep-alive connection", shapes(&Loops::SHAPES), shapes(&Loops::QUICK_SHAPES)))]
    shapes: Option<Vec<(usize, usize)>>,

    #[arg(long, value_parser = parse_repeats,
          help = help1("Runs of each shape per server; 4 or more can tell servers apart", Loops::REPEATS))]
    repeats: Option<usize>,

    #[arg(long, help = help1("--delay-ms passed to the servers", 0))]
    delay_ms: Option<u64>,

    /// --workers passed to the servers [default: the CPUs each server is pinned to]
    #[arg(long, value_parser = parse_count)]
    workers: Option<usize>,

    #[command(flatten)]
    foreign: ForeignArgs,

    /// A smoke-sized run, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

/// A scenario's own servers: those given, none when only targets are, else every one.
fn own_servers(plan: &mut Vec<String>, given: Option<Vec<String>>, foreign: &Foreign) {
    match given {
        Some(servers) => *plan = servers,
        None if !foreign.targets.is_empty() => plan.clear(),
        None => {}
    }
}

impl LoopsArgs {
    fn plan(self) -> (Common, Loops) {
        let mut plan = Loops::defaults(self.quick);
        plan.foreign = self.foreign.plan();
        own_servers(&mut plan.servers, self.servers, &plan.foreign);
        set(&mut plan.shapes, self.shapes);
        set(&mut plan.repeats, self.repeats);
        set(&mut plan.delay_ms, self.delay_ms);
        plan.workers = self.workers;
        (self.common.plan(), plan)
    }
}

/// The settings of a soak run.
#[derive(Debug, Clone, Args)]
struct SoakArgs {
    #[arg(long, value_delimiter = ',', value_parser = parse_short,
          help = help1("Servers, in order", list(&plan::SERVERS)))]
    servers: Option<Vec<String>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_level,
          help = help("Connections, one level after another on the same server process",
                      list(&Soak::LEVELS), list(&Soak::QUICK_LEVELS)))]
    concurrency: Option<Vec<usize>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_path,
          help = help1("Paths loaded, each on a freshly started server", list(&Soak::ENDPOINTS)))]
    endpoints: Option<Vec<String>>,

    #[arg(long, value_parser = parse_duration, conflicts_with = "requests",
          help = help("How long each level runs, e.g. 10s, 500ms, 2m",
                      format!("{}s", Soak::DURATION.as_secs()), millis(Soak::QUICK_DURATION)))]
    duration: Option<Duration>,

    /// Bound each level by a request count instead of a duration (ab's -n)
    #[arg(long, value_parser = parse_positive)]
    requests: Option<usize>,

    #[arg(long, value_parser = parse_repeats, help = help1("Runs of each level", 1))]
    repeats: Option<usize>,

    #[arg(long, help = help1("--delay-ms passed to the servers", 0))]
    delay_ms: Option<u64>,

    /// --workers passed to the servers [default: the CPUs each server is pinned to]
    #[arg(long, value_parser = parse_count)]
    workers: Option<usize>,

    #[arg(long, value_parser = parse_count,
          help = help1("--blocking-threads passed to the servers", plan::BLOCKING_THREADS))]
    blocking_threads: Option<usize>,

    #[command(flatten)]
    foreign: ForeignArgs,

    /// A smoke-sized run, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

impl SoakArgs {
    fn plan(self) -> (Common, Soak) {
        let mut plan = Soak::defaults(self.quick);
        plan.foreign = self.foreign.plan();
        own_servers(&mut plan.servers, self.servers, &plan.foreign);
        set(&mut plan.levels, self.concurrency);
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.bound, self.duration.map(SoakBound::Duration));
        set(&mut plan.bound, self.requests.map(SoakBound::Requests));
        set(&mut plan.repeats, self.repeats);
        set(&mut plan.delay_ms, self.delay_ms);
        plan.workers = self.workers;
        set(&mut plan.blocking_threads, self.blocking_threads);
        (self.common.plan(), plan)
    }
}

/// The settings of a sweep run.
#[derive(Debug, Clone, Args)]
struct SweepArgs {
    #[arg(long, value_delimiter = ',', value_parser = parse_short,
          help = help1("Servers, in order", list(&plan::SERVERS)))]
    servers: Option<Vec<String>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_path,
          help = help1("Paths loaded: /health is the ceiling (no work); /greetings/blocking is \
                        also swept over --blocking-threads", list(&Sweep::ENDPOINTS)))]
    endpoints: Option<Vec<String>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_count,
          help = help("The --workers grid; the default setting (the CPUs each server is pinned \
                       to) is always measured", list(&Sweep::WORKERS), list(&Sweep::QUICK_WORKERS)))]
    workers: Option<Vec<usize>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_count,
          help = help("The --blocking-threads grid for /greetings/blocking; the servers' default \
                       is always measured", list(&Sweep::BLOCKING_THREADS), list(&Sweep::QUICK_BLOCKING_THREADS)))]
    blocking_threads: Option<Vec<usize>>,

    #[arg(long, value_parser = parse_level,
          help = help("Keep-alive connections of each load", Sweep::CONCURRENCY, Sweep::QUICK_CONCURRENCY))]
    concurrency: Option<usize>,

    #[arg(long, value_parser = parse_duration,
          help = help("Measured part of each run, e.g. 1s, 500ms",
                      millis(Sweep::DURATION), millis(Sweep::QUICK_DURATION)))]
    duration: Option<Duration>,

    #[arg(long, value_parser = parse_any_duration,
          help = help("Unmeasured load before each run", millis(Sweep::WARMUP), "none"))]
    warmup: Option<Duration>,

    #[arg(long, value_parser = parse_repeats,
          help = help("Runs of each setting, each on a freshly started server; 4 or more can \
                       tell a gain from noise", Sweep::REPEATS, Sweep::QUICK_REPEATS))]
    repeats: Option<usize>,

    /// Refused: the sweep restarts every server with every setting
    #[arg(long, hide = true, value_parser = refuse_target)]
    target: Vec<String>,

    /// A smoke-sized run, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

impl SweepArgs {
    fn plan(self) -> (Common, Sweep) {
        let mut plan = Sweep::defaults(self.quick);
        set(&mut plan.servers, self.servers);
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.workers, self.workers);
        set(&mut plan.blocking_threads, self.blocking_threads);
        set(&mut plan.concurrency, self.concurrency);
        set(&mut plan.duration, self.duration);
        set(&mut plan.warmup, self.warmup);
        set(&mut plan.repeats, self.repeats);
        (self.common.plan(), plan)
    }
}

/// The settings of a business run.
#[derive(Debug, Clone, Args)]
struct BusinessArgs {
    #[arg(long, value_delimiter = ',', value_parser = parse_short,
          help = help1("Servers, in order", list(&plan::SERVERS)))]
    servers: Option<Vec<String>>,

    /// Stores, in order: sqlite (embedded, in-process cache) and postgres (PostgreSQL +
    /// Redis, started by the harness on loopback unless --database-url and --redis-url say
    /// where they are) [default: sqlite,postgres]
    #[arg(long, value_delimiter = ',', value_parser = parse_store)]
    stores: Option<Vec<String>>,

    /// PostgreSQL for the postgres store instead of starting one, postgres://… (the servers
    /// seed an empty database)
    #[arg(long, value_name = "URL", requires = "redis_url", value_parser = parse_database_url)]
    database_url: Option<String>,

    /// Redis for the postgres store instead of starting one, redis://…
    #[arg(long, value_name = "URL", requires = "database_url", value_parser = parse_redis_url)]
    redis_url: Option<String>,

    #[arg(long, value_delimiter = ',', value_parser = parse_path,
          help = help1("Paths loaded on each server; /health is the ceiling the others are \
                        set against", list(&Business::ENDPOINTS)))]
    endpoints: Option<Vec<String>>,

    /// The --workers grid; the default setting (the CPUs each server is pinned to) is always
    /// measured [default: the default only]
    #[arg(long, value_delimiter = ',', value_parser = parse_count)]
    workers: Option<Vec<usize>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_count,
          help = help("The --db-pool grid; the servers' default is always measured",
                      list(&Business::DB_POOLS), list(&Business::QUICK_DB_POOLS)))]
    db_pools: Option<Vec<usize>>,

    #[arg(long, value_parser = parse_level,
          help = help("Keep-alive connections of each load", Business::CONCURRENCY, Business::QUICK_CONCURRENCY))]
    concurrency: Option<usize>,

    #[arg(long, value_parser = parse_duration,
          help = help("Measured part of each load, e.g. 1s, 500ms",
                      millis(Business::DURATION), millis(Business::QUICK_DURATION)))]
    duration: Option<Duration>,

    #[arg(long, value_parser = parse_any_duration,
          help = help("Unmeasured load before each", millis(Business::WARMUP), millis(Business::QUICK_WARMUP)))]
    warmup: Option<Duration>,

    #[arg(long, value_parser = parse_repeats,
          help = help("Runs of each setting, each on a freshly started server; 4 or more can \
                       tell a difference from noise", Business::REPEATS, Business::QUICK_REPEATS))]
    repeats: Option<usize>,

    /// Refused: the business run restarts every server with every store and setting
    #[arg(long, hide = true, value_parser = refuse_target)]
    target: Vec<String>,

    /// A smoke-sized run, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

impl BusinessArgs {
    fn plan(self) -> (Common, Business) {
        let mut plan = Business::defaults(self.quick);
        set(&mut plan.servers, self.servers);
        if let Some(stores) = self.stores {
            plan.stores = stores
                .iter()
                .map(|s| match s.as_str() {
                    "sqlite" => Store::Sqlite,
                    _ => Store::Servers {
                        database_url: None,
                        redis_url: None,
                        optional: false,
                    },
                })
                .collect();
        }
        for store in &mut plan.stores {
            if let Store::Servers {
                database_url,
                redis_url,
                ..
            } = store
            {
                database_url.clone_from(&self.database_url);
                redis_url.clone_from(&self.redis_url);
            }
        }
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.workers, self.workers);
        set(&mut plan.db_pools, self.db_pools);
        set(&mut plan.concurrency, self.concurrency);
        set(&mut plan.duration, self.duration);
        set(&mut plan.warmup, self.warmup);
        set(&mut plan.repeats, self.repeats);
        (self.common.plan(), plan)
    }
}

fn parse_store(text: &str) -> Result<String, String> {
    match text.trim() {
        "sqlite" | "postgres" => Ok(text.trim().to_owned()),
        _ => Err(format!(
            "{text:?}: the stores are sqlite and postgres (PostgreSQL + Redis)"
        )),
    }
}

fn parse_database_url(text: &str) -> Result<String, String> {
    match text.parse::<greet_store::DatabaseUrl>()? {
        greet_store::DatabaseUrl::Postgres(url) => Ok(url),
        greet_store::DatabaseUrl::Sqlite(_) => {
            Err("the postgres store needs a postgres:// URL".to_owned())
        }
    }
}

fn parse_redis_url(text: &str) -> Result<String, String> {
    text.parse::<greet_store::RedisUrl>().map(|url| url.0)
}

/// The settings of a rate run.
#[derive(Debug, Clone, Args)]
struct RateArgs {
    #[arg(long, value_delimiter = ',', value_parser = parse_short,
          help = help1("Servers, in order", list(&plan::SERVERS)))]
    servers: Option<Vec<String>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_path,
          help = help1("Paths loaded, one after another on each server", greet_core::paths::GREETINGS))]
    endpoints: Option<Vec<String>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_fraction,
          help = help("Levels as percentages of each server's capacity (its closed-loop probe)",
                      percents(&Rate::FRACTIONS), percents(&Rate::QUICK_FRACTIONS)))]
    of_capacity: Option<Vec<f64>>,

    /// Levels as requests a second, the same for every server, e.g. 5k,20k,50000 (instead of
    /// --of-capacity)
    #[arg(long, value_delimiter = ',', value_parser = parse_rate, conflicts_with = "of_capacity")]
    rates: Option<Vec<f64>>,

    #[arg(long, value_parser = parse_duration,
          help = help("How long each level runs", format!("{}s", Rate::DURATION.as_secs()), millis(Rate::QUICK_DURATION)))]
    duration: Option<Duration>,

    #[arg(long, value_parser = parse_duration,
          help = help("How long the closed-loop probe for the capacity runs",
                      format!("{}s", Rate::PROBE.as_secs()), millis(Rate::QUICK_PROBE)))]
    probe: Option<Duration>,

    #[arg(long, value_parser = parse_level,
          help = help("Keep-alive connections, each carrying one request at a time",
                      Rate::CONNECTIONS, Rate::QUICK_CONNECTIONS))]
    connections: Option<usize>,

    #[arg(long, value_parser = parse_repeats,
          help = help1("Runs of each level; 4 or more can tell servers apart on p99", 1))]
    repeats: Option<usize>,

    #[arg(long, help = help1("--delay-ms passed to the servers", 0))]
    delay_ms: Option<u64>,

    /// --workers passed to the servers [default: the CPUs each server is pinned to]
    #[arg(long, value_parser = parse_count)]
    workers: Option<usize>,

    #[command(flatten)]
    foreign: ForeignArgs,

    /// A smoke-sized run, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

impl RateArgs {
    fn plan(self) -> (Common, Rate) {
        let mut plan = Rate::defaults(self.quick);
        plan.foreign = self.foreign.plan();
        own_servers(&mut plan.servers, self.servers, &plan.foreign);
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.rates, self.of_capacity.map(Rates::OfCapacity));
        set(&mut plan.rates, self.rates.map(Rates::Fixed));
        set(&mut plan.duration, self.duration);
        set(&mut plan.probe, self.probe);
        set(&mut plan.connections, self.connections);
        set(&mut plan.repeats, self.repeats);
        set(&mut plan.delay_ms, self.delay_ms);
        plan.workers = self.workers;
        (self.common.plan(), plan)
    }
}

fn percents(fractions: &[f64]) -> String {
    fractions
        .iter()
        .map(|f| format!("{:.0}", f * 100.0))
        .collect::<Vec<_>>()
        .join(",")
}

/// `50` (percent) → 0.5; 1 to 1000 percent.
fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if (1.0..=1000.0).contains(&p) => Ok(p / 100.0),
        _ => Err(format!("{text:?} is not a percentage from 1 to 1000")),
    }
}

/// `5000`, `5k`, `1.5k`, `2m` (millions): requests a second, above zero.
fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix(['k', 'K']) {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix(['m', 'M']) {
        (n, 1e6)
    } else {
        (t, 1.0)
    };
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v * scale >= 1.0 && v * scale <= 1e7 => Ok(v * scale),
        _ => Err(format!(
            "{text:?} is not a rate (requests a second from 1 to 10m, e.g. 5000, 20k)"
        )),
    }
}

/// The settings of `all`.
#[derive(Debug, Clone, Args)]
struct AllArgs {
    #[arg(long, value_delimiter = ',', value_parser = parse_short,
          help = help1("Servers, in order", list(&plan::SERVERS)))]
    servers: Option<Vec<String>>,

    /// Every scenario smoke-sized, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

/// What the command line asks for.
#[derive(Debug)]
enum Action {
    /// A run of scenarios.
    Run(Plan),
    /// `check URL…`.
    Check(Vec<String>),
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
            Some(Command::All(args)) => Plan::all(args.common.plan(), args.quick, args.servers),
            Some(Command::Check { urls }) => return Action::Check(urls),
        })
    }
}

fn parse_server(text: &str) -> Result<ServerSpec, String> {
    let (short, endpoint) = match text.split_once(':') {
        Some((short, endpoint)) => (short, Some(parse_path(endpoint)?)),
        None => (text, None),
    };
    let short = short.strip_prefix("greet-").unwrap_or(short);
    if !plan::SERVERS.contains(&short) && !plan::is_peer(short) {
        return Err(format!(
            "unknown server {short:?}: known are {}, and the JVM peers {}",
            plan::SERVERS.join(", "),
            plan::PEERS.join(", ")
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

fn parse_repeats(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a number of runs from 1 to 1000")),
    }
}

fn parse_positive(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{text:?} is not a count above zero")),
    }
}

/// `10s`, `500ms`, `2m`, or plain seconds (`1.5`); zero is refused.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let d = parse_any_duration(text)?;
    if d.is_zero() {
        return Err(format!("{text:?}: a duration must be more than zero"));
    }
    Ok(d)
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
                 default), loops, soak, sweep, business, rate and all (see --help)"
            );
            return ExitCode::from(2);
        }
    }
    let cli: Cli = match greet_server::cli::parse_args("greet-bench") {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let plan = match cli.action() {
        Action::Run(plan) => plan,
        Action::Check(urls) => return check(&urls),
    };
    match run::run(plan) {
        Ok(Verdict::AllMeasured) => ExitCode::SUCCESS,
        Ok(Verdict::SomeFailed) => ExitCode::FAILURE,
        Ok(Verdict::Interrupted) => ExitCode::from(130),
        Err(err) => {
            eprintln!("greet-bench: error: {err:#}");
            ExitCode::FAILURE
        }
    }
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

    fn plan(args: &[&str]) -> Plan {
        match Cli::try_parse_from(std::iter::once("greet-bench").chain(args.iter().copied()))
            .expect("good flags")
            .action()
        {
            Action::Run(plan) => plan,
            Action::Check(_) => panic!("a plan, not check"),
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
            (sweep.workers, sweep.repeats),
            (vec![1, 3], Sweep::QUICK_REPEATS)
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
}
