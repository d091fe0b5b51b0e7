//! TechEmpower's own flags, as clap reads them, and how they set its plan (its servers,
//! repeats and placement are the base's: [`crate::flags::BaseArgs`]).

use clap::Args;

use crate::flags::{help1, list, set, CommonArgs, MeasureArgs, Own, StoresArgs};

use super::{Plan, Test};

/// TechEmpower's own settings.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
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
}

impl Own<Plan> for Flags {
    fn apply(self, plan: &mut Plan, common: &mut CommonArgs) {
        self.stores.apply(&mut plan.stores);
        set(&mut plan.tests, self.tests);
        set(&mut plan.rows, self.rows);
        // --pipeline is plaintext's depth here; the other tests are not pipelined.
        set(&mut plan.pipeline, common.take_pipeline());
        self.measure.apply(&mut plan.measure);
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
