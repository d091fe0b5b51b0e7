//! The scenarios, one folder each, and what makes them one list.
//!
//! A scenario is its folder, `scenario/<name>/`: `mod.rs` (what it is to the rest: the
//! `Scenario` impl, and its section drawn as the report's `report::Section`), `plan.rs`
//! (its settings, every default and `--quick` size), `flags.rs` (its subcommand's flags, and
//! the plan they make), `run.rs` (what it loads and records), `section.rs` (its part of
//! results.json), `table.rs` and `charts.rs`. The list below, `scenarios!`, is the one place
//! that names them all: the kinds, the plans, the sections of results.json and the report's
//! order all derive from it. A new scenario is its folder and one line there (and its
//! subcommand in the CLI).
//!
//! What every run shares is written once here: `run` (preflight, the scenario's own steps,
//! the last save) and `Book`, the record a scenario writes into (its section opened, each
//! step of a subject run unless that subject already failed, a failure recorded, the
//! comparisons recomputed and everything saved after each step).

pub mod business;
pub mod capacity;
mod checks;
pub mod ladder;
pub mod loops;
pub mod protocols;
pub mod rate;
pub mod soak;
pub mod sweep;
pub mod techempower;
pub mod workloads;

use std::fmt::Debug;

use anyhow::Result;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::harness::Harness;
use crate::plan::{Common, Placement, Target};
use crate::report;
use crate::results::{Failure, Header};

pub use checks::TransportError;

/// What every scenario is to the rest of the harness: its name and title, its plan and how
/// the CLI and `all` set it, how it runs, and its section of results.json (which the report
/// draws through [`report::Section`]).
pub(crate) trait Scenario: Sized {
    /// Its subcommand, its key in results.json and its anchor in report.html.
    const NAME: &'static str;
    /// Its heading in the report.
    const TITLE: &'static str;
    /// It measures each protocol (and stream count) itself: `--protocol`, `--streams` and
    /// `--tls-resume` are its cases, not one transport for every request.
    const OWN_PROTOCOLS: bool = false;
    /// It takes a list of `--streams`, one case a count.
    const STREAMS_LIST: bool = false;
    /// Its load is keep-alive users, which `--requests-per-connection` can make reconnect.
    const KEEP_ALIVE: bool = true;
    /// Its repeats take the servers in turn (A B C A B C), so a drift of the machine falls on
    /// all of them alike; false: one server's runs, then the next's.
    const INTERLEAVED: bool = true;
    /// The reference servers (`floor`, `nginx`) can join it: its loads are on endpoints they
    /// serve, in cleartext HTTP/1.1.
    const REFERENCES: bool = false;
    /// A server named twice in its `--servers` is measured twice, the second as a server of
    /// its own (`greet-hyper#2`): an A/A check of its noise. Its servers run one at a time.
    const AGAIN: bool = false;

    /// Its settings, every default applied.
    type Plan: Debug + Clone + PartialEq;
    /// Its section of results.json.
    type Section: Serialize
        + DeserializeOwned
        + Debug
        + Clone
        + PartialEq
        + report::Section
        + Framed;

    /// Its defaults, or its `--quick` sizes.
    fn defaults(quick: bool) -> Self::Plan;
    /// The servers (short names) it starts from binaries.
    fn binaries(plan: &Self::Plan) -> Vec<String>;
    /// Runs it on `servers` (short names), in order (`all --servers`).
    fn set_servers(plan: &mut Self::Plan, servers: &[String]);
    /// Runs each of its figures `n` times (`all --repeats`).
    fn set_repeats(plan: &mut Self::Plan, n: usize);
    /// The servers it loads that the harness does not start.
    fn targets(_plan: &Self::Plan) -> &[Target] {
        &[]
    }
    /// Where its load runs.
    fn place(_plan: &Self::Plan) -> Placement {
        Placement::Harness
    }

    /// Checks, before anything runs, that its servers can be started where it puts them.
    fn preflight(harness: &Harness, plan: &Self::Plan) -> Result<()> {
        let shorts = Self::binaries(plan);
        let shorts: Vec<&str> = shorts.iter().map(String::as_str).collect();
        let targets = !Self::targets(plan).is_empty();
        harness.preflight(Self::place(plan), &shorts, targets, None)
    }

