//! The flags of each scenario, as clap reads them, and the plan each turns into.

use std::marker::PhantomData;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use greet_store::{DatabaseUrl, RedisUrl};

use crate::diff;
use crate::plan::{
    self, Bins, Business, Common, Contract, Expect, Foreign, Ladder, Loops, Measure, Measured,
    Plan, Protocols, Rate, Rates, ServerSpec, Soak, SoakBound, Store, Sweep, Target, Threshold,
};
use crate::report::comparison::Format;

use super::values::{
    help, help1, list, millis, parse_agents, parse_any_duration, parse_baseline_name,
    parse_contract, parse_count, parse_database_url, parse_duration, parse_expect, parse_format,
    parse_fraction, parse_level, parse_noise, parse_path, parse_positive, parse_rate,
    parse_ratio_threshold, parse_redis_url, parse_repeats, parse_server, parse_shape, parse_short,
    parse_store, parse_target, parse_threshold, percents, refuse_target, shapes,
};

/// Settings every scenario shares: where results go, pinning, building, output.
#[derive(Debug, Clone, Args)]
pub(super) struct CommonArgs {
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

    /// A condition the run's figures must hold, e.g. 'p99<5ms', 'axum:total<1.2s',
    /// 'rss<64MiB', 'throughput>50000/s', 'success>=100%' (repeatable; figures: total,
    /// throughput, p50, p99, p99.9, startup, rss, cpu, success; the median of a figure's runs,
    /// or every run: 'max(total)<1.8s'); with --baseline, ratios: 'total<1.10x'; a breach
    /// exits 3
    #[arg(long = "threshold", value_name = "EXPR", value_parser = parse_threshold)]
    thresholds: Vec<Threshold>,

    /// Also keep the results as baseline NAME, in results/baselines/NAME, for
    /// `greet-bench compare --baseline NAME`
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name)]
    save_baseline: Option<String>,

    /// At the end, compare the results with baseline NAME (as `compare --baseline NAME`);
    /// ratio thresholds ('total<1.10x') hold to that comparison
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name)]
    baseline: Option<String>,

    /// What every request goes over: http1, h2c (HTTP/2 with prior knowledge), https
    /// (HTTP/1.1 over TLS) or h2 (HTTP/2 over TLS, ALPN). Over TLS the servers the harness
    /// starts make their own certificate (--tls-self-signed), and no session is resumed. An
    /// answer over another protocol than this one is a failure [default: http1]
    #[arg(long, value_name = "PROTOCOL")]
    protocol: Option<plan::Protocol>,

    /// Over HTTP/2 (h2c, h2): users of a keep-alive load sharing one connection, each with a
    /// stream of its own at a time [default: 1, a connection each as over HTTP/1.1]
    #[arg(long, value_parser = parse_count)]
    streams: Option<usize>,
}

impl CommonArgs {
    pub(super) fn plan(self) -> Common {
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
            thresholds: self.thresholds,
            save_baseline: self.save_baseline,
            baseline: self.baseline,
            protocol: self.protocol.unwrap_or(plan::Protocol::Http1),
            streams: self.streams.unwrap_or(1),
        }
    }
}

/// The settings of a ladder run.
#[derive(Debug, Clone, Args)]
pub(super) struct LadderArgs {
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

    /// Split each level over N `greet-bench agent` processes on this machine, starting
    /// together, each with its share of the concurrency; their tallies are merged exactly and
    /// each agent's figures kept beside [default: the load runs in the harness itself]
    #[arg(long, value_name = "N", value_parser = parse_agents)]
    agents: Option<usize>,

    /// Run each server as the one service of a Docker Swarm stack (`greet-bench`, on a node
    /// labelled greet.role=server if any) and each level as a swarm job of --agents agents
    /// (on greet.role=load nodes if any) on the stack's network; the engine must be a
    /// swarm manager (`docker swarm init`, or DOCKER_HOST), the images docker/build-offline.sh's.
    /// Everything deployed is removed at the end, on failure and on Ctrl-C
    #[arg(long, conflicts_with = "docker")]
    swarm: bool,

    /// A smoke-sized run, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

impl LadderArgs {
    pub(super) fn plan(self) -> (Common, Ladder) {
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
        plan.agents = self.agents.unwrap_or(if self.swarm { 1 } else { 0 });
        plan.swarm = self.swarm;
        (self.common.plan(), plan)
    }
}

/// A rate for `agent --rate`: requests a second, above zero.
fn parse_agent_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if r > 0.0 && r.is_finite() => Ok(r),
        _ => Err(format!(
            "{text:?} is not a rate in requests a second above 0"
        )),
    }
}

