//! Protocols' own flags, as clap reads them, and how they set its plan (its servers and
//! repeats are the base's: [`crate::flags::BaseArgs`]).

use clap::Args;

use crate::flags::{CommonArgs, MeasureArgs, Own};
use greet_model::plan::Protocol;

use super::Plan;

/// Protocols' own settings.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    /// Protocols, in order, of http1, h2c, https, h2; http1 is always measured (the others
    /// are fractions of it) [default: http1,h2c,https,h2]
    #[arg(long, value_delimiter = ',', value_name = "PROTOCOLS")]
    protocols: Option<Vec<Protocol>>,

    /// Time for the whole run: where the scenario's figures are still undecided after --repeats
    /// blocks, 10 more blocks at a time, 3 looks at most (each verdict pays for the looks);
    /// 0s: --repeats blocks only [default: 100s; --quick: 0s]
    #[arg(long, value_name = "TIME", value_parser = greet_cli::parse_any_duration)]
    budget: Option<std::time::Duration>,

    #[command(flatten)]
    measure: MeasureArgs<Plan>,
}

impl Own<Plan> for Flags {
    fn apply(self, plan: &mut Plan, _common: &mut CommonArgs) {
        if let Some(mut protocols) = self.protocols {
            protocols.retain(|p| *p != Protocol::Http1);
            protocols.dedup();
            protocols.insert(0, Protocol::Http1);
            plan.protocols = protocols;
        }
        if let Some(time) = self.budget {
            plan.budget.time = time;
        }
        self.measure.apply(&mut plan.measure);
    }
}
