//! Business's own flags, as clap reads them, and how they set its plan (its servers, repeats
//! and placement are the base's: [`crate::flags::BaseArgs`]).

use clap::Args;

use crate::flags::{
    help, help1, list, parse_count, parse_path, set, CommonArgs, MeasureArgs, Own, StoresArgs,
};

use super::Plan;

/// Business's own settings.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
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
}

impl Own<Plan> for Flags {
    fn apply(self, plan: &mut Plan, _common: &mut CommonArgs) {
        self.stores.apply(&mut plan.stores);
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.workers, self.workers);
        set(&mut plan.db_pools, self.db_pools);
        self.measure.apply(&mut plan.measure);
    }
}
