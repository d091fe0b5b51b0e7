//! The flags of sweep's subcommand, as clap reads them, and the plan they make (the flags
//! several scenarios share are flattened from [`crate::flags`]).

use clap::Args;

use crate::flags::{
    help, help1, list, parse_count, parse_path, set, CommonArgs, MeasureArgs, ServersArgs,
};
use crate::plan::Common;

use super::plan::Plan;

/// The settings of a sweep run.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[command(flatten)]
    servers: ServersArgs,

    #[arg(long, value_delimiter = ',', value_parser = parse_path,
          help = help1("Paths loaded: /health is the ceiling (no work); /greetings/blocking is \
                        also swept over --blocking-threads", list(&Plan::ENDPOINTS)))]
    endpoints: Option<Vec<String>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_count,
          help = help("The --workers grid; the default setting (the CPUs each server is pinned \
                       to) is always measured", list(&Plan::WORKERS), list(&Plan::QUICK_WORKERS)))]
    workers: Option<Vec<usize>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_count,
          help = help("The --blocking-threads grid for /greetings/blocking; the servers' default \
                       is always measured", list(&Plan::BLOCKING_THREADS), list(&Plan::QUICK_BLOCKING_THREADS)))]
    blocking_threads: Option<Vec<usize>>,

    #[command(flatten)]
    measure: MeasureArgs<Plan>,

    #[command(flatten)]
    common: CommonArgs,
}

impl Flags {
    pub(crate) fn plan(self) -> (Common, Plan) {
        let mut plan = Plan::defaults(self.common.quick);
        self.servers.apply(&mut plan.servers, &Default::default());
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.workers, self.workers);
        set(&mut plan.blocking_threads, self.blocking_threads);
        self.measure.apply(&mut plan.measure);
        (self.common.plan(), plan)
    }
}
