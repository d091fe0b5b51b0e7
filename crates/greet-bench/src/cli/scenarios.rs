//! The flags of each scenario, as clap reads them, and the plan each turns into: a
//! scenario's own flags here, the shared ones flattened from `shared`.

use std::time::Duration;

use clap::Args;

use crate::plan::{
    self, Business, Capacity, Common, Containers, Ladder, Loops, Plan, Protocols, Rate, Rates,
    ServerSpec, Slo, Soak, SoakBound, Sweep, TechEmpower, Test,
};

use super::shared::{
    set, CommonArgs, ForeignArgs, MeasureArgs, PlaceArgs, ServerArgs, ServersArgs, StoresArgs,
};
use super::values::{
    help, help1, list, millis, parse_count, parse_duration, parse_fraction, parse_level,
    parse_path, parse_positive, parse_queries, parse_repeats, parse_server, parse_shape, parse_slo,
    parse_test, percents, shapes,
};
use greet_load::flags::parse_rate;
use greet_load::schedule::{parse_ramp, Ramp};

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

    #[command(flatten)]
    server: ServerArgs<Ladder>,

    #[arg(long, value_parser = parse_repeats,
          help = help1("Runs of each level; with more than one, figures are medians and every \
                        pair of servers is compared on total time", 1))]
    repeats: Option<usize>,

    #[command(flatten)]
    foreign: ForeignArgs,

    /// Run each server as a container of its image (greet-axum:latest…, built by
    /// docker/build-offline.sh) with compose.yaml's limits, on the host's network; sampled from
    /// /proc where its process is this host's, and through the engine's stats always
    #[arg(long, conflicts_with = "swarm")]
    docker: bool,

    /// With --docker: run the containers on this Docker network and load them at their
    /// address there (the engine may be another host's: DOCKER_HOST)
    #[arg(long, value_name = "NAME", requires = "docker")]
    docker_network: Option<String>,

    #[command(flatten)]
    place: PlaceArgs,

    #[command(flatten)]
    common: CommonArgs,
}

impl LadderArgs {
    pub(super) fn plan(self) -> (Common, Ladder) {
        let quick = self.common.quick;
        let mut plan = Ladder::defaults(quick);
        match self.servers {
            Some(servers) => plan.servers = servers,
            None if !self.foreign.target.is_empty() => plan.servers.clear(),
            None => {}
        }
        plan.foreign = self.foreign.plan();
        set(&mut plan.levels, self.concurrency);
        set(&mut plan.endpoint, self.endpoint);
        plan.server = self.server.settings(quick);
        set(&mut plan.repeats, self.repeats);
        plan.containers = self.docker.then_some(Containers {
            network: self.docker_network,
        });
        plan.place = self.place.placement();
        (self.common.plan(), plan)
    }
}

/// The settings of a loops run.
#[derive(Debug, Clone, Args)]
pub(super) struct LoopsArgs {
    #[command(flatten)]
    servers: ServersArgs,

    #[arg(long, value_delimiter = ',', value_parser = parse_shape,
          help = help("Shapes as USERSxLOOPS, each user sending LOOPS requests back to back on \
                       its own keep-alive connection", shapes(&Loops::SHAPES), shapes(&Loops::QUICK_SHAPES)))]
    shapes: Option<Vec<(usize, usize)>>,

    #[arg(long, value_parser = parse_repeats,
          help = help1("Runs of each shape per server; 4 or more can tell servers apart", Loops::REPEATS))]
    repeats: Option<usize>,

    #[command(flatten)]
    server: ServerArgs<Loops>,

    #[command(flatten)]
    foreign: ForeignArgs,

    #[command(flatten)]
    common: CommonArgs,
}

impl LoopsArgs {
    pub(super) fn plan(self) -> (Common, Loops) {
        let quick = self.common.quick;
        let mut plan = Loops::defaults(quick);
        plan.foreign = self.foreign.plan();
        self.servers.apply(&mut plan.servers, &plan.foreign);
        set(&mut plan.shapes, self.shapes);
        set(&mut plan.repeats, self.repeats);
        plan.server = self.server.settings(quick);
        (self.common.plan(), plan)
    }
}

/// The settings of a soak run.
#[derive(Debug, Clone, Args)]
pub(super) struct SoakArgs {
    #[command(flatten)]
    servers: ServersArgs,

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

    /// Bound each level by a request count instead of a duration (ab's -n; with agents,
    /// shared out among them)
    #[arg(long, value_parser = parse_positive)]
    requests: Option<usize>,

    #[arg(long, value_parser = parse_repeats, help = help1("Runs of each level", 1))]
    repeats: Option<usize>,

    #[command(flatten)]
    server: ServerArgs<Soak>,

    #[command(flatten)]
    place: PlaceArgs,

    #[command(flatten)]
    foreign: ForeignArgs,

    #[command(flatten)]
    common: CommonArgs,
}

