//! Rate's own flags, as clap reads them, and how they set its plan (its servers, repeats,
//! targets, server flags and placement are the base's: [`crate::flags::BaseArgs`]).

use std::time::Duration;

use clap::Args;
use greet_load::flags::parse_rate;
use greet_load::schedule::{parse_ramp, Ramp};

use crate::flags::{
    help, help1, millis, parse_duration, parse_path, set, CommonArgs, Own, PacedArgs,
};

use super::{Plan, Rates};

/// Rate's own settings.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    #[arg(long, value_delimiter = ',', value_parser = parse_path,
          help = help1("Paths loaded, one after another on each server", greet_core::paths::GREETINGS))]
    endpoints: Option<Vec<String>>,

    #[arg(long, value_delimiter = ',', value_parser = parse_fraction,
          help = help("Levels as percentages of the lowest capacity among the servers (their \
                       closed-loop probes): the same rates for all",
                      percents(&Plan::FRACTIONS), percents(&Plan::QUICK_FRACTIONS)))]
    of_capacity: Option<Vec<f64>>,

    /// Levels as requests a second, the same for every server, e.g. 5k,20k,50000 (instead of
    /// --of-capacity)
    #[arg(long, value_delimiter = ',', value_parser = parse_rate, conflicts_with = "of_capacity")]
    rates: Option<Vec<f64>>,

    /// One level per server on a ramp instead (k6's ramping arrival rate): the target rate
    /// over time as `rate:duration` stages from 0 (or from a leading bare rate), e.g.
    /// 1k:10s,50k:30s,50k:10s; each second of it is reported
    #[arg(long, value_name = "STAGES", value_parser = parse_ramp,
          conflicts_with_all = ["of_capacity", "rates", "duration"])]
    ramp: Option<Ramp>,

    #[arg(long, value_parser = parse_duration,
          help = help("How long each level runs", format!("{}s", Plan::DURATION.as_secs()), millis(Plan::QUICK_DURATION)))]
    duration: Option<Duration>,

    #[command(flatten)]
    paced: PacedArgs,
}

impl Own<Plan> for Flags {
    fn apply(self, plan: &mut Plan, _common: &mut CommonArgs) {
        set(&mut plan.endpoints, self.endpoints);
        set(&mut plan.rates, self.of_capacity.map(Rates::OfCapacity));
        set(&mut plan.rates, self.rates.map(Rates::Fixed));
        set(&mut plan.rates, self.ramp.map(Rates::Ramp));
        set(&mut plan.duration, self.duration);
        self.paced.apply(&mut plan.paced);
    }
}

pub(crate) fn percents(fractions: &[f64]) -> String {
    fractions
        .iter()
        .map(|f| format!("{:.0}", f * 100.0))
        .collect::<Vec<_>>()
        .join(",")
}

/// `50` (percent) → 0.5; 1 to 1000 percent.
pub(crate) fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if (1.0..=1000.0).contains(&p) => Ok(p / 100.0),
        _ => Err(format!("{text:?} is not a percentage from 1 to 1000")),
    }
}
