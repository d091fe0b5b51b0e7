//! What a run is to do, as plain values with every default applied. The CLI turns flags into a
//! [`Plan`] (and `all` builds one from these defaults, without parsing anything twice); nothing
//! below it sees a flag. Every default and `--quick` size of every scenario is here, and the
//! CLI's help text is written from these same constants.

use std::path::PathBuf;
use std::time::Duration;

/// The servers the harness builds and starts, by short name, in their default order.
pub const SERVERS: [&str; 3] = ["axum", "actix", "hyper"];

/// The original experiment's own servers, run beside them when asked for: the Greetings API
/// on embedded Tomcat 10 and Jetty 9 (`peers/jvm`), by short name.
pub const PEERS: [&str; 2] = ["tomcat", "jetty"];

/// Whether `short` names a JVM peer rather than a server of the workspace.
pub fn is_peer(short: &str) -> bool {
    PEERS.contains(&short)
}

/// The package (and binary) name of server `short`: `axum` → `greet-axum`.
pub fn package(short: &str) -> String {
    format!("greet-{short}")
}

/// The original experiment's delay, in milliseconds.
pub const DELAY_MS: u64 = greet_core::DEFAULT_DELAY.as_millis() as u64;
/// The servers' default bound of the blocking pool.
pub const BLOCKING_THREADS: usize = greet_core::DEFAULT_BLOCKING_THREADS.get();

/// A whole run: the shared settings and the scenarios, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario shares.
    pub common: Common,
    /// The scenarios, in order.
    pub scenarios: Vec<Scenario>,
}

impl Plan {
    /// `all`: every scenario with its defaults (or `--quick` sizes) on `servers` (default:
    /// [`SERVERS`]).
    pub fn all(common: Common, quick: bool, servers: Option<Vec<String>>) -> Self {
        let scenarios = ScenarioKind::ALL
            .into_iter()
            .map(|kind| {
                let mut scenario = Scenario::defaults(kind, quick);
                if let Some(servers) = &servers {
                    scenario.set_servers(servers);
                }
                scenario
            })
            .collect();
        Self { common, scenarios }
    }

    /// The servers (short names) the run starts from binaries, each once, sorted.
    pub fn binaries(&self) -> Vec<String> {
        let mut shorts: Vec<String> = self
            .scenarios
            .iter()
            .flat_map(|s| match s {
                Scenario::Ladder(l) if l.docker => Vec::new(),
                Scenario::Ladder(l) => l.servers.iter().map(|s| s.short.clone()).collect(),
                Scenario::Loops(l) => l.servers.clone(),
                Scenario::Soak(s) => s.servers.clone(),
                Scenario::Sweep(s) => s.servers.clone(),
                Scenario::Business(b) => b.servers.clone(),
                Scenario::Rate(r) => r.servers.clone(),
            })
            .collect();
        shorts.sort_unstable();
        shorts.dedup();
        shorts
    }
}

/// The shared settings: where results go, pinning, output, where the servers come from.
#[derive(Debug, Clone, PartialEq)]
pub struct Common {
    /// Where results go (`None`: `results/<UTC timestamp>`).
    pub out: Option<PathBuf>,
    /// Pin servers and load generator to separate CPUs.
    pub pin: bool,
    /// No progress bars or status lines.
    pub quiet: bool,
    /// Per-request limit, connect included.
    pub timeout: Duration,
    /// Where the server binaries come from.
    pub bins: Bins,
}

impl Common {
    /// The per-request timeout unless told otherwise.
    pub const TIMEOUT: Duration = Duration::from_secs(60);
}

impl Default for Common {
    fn default() -> Self {
        Self {
            out: None,
            pin: true,
            quiet: false,
            timeout: Self::TIMEOUT,
            bins: Bins::Build,
        }
    }
}

/// Where the server binaries come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bins {
    /// Built with cargo when the harness runs from its workspace, else found beside the
    /// harness or on `PATH`.
    Build,
    /// As `Build`, without building.
    NoBuild,
    /// Prebuilt in this directory.
    Dir(PathBuf),
}

/// The scenarios, in the order `all` runs them and the report shows them: the one list the
/// subcommands, `all`, the sections of results.json and of the report derive from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScenarioKind {
    /// The original experiment.
    Ladder,
    /// The JMeter experiment.
    Loops,
    /// The siege / ab experiment.
    Soak,
    /// The tuning experiment.
    Sweep,
    /// The tuning experiment's business endpoint: store-bound endpoints against the ceiling.
    Business,
    /// Open-loop load at fixed rates.
    Rate,
}

