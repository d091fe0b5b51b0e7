//! What a run is to do, as plain values with every default applied. The CLI turns flags into a
//! [`Plan`] (and `all` builds one from these defaults, without parsing anything twice); nothing
//! below it sees a flag. Every default and `--quick` size of every scenario is here, and the
//! CLI's help text is written from these same constants.

mod business;
mod capacity;
mod ladder;
mod loops;
mod placement;
mod protocols;
mod rate;
mod soak;
mod sweep;
mod techempower;
mod threshold;

pub use business::{Business, Store};
pub use capacity::{Capacity, Slo};
pub use ladder::Ladder;
pub use loops::Loops;
pub use placement::Placement;
pub use protocols::Protocols;
pub use rate::{Rate, Rates};
pub use soak::{Soak, SoakBound};
pub use sweep::Sweep;
pub use techempower::{TechEmpower, Test};
pub use threshold::{Metric, OfRuns, Op, Threshold};

use std::path::PathBuf;
use std::time::Duration;

pub use greet_load::Expect;
pub use greet_probe::Protocol;

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
                Scenario::Ladder(l) if l.containers.is_some() => Vec::new(),
                Scenario::Ladder(l) => l.servers.iter().map(|s| s.short.clone()).collect(),
                Scenario::Loops(l) => l.servers.clone(),
                Scenario::Soak(s) => s.servers.clone(),
                Scenario::Sweep(s) => s.servers.clone(),
                Scenario::Business(b) => b.servers.clone(),
                Scenario::Rate(r) => r.servers.clone(),
                Scenario::Capacity(c) => c.servers.clone(),
                Scenario::Protocols(p) => p.servers.clone(),
                Scenario::TechEmpower(t) => t.servers.clone(),
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
    /// Conditions the run's figures must hold (`--threshold`).
    pub thresholds: Vec<Threshold>,
    /// Also keep the results as this baseline (`--save-baseline`), in [`baseline_dir`].
    pub save_baseline: Option<String>,
    /// Compare the results with this baseline at the end (`--baseline`); ratio thresholds
    /// hold to that comparison.
    pub baseline: Option<String>,
    /// What every request goes over (`--protocol`); servers the harness starts get TLS for
    /// `https` and `h2`.
    pub protocol: Protocol,
    /// Over HTTP/2, users sharing one connection (`--streams`; its first value when it is a
    /// list).
    pub streams: usize,
    /// `--streams` as given: one value, or the list capacity measures each server at.
    pub streams_each: Vec<usize>,
    /// Requests each keep-alive user has in flight (`--pipeline`).
    pub pipeline: usize,
    /// Over TLS, handshakes resume the sessions earlier ones left (`--tls-resume`).
    pub tls_resume: bool,
}

/// Where runs go unless `--out` says otherwise, relative to the working directory.
pub const RESULTS_DIR: &str = "results";

/// Where baseline `name` is kept: `results/baselines/NAME`, a run's folder like any other.
pub fn baseline_dir(name: &str) -> PathBuf {
    PathBuf::from(RESULTS_DIR).join("baselines").join(name)
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
            protocol: Protocol::Http1,
            streams: 1,
            streams_each: vec![1],
            pipeline: 1,
            tls_resume: false,
            thresholds: Vec::new(),
            save_baseline: None,
            baseline: None,
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
    /// The highest open-loop rate each server holds within a latency objective.
    Capacity,
    /// Keep-alive throughput over HTTP/1.1, h2c, HTTP/1.1 over TLS and HTTP/2 over TLS.
    Protocols,
    /// TechEmpower's seven tests.
    TechEmpower,
}

