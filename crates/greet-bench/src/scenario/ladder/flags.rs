//! The flags of ladder's subcommand, as clap reads them, and the plan they make (the flags
//! several scenarios share are flattened from [`crate::flags`]).

use clap::Args;

use crate::flags::{
    help, help1, list, parse_level, parse_path, parse_repeats, parse_server, set, CommonArgs,
    ForeignArgs, PlaceArgs, ServerArgs,
};
use crate::plan::{self, Common, Containers, ServerSpec};

use super::plan::Plan;

/// The settings of a ladder run.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[arg(long, value_delimiter = ',', value_parser = parse_server,
          help = help1("Servers to start, in order; an entry may name its own endpoint, e.g. \
                        axum:/greetings/blocking (none when only --target is given); tomcat and \
                        jetty are the original's servers, built with the machine's JDK",
                       list(&plan::SERVERS)))]
    servers: Option<Vec<ServerSpec>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_level,
          help = help("Concurrency levels; each sends as many requests as its concurrency",
                      list(&Plan::LEVELS), list(&Plan::QUICK_LEVELS)))]
    concurrency: Option<Vec<usize>>,

    #[arg(long, value_parser = parse_path,
          help = help1("Path and query loaded (and validated) on every server without an \
                        endpoint of its own", greet_core::paths::GREETINGS))]
    endpoint: Option<String>,

    #[command(flatten)]
    server: ServerArgs<Plan>,

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

impl Flags {
    pub(crate) fn plan(self) -> (Common, Plan) {
        let quick = self.common.quick;
        let mut plan = Plan::defaults(quick);
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
