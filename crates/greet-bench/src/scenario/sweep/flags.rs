//! Sweep's own flags, as clap reads them, and how they set its plan (its servers and repeats
//! are the base's: [`crate::flags::BaseArgs`]).

use clap::Args;

use crate::flags::{help, help1, list, parse_count, parse_path, set, CommonArgs, MeasureArgs, Own};

use super::Plan;

/// Sweep's own settings.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
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
}

impl Own<Plan> for Flags {
    fn apply(self, plan: &mut Plan, _common: &mut CommonArgs) {
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.workers, self.workers);
        set(&mut plan.blocking_threads, self.blocking_threads);
        self.measure.apply(&mut plan.measure);
    }
}