    /// Loads and records: opens its section in `book`, then runs its steps through
    /// [`Book::step`].
    async fn run(harness: &Harness, plan: &Self::Plan, book: &mut Book<'_, Self>) -> Result<()>;

    /// Recomputes what a step changes besides its own cells (the comparisons between servers).
    fn compare(_section: &mut Self::Section) {}
}

/// The part of a section every scenario has, [`Header`], and where the section keeps it.
pub(crate) trait Framed {
    /// The shared part.
    fn header(&mut self) -> &mut Header;
}

/// Defines the list of scenarios, in the order `all` runs them and the report shows them,
/// and everything derived from it.
macro_rules! scenarios {
    ($($module:ident :: $kind:ident),+ $(,)?) => {
        /// Which scenario.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Kind {
            $(
                #[doc = concat!("`", stringify!($module), "`.")]
                $kind,
            )+
        }

        impl Kind {
            /// Every scenario, in order.
            pub const ALL: &'static [Kind] = &[$(Kind::$kind),+];

            /// Its name: its subcommand, its key in results.json and its anchor in
            /// report.html.
            pub fn name(self) -> &'static str {
                match self {
                    $(Kind::$kind => <$module::$kind as Scenario>::NAME,)+
                }
            }

            /// Its heading in the report.
            pub fn title(self) -> &'static str {
                match self {
                    $(Kind::$kind => <$module::$kind as Scenario>::TITLE,)+
                }
            }

            /// Its load is keep-alive users (what `--pipeline` and
            /// `--requests-per-connection` shape).
            pub(crate) fn keep_alive(self) -> bool {
                match self {
                    $(Kind::$kind => <$module::$kind as Scenario>::KEEP_ALIVE,)+
                }
            }

            fn defaults(self, quick: bool) -> Planned {
                match self {
                    $(Kind::$kind => Planned::$kind(<$module::$kind as Scenario>::defaults(quick)),)+
                }
            }
        }

        /// One scenario with its plan.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Planned {
            $(
                #[doc = concat!("`", stringify!($module), "`.")]
                $kind($module::Plan),
            )+
        }

        impl Planned {
            /// Which scenario it is.
            pub fn kind(&self) -> Kind {
                match self {
                    $(Planned::$kind(_) => Kind::$kind,)+
                }
            }

            /// The servers it starts from binaries.
            fn binaries(&self) -> Vec<String> {
                match self {
                    $(Planned::$kind(p) => <$module::$kind as Scenario>::binaries(p),)+
                }
            }

            /// The servers it loads that the harness does not start.
            pub(crate) fn targets(&self) -> &[Target] {
                match self {
                    $(Planned::$kind(p) => <$module::$kind as Scenario>::targets(p),)+
                }
            }

            /// Runs it on `servers`, less the reference servers where it takes none (`all`).
            fn set_servers(&mut self, servers: &[String]) {
                let kept: Vec<String>;
                let servers = if self.references() {
                    servers
                } else {
                    kept = servers.iter().filter(|s| !crate::plan::is_reference(s)).cloned().collect();
                    &kept
                };
                match self {
                    $(Planned::$kind(p) => <$module::$kind as Scenario>::set_servers(p, servers),)+
                }
            }

            /// Runs each of its figures `n` times.
            fn set_repeats(&mut self, n: usize) {
                match self {
                    $(Planned::$kind(p) => <$module::$kind as Scenario>::set_repeats(p, n),)+
                }
            }

            /// The reference servers can join it.
            fn references(&self) -> bool {
                match self {
                    $(Planned::$kind(_) => <$module::$kind as Scenario>::REFERENCES,)+
                }
            }

            /// It measures a server named twice as two.
            fn again(&self) -> bool {
                match self {
                    $(Planned::$kind(_) => <$module::$kind as Scenario>::AGAIN,)+
                }
            }

            /// It measures each protocol itself.
            fn own_protocols(&self) -> bool {
                match self {
                    $(Planned::$kind(_) => <$module::$kind as Scenario>::OWN_PROTOCOLS,)+
                }
            }

            /// It takes a list of `--streams`.
            fn streams_list(&self) -> bool {
                match self {
                    $(Planned::$kind(_) => <$module::$kind as Scenario>::STREAMS_LIST,)+
                }
            }

            /// Its load is keep-alive users.
            fn keep_alive(&self) -> bool {
                match self {
                    $(Planned::$kind(_) => <$module::$kind as Scenario>::KEEP_ALIVE,)+
                }
            }

            /// Runs it into `results`; false when a server failed.
            pub(crate) async fn run(&self, harness: &Harness, results: &mut Results) -> Result<bool> {
                match self {
                    $(Planned::$kind(p) => run::<$module::$kind>(harness, p, results).await,)+
                }
            }
        }

        /// Each scenario's section of results.json, where it ran.
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        pub struct Sections {
            $(
                #[doc = concat!("`", stringify!($module), "`, when it ran.")]
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $module: Option<$module::Section>,
            )+
        }

        $(
            impl Slot for $module::$kind {
                fn slot(sections: &mut Sections) -> &mut Option<$module::Section> {
                    &mut sections.$module
                }
            }

            impl Framed for $module::Section {
                fn header(&mut self) -> &mut Header {
                    &mut self.header
                }
            }
        )+

        impl report::Sections for Sections {
            fn present(&self) -> Vec<report::Present<'_>> {
                let mut out = Vec::new();
                $(
                    if let Some(section) = &self.$module {
                        out.push(report::Present {
                            name: <$module::$kind as Scenario>::NAME,
                            title: <$module::$kind as Scenario>::TITLE,
                            interleaved: <$module::$kind as Scenario>::INTERLEAVED,
                            section,
                        });
                    }
                )+
                out
            }
        }
    };
}

