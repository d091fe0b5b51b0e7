//! The flags several scenarios take, each declared once: the run's own settings
//! ([`CommonArgs`]), the base's groups (the servers' flags, [`ServerArgs`]; where the load
//! runs, [`PlaceArgs`]; servers the harness did not start, [`ForeignArgs`]), a grid's
//! measurement ([`MeasureArgs`]) and the stores ([`StoresArgs`]).

use std::marker::PhantomData;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use greet_store::{DatabaseUrl, RedisUrl};

use greet_model::plan::{
    self, Based, Bins, Common, Contract, Expect, Foreign, Measure, Measured, Paced, Placement,
    Protocol, ServerSettings, Store, Target, Threshold,
};

use super::values::{
    help, help1, millis, parse_agents, parse_any_duration, parse_band, parse_baseline_name,
    parse_contract, parse_count, parse_database_url, parse_duration, parse_expect, parse_level,
    parse_redis_url, parse_store, parse_target, parse_threshold,
};

/// Settings every scenario shares: where results go, pinning, building, output, size.
#[derive(Debug, Clone, Args)]
pub(crate) struct CommonArgs {
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

    /// A smoke-sized run (with `all`, of every scenario), for tests
    #[arg(long)]
    pub(crate) quick: bool,

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
    /// throughput, p50, p99, p99.9, startup, rss, cpu, success, cpu_per_req, and cost's
    /// counts: instructions, cycles, allocations, alloc_bytes, syscalls, switches, binary,
    /// dependencies, idle_memory, build, rebuild, and knobs' contract_rows; a time needs its
    /// unit; the median of a
    /// figure's runs, or every run: 'max(total)<1.8s'); with --baseline, ratios:
    /// 'total<1.10x', 'instructions<1.01x'; a breach exits 3
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
    /// starts make their own certificate (--tls-self-signed), and no session is resumed
    /// unless --tls-resume. An answer over another protocol than this one is a failure
    /// [default: http1]
    #[arg(long, value_name = "PROTOCOL")]
    protocol: Option<Protocol>,

    /// Over HTTP/2 (h2c, h2): users of a keep-alive load (or an open loop's connections)
    /// sharing one connection, each with a stream of its own at a time; capacity takes a
    /// list (1,10,100) and measures each server at each [default: 1, a connection each as
    /// over HTTP/1.1]
    #[arg(long, value_parser = parse_count, value_delimiter = ',')]
    streams: Vec<usize>,

    /// Requests each user of a keep-alive load has in flight: over HTTP/1.1 written back to
    /// back before the answers are read (pipelining; TechEmpower's plaintext load sends 16),
    /// over HTTP/2 as that many streams [default: 1; techempower: plaintext's depth, 16]
    #[arg(long, value_parser = parse_count)]
    pipeline: Option<usize>,

    /// Requests each user of a keep-alive load sends on one connection before it closes it
    /// and opens another: short-lived connections (HttpArena's profile: 10). Not for the
    /// ladder, whose requests each open a connection, nor an open loop's connections
    /// [default: one connection for the whole load]
    #[arg(long, value_name = "N", value_parser = parse_count)]
    requests_per_connection: Option<usize>,

    /// A header field every request carries, e.g. 'accept-encoding: gzip' to load the
    /// servers' compression (repeatable; the answers' bytes are counted as they come)
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<greet_load::Header>,

    /// POST this body with every request instead of a GET: text:… as given (e.g.
    /// 'text:{"name":"Ana"}' to /greetings, with a JSON content type), size:N bytes (an
    /// upload, to /upload; 20M, 64k) or chunked:N/K (those bytes in chunks of K)
    #[arg(long, value_name = "text:…|size:N|chunked:N/K")]
    body: Option<greet_load::RequestBody>,

