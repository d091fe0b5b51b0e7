//! Capacity's own flags, as clap reads them, and how they set its plan (its servers,
//! repeats, targets, server flags and placement are the base's: [`crate::flags::BaseArgs`]).

use std::time::Duration;

use clap::Args;

use crate::flags::{
    help, help1, millis, parse_duration, parse_path, parse_repeats, set, CommonArgs, Own, PacedArgs,
};

use super::{Plan, Slo};

/// Capacity's own settings.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[arg(long, value_delimiter = ',', value_parser = parse_path,
          help = help1("Paths loaded, one after another on each server", greet_core::paths::GREETINGS))]
    endpoints: Option<Vec<String>>,

    #[arg(long, value_parser = parse_slo,
          help = help1("The latency objective a level must hold: p50, p90, p99 or p999 of the \
                        latency from each request's intended send, under a bound \
                        (every answer valid and at most 1% sent late besides)", Slo::DEFAULT))]
    slo: Option<Slo>,

    #[arg(long, value_parser = parse_duration,
          help = help("How long the ramp to 1.2 times the probe's rate runs",
                      format!("{}s", Plan::RAMP.as_secs()), format!("{}s", Plan::QUICK_RAMP.as_secs())))]
    ramp: Option<Duration>,

    #[arg(long, value_parser = parse_duration,
          help = help("How long each level of a search runs",
                      format!("{}s", Plan::DURATION.as_secs()), millis(Plan::QUICK_DURATION)))]
    duration: Option<Duration>,

    #[arg(long, value_parser = parse_repeats,
          help = help("Levels of each search's staircase, once its bracket is halved to two 4% \
                       steps; their rates (and the next one's) average to the search's capacity",
                      Plan::STEPS, Plan::QUICK_STEPS))]
    steps: Option<usize>,

    #[command(flatten)]
    paced: PacedArgs,
}

impl Own<Plan> for Flags {
    fn apply(self, plan: &mut Plan, _common: &mut CommonArgs) {
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.slo, self.slo);
        set(&mut plan.ramp, self.ramp);
        set(&mut plan.duration, self.duration);
        set(&mut plan.steps, self.steps);
        self.paced.apply(&mut plan.paced);
    }
}

/// `--slo`: `p99<5ms` — a percentile ([`Slo::PERCENTILES`]) of the latency from the intended
/// send, under a bound in ms or s (a bound without its unit is refused).
pub(crate) fn parse_slo(text: &str) -> Result<Slo, String> {
    let bad = || {
        let names: Vec<String> = Slo::PERCENTILES.map(Slo::percentile_name).to_vec();
        format!(
            "{text:?} is not an objective: {}, then < and a latency (e.g. p99<5ms)",
            names.join(", ")
        )
    };
    let (percentile, bound) = text.trim().split_once('<').ok_or_else(bad)?;
    let percentile = Slo::percentile_named(percentile.trim()).ok_or_else(bad)?;
    // A bare number would read as seconds, a thousand times what p99<5 most likely means.
    if bound.trim().ends_with(|c: char| c.is_ascii_digit()) {
        return Err(format!(
            "{text:?}: the latency needs a unit, ms or s (e.g. {}ms)",
            text.trim()
        ));
    }
    let bound = greet_cli::parse_duration(bound).map_err(|_| bad())?;
    Ok(Slo {
        percentile,
        ms: bound.as_secs_f64() * 1000.0,
    })
}