scenarios!(
    ladder::Ladder,
    loops::Loops,
    soak::Soak,
    sweep::Sweep,
    business::Business,
    rate::Rate,
    capacity::Capacity,
    protocols::Protocols,
    techempower::TechEmpower,
    workloads::Workloads,
);

/// Where a scenario's section sits among [`Sections`] (written by `scenarios!`).
pub(crate) trait Slot: Scenario {
    /// Its section, when opened.
    fn slot(sections: &mut Sections) -> &mut Option<Self::Section>;
}

/// The whole of results.json: the envelope, with every scenario's section.
pub type Results = crate::results::Results<Sections>;

/// A whole run: the shared settings and the scenarios, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// What every scenario shares.
    pub common: Common,
    /// The scenarios, in order.
    pub scenarios: Vec<Planned>,
}

impl Plan {
    /// `all`: every scenario with its defaults (or `--quick` sizes) on `servers` (default:
    /// [`crate::plan::SERVERS`]), each figure run `repeats` times (default: each scenario's
    /// own).
    pub fn all(
        common: Common,
        quick: bool,
        servers: Option<Vec<String>>,
        repeats: Option<usize>,
    ) -> Self {
        let scenarios = Kind::ALL
            .iter()
            .map(|kind| {
                let mut scenario = kind.defaults(quick);
                if let Some(servers) = &servers {
                    scenario.set_servers(servers);
                }
                if let Some(n) = repeats {
                    scenario.set_repeats(n);
                }
                scenario
            })
            .collect();
        Self { common, scenarios }
    }

    /// The servers (short names) the run starts from binaries, each once, sorted.
    pub fn binaries(&self) -> Vec<String> {
        let mut shorts: Vec<String> = self.scenarios.iter().flat_map(Planned::binaries).collect();
        shorts.sort_unstable();
        shorts.dedup();
        shorts
    }
}

/// Every pair of `samples` (labels that start with the server's table name) compared on
/// `figure`, but the reference servers': they are measured against, never compared.
pub(crate) fn contenders_pairwise(
    figure: crate::stats::mann_whitney::Figure,
    samples: &[(String, Vec<f64>)],
) -> Vec<crate::stats::mann_whitney::Comparison> {
    let kept: Vec<(String, Vec<f64>)> = samples
        .iter()
        .filter(|(label, _)| {
            let server = label.split_whitespace().next().unwrap_or_default();
            crate::plan::reference_role(server).is_none()
        })
        .cloned()
        .collect();
    crate::stats::mann_whitney::pairwise(figure, &kept)
}

