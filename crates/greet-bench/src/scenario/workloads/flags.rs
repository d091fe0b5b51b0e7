//! Workloads' own flags, as clap reads them, and how they set its plan (its servers and
//! repeats are the base's: [`crate::flags::BaseArgs`]).

use clap::Args;

use crate::flags::{CommonArgs, MeasureArgs, Own};

use super::{Plan, Profile};

/// Workloads' own settings.
#[derive(Debug, Clone, Args)]
pub(crate) struct Flags {
    /// Profiles, in order: baseline, short-lived, post-json, compressed, upload, static,
    /// json-tls, websocket [default: every one]
    #[arg(long, value_delimiter = ',', value_name = "PROFILES")]
    profiles: Option<Vec<Profile>>,

    /// Each upload's size, e.g. 20MB as bytes (20000000), 64MiB [default: 20000000, --quick
    /// 1MiB]
    #[arg(long, value_name = "BYTES", value_parser = greet_cli::parse_bytes)]
    upload_size: Option<u64>,

    /// Time for the whole run: where a profile's figures are still undecided after --repeats
    /// blocks, 10 more blocks at a time, 3 looks at most (each verdict pays for the looks);
    /// 0s: --repeats blocks only [default: 285s; --quick: 0s]
    #[arg(long, value_name = "TIME", value_parser = greet_cli::parse_any_duration)]
    budget: Option<std::time::Duration>,

    #[command(flatten)]
    measure: MeasureArgs<Plan>,
}

impl Own<Plan> for Flags {
    fn apply(self, plan: &mut Plan, _common: &mut CommonArgs) {
        if let Some(profiles) = self.profiles {
            plan.profiles = greet_stats::distinct(profiles);
        }
        if let Some(bytes) = self.upload_size {
            plan.upload_bytes = bytes;
        }
        if let Some(time) = self.budget {
            plan.budget.time = time;
        }
        self.measure.apply(&mut plan.measure);
    }
}

#[cfg(test)]
mod tests {
    use super::Profile;

    /// The help names every profile: a new one cannot be left out of it.
    #[test]
    fn the_help_names_every_profile() {
        let help = include_str!("flags.rs");
        let line = help
            .lines()
            .skip_while(|l| !l.contains("/// Profiles, in order:"))
            .take(2)
            .collect::<String>();
        for p in Profile::ALL {
            assert!(line.contains(p.name()), "{p:?} missing from: {line}");
        }
    }
}