impl SoakArgs {
    pub(super) fn plan(self) -> (Common, Soak) {
        let quick = self.common.quick;
        let mut plan = Soak::defaults(quick);
        plan.foreign = self.foreign.plan();
        self.servers.apply(&mut plan.servers, &plan.foreign);
        set(&mut plan.levels, self.concurrency);
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.bound, self.duration.map(SoakBound::Duration));
        set(&mut plan.bound, self.requests.map(SoakBound::Requests));
        set(&mut plan.repeats, self.repeats);
        plan.server = self.server.settings(quick);
        plan.place = self.place.placement();
        (self.common.plan(), plan)
    }
}

/// The settings of a sweep run.
#[derive(Debug, Clone, Args)]
pub(super) struct SweepArgs {
    #[command(flatten)]
    servers: ServersArgs,

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

    #[command(flatten)]
    common: CommonArgs,
}

impl SweepArgs {
    pub(super) fn plan(self) -> (Common, Sweep) {
        let mut plan = Sweep::defaults(self.common.quick);
        self.servers.apply(&mut plan.servers, &Default::default());
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
    #[command(flatten)]
    servers: ServersArgs,

    /// Protocols, in order, of http1, h2c, https, h2; http1 is always measured (the others
    /// are fractions of it) [default: http1,h2c,https,h2]
    #[arg(long, value_delimiter = ',', value_name = "PROTOCOLS")]
    protocols: Option<Vec<plan::Protocol>>,

    #[command(flatten)]
    measure: MeasureArgs<Protocols>,

    #[command(flatten)]
    common: CommonArgs,
}

impl ProtocolsArgs {
    pub(super) fn plan(self) -> (Common, Protocols) {
        let mut plan = Protocols::defaults(self.common.quick);
        self.servers.apply(&mut plan.servers, &Default::default());
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
    #[command(flatten)]
    servers: ServersArgs,

    #[command(flatten)]
    stores: StoresArgs,

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

    #[command(flatten)]
    place: PlaceArgs,

    #[command(flatten)]
    common: CommonArgs,
}

impl BusinessArgs {
    pub(super) fn plan(self) -> (Common, Business) {
        let mut plan = Business::defaults(self.common.quick);
        self.servers.apply(&mut plan.servers, &Default::default());
        self.stores.apply(&mut plan.stores);
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.workers, self.workers);
        set(&mut plan.db_pools, self.db_pools);
        self.measure.apply(&mut plan.measure);
        plan.place = self.place.placement();
        (self.common.plan(), plan)
    }
}

/// The settings of a capacity run.
#[derive(Debug, Clone, Args)]
pub(super) struct CapacityArgs {
    #[command(flatten)]
    servers: ServersArgs,

    #[arg(long, value_delimiter = ',', value_parser = parse_path,
          help = help1("Paths loaded, one after another on each server", greet_core::paths::GREETINGS))]
    endpoints: Option<Vec<String>>,

    #[arg(long, value_parser = parse_slo,
          help = help1("The latency objective a level must hold: p50, p90, p99 or p999 of the \
                        latency from each request's intended send, under a bound \
                        (every answer valid and at most 1% sent late besides)", Slo::DEFAULT))]
    slo: Option<Slo>,

    #[arg(long, value_parser = parse_duration,
          help = help("How long the ramp to 1.2 times the probe's rate runs",
                      format!("{}s", Capacity::RAMP.as_secs()), format!("{}s", Capacity::QUICK_RAMP.as_secs())))]
    ramp: Option<Duration>,

    #[arg(long, value_parser = parse_duration,
          help = help("How long each level of a bisection runs",
                      format!("{}s", Capacity::DURATION.as_secs()), millis(Capacity::QUICK_DURATION)))]
    duration: Option<Duration>,

    #[arg(long, value_parser = parse_repeats,
          help = help("Levels per bisection", Capacity::STEPS, Capacity::QUICK_STEPS))]
    steps: Option<usize>,

    #[arg(long, value_parser = parse_repeats,
          help = help("Bisections per server and endpoint; 4 or more can tell servers apart",
                      Capacity::REPEATS, Capacity::QUICK_REPEATS))]
    repeats: Option<usize>,

    #[arg(long, value_parser = parse_duration,
          help = help("How long the closed-loop probe runs", format!("{}s", Rate::PROBE.as_secs()), millis(Rate::QUICK_PROBE)))]
    probe: Option<Duration>,

    #[arg(long, value_parser = parse_level,
          help = help("Requests in flight at most: keep-alive connections, each carrying one at a time; over HTTP/2 --streams of them share one",
                      Rate::CONNECTIONS, Rate::QUICK_CONNECTIONS))]
    connections: Option<usize>,

    #[command(flatten)]
    server: ServerArgs<Capacity>,

    #[command(flatten)]
    place: PlaceArgs,

    #[command(flatten)]
    foreign: ForeignArgs,

    #[command(flatten)]
    common: CommonArgs,
}

