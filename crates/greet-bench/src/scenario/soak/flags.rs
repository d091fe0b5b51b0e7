//! The flags of soak's subcommand, as clap reads them, and the plan they make (the flags
//! several scenarios share are flattened from [`crate::flags`]).

use std::time::Duration;

use clap::Args;

use crate::flags::{
    help, help1, list, millis, parse_duration, parse_level, parse_path, parse_positive,
    parse_repeats, set, CommonArgs, ForeignArgs, PlaceArgs, ServerArgs, ServersArgs,
};
use crate::plan::Common;

use super::plan::{Plan, SoakBound};

/// The settings of a soak run.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[command(flatten)]
    servers: ServersArgs,

    #[arg(long, value_delimiter = ',', value_parser = parse_level,
          help = help("Connections, one level after another on the same server process",
                      list(&Plan::LEVELS), list(&Plan::QUICK_LEVELS)))]
    concurrency: Option<Vec<usize>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_path,
          help = help1("Paths loaded, each on a freshly started server", list(&Plan::ENDPOINTS)))]
    endpoints: Option<Vec<String>>,

    #[arg(long, value_parser = parse_duration, conflicts_with = "requests",
          help = help("How long each level runs, e.g. 10s, 500ms, 2m",
                      format!("{}s", Plan::DURATION.as_secs()), millis(Plan::QUICK_DURATION)))]
    duration: Option<Duration>,

    /// Bound each level by a request count instead of a duration (ab's -n; with agents,
    /// shared out among them)
    #[arg(long, value_parser = parse_positive)]
    requests: Option<usize>,

    #[arg(long, value_parser = parse_repeats, help = help1("Runs of each level", 1))]
    repeats: Option<usize>,

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
