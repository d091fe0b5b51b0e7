//! The ladder's own flags, as clap reads them, and how they set its plan (its servers,
//! repeats, targets and placement are the base's: [`crate::flags::BaseArgs`]).

use clap::Args;

use crate::flags::{help, help1, list, parse_level, parse_path, set, CommonArgs, Own};
use greet_model::plan::Containers;

use super::Plan;

/// The ladder's own settings.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[arg(long, value_delimiter = ',', value_parser = parse_level,
          help = help("Concurrency levels; each sends as many requests as its concurrency",
                      list(&Plan::LEVELS), list(&Plan::QUICK_LEVELS)))]
    concurrency: Option<Vec<usize>>,

    #[arg(long, value_parser = parse_path,
          help = help1("Path and query loaded (and validated) on every server without an \
                        endpoint of its own", greet_core::paths::GREETINGS))]
    endpoint: Option<String>,

    /// Run each server as a container of its image (greet-axum:latest…, built by
    /// docker/build-offline.sh) with compose.yaml's limits, on the host's network; sampled from
    /// /proc where its process is this host's, and through the engine's stats always
    #[arg(long, conflicts_with = "swarm")]
    docker: bool,

    /// With --docker: run the containers on this Docker network and load them at their
    /// address there (the engine may be another host's: DOCKER_HOST)
    #[arg(long, value_name = "NAME", requires = "docker")]
    docker_network: Option<String>,
}

impl Own<Plan> for Flags {
    fn apply(self, plan: &mut Plan, _common: &mut CommonArgs) {
        set(&mut plan.levels, self.concurrency);
        set(&mut plan.endpoint, self.endpoint);
        plan.containers = self.docker.then_some(Containers {
            network: self.docker_network,
        });
    }
}