/// One agent's share of a level (`greet-bench agent`).
#[derive(Debug, Clone, Args)]
pub(super) struct AgentArgs {
    /// The server and endpoint, e.g. http://10.0.0.5:8080/greetings (https:// over TLS)
    #[arg(long, value_name = "URL")]
    pub(super) url: String,

    /// The protocol [default: http1 for http://, h2 for https://]
    #[arg(long, value_name = "PROTOCOL")]
    pub(super) protocol: Option<plan::Protocol>,

    /// The whole level's concurrency, one request per fresh connection; this agent takes
    /// its share
    #[arg(long, value_parser = parse_level,
          required_unless_present_any = ["rate", "keep_alive"])]
    pub(super) concurrency: Option<usize>,

    /// Keep-alive instead: the whole level's users, each one request after another on its
    /// connection, for --duration, or --requests in all, or --each; this agent takes its
    /// share of the users (and of --requests)
    #[arg(long, value_name = "USERS", value_parser = parse_level,
          conflicts_with_all = ["concurrency", "rate"])]
    pub(super) keep_alive: Option<usize>,

    /// Open loop instead: the whole level's requests a second; this agent takes its share
    /// (rate ÷ agents), over its share of --connections, for --duration
    #[arg(long, value_parser = parse_agent_rate, requires_all = ["duration", "connections"],
          conflicts_with = "concurrency")]
    pub(super) rate: Option<f64>,

    /// Open loop and keep-alive: how long the load runs
    #[arg(long, value_parser = parse_duration, conflicts_with = "concurrency")]
    pub(super) duration: Option<std::time::Duration>,

    /// Open loop: keep-alive connections, all agents together
    #[arg(long, value_parser = parse_level, requires = "rate")]
    pub(super) connections: Option<usize>,

    /// The whole level's requests: one per fresh connection [default: the concurrency], or
    /// with --keep-alive the users' requests between them
    #[arg(long, value_parser = parse_level, conflicts_with = "rate")]
    pub(super) requests: Option<usize>,

    /// Keep-alive: requests each user sends
    #[arg(long, value_parser = parse_level, requires = "keep_alive",
          conflicts_with_all = ["duration", "requests"])]
    pub(super) each: Option<usize>,

    /// Keep-alive over HTTP/2: users sharing one connection
    #[arg(long, value_parser = parse_level, default_value_t = 1)]
    pub(super) streams: usize,

    /// Agents in all
    #[arg(long, value_name = "N", value_parser = parse_agents, default_value_t = 1)]
    pub(super) agents: usize,

    /// This agent's number, from 0 (a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX)
    #[arg(
        long,
        value_name = "I",
        env = "JOB_COMPLETION_INDEX",
        default_value_t = 0
    )]
    pub(super) index: usize,

    /// A swarm job's task slot, instead of --index: a job's slots are 0 to N-1, and swarm
    /// writes slot 0 as the node's ID, so anything but a number is agent 0
    #[arg(
        long,
        value_name = "SLOT",
        env = "GREET_AGENT_SLOT",
        conflicts_with = "index"
    )]
    pub(super) slot: Option<String>,

    /// When every agent starts, in milliseconds since the Unix epoch [default: at once]
    #[arg(long, value_name = "UNIX_MS")]
    pub(super) start_at: Option<u64>,

    /// Per-request limit, connect included
    #[arg(long, value_parser = parse_duration, default_value = "30s")]
    pub(super) timeout: std::time::Duration,

    /// Before the start, wait up to this long for the server's /health to answer (a cluster
    /// starts the agents beside the server) [default: no wait]
    #[arg(long, value_parser = parse_duration)]
    pub(super) wait: Option<std::time::Duration>,

    /// What a valid answer's body must match: a regular expression, or `any` [default: the
    /// Greetings API's greeting]
    #[arg(long, value_name = "REGEX|any", value_parser = parse_expect)]
    pub(super) expect: Option<Expect>,
}

