//! What a run is to do, as plain values with every default applied: the run's shared settings
//! ([`Common`]), what every scenario's plan is built on ([`Base`]: its servers, targets and
//! their settings, repeats, where the load runs), the stores, the thresholds. Each scenario's
//! own plan is in its folder, with its defaults and `--quick` sizes, which its flags' help
//! quotes; nothing here sees a flag.

mod base;
mod placement;
mod profile;
mod store;
mod threshold;

pub use base::{Base, Based, Grounded, Takes};
pub use placement::Placement;
pub use profile::Profile;
pub use store::Store;
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

/// The servers that measure the machine rather than compete, by short name: `floor`, the
/// workspace's reference server (`greet-floor`: one event loop per core, prebuilt answers),
/// and `nginx`, Debian's, the outside anchor. They serve `/health`, `/plaintext`, `/json` and
/// an instant `/greetings`, in cleartext HTTP/1.1, as processes; they join soak, capacity and
/// techempower (json and plaintext) and are never ranked against the crates.
pub const REFERENCES: [&str; 2] = [FLOOR, ANCHOR];
/// The reference server's short name.
pub const FLOOR: &str = "floor";
/// Debian's nginx, by its short name (and its binary's).
pub const ANCHOR: &str = "nginx";

/// Whether `short` names a reference server rather than a contender.
pub fn is_reference(short: &str) -> bool {
    REFERENCES.contains(&short)
}

/// What the tables call a reference server: the floor or the anchor, by its table name
/// (`greet-floor`, `nginx`); none for a contender.
pub fn reference_role(name: &str) -> Option<&'static str> {
    match name.strip_prefix("greet-").unwrap_or(name) {
        FLOOR if name != FLOOR => Some("floor"),
        ANCHOR if name == ANCHOR => Some("anchor"),
        _ => None,
    }
}

/// Server `short`'s name in the tables, its package's for a crate at its defaults:
/// `axum` → `greet-axum`, `hyper+pipeline-flush` → `greet-hyper+pipeline-flush`; nginx is
/// nginx.
pub fn package(short: &str) -> String {
    if short == ANCHOR {
        return ANCHOR.to_owned();
    }
    format!("greet-{short}")
}

/// What joins a server's short name to the knobs it runs with: `hyper+pipeline-flush` is
/// greet-hyper started with `--knob pipeline-flush`, a server of its own in every table.
pub const KNOB_MARK: char = '+';

/// The crate of server `short`, whose binary it runs: `hyper` for `hyper+pipeline-flush`.
pub fn crate_of(short: &str) -> &str {
    short.split(KNOB_MARK).next().unwrap_or(short)
}

/// The knobs server `short` is started with, by name: `pipeline-flush` for
/// `hyper+pipeline-flush`; none for a crate at its defaults.
pub fn knobs_of(short: &str) -> Vec<&str> {
    short.split(KNOB_MARK).skip(1).collect()
}

/// Whether `server` runs tuned, with knobs (`greet-hyper+pipeline-flush`): it is ranked in a
/// league of its own, never against the crates at their defaults.
pub fn is_tuned(server: &str) -> bool {
    // A server named again (`greet-hyper+mimalloc#2`) is in its league.
    let server = server.split('#').next().unwrap_or(server);
    let knobs = knobs_of(server);
    // A `--target` may be named `c++srv`: only knobs by their names make a league.
    !knobs.is_empty() && knobs.iter().all(|k| greet_server::Knob::named(k).is_some())
}

/// Whether servers `a` and `b` (table names) are compared where each server with knobs is
/// judged against its crate alone: two crates at their defaults, or a crate with knobs and
/// the same crate at its defaults. Never two servers with knobs: with a score of them every
/// pair would be hundreds of comparisons.
pub fn against_its_crate(a: &str, b: &str) -> bool {
    match (is_tuned(a), is_tuned(b)) {
        (false, false) => true,
        (true, true) => false,
        _ => crate_of(a) == crate_of(b),
    }
}

/// What `+tuned` stands for (`hyper+tuned`): crate `crate_short`'s knobs that lowered its
/// counted cost (instructions per request down by more than 2% on a cell of docs/knobs.md,
/// up by more on none) and give up only what no tuned league asks (answers to bad input, the
/// cut of slow heads and idle connections, surviving a panic); none for the other servers.
pub fn tuned(crate_short: &str) -> &'static [&'static str] {
    match crate_short {
        "hyper" => &["pipeline-flush", "no-head-timeout", "panic-abort"],
        "axum" => &[
            "pipeline-flush",
            "no-head-timeout",
            "fat-lto",
            "panic-abort",
        ],
        "actix" => &["os-keep-alive", "mimalloc", "fat-lto", "panic-abort"],
        _ => &[],
    }
}