/// Runs scenario `K` into `results`: its preflight (nothing is written before it has passed:
/// a run refused at once leaves no empty results directory behind), its steps, and a last
/// save; false when a server failed.
async fn run<K: Slot>(harness: &Harness, plan: &K::Plan, results: &mut Results) -> Result<bool> {
    K::preflight(harness, plan)?;
    let mut book = Book::<K> {
        harness,
        results,
        failed: Vec::new(),
        scenario: std::marker::PhantomData,
    };
    K::run(harness, plan, &mut book).await?;
    harness.save(book.results)?;
    Ok(book.failed.is_empty())
}

/// What a scenario records into: its section of the results, the subjects that failed, and
/// saving.
#[derive(Debug)]
pub(crate) struct Book<'a, K> {
    harness: &'a Harness,
    results: &'a mut Results,
    /// Who failed, as each failure names them.
    failed: Vec<String>,
    scenario: std::marker::PhantomData<K>,
}

impl<K: Slot> Book<'_, K> {
    /// Starts the scenario's section.
    pub(crate) fn open(&mut self, section: K::Section) {
        *K::slot(&mut self.results.sections) = Some(section);
    }

    /// The scenario's section.
    pub(crate) fn section(&mut self) -> &mut K::Section {
        K::slot(&mut self.results.sections)
            .as_mut()
            .expect("a scenario opens its section before its first step")
    }

    /// Writes every output file.
    pub(crate) fn save(&mut self) -> Result<()> {
        self.harness.save(self.results)
    }

    /// Whether `who` has failed already (its later steps are not run).
    pub(crate) fn has_failed(&self, who: &str) -> bool {
        self.failed.iter().any(|f| f == who)
    }

    /// Records that `who` failed: one line on stderr, and a [`Failure`] in the section.
    pub(crate) fn fail(&mut self, who: &str, err: &anyhow::Error) {
        let error = format!("{err:#}");
        eprintln!("greet-bench: {}: {who}: {error}", K::NAME);
        self.section().header().failures.push(Failure {
            server: who.to_owned(),
            error,
        });
        self.failed.push(who.to_owned());
    }

    /// One step of `who` (a server, or a server and what it is loaded on), skipped when `who`
    /// failed before: for scenarios that come back to a subject (each repeat, each store).
    pub(crate) async fn step(
        &mut self,
        who: &str,
        step: impl AsyncFnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        if self.has_failed(who) {
            return Ok(());
        }
        self.once(who, step).await
    }

    /// The one step of `who`: a failure recorded, then the comparisons recomputed and
    /// everything saved, so an interrupted run keeps what it measured. Ok unless saving
    /// failed.
    pub(crate) async fn once(
        &mut self,
        who: &str,
        step: impl AsyncFnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        if let Err(err) = step(self).await {
            self.fail(who, &err);
        }
        K::compare(self.section());
        self.save()
    }
}

/// The connections a load leaves behind when it ends.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Leftover {
    /// A keep-alive load's: one per user.
    KeepAlive,
    /// A ladder level's: up to its concurrency in fresh connections, closing at once.
    Fresh,
}

/// Lets the last load's connections close before the next one starts.
pub(crate) async fn settle(leftover: Leftover) {
    let wait = match leftover {
        Leftover::KeepAlive => std::time::Duration::from_millis(100),
        Leftover::Fresh => std::time::Duration::from_millis(250),
    };
    tokio::time::sleep(wait).await;
}

