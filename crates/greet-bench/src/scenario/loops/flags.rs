//! Loops' own flags, as clap reads them, and how they set its plan (its servers, repeats,
//! targets and server flags are the base's: [`crate::flags::BaseArgs`]).

use clap::Args;

use crate::flags::{help, set, CommonArgs, Own};

use super::Plan;

/// Loops' own settings.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[arg(long, value_delimiter = ',', value_parser = parse_shape,
          help = help("Shapes as USERSxLOOPS, each user sending LOOPS requests back to back on \
                       its own keep-alive connection", shapes(&Plan::SHAPES), shapes(&Plan::QUICK_SHAPES)))]
    shapes: Option<Vec<(usize, usize)>>,
}

impl Own<Plan> for Flags {
    fn apply(self, plan: &mut Plan, _common: &mut CommonArgs) {
        set(&mut plan.shapes, self.shapes);
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