impl CapacityArgs {
    pub(super) fn plan(self) -> (Common, Capacity) {
        let quick = self.common.quick;
        let mut plan = Capacity::defaults(quick);
        plan.foreign = self.foreign.plan();
        self.servers.apply(&mut plan.servers, &plan.foreign);
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.slo, self.slo);
        set(&mut plan.ramp, self.ramp);
        set(&mut plan.duration, self.duration);
        set(&mut plan.steps, self.steps);
        set(&mut plan.repeats, self.repeats);
        set(&mut plan.probe, self.probe);
        set(&mut plan.connections, self.connections);
        plan.server = self.server.settings(quick);
        plan.place = self.place.placement();
        (self.common.plan(), plan)
    }
}

/// The settings of a rate run.
#[derive(Debug, Clone, Args)]
pub(super) struct RateArgs {
    #[command(flatten)]
    servers: ServersArgs,

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

    /// One level per server on a ramp instead (k6's ramping arrival rate): the target rate
    /// over time as `rate:duration` stages from 0 (or from a leading bare rate), e.g.
    /// 1k:10s,50k:30s,50k:10s; each second of it is reported
    #[arg(long, value_name = "STAGES", value_parser = parse_ramp,
          conflicts_with_all = ["of_capacity", "rates", "duration"])]
    ramp: Option<Ramp>,

    #[arg(long, value_parser = parse_duration,
          help = help("How long each level runs", format!("{}s", Rate::DURATION.as_secs()), millis(Rate::QUICK_DURATION)))]
    duration: Option<Duration>,

    #[arg(long, value_parser = parse_duration,
          help = help("How long the closed-loop probe for the capacity runs (always from the \
                       harness)", format!("{}s", Rate::PROBE.as_secs()), millis(Rate::QUICK_PROBE)))]
    probe: Option<Duration>,

    #[arg(long, value_parser = parse_level,
          help = help("Requests in flight at most: keep-alive connections, each carrying one at a time; over HTTP/2 --streams of them share one",
                      Rate::CONNECTIONS, Rate::QUICK_CONNECTIONS))]
    connections: Option<usize>,

    #[arg(long, value_parser = parse_repeats,
          help = help1("Runs of each level; 4 or more can tell servers apart on p99", 1))]
    repeats: Option<usize>,

    #[command(flatten)]
    server: ServerArgs<Rate>,

    #[command(flatten)]
    place: PlaceArgs,

    #[command(flatten)]
    foreign: ForeignArgs,

    #[command(flatten)]
    common: CommonArgs,
}

impl RateArgs {
    pub(super) fn plan(self) -> (Common, Rate) {
        let quick = self.common.quick;
        let mut plan = Rate::defaults(quick);
        plan.foreign = self.foreign.plan();
        self.servers.apply(&mut plan.servers, &plan.foreign);
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.rates, self.of_capacity.map(Rates::OfCapacity));
        set(&mut plan.rates, self.rates.map(Rates::Fixed));
        set(&mut plan.rates, self.ramp.map(Rates::Ramp));
        set(&mut plan.duration, self.duration);
        set(&mut plan.probe, self.probe);
        set(&mut plan.connections, self.connections);
        set(&mut plan.repeats, self.repeats);
        plan.server = self.server.settings(quick);
        plan.place = self.place.placement();
        (self.common.plan(), plan)
    }
}

/// The settings of a TechEmpower run.
#[derive(Debug, Clone, Args)]
pub(super) struct TechEmpowerArgs {
    #[command(flatten)]
    servers: ServersArgs,

    #[command(flatten)]
    stores: StoresArgs,

    #[arg(long, value_delimiter = ',', value_parser = parse_test,
          help = help1("TechEmpower's tests, in order; json and plaintext run once, the others \
                        on each store", list(&Test::ALL.map(Test::name))))]
    tests: Option<Vec<Test>>,

    #[arg(long, value_parser = parse_queries,
          help = help1("Rows per request of queries, updates and cached-queries (1-500)",
                       TechEmpower::ROWS))]
    rows: Option<usize>,

    #[command(flatten)]
    measure: MeasureArgs<TechEmpower>,

    #[command(flatten)]
    place: PlaceArgs,

    #[command(flatten)]
    common: CommonArgs,
}

impl TechEmpowerArgs {
    pub(super) fn plan(self) -> (Common, TechEmpower) {
        let mut plan = TechEmpower::defaults(self.common.quick);
        self.servers.apply(&mut plan.servers, &Default::default());
        self.stores.apply(&mut plan.stores);
        set(&mut plan.tests, self.tests);
        plan.rows = self.rows.unwrap_or(plan.rows);
        // --pipeline is plaintext's depth here; the other tests are not pipelined.
        plan.pipeline = self.common.pipeline().unwrap_or(plan.pipeline);
        self.measure.apply(&mut plan.measure);
        plan.place = self.place.placement();
        let mut common = self.common.plan();
        common.pipeline = 1;
        (common, plan)
    }
}

/// The settings of `all`.
#[derive(Debug, Clone, Args)]
pub(super) struct AllArgs {
    #[command(flatten)]
    servers: ServersArgs,

    #[command(flatten)]
    common: CommonArgs,
}

impl AllArgs {
    pub(super) fn plan(self) -> Plan {
        let quick = self.common.quick;
        Plan::all(self.common.plan(), quick, self.servers.given())
    }
}
