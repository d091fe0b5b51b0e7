//! Cost's own flags, as clap reads them, and how they set its plan (its servers and repeats
//! are the base's: [`crate::flags::BaseArgs`]).

use clap::Args;

use crate::flags::{help, help1, list, parse_count, parse_level, set, CommonArgs, Own};

use super::{Cell, Plan};

/// Cost's own settings.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[arg(long, value_delimiter = ',', value_name = "CELLS",
          help = help("Kinds of request, in order: the workloads' profiles, TechEmpower's json, \
                       plaintext (pipelined 16), db and fortunes, greetings, and the baseline \
                       over h2c and https", list(&Cell::ALL), list(&Cell::QUICK)))]
    cells: Option<Vec<Cell>>,

    #[arg(long, alias = "concurrency", value_parser = parse_level,
          help = help("Keep-alive connections of each load", Plan::CONNECTIONS,
                      Plan::QUICK_CONNECTIONS))]
    connections: Option<usize>,

    #[arg(long, value_parser = parse_count,
          help = help("Requests each connection sends in the larger load beyond the smaller \
                       (N = connections × each; the smaller sends N/4, the larger N/4 + N, and \
                       one request costs their difference over N)", Plan::EACH, Plan::QUICK_EACH))]
    each: Option<usize>,

    #[arg(long, value_name = "BYTES", value_parser = greet_cli::parse_bytes,
          help = help1("Each upload's size under the instruments", "1MiB"))]
    upload_size: Option<u64>,

    #[arg(long, value_parser = parse_level,
          help = help("Idle keep-alive connections opened to weigh the memory each holds",
                      Plan::IDLE, Plan::QUICK_IDLE))]
    idle: Option<usize>,

    /// Also time each server's clean release build, in a target directory of its own, and
    /// its rebuild after one handler is touched (minutes each on two cores)
    #[arg(long)]
    build: bool,
}

impl Own<Plan> for Flags {
    fn apply(self, plan: &mut Plan, _common: &mut CommonArgs) {
        if let Some(mut cells) = self.cells {
            cells.dedup();
            plan.cells = cells;
        }
        set(&mut plan.connections, self.connections);
        set(&mut plan.each, self.each);
        set(&mut plan.upload_bytes, self.upload_size);
        set(&mut plan.idle, self.idle);
        plan.build = self.build;
    }
}