impl ScenarioKind {
    /// Every scenario, in order.
    pub const ALL: [ScenarioKind; 6] = [
        Self::Ladder,
        Self::Loops,
        Self::Soak,
        Self::Sweep,
        Self::Business,
        Self::Rate,
    ];

    /// Its name: its subcommand, its key in results.json and its anchor in report.html.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ladder => "ladder",
            Self::Loops => "loops",
            Self::Soak => "soak",
            Self::Sweep => "sweep",
            Self::Business => "business",
            Self::Rate => "rate",
        }
    }

    /// Its heading in the report.
    pub fn title(self) -> &'static str {
        match self {
            Self::Ladder => "Ladder (the original experiment)",
            Self::Loops => "Loops (the JMeter experiment)",
            Self::Soak => "Soak (the siege / ab experiment)",
            Self::Sweep => "Sweep (the tuning experiment)",
            Self::Business => "Business (a database and a cache against the ceiling)",
            Self::Rate => "Rate (open loop: latency at a fixed request rate)",
        }
    }
}

/// One scenario with its settings.
#[derive(Debug, Clone, PartialEq)]
pub enum Scenario {
    /// The original experiment.
    Ladder(Ladder),
    /// Fixed-count keep-alive loops.
    Loops(Loops),
    /// Duration-bounded load counting threads.
    Soak(Soak),
    /// Thread-count grid.
    Sweep(Sweep),
    /// Store-bound endpoints against the ceiling, over stores and pool sizes.
    Business(Business),
    /// Open-loop load at fixed request rates.
    Rate(Rate),
}

impl Scenario {
    /// Its defaults, or its `--quick` sizes.
    pub fn defaults(kind: ScenarioKind, quick: bool) -> Self {
        match kind {
            ScenarioKind::Ladder => Self::Ladder(Ladder::defaults(quick)),
            ScenarioKind::Loops => Self::Loops(Loops::defaults(quick)),
            ScenarioKind::Soak => Self::Soak(Soak::defaults(quick)),
            ScenarioKind::Sweep => Self::Sweep(Sweep::defaults(quick)),
            ScenarioKind::Business => Self::Business(Business::defaults(quick)),
            ScenarioKind::Rate => Self::Rate(Rate::defaults(quick)),
        }
    }

    /// Which scenario it is.
    pub fn kind(&self) -> ScenarioKind {
        match self {
            Self::Ladder(_) => ScenarioKind::Ladder,
            Self::Loops(_) => ScenarioKind::Loops,
            Self::Soak(_) => ScenarioKind::Soak,
            Self::Sweep(_) => ScenarioKind::Sweep,
            Self::Business(_) => ScenarioKind::Business,
            Self::Rate(_) => ScenarioKind::Rate,
        }
    }

    /// Its name, as a subcommand and a key of `results.json`.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// Runs it on `servers` (short names), in order.
    fn set_servers(&mut self, servers: &[String]) {
        match self {
            Self::Ladder(plan) => {
                plan.servers = servers.iter().map(|s| ServerSpec::new(s)).collect()
            }
            Self::Loops(plan) => plan.servers = servers.to_vec(),
            Self::Soak(plan) => plan.servers = servers.to_vec(),
            Self::Sweep(plan) => plan.servers = servers.to_vec(),
            Self::Business(plan) => plan.servers = servers.to_vec(),
            Self::Rate(plan) => plan.servers = servers.to_vec(),
        }
    }
}

/// A server to start: its short name and, optionally, its own endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// `axum`, `actix` or `hyper`.
    pub short: String,
    /// Path to load instead of the scenario's endpoint.
    pub endpoint: Option<String>,
}

impl ServerSpec {
    /// Server `short` on the scenario's endpoint.
    pub fn new(short: &str) -> Self {
        Self {
            short: short.to_owned(),
            endpoint: None,
        }
    }
}

/// A server someone else started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Its name in the tables.
    pub name: String,
    /// Its base URL, `http://host:port`.
    pub url: String,
}

/// What a valid answer is, under load and in the light check.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Expect {
    /// 2xx and `<word> <name>!`, the name read from the endpoint's query (`ok` from
    /// `/health`): the Greetings API's answer, whoever serves it.
    #[default]
    Greeting,
    /// Any 2xx.
    Any,
    /// 2xx and a body this regular expression matches.
    Pattern(String),
}

/// How a server is verified before it is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Contract {
    /// One request to the endpoint: 2xx and the expected body.
    #[default]
    Light,
    /// The whole contract suite, as the workspace's own servers get.
    Full,
}

