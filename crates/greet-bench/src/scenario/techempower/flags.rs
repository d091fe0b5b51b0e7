//! The flags of techempower's subcommand, as clap reads them, and the plan they make (the flags
//! several scenarios share are flattened from [`crate::flags`]).

use clap::Args;

use crate::flags::{help1, list, set, CommonArgs, MeasureArgs, PlaceArgs, ServersArgs, StoresArgs};
use crate::plan::Common;

use super::plan::{Plan, Test};

/// The settings of a TechEmpower run.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[command(flatten)]
    servers: ServersArgs,

    #[command(flatten)]
    stores: StoresArgs,

    #[arg(long, value_delimiter = ',', value_parser = parse_test,
          help = help1("TechEmpower's tests, in order; json and plaintext run once, the others \
                        on each store", list(&Test::ALL.map(Test::name))))]
    tests: Option<Vec<Test>>,

    #[arg(long, value_parser = parse_queries,
          help = help1("Rows per request of queries, updates and cached-queries (1-500)",
                       Plan::ROWS))]
    rows: Option<usize>,

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
        set(&mut plan.tests, self.tests);
        plan.rows = self.rows.unwrap_or(plan.rows);
        // --pipeline is plaintext's depth here; the other tests are not pipelined.
        plan.pipeline = self.common.pipeline().unwrap_or(plan.pipeline);
        self.measure.apply(&mut plan.measure);
        plan.place = self.place.placement();
        let mut common = self.common.plan();
        common.pipeline = 1;
        (common, plan)
    }
}

pub(crate) fn parse_test(text: &str) -> Result<Test, String> {
    Test::named(text.trim()).ok_or_else(|| {
        let names: Vec<&str> = Test::ALL.map(|t| t.name()).to_vec();
        format!("{text:?}: the tests are {}", names.join(", "))
    })
}

/// A row count as TechEmpower's `?queries=` allows: 1 to 500.
pub(crate) fn parse_queries(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=greet_core::records::MAX_QUERIES).contains(&n) => Ok(n),
        _ => Err(format!("{text:?}: a count of rows from 1 to 500")),
    }
}
