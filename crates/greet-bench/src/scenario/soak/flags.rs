//! Soak's own flags, as clap reads them, and how they set its plan (its servers, repeats,
//! targets, server flags and placement are the base's: [`crate::flags::BaseArgs`]).

use std::time::Duration;

use clap::Args;

use crate::flags::{
    help, help1, list, millis, parse_duration, parse_level, parse_path, parse_positive, set,
    CommonArgs, Own,
};

use super::{Plan, SoakBound};

/// Soak's own settings.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[arg(long, alias = "concurrency", value_delimiter = ',', value_parser = parse_level,
          help = help("Keep-alive connections, one level after another on the same server \
                       process", list(&Plan::LEVELS), list(&Plan::QUICK_LEVELS)))]
    connections: Option<Vec<usize>>,

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
}

impl Own<Plan> for Flags {
    fn apply(self, plan: &mut Plan, _common: &mut CommonArgs) {
        set(&mut plan.levels, self.connections);
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.bound, self.duration.map(SoakBound::Duration));
        set(&mut plan.bound, self.requests.map(SoakBound::Requests));
    }
}