impl Contract {
    /// The check of server `short`: the whole contract for the workspace's, the light one for
    /// the original's (they keep the Greetings API, not this workspace's 404s, limits and
    /// answers to bad input).
    pub fn for_server(short: &str) -> Self {
        if is_peer(short) {
            Self::Light
        } else {
            Self::Full
        }
    }
}

/// The servers a scenario loads that the harness did not start, and how they are judged.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Foreign {
    /// Servers already running.
    pub targets: Vec<Target>,
    /// What a valid answer is, for every server of the scenario.
    pub expect: Expect,
    /// How the targets are verified.
    pub contract: Contract,
}

/// The ladder: each server in turn, one request per fresh connection at each level.
#[derive(Debug, Clone, PartialEq)]
pub struct Ladder {
    /// Servers to start, in order.
    pub servers: Vec<ServerSpec>,
    /// Servers already running, and what a valid answer is.
    pub foreign: Foreign,
    /// Concurrency levels; each sends as many requests as its concurrency.
    pub levels: Vec<usize>,
    /// Path and query loaded on every server without an endpoint of its own.
    pub endpoint: String,
    /// `--delay-ms` for the servers.
    pub delay_ms: u64,
    /// `--workers` for the servers (`None`: the CPUs each server is pinned to).
    pub workers: Option<usize>,
    /// `--blocking-threads` for the servers.
    pub blocking_threads: usize,
    /// Runs of each level.
    pub repeats: usize,
    /// Run the servers as containers of their images.
    pub docker: bool,
    /// Run the containers on this Docker network and load them at their address there
    /// (`None`: on the host's network, at 127.0.0.1).
    pub docker_network: Option<String>,
}

impl Ladder {
    /// The original's levels.
    pub const LEVELS: [usize; 4] = [100, 300, 900, 2700];
    /// `--quick` levels.
    pub const QUICK_LEVELS: [usize; 2] = [10, 50];
    /// `--quick` delay, milliseconds.
    pub const QUICK_DELAY_MS: u64 = 50;

    /// The defaults, or the `--quick` sizes.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.iter().map(|s| ServerSpec::new(s)).collect(),
            foreign: Foreign::default(),
            levels: if quick {
                Self::QUICK_LEVELS.to_vec()
            } else {
                Self::LEVELS.to_vec()
            },
            endpoint: greet_core::paths::GREETINGS.to_owned(),
            delay_ms: if quick {
                Self::QUICK_DELAY_MS
            } else {
                DELAY_MS
            },
            workers: None,
            blocking_threads: BLOCKING_THREADS,
            repeats: 1,
            docker: false,
            docker_network: None,
        }
    }
}

/// Loops: T users each sending L requests back to back over keep-alive, repeated.
#[derive(Debug, Clone, PartialEq)]
pub struct Loops {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// Servers already running, and what a valid answer is.
    pub foreign: Foreign,
    /// `(users, loops)` shapes.
    pub shapes: Vec<(usize, usize)>,
    /// Runs of each shape per server.
    pub repeats: usize,
    /// `--delay-ms` for the servers.
    pub delay_ms: u64,
    /// `--workers` for the servers (`None`: the CPUs each server is pinned to).
    pub workers: Option<usize>,
}

impl Loops {
    /// The original's shapes: 100 threads × 1000 loops, 1000 threads × 100 loops.
    pub const SHAPES: [(usize, usize); 2] = [(100, 1000), (1000, 100)];
    /// `--quick` shapes.
    pub const QUICK_SHAPES: [(usize, usize); 2] = [(10, 100), (50, 20)];
    /// Runs of each shape: the original averaged three.
    pub const REPEATS: usize = 3;

    /// The defaults, or the `--quick` sizes.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            foreign: Foreign::default(),
            shapes: if quick {
                Self::QUICK_SHAPES.to_vec()
            } else {
                Self::SHAPES.to_vec()
            },
            repeats: Self::REPEATS,
            delay_ms: 0,
            workers: None,
        }
    }
}

/// How long each soak level runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoakBound {
    /// For a duration (siege's `-t`).
    Duration(Duration),
    /// For a request count (ab's `-n`).
    Requests(usize),
}

