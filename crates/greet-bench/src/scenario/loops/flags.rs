//! The flags of loops's subcommand, as clap reads them, and the plan they make (the flags
//! several scenarios share are flattened from [`crate::flags`]).

use clap::Args;

use crate::flags::{
    help, help1, parse_repeats, set, CommonArgs, ForeignArgs, ServerArgs, ServersArgs,
};
use crate::plan::Common;

use super::plan::Plan;

/// The settings of a loops run.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[command(flatten)]
    servers: ServersArgs,

    #[arg(long, value_delimiter = ',', value_parser = parse_shape,
          help = help("Shapes as USERSxLOOPS, each user sending LOOPS requests back to back on \
                       its own keep-alive connection", shapes(&Plan::SHAPES), shapes(&Plan::QUICK_SHAPES)))]
    shapes: Option<Vec<(usize, usize)>>,

    #[arg(long, value_parser = parse_repeats,
          help = help1("Runs of each shape per server; 4 or more can tell servers apart", Plan::REPEATS))]
    repeats: Option<usize>,

    #[command(flatten)]
    server: ServerArgs<Plan>,

    #[command(flatten)]
    foreign: ForeignArgs,

    #[command(flatten)]
    common: CommonArgs,
}

impl Flags {
    pub(crate) fn plan(self) -> (Common, Plan) {
        let quick = self.common.quick;
        let mut plan = Plan::defaults(quick);
        plan.foreign = self.foreign.plan();
        self.servers.apply(&mut plan.servers, &plan.foreign);
        set(&mut plan.shapes, self.shapes);
        set(&mut plan.repeats, self.repeats);
        plan.server = self.server.settings(quick);
        (self.common.plan(), plan)
    }
}

pub(crate) fn shapes(values: &[(usize, usize)]) -> String {
    values
        .iter()
        .map(|(u, l)| format!("{u}x{l}"))
        .collect::<Vec<_>>()
        .join(",")
}

pub(crate) fn parse_shape(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{text:?} is not a shape USERSxLOOPS, e.g. 100x1000");
    let (users, loops) = text.trim().split_once(['x', 'X']).ok_or_else(bad)?;
    match (users.parse::<usize>(), loops.parse::<usize>()) {
        (Ok(u), Ok(l)) if (1..=100_000).contains(&u) && l >= 1 => Ok((u, l)),
        _ => Err(bad()),
    }
}