    /// Over TLS (https, h2): each handshake after the first resumes a session an earlier one
    /// left, from TLS 1.3 tickets kept for the whole load, as browsers and HTTP client
    /// libraries do. Without it every handshake is full, as a new client's: what the
    /// fresh connections of a level measure [default: off]
    #[arg(long)]
    tls_resume: bool,

    /// The equivalence band every verdict is judged against, as a percentage: two servers
    /// whose ratio's interval lies wholly within the band (neither more than band below the
    /// other: 5% is 0.95× to 1/0.95 = 1.053×) are equal, wholly past it ahead or
    /// behind, else undecided. A wider band decides "equal" sooner and "ahead" later
    /// [default: 5%]
    #[arg(long, value_name = "PERCENT", value_parser = parse_band)]
    band: Option<f64>,
}

impl CommonArgs {
    /// `--pipeline`, when given, taken: the scenario that reads it its own way leaves the
    /// run's default.
    pub(crate) fn take_pipeline(&mut self) -> Option<usize> {
        self.pipeline.take()
    }

    pub(crate) fn plan(self) -> Common {
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
            protocol: self.protocol.unwrap_or(Protocol::Http1),
            streams: self.streams.first().copied().unwrap_or(1),
            streams_each: if self.streams.is_empty() {
                vec![1]
            } else {
                greet_stats::distinct(self.streams.iter().copied())
            },
            pipeline: self.pipeline.unwrap_or(1),
            requests_per_connection: self.requests_per_connection,
            headers: self.headers,
            body: self.body,
            tls_resume: self.tls_resume,
            band: self.band,
        }
    }
}

/// The flags the harness passes to every server of a scenario, with that scenario's own
/// defaults in the help.
#[derive(Debug, Clone, Args)]
pub(crate) struct ServerArgs<P: Based + Clone + Send + Sync + 'static> {
    #[arg(long, help = delay_help(P::defaults(false).base().server.delay_ms,
                                  P::defaults(true).base().server.delay_ms))]
    delay_ms: Option<u64>,

    /// --workers passed to the servers [default: the CPUs each server is pinned to]
    #[arg(long, value_parser = parse_count)]
    workers: Option<usize>,

    #[arg(long, value_parser = parse_count,
          help = help1("--blocking-threads passed to the servers", plan::BLOCKING_THREADS))]
    blocking_threads: Option<usize>,

    #[arg(skip)]
    plan: PhantomData<P>,
}

fn delay_help(normal: u64, quick: u64) -> String {
    let text = "--delay-ms passed to the servers";
    if normal == quick {
        help1(text, normal)
    } else {
        help(text, normal, quick)
    }
}

impl<P: Based + Clone + Send + Sync + 'static> ServerArgs<P> {
    /// These flags over the scenario's settings (its defaults, or `--quick` ones).
    pub(crate) fn apply(self, settings: &mut ServerSettings) {
        set(&mut settings.delay_ms, self.delay_ms);
        set(&mut settings.workers, self.workers.map(Some));
        set(&mut settings.blocking_threads, self.blocking_threads);
    }
}

/// Where a scenario's load runs: in the harness, from agents here, or on a swarm.
#[derive(Debug, Clone, Args)]
pub(crate) struct PlaceArgs {
    /// Split each load over N agents starting together, each with its share (of the
    /// concurrency, the users, or the rate and connections): processes of this program here,
    /// or with --swarm a swarm job. Their tallies are merged exactly, each agent's figures
    /// kept beside [default: the harness loads alone]
    #[arg(long, value_name = "N", value_parser = parse_agents)]
    agents: Option<usize>,

    /// Run each server as the one service of a Docker Swarm stack (`greet-bench`, on a node
    /// labelled greet.role=server if any; the stores, where a scenario has them, as stack
    /// greet-bench-stores on greet.role=store nodes) and each load as a swarm job of --agents
    /// agents (on greet.role=load nodes if any) on the stack's network, each container watched
    /// by a task beside it; the engine must be a swarm manager (`docker swarm init`, or
    /// DOCKER_HOST), the images docker/build-offline.sh's. Everything deployed is removed at
    /// the end, on failure and on Ctrl-C
    #[arg(long)]
    swarm: bool,
}

