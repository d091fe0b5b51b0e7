//! The flags of capacity's subcommand, as clap reads them, and the plan they make (the flags
//! several scenarios share are flattened from [`crate::flags`]).

use std::time::Duration;

use clap::Args;

use crate::flags::{
    help, help1, millis, parse_duration, parse_level, parse_path, parse_repeats, set, CommonArgs,
    ForeignArgs, PlaceArgs, ServerArgs, ServersArgs,
};
use crate::open_loop;
use crate::plan::Common;

use super::plan::{Plan, Slo};

/// The settings of a capacity run.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
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
                      format!("{}s", Plan::RAMP.as_secs()), format!("{}s", Plan::QUICK_RAMP.as_secs())))]
    ramp: Option<Duration>,

    #[arg(long, value_parser = parse_duration,
          help = help("How long each level of a search runs",
                      format!("{}s", Plan::DURATION.as_secs()), millis(Plan::QUICK_DURATION)))]
    duration: Option<Duration>,

    #[arg(long, value_parser = parse_repeats,
          help = help("Levels of each search's staircase, once its bracket is halved to two 4% steps; their rates (and the next one's) average to the search's capacity", Plan::STEPS, Plan::QUICK_STEPS))]
    steps: Option<usize>,

    #[arg(long, value_parser = parse_repeats,
          help = help("Searches per server and endpoint; 4 or more can tell servers apart",
                      Plan::REPEATS, Plan::QUICK_REPEATS))]
    repeats: Option<usize>,

    #[arg(long, value_parser = parse_duration,
          help = help("How long the closed-loop probe runs", format!("{}s", open_loop::PROBE.as_secs()), millis(open_loop::QUICK_PROBE)))]
    probe: Option<Duration>,

    #[arg(long, value_parser = parse_level,
          help = help("Requests in flight at most: keep-alive connections, each carrying one at a time; over HTTP/2 --streams of them share one",
                      open_loop::CONNECTIONS, open_loop::QUICK_CONNECTIONS))]
    connections: Option<usize>,

    #[command(flatten)]
    server: ServerArgs<Plan>,

    #[command(flatten)]
    place: PlaceArgs,

    #[command(flatten)]
    foreign: ForeignArgs,

    #[command(flatten)]
    common: CommonArgs,
}

impl Flags {
    pub(crate) fn plan(self) -> (Common, Plan) {
        let quick = self.common.quick;
        let mut plan = Plan::defaults(quick);
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

/// `--slo`: `p99<5ms` — a percentile ([`Slo::PERCENTILES`]) of the latency from the intended
/// send, under a bound in ms or s (a bound without its unit is refused).
pub(crate) fn parse_slo(text: &str) -> Result<Slo, String> {
    let bad = || {
        let names: Vec<String> = Slo::PERCENTILES.map(Slo::percentile_name).to_vec();
        format!(
            "{text:?} is not an objective: {}, then < and a latency (e.g. p99<5ms)",
            names.join(", ")
        )
    };
    let (percentile, bound) = text.trim().split_once('<').ok_or_else(bad)?;
    let percentile = Slo::percentile_named(percentile.trim()).ok_or_else(bad)?;
    // A bare number would read as seconds, a thousand times what p99<5 most likely means.
    if bound.trim().ends_with(|c: char| c.is_ascii_digit()) {
        return Err(format!(
            "{text:?}: the latency needs a unit, ms or s (e.g. {}ms)",
            text.trim()
        ));
    }
    let bound = greet_cli::parse_duration(bound).map_err(|_| bad())?;
    Ok(Slo {
        percentile,
        ms: bound.as_secs_f64() * 1000.0,
    })
}