/// Soak: load for a duration (or a count) at each concurrency, on each endpoint, counting
/// threads.
#[derive(Debug, Clone, PartialEq)]
pub struct Soak {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// Servers already running, and what a valid answer is.
    pub foreign: Foreign,
    /// Connections, one level after another on one server process.
    pub levels: Vec<usize>,
    /// Paths loaded, each on a freshly started server.
    pub endpoints: Vec<String>,
    /// How long each level runs.
    pub bound: SoakBound,
    /// Runs of each level.
    pub repeats: usize,
    /// `--delay-ms` for the servers.
    pub delay_ms: u64,
    /// `--workers` for the servers (`None`: the CPUs each server is pinned to).
    pub workers: Option<usize>,
    /// `--blocking-threads` for the servers.
    pub blocking_threads: usize,
}

impl Soak {
    /// The original's connection counts.
    pub const LEVELS: [usize; 3] = [50, 100, 200];
    /// `--quick` connection counts.
    pub const QUICK_LEVELS: [usize; 2] = [10, 20];
    /// Each level's length unless told otherwise.
    pub const DURATION: Duration = Duration::from_secs(10);
    /// `--quick` length.
    pub const QUICK_DURATION: Duration = Duration::from_millis(300);
    /// The async endpoint and the thread-per-request one.
    pub const ENDPOINTS: [&'static str; 2] = [
        greet_core::paths::GREETINGS,
        greet_core::paths::GREETINGS_BLOCKING,
    ];

    /// The defaults, or the `--quick` sizes.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            foreign: Foreign::default(),
            levels: if quick {
                Self::QUICK_LEVELS.to_vec()
            } else {
                Self::LEVELS.to_vec()
            },
            endpoints: Self::ENDPOINTS.map(String::from).to_vec(),
            bound: SoakBound::Duration(if quick {
                Self::QUICK_DURATION
            } else {
                Self::DURATION
            }),
            repeats: 1,
            delay_ms: 0,
            workers: None,
            blocking_threads: BLOCKING_THREADS,
        }
    }
}

/// Sweep: zero-delay load on the ceiling and the greeting endpoints over thread-count grids.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// Paths loaded; the blocking endpoint is also swept over `blocking_threads`.
    pub endpoints: Vec<String>,
    /// The `--workers` grid (the default setting is always added).
    pub workers: Vec<usize>,
    /// The `--blocking-threads` grid (the default is always added).
    pub blocking_threads: Vec<usize>,
    /// Keep-alive connections of each load.
    pub concurrency: usize,
    /// Measured part of each run.
    pub duration: Duration,
    /// Unmeasured load before it.
    pub warmup: Duration,
    /// Runs of each setting, each on a fresh server.
    pub repeats: usize,
}

impl Sweep {
    /// The ceiling (no work), the async greeting and the blocking one.
    pub const ENDPOINTS: [&'static str; 3] = [
        greet_core::paths::HEALTH,
        greet_core::paths::GREETINGS,
        greet_core::paths::GREETINGS_BLOCKING,
    ];
    /// The `--workers` grid.
    pub const WORKERS: [usize; 3] = [1, 2, 4];
    /// `--quick` `--workers` grid.
    pub const QUICK_WORKERS: [usize; 2] = [1, 2];
    /// The `--blocking-threads` grid.
    pub const BLOCKING_THREADS: [usize; 2] = [2, BLOCKING_THREADS];
    /// `--quick` `--blocking-threads` grid.
    pub const QUICK_BLOCKING_THREADS: [usize; 1] = [BLOCKING_THREADS];
    /// Connections: the original's 100.
    pub const CONCURRENCY: usize = 100;
    /// `--quick` connections.
    pub const QUICK_CONCURRENCY: usize = 20;
    /// Measured part of each run.
    pub const DURATION: Duration = Duration::from_millis(500);
    /// `--quick` measured part.
    pub const QUICK_DURATION: Duration = Duration::from_millis(100);
    /// Warm-up before each run.
    pub const WARMUP: Duration = Duration::from_millis(200);
    /// Runs per setting: 4 a side is the fewest a rank test can separate at 0.05.
    pub const REPEATS: usize = 4;
    /// `--quick` runs per setting.
    pub const QUICK_REPEATS: usize = 2;

    /// The defaults, or the `--quick` sizes.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            endpoints: Self::ENDPOINTS.map(String::from).to_vec(),
            workers: if quick {
                Self::QUICK_WORKERS.to_vec()
            } else {
                Self::WORKERS.to_vec()
            },
            blocking_threads: if quick {
                Self::QUICK_BLOCKING_THREADS.to_vec()
            } else {
                Self::BLOCKING_THREADS.to_vec()
            },
            concurrency: if quick {
                Self::QUICK_CONCURRENCY
            } else {
                Self::CONCURRENCY
            },
            duration: if quick {
                Self::QUICK_DURATION
            } else {
                Self::DURATION
            },
            warmup: if quick { Duration::ZERO } else { Self::WARMUP },
            repeats: if quick {
                Self::QUICK_REPEATS
            } else {
                Self::REPEATS
            },
        }
    }
}