impl PlaceArgs {
    pub(crate) fn placement(self) -> Placement {
        Placement::from_flags(self.agents, self.swarm)
    }
}

/// Servers the harness did not start, and how every answer is judged.
#[derive(Debug, Clone, Args)]
pub(crate) struct ForeignArgs {
    /// Load a server the harness did not start, as NAME=URL (repeatable): a JVM app, a
    /// compose service, a server on another host. No start-up or /proc figures
    #[arg(long, value_name = "NAME=URL", value_parser = parse_target)]
    pub(crate) target: Vec<Target>,

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
    pub(crate) fn plan(self) -> Foreign {
        Foreign {
            targets: self.target,
            expect: self.expect.unwrap_or_default(),
            contract: self.contract,
        }
    }
}

/// How each setting of a grid scenario is measured: one flag group for every scenario that
/// measures a grid, each quoting its own defaults.
#[derive(Debug, Clone, Args)]
pub(crate) struct MeasureArgs<S: Measured + Clone + Send + Sync + 'static> {
    #[arg(long, alias = "concurrency", value_parser = parse_level,
          help = help("Keep-alive connections of each load",
                      S::MEASURE.connections, S::QUICK_MEASURE.connections))]
    connections: Option<usize>,

    #[arg(long, value_parser = parse_duration,
          help = help("Measured part of each load, e.g. 1s, 500ms",
                      millis(S::MEASURE.duration), millis(S::QUICK_MEASURE.duration)))]
    duration: Option<Duration>,

    #[arg(long, value_parser = parse_any_duration,
          help = help("Unmeasured load before each",
                      millis(S::MEASURE.warmup), millis(S::QUICK_MEASURE.warmup)))]
    warmup: Option<Duration>,

    #[arg(skip)]
    scenario: PhantomData<S>,
}

impl<S: Measured + Clone + Send + Sync + 'static> MeasureArgs<S> {
    pub(crate) fn apply(self, measure: &mut Measure) {
        set(&mut measure.connections, self.connections);
        set(&mut measure.duration, self.duration);
        set(&mut measure.warmup, self.warmup);
    }
}

/// What an open-loop scenario's levels go over: its probe and its connections.
#[derive(Debug, Clone, Args)]
pub(crate) struct PacedArgs {
    #[arg(long, value_parser = parse_duration,
          help = help("How long the closed-loop probe for the capacity runs (always from the \
                       harness)", format!("{}s", Paced::DEFAULT.probe.as_secs()),
                      millis(Paced::QUICK.probe)))]
    probe: Option<Duration>,

    #[arg(long, value_parser = parse_level,
          help = help("Requests in flight at most: keep-alive connections, each carrying one at \
                       a time; over HTTP/2 --streams of them share one",
                      Paced::DEFAULT.connections, Paced::QUICK.connections))]
    connections: Option<usize>,
}

impl PacedArgs {
    pub(crate) fn apply(self, paced: &mut Paced) {
        set(&mut paced.probe, self.probe);
        set(&mut paced.connections, self.connections);
    }
}

/// An explicit flag wins over the default (and over `--quick`'s size).
pub(crate) fn set<T>(field: &mut T, given: Option<T>) {
    if let Some(value) = given {
        *field = value;
    }
}

/// The stores of a scenario that loads the database routes.
#[derive(Debug, Clone, Args)]
pub(crate) struct StoresArgs {
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
}

impl StoresArgs {
    /// The stores asked for (by name, PostgreSQL no longer optional), at the URLs given.
    pub(crate) fn apply(self, stores: &mut Vec<Store>) {
        if let Some(names) = self.stores {
            *stores = names
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
        for store in stores {
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
    }
}