impl ScenarioKind {
    /// Every scenario, in order.
    pub const ALL: [ScenarioKind; 9] = [
        Self::Ladder,
        Self::Loops,
        Self::Soak,
        Self::Sweep,
        Self::Business,
        Self::Rate,
        Self::Capacity,
        Self::Protocols,
        Self::TechEmpower,
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
            Self::Capacity => "capacity",
            Self::Protocols => "protocols",
            Self::TechEmpower => "techempower",
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
            Self::Capacity => "Capacity (open loop: the highest rate held within a latency objective)",
            Self::Protocols => "Protocols (HTTP/1.1, h2c, HTTPS and HTTP/2 over TLS)",
            Self::TechEmpower => "TechEmpower (their seven tests: json, plaintext, db, queries, fortunes, updates, cached queries)",
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
    /// The highest open-loop rate held within a latency objective.
    Capacity(Capacity),
    /// Keep-alive throughput over each protocol.
    Protocols(Protocols),
    /// TechEmpower's seven tests.
    TechEmpower(TechEmpower),
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
            ScenarioKind::Capacity => Self::Capacity(Capacity::defaults(quick)),
            ScenarioKind::Protocols => Self::Protocols(Protocols::defaults(quick)),
            ScenarioKind::TechEmpower => Self::TechEmpower(TechEmpower::defaults(quick)),
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
            Self::Capacity(_) => ScenarioKind::Capacity,
            Self::Protocols(_) => ScenarioKind::Protocols,
            Self::TechEmpower(_) => ScenarioKind::TechEmpower,
        }
    }

    /// Its name, as a subcommand and a key of `results.json`.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// The servers it loads that the harness does not start.
    pub fn targets(&self) -> &[Target] {
        match self {
            Self::Ladder(plan) => &plan.foreign.targets,
            Self::Loops(plan) => &plan.foreign.targets,
            Self::Soak(plan) => &plan.foreign.targets,
            Self::Rate(plan) => &plan.foreign.targets,
            Self::Capacity(plan) => &plan.foreign.targets,
            Self::Sweep(_) | Self::Business(_) | Self::Protocols(_) | Self::TechEmpower(_) => &[],
        }
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
            Self::Capacity(plan) => plan.servers = servers.to_vec(),
            Self::Protocols(plan) => plan.servers = servers.to_vec(),
            Self::TechEmpower(plan) => plan.servers = servers.to_vec(),
        }
    }
}

/// How each setting of a grid scenario (sweep, business) is measured: keep-alive load on a
/// freshly started server, warmed up, measured, repeated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measure {
    /// Keep-alive connections of each load.
    pub concurrency: usize,
    /// Measured part of each load.
    pub duration: Duration,
    /// Unmeasured load before it.
    pub warmup: Duration,
    /// Runs of each setting, each on a fresh server: 4 a side is the fewest a rank test can
    /// separate at 0.05.
    pub repeats: usize,
}

/// A grid scenario's [`Measure`]: its default and its `--quick` size.
pub trait Measured {
    /// The default.
    const MEASURE: Measure;
    /// The `--quick` size.
    const QUICK_MEASURE: Measure;

    /// The default, or the `--quick` size.
    fn measure(quick: bool) -> Measure {
        if quick {
            Self::QUICK_MEASURE
        } else {
            Self::MEASURE
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

/// The flags every server of a scenario is started with (`--delay-ms`, `--workers`,
/// `--blocking-threads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerSettings {
    /// `--delay-ms`.
    pub delay_ms: u64,
    /// `--workers` (`None`: the CPUs each server is pinned to).
    pub workers: Option<usize>,
    /// `--blocking-threads`.
    pub blocking_threads: usize,
}

/// A scenario whose servers take [`ServerSettings`] from the command line: its greeting
/// delay, and its `--quick` one.
pub trait Served {
    /// The delay, milliseconds.
    const DELAY_MS: u64;
    /// The `--quick` delay, milliseconds.
    const QUICK_DELAY_MS: u64;

    /// Its servers' settings by default, or at `--quick` size.
    fn server_settings(quick: bool) -> ServerSettings {
        ServerSettings::delayed(if quick {
            Self::QUICK_DELAY_MS
        } else {
            Self::DELAY_MS
        })
    }
}

impl ServerSettings {
    /// A greeting delay, and the servers' defaults for the rest.
    pub fn delayed(delay_ms: u64) -> Self {
        Self {
            delay_ms,
            workers: None,
            blocking_threads: BLOCKING_THREADS,
        }
    }
}

/// The servers as containers of their images (`--docker`), rather than processes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Containers {
    /// The Docker network they run on, loaded at their address there (`None`: the host's
    /// network, at 127.0.0.1).
    pub network: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_every_scenario_on_the_chosen_servers() {
        let plan = Plan::all(Common::default(), true, Some(vec!["hyper".into()]));
        let names: Vec<_> = plan.scenarios.iter().map(Scenario::name).collect();
        assert_eq!(
            names,
            [
                "ladder",
                "loops",
                "soak",
                "sweep",
                "business",
                "rate",
                "capacity",
                "protocols",
                "techempower"
            ]
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
            (ladder.levels, ladder.server.delay_ms),
            (vec![100, 300, 900, 2700], 1000)
        );
        assert_eq!(ladder.server.blocking_threads, 200);
        assert_eq!(Loops::defaults(false).shapes, [(100, 1000), (1000, 100)]);
        assert_eq!(Soak::defaults(false).levels, [50, 100, 200]);
        assert_eq!(Sweep::defaults(false).blocking_threads, [2, 200]);
        assert_eq!(package("axum"), "greet-axum");
    }
}
