//! The knobs scenario's own flags, as clap reads them, and how they set its plan (its
//! servers, the crates, and its repeats are the base's: [`crate::flags::BaseArgs`]).

use clap::Args;

use crate::flags::{help, help1, list, set, CommonArgs, Own};

use super::{Plan, TUNED};
use crate::scenario::kit::Part;

/// The knobs scenario's own settings.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[arg(long, value_delimiter = ',', value_parser = parse_knob,
          help = help("Knobs, each set on every crate it applies to, alone; tuned: each crate's \
                       tuned set", list(&Plan::all_knobs()), list(&Plan::runtime_knobs())))]
    knobs: Option<Vec<String>>,

    #[arg(long, value_delimiter = ',',
          help = help1("What judges each knob against its crate, run in this order; counted: \
                        what a request costs (cost); timed: the throughput of plaintext and \
                        json (techempower); contract: the rows it changes",
                       list(&Part::ALL)))]
    parts: Option<Vec<Part>>,
}

impl Own<Plan> for Flags {
    fn apply(self, plan: &mut Plan, _common: &mut CommonArgs) {
        set(&mut plan.knobs, self.knobs.map(each_once));
        set(&mut plan.parts, self.parts.map(each_once));
    }
}

/// `values` with each kept once, where it came first.
fn each_once<T: PartialEq>(values: Vec<T>) -> Vec<T> {
    let mut out = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// A knob's name, or `tuned`.
fn parse_knob(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text == TUNED || greet_server::Knob::named(text).is_some() {
        return Ok(text.to_owned());
    }
    Err(format!(
        "{text:?} is no knob: the knobs are {} and {TUNED}",
        list(&Plan::all_knobs()[..greet_server::Knob::ALL.len()])
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_knob_is_named_or_refused() {
        assert_eq!(parse_knob(" mimalloc"), Ok("mimalloc".to_owned()));
        assert_eq!(parse_knob("tuned"), Ok("tuned".to_owned()));
        let refused = parse_knob("turbo").expect_err("no such knob");
        assert!(refused.starts_with("\"turbo\" is no knob: the knobs are pipeline-flush,"));
        assert_eq!(each_once(vec![2, 1, 2, 3, 1]), [2, 1, 3]);
    }
}