/// The stores a business run loads the servers on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Store {
    /// The embedded default: SQLite and in-process counters.
    Sqlite,
    /// PostgreSQL and Redis: at these URLs, or (`None`) started by the harness.
    Servers {
        /// `--database-url` for the servers.
        database_url: Option<String>,
        /// `--redis-url` for the servers.
        redis_url: Option<String>,
        /// Not asked for by name (the default stores): where PostgreSQL or Redis is not
        /// installed, skipped in one line with what to install, and the run goes on.
        optional: bool,
    },
}

impl Store {
    /// Its name in the tables: `sqlite`, `postgres+redis`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Servers { .. } => "postgres+redis",
        }
    }
}

/// Business, the original's fourth experiment: each server's store-bound endpoints against its
/// own ceiling (`/health`), on each store, over grids of `--workers` and `--db-pool`.
#[derive(Debug, Clone, PartialEq)]
pub struct Business {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// The stores, in order.
    pub stores: Vec<Store>,
    /// Paths loaded on each server; `/health` is the ceiling the others are set against.
    pub endpoints: Vec<String>,
    /// The `--workers` grid (the default setting is always added).
    pub workers: Vec<usize>,
    /// The `--db-pool` grid (the servers' default is always added).
    pub db_pools: Vec<usize>,
    /// Keep-alive connections of each load.
    pub concurrency: usize,
    /// Measured part of each load.
    pub duration: Duration,
    /// Unmeasured load before it.
    pub warmup: Duration,
    /// Runs of each setting, each on a fresh server.
    pub repeats: usize,
}

impl Business {
    /// The ceiling, TechEmpower's single and 20-query tests, and the business call (a known
    /// person, so the greeting is the stored one).
    pub const ENDPOINTS: [&'static str; 4] = [
        greet_core::paths::HEALTH,
        "/db",
        "/queries?queries=20",
        "/business?name=user-00042",
    ];
    /// The `--db-pool` grid.
    pub const DB_POOLS: [usize; 3] = [1, 4, 16];
    /// `--quick` `--db-pool` grid.
    pub const QUICK_DB_POOLS: [usize; 1] = [2];
    /// The servers' default pool.
    pub const DEFAULT_DB_POOL: usize = greet_store::settings::DEFAULT_POOL.get();
    /// Connections: the original's 100.
    pub const CONCURRENCY: usize = 100;
    /// `--quick` connections.
    pub const QUICK_CONCURRENCY: usize = 10;
    /// Measured part of each load.
    pub const DURATION: Duration = Duration::from_millis(500);
    /// `--quick` measured part.
    pub const QUICK_DURATION: Duration = Duration::from_millis(100);
    /// Warm-up before each load: fills the pool and the statement caches.
    pub const WARMUP: Duration = Duration::from_millis(200);
    /// `--quick` warm-up.
    pub const QUICK_WARMUP: Duration = Duration::from_millis(50);
    /// Runs per setting: 4 a side is the fewest a rank test can separate at 0.05.
    pub const REPEATS: usize = 4;
    /// `--quick` runs per setting.
    pub const QUICK_REPEATS: usize = 2;

    /// The defaults, or the `--quick` sizes: both stores, the servers started by the harness
    /// where they are installed.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            stores: vec![
                Store::Sqlite,
                Store::Servers {
                    database_url: None,
                    redis_url: None,
                    optional: true,
                },
            ],
            endpoints: Self::ENDPOINTS.map(String::from).to_vec(),
            workers: Vec::new(),
            db_pools: if quick {
                Self::QUICK_DB_POOLS.to_vec()
            } else {
                Self::DB_POOLS.to_vec()
            },
            concurrency: if quick {
                Self::QUICK_CONCURRENCY
            } else {
                Self::CONCURRENCY
            },
            duration: if quick {
                Self::QUICK_DURATION
            } else {
                Self::DURATION
            },
            warmup: if quick {
                Self::QUICK_WARMUP
            } else {
                Self::WARMUP
            },
            repeats: if quick {
                Self::QUICK_REPEATS
            } else {
                Self::REPEATS
            },
        }
    }
}