/// The build of server `short`: its build knobs ([`greet_server::Knob::is_build`]) in
/// `Knob::ALL`'s order, `mimalloc+fat-lto` for `axum+fat-lto+pipeline-flush+mimalloc`; `None`
/// for a binary built as the workspace builds it. Each build has a target directory of its
/// own, `target/knobs/<build>`.
pub fn build_of(short: &str) -> Option<String> {
    let names = knobs_of(short);
    let build: Vec<&str> = greet_server::Knob::ALL
        .into_iter()
        .filter(|k| k.is_build() && names.contains(&k.name()))
        .map(greet_server::Knob::name)
        .collect();
    (!build.is_empty()).then(|| build.join("+"))
}

/// The binary name of server `short`: its crate's package (`greet-hyper` for
/// `hyper+pipeline-flush`).
pub fn binary(short: &str) -> String {
    package(crate_of(short))
}

/// The original experiment's delay, in milliseconds.
pub const DELAY_MS: u64 = greet_core::DEFAULT_DELAY.as_millis() as u64;
/// The servers' default bound of the blocking pool.
pub const BLOCKING_THREADS: usize = greet_core::DEFAULT_BLOCKING_THREADS.get();

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
    /// Requests a keep-alive user sends on one connection before it opens another
    /// (`--requests-per-connection`); none: one connection for the whole load.
    pub requests_per_connection: Option<usize>,
    /// Header fields every request carries (`--header`).
    pub headers: Vec<greet_load::Header>,
    /// A body every request POSTs (`--body`); none: GETs.
    pub body: Option<greet_load::RequestBody>,
    /// Over TLS, handshakes resume the sessions earlier ones left (`--tls-resume`).
    pub tls_resume: bool,
    /// The equivalence band every comparison is judged against (`--band`; 0.05: ±5%); none:
    /// the verdicts' own default (`greet_stats::paired::BAND`).
    pub band: Option<f64>,
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
            requests_per_connection: None,
            headers: Vec::new(),
            body: None,
            tls_resume: false,
            band: None,
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

/// How each setting of a grid scenario is measured: keep-alive load on a freshly started
/// server, warmed up, then measured (its [`Base::repeats`] times).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measure {
    /// Keep-alive connections of each load.
    pub connections: usize,
    /// Measured part of each load.
    pub duration: Duration,
    /// Unmeasured load before it.
    pub warmup: Duration,
}

/// Blocks added where a scenario's figures are still undecided after its `--repeats`: `step`
/// more at each look, at most `looks` looks in all, while its `time` lasts (zero: the blocks of
/// `--repeats` only, one look). Every verdict of the scenario pays for the looks: its error
/// rate is divided by them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Time for the whole scenario.
    pub time: Duration,
    /// Blocks added at each look.
    pub step: usize,
    /// Looks at most, the first after `--repeats` blocks.
    pub looks: usize,
}

impl Budget {
    /// `time` for the scenario, 10 blocks a look, 3 looks at most.
    pub const fn of(time: Duration) -> Self {
        Self {
            time,
            step: 10,
            looks: 3,
        }
    }

    /// The looks its verdicts pay for: 1 without time to add blocks.
    pub fn looks(&self) -> usize {
        if self.time.is_zero() {
            1
        } else {
            self.looks.max(1)
        }
    }
}

/// What an open-loop scenario's levels go over: the closed-loop probe that sets their scale,
/// and the keep-alive connections that carry them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paced {
    /// How long the closed-loop probe runs (always from the harness).
    pub probe: Duration,
    /// Requests in flight at most: keep-alive connections, each carrying one at a time.
    pub connections: usize,
}

impl Paced {
    /// At 90% of a one-core server's capacity (~100k/s) and ~0.5 ms a request, about 45
    /// connections are busy at once; 64 leave the lower levels never waiting for one.
    pub const DEFAULT: Paced = Paced {
        probe: Duration::from_secs(2),
        connections: 64,
    };
    /// `--quick` sizes.
    pub const QUICK: Paced = Paced {
        probe: Duration::from_millis(300),
        connections: 16,
    };

    /// The defaults, or the `--quick` sizes.
    pub fn defaults(quick: bool) -> Self {
        if quick {
            Self::QUICK
        } else {
            Self::DEFAULT
        }
    }
}