/// Servers the harness did not start, and how every answer is judged.
#[derive(Debug, Clone, Args)]
pub(super) struct ForeignArgs {
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
    pub(super) fn plan(self) -> Foreign {
        Foreign {
            targets: self.target,
            expect: self.expect.unwrap_or_default(),
            contract: self.contract,
        }
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
pub(super) struct LoopsArgs {
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
    pub(super) fn plan(self) -> (Common, Loops) {
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
pub(super) struct SoakArgs {
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

    /// Split each level's users over N `greet-bench agent` processes starting together (and
    /// --requests, when given); their tallies are merged exactly [default: the harness loads
    /// each level alone]
    #[arg(long, value_name = "N", value_parser = parse_agents)]
    agents: Option<usize>,

    /// Each server as a Docker Swarm stack and each level as a swarm job of --agents agents,
    /// as the ladder's --swarm; threads are counted where the server's process is this
    /// host's, CPU and memory by a sampler task beside it wherever it runs
    #[arg(long)]
    swarm: bool,

    #[command(flatten)]
    foreign: ForeignArgs,

    /// A smoke-sized run, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

impl SoakArgs {
    pub(super) fn plan(self) -> (Common, Soak) {
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
        plan.agents = self.agents.unwrap_or(if self.swarm { 1 } else { 0 });
        plan.swarm = self.swarm;
        (self.common.plan(), plan)
    }
}

/// How each setting of a grid scenario is measured: one flag group for sweep and business,
/// each quoting its own defaults.
#[derive(Debug, Clone, Args)]
pub(super) struct MeasureArgs<S: Measured + Clone + Send + Sync + 'static> {
    #[arg(long, value_parser = parse_level,
          help = help("Keep-alive connections of each load",
                      S::MEASURE.concurrency, S::QUICK_MEASURE.concurrency))]
    concurrency: Option<usize>,

    #[arg(long, value_parser = parse_duration,
          help = help("Measured part of each load, e.g. 1s, 500ms",
                      millis(S::MEASURE.duration), millis(S::QUICK_MEASURE.duration)))]
    duration: Option<Duration>,

    #[arg(long, value_parser = parse_any_duration,
          help = help("Unmeasured load before each",
                      millis(S::MEASURE.warmup), millis(S::QUICK_MEASURE.warmup)))]
    warmup: Option<Duration>,

    #[arg(long, value_parser = parse_repeats,
          help = help("Runs of each setting, each on a freshly started server; 4 or more can \
                       tell a difference from noise", S::MEASURE.repeats, S::QUICK_MEASURE.repeats))]
    repeats: Option<usize>,

    /// Refused: the scenario restarts every server with every setting
    #[arg(long, hide = true, value_parser = refuse_target)]
    target: Vec<String>,

    #[arg(skip)]
    scenario: PhantomData<S>,
}

impl<S: Measured + Clone + Send + Sync + 'static> MeasureArgs<S> {
    fn apply(self, measure: &mut Measure) {
        set(&mut measure.concurrency, self.concurrency);
        set(&mut measure.duration, self.duration);
        set(&mut measure.warmup, self.warmup);
        set(&mut measure.repeats, self.repeats);
    }
}

/// The settings of a sweep run.
#[derive(Debug, Clone, Args)]
pub(super) struct SweepArgs {
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

    #[command(flatten)]
    measure: MeasureArgs<Sweep>,

    /// A smoke-sized run, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

impl SweepArgs {
    pub(super) fn plan(self) -> (Common, Sweep) {
        let mut plan = Sweep::defaults(self.quick);
        set(&mut plan.servers, self.servers);
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.workers, self.workers);
        set(&mut plan.blocking_threads, self.blocking_threads);
        self.measure.apply(&mut plan.measure);
        (self.common.plan(), plan)
    }
}

/// The settings of a protocols run.
#[derive(Debug, Clone, Args)]
pub(super) struct ProtocolsArgs {
    #[arg(long, value_delimiter = ',', value_parser = parse_short,
          help = help1("Servers, in order", list(&plan::SERVERS)))]
    servers: Option<Vec<String>>,

    /// Protocols, in order, of http1, h2c, https, h2; http1 is always measured (the others
    /// are fractions of it) [default: http1,h2c,https,h2]
    #[arg(long, value_delimiter = ',', value_name = "PROTOCOLS")]
    protocols: Option<Vec<plan::Protocol>>,

    #[command(flatten)]
    measure: MeasureArgs<Protocols>,

    /// A smoke-sized run, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

impl ProtocolsArgs {
    pub(super) fn plan(self) -> (Common, Protocols) {
        let mut plan = Protocols::defaults(self.quick);
        set(&mut plan.servers, self.servers);
        if let Some(mut protocols) = self.protocols {
            protocols.retain(|p| *p != plan::Protocol::Http1);
            protocols.dedup();
            protocols.insert(0, plan::Protocol::Http1);
            plan.protocols = protocols;
        }
        self.measure.apply(&mut plan.measure);
        (self.common.plan(), plan)
    }
}