/// `grid` with `always` in it, sorted, each value once: a grid always holds the default.
pub(crate) fn grid_with(grid: &[usize], always: usize) -> Vec<usize> {
    let mut grid = grid.to_vec();
    grid.push(always);
    grid.sort_unstable();
    grid.dedup();
    grid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_keep_the_keys_runs_before_them_wrote() {
        let sections = Sections {
            ladder: Some(Default::default()),
            loops: Some(Default::default()),
            soak: Some(Default::default()),
            sweep: Some(Default::default()),
            business: Some(Default::default()),
            rate: Some(Default::default()),
            capacity: Some(Default::default()),
            protocols: Some(Default::default()),
            techempower: Some(Default::default()),
            workloads: Some(Default::default()),
        };
        let written = serde_json::to_value(&sections).unwrap();
        let written = written.as_object().unwrap();
        assert_eq!(written.len(), 10);
        // Protocols and streams are the protocols scenario's subject, not its transport;
        // each workload sets its own.
        for (name, section) in written {
            let keys = section.as_object().unwrap();
            let own = ["protocols", "workloads"].contains(&name.as_str());
            assert_eq!(keys.contains_key("protocol"), !own, "{name}");
            assert_eq!(keys.contains_key("streams"), name != "workloads", "{name}");
            for key in ["repeats", "failures"] {
                assert!(keys.contains_key(key), "{name} lacks {key}");
            }
        }
        // A section from before --protocol and --streams reads as HTTP/1.1, one stream.
        let mut before = written.clone();
        for (name, section) in &mut before {
            if !["protocols", "workloads"].contains(&name.as_str()) {
                let keys = section.as_object_mut().unwrap();
                keys.remove("protocol");
                keys.remove("streams");
            }
        }
        let read: Sections = serde_json::from_value(before.into()).unwrap();
        assert_eq!(read, sections);
    }

    #[test]
    fn all_is_every_scenario_on_the_chosen_servers() {
        let plan = Plan::all(Common::default(), true, Some(vec!["hyper".into()]), None);
        let names: Vec<_> = plan.scenarios.iter().map(|s| s.kind().name()).collect();
        assert_eq!(
            names,
            [
                "ladder",
                "loops",
                "soak",
                "sweep",
                "business",
                "rate",
                "capacity",
                "protocols",
                "techempower",
                "workloads"
            ]
        );
        assert_eq!(plan.binaries(), ["hyper"]);
        assert_eq!(
            plan.scenarios[0],
            Planned::Ladder(ladder::Plan {
                servers: vec![crate::plan::ServerSpec::new("hyper")],
                ..ladder::Plan::defaults(true)
            })
        );
        let full = Plan::all(Common::default(), false, None, None);
        assert_eq!(full.binaries(), ["actix", "axum", "hyper"]);
        assert_eq!(
            full.scenarios[3],
            Planned::Sweep(sweep::Plan::defaults(false))
        );
    }

    #[test]
    fn the_defaults_are_the_original_experiments() {
        let ladder = ladder::Plan::defaults(false);
        assert_eq!(
            (ladder.levels, ladder.server.delay_ms),
            (vec![100, 300, 900, 2700], 1000)
        );
        assert_eq!(ladder.server.blocking_threads, 200);
        assert_eq!(
            loops::Plan::defaults(false).shapes,
            [(100, 1000), (1000, 100)]
        );
        assert_eq!(soak::Plan::defaults(false).levels, [50, 100, 200]);
        assert_eq!(sweep::Plan::defaults(false).blocking_threads, [2, 200]);
    }

    #[test]
    fn a_list_of_streams_goes_only_where_it_is_taken() {
        let mut common = Common {
            streams_each: vec![1, 10],
            protocol: crate::plan::Protocol::H2c,
            ..Common::default()
        };
        let plan = |common: &Common, kinds: &[Kind]| Plan {
            common: common.clone(),
            scenarios: kinds.iter().map(|k| k.defaults(true)).collect(),
        };
        assert_eq!(plan(&common, &[Kind::Capacity]).check_transport(), Ok(()));
        let refused = plan(&common, &[Kind::Capacity, Kind::Soak])
            .check_transport()
            .expect_err("soak takes one count");
        assert_eq!(
            refused.to_string(),
            "--streams 1,10: only capacity and protocols take a list of streams; give the \
             others one"
        );
        common.protocol = crate::plan::Protocol::Http1;
        assert!(matches!(
            plan(&common, &[Kind::Capacity]).check_transport(),
            Err(TransportError::StreamsNeedHttp2 { .. })
        ));
        assert_eq!(plan(&common, &[Kind::Protocols]).check_transport(), Ok(()));
    }
}
