//! The flags of business's subcommand, as clap reads them, and the plan they make (the flags
//! several scenarios share are flattened from [`crate::flags`]).

use clap::Args;

use crate::flags::{
    help, help1, list, parse_count, parse_path, set, CommonArgs, MeasureArgs, PlaceArgs,
    ServersArgs, StoresArgs,
};
use crate::plan::Common;

use super::plan::Plan;

/// The settings of a business run.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[command(flatten)]
    servers: ServersArgs,

    #[command(flatten)]
    stores: StoresArgs,

    #[arg(long, value_delimiter = ',', value_parser = parse_path,
          help = help1("Paths loaded on each server; /health is the ceiling the others are \
                        set against", list(&Plan::ENDPOINTS)))]
    endpoints: Option<Vec<String>>,

    /// The --workers grid; the default setting (the CPUs each server is pinned to) is always
    /// measured [default: the default only]
    #[arg(long, value_delimiter = ',', value_parser = parse_count)]
    workers: Option<Vec<usize>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_count,
          help = help("The --db-pool grid; the servers' default is always measured",
                      list(&Plan::DB_POOLS), list(&Plan::QUICK_DB_POOLS)))]
    db_pools: Option<Vec<usize>>,

    #[command(flatten)]
    measure: MeasureArgs<Plan>,

    #[command(flatten)]
    place: PlaceArgs,

    #[command(flatten)]
    common: CommonArgs,
}

impl Flags {
    pub(crate) fn plan(self) -> (Common, Plan) {
        let mut plan = Plan::defaults(self.common.quick);
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
