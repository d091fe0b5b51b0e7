//! Knobs: what each knob ([`greet_server::Knob`]) buys each crate and what it gives up. The
//! plan names the crates and the knobs; [`Plan::servers`] is every crate at its defaults and
//! with each knob that applies to it (`hyper`, `hyper+pipeline-flush`, …, `hyper+tuned`).
//! Three parts answer, each the scenario that measures it best:
//!
//! - **counted**: cost's instruments on those servers (instructions, allocations, syscalls
//!   per request), each knob against its crate;
//! - **timed**: TechEmpower's plaintext and json on them, in paired blocks: each knob's
//!   throughput over its crate's, with its interval and word;
//! - **contract**: this scenario's own run, the contract's rows each knob changes
//!   ([`greet_conformance::knobs::failing_rows`] on each server).
//!
//! It is a study (`Scenario::study`): the list of scenarios makes a `knobs` command into those
//! parts, each asked for its plan (`Scenario::part`); the report sets their figures side by
//! side in one table (`report::gains`). `all` leaves it out: its builds take minutes each.

mod flags;
mod report;
mod run;

use greet_model::plan::{self, Base, Based, ServerSettings, Takes};

pub(crate) use flags::Flags;
pub use report::*;

use super::kit::{About, Part, Scenario, Study};

/// The knobs scenario.
#[derive(Debug)]
pub(crate) struct Knobs;

impl Scenario for Knobs {
    const ABOUT: About = About {
        name: "knobs",
        title: "Knobs (what each knob gives up: the contract's rows it changes)",
        summary: "What each knob buys each crate, counted and timed, and what it gives up",
        detail: "Every crate at its defaults and with each knob that applies to it (and its \
                 tuned set): what a request costs, counted (cost: instructions, allocations, \
                 syscalls), the throughput of TechEmpower's plaintext and json against the \
                 crate, paired block by block (techempower), and the contract's rows each \
                 knob changes; then one table of what each knob buys. A build knob is built \
                 once into target/knobs/<set> (minutes each on two cores)",
        examples: &[
            "greet-bench knobs                             every crate, every knob (about an hour)",
            "greet-bench knobs --knobs pipeline-flush,os-keep-alive  two runtime knobs: no build",
            "greet-bench knobs --servers hyper --parts contract  what hyper's knobs give up",
        ],
        // Its rows are raw HTTP/1.1 in cleartext, each with its own requests.
        own_protocols: true,
        keep_alive: false,
        in_all: false,
        ..About::DEFAULT
    };
    type Plan = Plan;
    type Flags = Flags;
    type Section = Section;

    /// Every crate with each knob, not only the crates the base names.
    fn binaries(plan: &Plan) -> Vec<String> {
        plan.servers()
    }

    /// A study in which no knob applies to a crate of `--servers` would be a run of the crates
    /// alone: refused.
    fn check(plan: &Plan) -> Result<(), String> {
        if plan.servers().iter().any(|s| plan::is_tuned(s)) {
            return Ok(());
        }
        Err(
            "--knobs: none of them applies to the crates of --servers (each server's --help \
             lists its knobs)"
                .to_owned(),
        )
    }

    /// Its own part: the contract, on the study's servers.
    fn part(study: &Study) -> Option<(Part, Plan)> {
        let mut plan = Plan::defaults(study.quick);
        plan.base.set_servers(&study.servers);
        plan.base.repeats = 1;
        // The servers are each crate with each knob already.
        plan.knobs.clear();
        Some((Part::Contract, plan))
    }

    fn study(plan: &Plan) -> Option<Study> {
        Some(Study {
            servers: plan.servers(),
            quick: plan.quick,
            blocks: plan.base.repeats,
            parts: plan.parts.clone(),
        })
    }
}

/// The crates, the knobs, and the parts that judge them.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario's plan holds: its servers are the crates (a server named with
    /// knobs is taken as it is, beside its crate); its repeats, the timed part's blocks.
    pub base: Base,
    /// The knobs, by name, `tuned` for each crate's tuned set ([`plan::tuned`]).
    pub knobs: Vec<String>,
    /// The parts it runs (always in the order counted, timed, contract).
    pub(crate) parts: Vec<Part>,
    /// The counted and timed parts at their `--quick` sizes.
    pub quick: bool,
}