/// Blocks of a grid scenario's settings (each server once a block): 10. Six are the fewest
/// whose interval can decide one comparison alone, but a scenario judges a dozen or more at
/// once: at 6 blocks the smallest p-value there is, 1/32, is above what Benjamini–Hochberg
/// asks of the first verdict in a family of two or more, and a run of TechEmpower left
/// plaintext's fourfold gap undecided. At 10 it is 1/512, enough for a family of 25.
pub const GRID_BLOCKS: usize = 10;
/// `--quick` blocks of a grid scenario's settings.
pub const QUICK_GRID_BLOCKS: usize = 2;

/// A grid scenario's [`Measure`] and repeats: its defaults and its `--quick` sizes.
pub trait Measured {
    /// The default.
    const MEASURE: Measure;
    /// The `--quick` size.
    const QUICK_MEASURE: Measure;
    /// Blocks of each setting (each server once a block): [`GRID_BLOCKS`].
    const REPEATS: usize = GRID_BLOCKS;
    /// `--quick` runs of each setting.
    const QUICK_REPEATS: usize = QUICK_GRID_BLOCKS;

    /// The default, or the `--quick` size.
    fn measure(quick: bool) -> Measure {
        if quick {
            Self::QUICK_MEASURE
        } else {
            Self::MEASURE
        }
    }

    /// A grid scenario's base: the servers with no delay (each setting's own flags are the
    /// scenario's), its repeats.
    fn grid(quick: bool) -> Base {
        let repeats = if quick {
            Self::QUICK_REPEATS
        } else {
            Self::REPEATS
        };
        Base::new(ServerSettings::delayed(0), repeats)
    }
}

/// What `--repeats` says a grid scenario's repeat is.
pub const GRID_REPEATS: &str =
    "Blocks: each server measured once a block, servers compared block by block; 6 or more can \
     decide a verdict, 10 a scenario's dozen at once";

/// A server to start: its short name and, optionally, its own endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// `axum`, `actix` or `hyper` (with knobs: `hyper+pipeline-flush`), a JVM peer or a
    /// reference.
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
    /// answers to bad input) and for a crate with runtime knobs on (a knob may give up rows
    /// of the contract: the contract suite's knob tests name them). Build knobs keep the whole
    /// contract, and this holds them to it.
    pub fn for_server(short: &str) -> Self {
        let runtime_knob = knobs_of(short)
            .into_iter()
            .filter_map(greet_server::Knob::named)
            .any(|k| !k.is_build());
        if is_peer(short) || is_reference(short) || runtime_knob {
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
    fn each_server_with_knobs_is_set_against_its_crate_alone() {
        assert!(against_its_crate("greet-hyper", "greet-actix"));
        assert!(against_its_crate(
            "greet-hyper+pipeline-flush",
            "greet-hyper"
        ));
        assert!(against_its_crate("greet-hyper", "greet-hyper+mimalloc"));
        assert!(!against_its_crate("greet-hyper+mimalloc", "greet-axum"));
        assert!(!against_its_crate(
            "greet-hyper+mimalloc",
            "greet-hyper+fat-lto"
        ));
    }

    #[test]
    fn servers_are_packages() {
        assert_eq!(package("axum"), "greet-axum");
        assert!(is_peer("tomcat") && !is_peer("hyper"));
        assert_eq!(package("nginx"), "nginx");
        assert_eq!(package("floor"), "greet-floor");
        assert_eq!(reference_role("greet-floor"), Some("floor"));
        assert_eq!(reference_role("nginx"), Some("anchor"));
        assert_eq!(reference_role("greet-nginx"), None);
        assert_eq!(reference_role("floor"), None);
        assert_eq!(reference_role("greet-hyper"), None);
    }

    #[test]
    fn a_server_with_knobs_runs_its_crate_s_binary() {
        assert_eq!(
            package("hyper+pipeline-flush"),
            "greet-hyper+pipeline-flush"
        );
        assert_eq!(binary("hyper+pipeline-flush+stack-headers"), "greet-hyper");
        assert_eq!(
            knobs_of("hyper+pipeline-flush+stack-headers"),
            ["pipeline-flush", "stack-headers"]
        );
        assert_eq!((crate_of("axum"), knobs_of("axum").len()), ("axum", 0));
        assert_eq!(build_of("axum"), None);
        assert_eq!(build_of("axum+pipeline-flush"), None);
        assert_eq!(
            build_of("axum+fat-lto+pipeline-flush+mimalloc").as_deref(),
            Some("mimalloc+fat-lto")
        );
        assert_eq!(Contract::for_server("axum+mimalloc"), Contract::Full);
        assert_eq!(
            Contract::for_server("axum+mimalloc+no-head-timeout"),
            Contract::Light
        );
        assert_eq!(binary("nginx"), "nginx");
    }
}