/// The settings of a business run.
#[derive(Debug, Clone, Args)]
pub(super) struct BusinessArgs {
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
    database_url: Option<DatabaseUrl>,

    /// Redis for the postgres store instead of starting one, redis://…
    #[arg(long, value_name = "URL", requires = "database_url", value_parser = parse_redis_url)]
    redis_url: Option<RedisUrl>,

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

    #[command(flatten)]
    measure: MeasureArgs<Business>,

    /// Measure each endpoint from N `greet-bench agent` processes starting together, the
    /// users split among them; their tallies are merged exactly (the warm-up runs from the
    /// harness) [default: the harness loads alone]
    #[arg(long, value_name = "N", value_parser = parse_agents)]
    agents: Option<usize>,

    /// The servers, and PostgreSQL and Redis, as Docker Swarm stacks (the stores as stack
    /// greet-bench-stores on greet.role=store nodes if any, deployed once and removed at the
    /// end), each measurement a swarm job of --agents agents, as the ladder's --swarm
    #[arg(long)]
    swarm: bool,

    /// A smoke-sized run, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

impl BusinessArgs {
    pub(super) fn plan(self) -> (Common, Business) {
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
        self.measure.apply(&mut plan.measure);
        plan.agents = self.agents.unwrap_or(if self.swarm { 1 } else { 0 });
        plan.swarm = self.swarm;
        (self.common.plan(), plan)
    }
}

/// The settings of a rate run.
#[derive(Debug, Clone, Args)]
pub(super) struct RateArgs {
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

    /// Split each level's schedule over N `greet-bench agent` processes starting together,
    /// each with rate ÷ N over its share of the connections; their tallies are merged
    /// exactly [default: the harness paces each level alone]
    #[arg(long, value_name = "N", value_parser = parse_agents)]
    agents: Option<usize>,

    /// Each server as a Docker Swarm stack and each level as a swarm job of --agents agents,
    /// as the ladder's --swarm (the probe runs from the harness)
    #[arg(long)]
    swarm: bool,

    #[command(flatten)]
    foreign: ForeignArgs,

    /// A smoke-sized run, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

impl RateArgs {
    pub(super) fn plan(self) -> (Common, Rate) {
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
        plan.agents = self.agents.unwrap_or(if self.swarm { 1 } else { 0 });
        plan.swarm = self.swarm;
        (self.common.plan(), plan)
    }
}

/// The settings of `all`.
#[derive(Debug, Clone, Args)]
pub(super) struct AllArgs {
    #[arg(long, value_delimiter = ',', value_parser = parse_short,
          help = help1("Servers, in order", list(&plan::SERVERS)))]
    servers: Option<Vec<String>>,

    /// Every scenario smoke-sized, for tests
    #[arg(long)]
    quick: bool,

    #[command(flatten)]
    common: CommonArgs,
}

impl AllArgs {
    pub(super) fn plan(self) -> Plan {
        Plan::all(self.common.plan(), self.quick, self.servers)
    }
}

/// The settings of `compare`.
#[derive(Debug, Clone, Args)]
pub(super) struct CompareArgs {
    /// OLD NEW: the run compared against and the run compared, each its results.json or the
    /// folder holding it; with --baseline, NEW alone
    #[arg(required = true, num_args = 1..=2, value_name = "RUN")]
    pub(super) runs: Vec<PathBuf>,

    /// Compare against the baseline a run saved with --save-baseline NAME
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name)]
    pub(super) baseline: Option<String>,

    /// text (aligned columns), md (a Markdown table, for a pull-request comment), json, or
    /// html (one page: a forest plot of the ratios, then the table)
    #[arg(long, default_value = "text", value_parser = parse_format)]
    pub(super) format: Format,

    #[arg(long, value_parser = parse_noise,
          help = help1("A ratio within this many percent of 1 is never called a change",
                       diff::NOISE * 100.0))]
    pub(super) noise: Option<f64>,

    /// A setting the runs differ in on purpose (workers, delay_ms, …, or endpoint to pair one
    /// path with another): its figures are judged rather than shown as "settings differ"
    /// (repeatable)
    #[arg(long, value_name = "SETTING")]
    pub(super) vary: Vec<String>,

    /// A condition the ratios NEW/OLD must hold, e.g. 'p99<1.10x', 'throughput>0.95x',
    /// 'axum:total<1.05x' (of medians), 'max(total)<1.5x' (NEW's slowest run over OLD's)
    /// (repeatable); a breach exits 3
    #[arg(long = "threshold", value_name = "EXPR", value_parser = parse_ratio_threshold)]
    pub(super) thresholds: Vec<Threshold>,
}