impl Plan {
    /// The default knobs: every one, then each crate's tuned set.
    pub fn all_knobs() -> Vec<String> {
        let mut knobs: Vec<String> = greet_server::Knob::ALL
            .iter()
            .map(|k| k.name().to_owned())
            .collect();
        knobs.push(TUNED.to_owned());
        knobs
    }

    /// `--quick`'s: the runtime knobs, which need no build of their own.
    pub fn runtime_knobs() -> Vec<String> {
        greet_server::Knob::ALL
            .iter()
            .filter(|k| !k.is_build())
            .map(|k| k.name().to_owned())
            .collect()
    }

    /// The servers the parts run: each crate at its defaults, then with each knob of the plan
    /// that applies to it, in the plan's order (its tuned set by the knobs it stands for); a
    /// server named with knobs stays as it is, after its crate. Each once.
    pub fn servers(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |short: String| {
            if !out.contains(&short) {
                out.push(short);
            }
        };
        for short in self.base.shorts() {
            let crate_short = plan::crate_of(&short).to_owned();
            add(crate_short.clone());
            if plan::is_tuned(&short) {
                add(short);
                continue;
            }
            let binary = plan::binary(&crate_short);
            for knob in &self.knobs {
                let knobs: Vec<&str> = if knob == TUNED {
                    plan::tuned(&crate_short).to_vec()
                } else {
                    let applies =
                        greet_server::Knob::named(knob).is_some_and(|k| k.applies_to(&binary));
                    if applies {
                        vec![knob.as_str()]
                    } else {
                        Vec::new()
                    }
                };
                if !knobs.is_empty() {
                    add(format!(
                        "{crate_short}{}{}",
                        plan::KNOB_MARK,
                        knobs.join("+")
                    ));
                }
            }
        }
        out
    }
}

/// The name of each crate's tuned set in `--knobs`.
pub const TUNED: &str = "tuned";

impl Based for Plan {
    const TAKES: Takes = Takes::SERVERS_ONLY;
    const REPEATS_HELP: &'static str =
        "Blocks of the timed part (each server once a block, each knob against its crate)";

    fn defaults(quick: bool) -> Self {
        let blocks = if quick {
            plan::QUICK_GRID_BLOCKS
        } else {
            plan::GRID_BLOCKS
        };
        Self {
            base: Base::new(ServerSettings::delayed(0), blocks),
            knobs: if quick {
                Self::runtime_knobs()
            } else {
                Self::all_knobs()
            },
            parts: Part::ALL.to_vec(),
            quick,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_crate_with_each_knob_that_is_its() {
        let mut plan = Plan::defaults(true);
        plan.base
            .set_servers(&["actix".to_owned(), "hyper".to_owned()]);
        assert_eq!(
            plan.servers(),
            [
                "actix",
                "actix+os-keep-alive",
                "hyper",
                "hyper+pipeline-flush",
                "hyper+stack-headers",
                "hyper+no-head-timeout",
            ]
        );
        let mut full = Plan::defaults(false);
        full.base.set_servers(&["hyper".to_owned()]);
        let servers = full.servers();
        assert_eq!(servers.len(), 8, "{servers:?}");
        assert_eq!(servers[4], "hyper+mimalloc");
        assert_eq!(
            servers[7],
            "hyper+pipeline-flush+no-head-timeout+panic-abort"
        );
        // A server named with knobs is kept, after its crate; a crate once.
        full.base
            .set_servers(&["axum+mimalloc".to_owned(), "axum".to_owned()]);
        full.knobs = vec!["fat-lto".to_owned()];
        assert_eq!(full.servers(), ["axum", "axum+mimalloc", "axum+fat-lto"]);
        assert!(Plan::all_knobs().contains(&"tuned".to_owned()));
    }
}
