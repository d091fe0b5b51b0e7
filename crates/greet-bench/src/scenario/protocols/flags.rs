//! The flags of protocols's subcommand, as clap reads them, and the plan they make (the flags
//! several scenarios share are flattened from [`crate::flags`]).

use clap::Args;

use crate::flags::{CommonArgs, MeasureArgs, ServersArgs};
use crate::plan::{self, Common};

use super::plan::Plan;

/// The settings of a protocols run.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[command(flatten)]
    servers: ServersArgs,

    /// Protocols, in order, of http1, h2c, https, h2; http1 is always measured (the others
    /// are fractions of it) [default: http1,h2c,https,h2]
    #[arg(long, value_delimiter = ',', value_name = "PROTOCOLS")]
    protocols: Option<Vec<plan::Protocol>>,

    #[command(flatten)]
    measure: MeasureArgs<Plan>,

    #[command(flatten)]
    common: CommonArgs,
}

impl Flags {
    pub(crate) fn plan(self) -> (Common, Plan) {
        let mut plan = Plan::defaults(self.common.quick);
        self.servers.apply(&mut plan.servers, &Default::default());
        if let Some(mut protocols) = self.protocols {
            protocols.retain(|p| *p != plan::Protocol::Http1);
            protocols.dedup();
            protocols.insert(0, plan::Protocol::Http1);
            plan.protocols = protocols;
        }
        self.measure.apply(&mut plan.measure);
        (self.common.plan(), plan)
    }
}