/// The target rates of an open-loop run.
#[derive(Debug, Clone, PartialEq)]
pub enum Rates {
    /// Fractions of each server's capacity, as its closed-loop probe measured it.
    OfCapacity(Vec<f64>),
    /// Requests a second, the same for every server.
    Fixed(Vec<f64>),
}

/// Rate: open-loop load, each request on a fixed schedule, latency counted from its intended
/// send time.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    /// Servers, in order.
    pub servers: Vec<String>,
    /// Servers already running, and what a valid answer is.
    pub foreign: Foreign,
    /// Paths loaded, one after another on each server.
    pub endpoints: Vec<String>,
    /// The levels.
    pub rates: Rates,
    /// How long each level runs.
    pub duration: Duration,
    /// How long the closed-loop probe for the capacity runs.
    pub probe: Duration,
    /// Keep-alive connections, for the probe and each level.
    pub connections: usize,
    /// Runs of each level.
    pub repeats: usize,
    /// `--delay-ms` for the servers.
    pub delay_ms: u64,
    /// `--workers` for the servers (`None`: the CPUs each server is pinned to).
    pub workers: Option<usize>,
}

impl Rate {
    /// Fractions of the capacity: from idle to just past saturation.
    pub const FRACTIONS: [f64; 7] = [0.10, 0.25, 0.50, 0.75, 0.90, 1.00, 1.10];
    /// `--quick` fractions.
    pub const QUICK_FRACTIONS: [f64; 3] = [0.25, 0.75, 1.10];
    /// Each level's length.
    pub const DURATION: Duration = Duration::from_secs(5);
    /// `--quick` length.
    pub const QUICK_DURATION: Duration = Duration::from_millis(500);
    /// The probe's length.
    pub const PROBE: Duration = Duration::from_secs(2);
    /// `--quick` probe.
    pub const QUICK_PROBE: Duration = Duration::from_millis(300);
    /// Connections: at 90% of a one-core server's capacity (~100k/s) and ~0.5 ms a request,
    /// about 45 are busy at once; 64 leave the lower levels never waiting for one.
    pub const CONNECTIONS: usize = 64;
    /// `--quick` connections.
    pub const QUICK_CONNECTIONS: usize = 16;

    /// The defaults, or the `--quick` sizes.
    pub fn defaults(quick: bool) -> Self {
        Self {
            servers: SERVERS.map(String::from).to_vec(),
            foreign: Foreign::default(),
            endpoints: vec![greet_core::paths::GREETINGS.to_owned()],
            rates: Rates::OfCapacity(if quick {
                Self::QUICK_FRACTIONS.to_vec()
            } else {
                Self::FRACTIONS.to_vec()
            }),
            duration: if quick {
                Self::QUICK_DURATION
            } else {
                Self::DURATION
            },
            probe: if quick {
                Self::QUICK_PROBE
            } else {
                Self::PROBE
            },
            connections: if quick {
                Self::QUICK_CONNECTIONS
            } else {
                Self::CONNECTIONS
            },
            repeats: 1,
            delay_ms: 0,
            workers: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_every_scenario_on_the_chosen_servers() {
        let plan = Plan::all(Common::default(), true, Some(vec!["hyper".into()]));
        let names: Vec<_> = plan.scenarios.iter().map(Scenario::name).collect();
        assert_eq!(
            names,
            ["ladder", "loops", "soak", "sweep", "business", "rate"]
        );
        assert_eq!(plan.binaries(), ["hyper"]);
        assert_eq!(
            plan.scenarios[0],
            Scenario::Ladder(Ladder {
                servers: vec![ServerSpec::new("hyper")],
                ..Ladder::defaults(true)
            })
        );
        let full = Plan::all(Common::default(), false, None);
        assert_eq!(full.binaries(), ["actix", "axum", "hyper"]);
        assert_eq!(full.scenarios[3], Scenario::Sweep(Sweep::defaults(false)));
    }

    #[test]
    fn the_defaults_are_the_original_experiments() {
        let ladder = Ladder::defaults(false);
        assert_eq!(
            (ladder.levels, ladder.delay_ms),
            (vec![100, 300, 900, 2700], 1000)
        );
        assert_eq!(ladder.blocking_threads, 200);
        assert_eq!(Loops::defaults(false).shapes, [(100, 1000), (1000, 100)]);
        assert_eq!(Soak::defaults(false).levels, [50, 100, 200]);
        assert_eq!(Sweep::defaults(false).blocking_threads, [2, 200]);
        assert_eq!(package("axum"), "greet-axum");
    }
}
