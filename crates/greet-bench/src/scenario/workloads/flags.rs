//! The flags of workloads's subcommand, as clap reads them, and the plan they make (the flags
//! several scenarios share are flattened from [`crate::flags`]).

use clap::Args;

use crate::flags::{CommonArgs, MeasureArgs, ServersArgs};
use crate::plan::Common;

use super::plan::{Plan, Profile};

/// The settings of a workloads run.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[command(flatten)]
    servers: ServersArgs,

    /// Profiles, in order [default: every one]
    #[arg(long, value_delimiter = ',', value_name = "PROFILES")]
    profiles: Option<Vec<Profile>>,

    /// Each upload's size, e.g. 20MB as bytes (20000000), 64MiB [default: 20000000, --quick
    /// 1MiB]
    #[arg(long, value_name = "BYTES", value_parser = greet_cli::parse_bytes)]
    upload_size: Option<u64>,

    #[command(flatten)]
    measure: MeasureArgs<Plan>,

    #[command(flatten)]
    common: CommonArgs,
}

impl Flags {
    pub(crate) fn plan(self) -> (Common, Plan) {
        let mut plan = Plan::defaults(self.common.quick);
        self.servers.apply(&mut plan.servers, &Default::default());
        if let Some(mut profiles) = self.profiles {
            profiles.dedup();
            plan.profiles = profiles;
        }
        if let Some(bytes) = self.upload_size {
            plan.upload_bytes = bytes;
        }
        self.measure.apply(&mut plan.measure);
        (self.common.plan(), plan)
    }
}
