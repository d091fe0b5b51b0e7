//! The scenarios, one folder each, and what makes them one list.
//!
//! A scenario is its folder, `scenario/<name>/`: `mod.rs` (what it is: its `About`, its
//! plan and defaults, its `Scenario` impl), `flags.rs` (its own flags, and how they set
//! its plan), `run.rs` (what it loads and records) and `report.rs` (its section of
//! results.json, and the tables, charts, CSV files, figures and scorecard rows drawn from
//! it); a file past 500 lines before its tests is split along its jobs, into five files a
//! folder at most. The kit every folder is built with is `kit`; the list below,
//! `scenarios!`, is the one place that names them all: the kinds, the plans, the sections of
//! results.json, the command line's subcommands and the report's order all derive from it.
//! A new scenario is its folder, its `pub mod` here and one line in the list. What it must
//! provide the compiler checks: `incomplete` (built only with the `incomplete-scenario`
//! feature) leaves out each part, and `tests/contract.rs` holds that it does not build.

mod checks;
pub(crate) mod kit;

// Declared here, outside `scenarios!`, so that rustfmt (which does not follow modules a macro
// declares) reaches every file of every scenario; the list below names each again.
pub mod business;
pub mod capacity;
pub mod cost;
pub mod knobs;
pub mod ladder;
pub mod loops;
pub mod protocols;
pub mod rate;
pub mod soak;
pub mod sweep;
pub mod techempower;
pub mod workloads;

// What a scenario that leaves out the contract's parts does: it does not build
// (`tests/contract.rs`).
#[cfg(feature = "incomplete-scenario")]
pub mod incomplete;

use serde::{Deserialize, Serialize};

use crate::harness::Harness;
use greet_model::plan::{Base, Based, Common, Grounded};
use greet_model::results::Frame;
use greet_report as report;

pub use checks::TransportError;
pub(crate) use kit::{About, Run, Scenario};
use kit::{Compared, Framed, Sheet};

/// Something done to one scenario, whichever it is ([`Kind::visit`]): what the command line
/// builds and reads for each.
pub(crate) trait Visit {
    /// What it makes.
    type Out;
    /// Does it to scenario `K`.
    fn visit<K: Listed>(self) -> Self::Out;
}

/// A scenario as the list holds it (written by `scenarios!`).
pub(crate) trait Listed: Run {
    /// Its plan, as one of the run's.
    fn planned(plan: Self::Plan) -> Planned;
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
            /// Every scenario, in order; the first is the command line's default.
            pub const ALL: &'static [Kind] = &[$(Kind::$kind),+];

            /// What it says of itself.
            pub(crate) fn about(self) -> &'static About {
                match self {
                    $(Kind::$kind => &<$module::$kind as Scenario>::ABOUT,)+
                }
            }

            /// Does `visitor` to it.
            pub(crate) fn visit<V: Visit>(self, visitor: V) -> V::Out {
                match self {
                    $(Kind::$kind => visitor.visit::<$module::$kind>(),)+
                }
            }

            fn defaults(self, quick: bool) -> Planned {
                match self {
                    $(Kind::$kind => Planned::$kind(<$module::Plan as Based>::defaults(quick)),)+
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

            /// What every scenario's plan holds.
            pub fn base(&self) -> &Base {
                match self {
                    $(Planned::$kind(p) => p.base(),)+
                }
            }

            fn base_mut(&mut self) -> &mut Base {
                match self {
                    $(Planned::$kind(p) => p.base_mut(),)+
                }
            }

            /// The servers it starts from binaries.
            fn binaries(&self) -> Vec<String> {
                match self {
                    $(Planned::$kind(p) => <$module::$kind as Scenario>::binaries(p),)+
                }
            }

            /// The study it stands for, if it is one ([`Scenario::study`]).
            pub(crate) fn study(&self) -> Option<kit::Study> {
                match self {
                    $(Planned::$kind(p) => <$module::$kind as Scenario>::study(p),)+
                }
            }

            /// Runs it into `results`; false when a server failed.
            pub(crate) async fn run(&self, harness: &Harness, results: &mut Results) -> Result<bool> {
                match self {
                    $(Planned::$kind(p) => kit::run::<$module::$kind>(harness, p, results).await,)+
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
            impl Listed for $module::$kind {
                fn planned(plan: $module::Plan) -> Planned {
                    Planned::$kind(plan)
                }
            }

            impl Sheet<$module::$kind> for Results {
                fn slot(&mut self) -> &mut Option<$module::Section> {
                    &mut self.sections.$module
                }

                fn save(&mut self, harness: &Harness) -> anyhow::Result<()> {
                    harness.save(self)
                }
            }

            impl Framed for $module::Section {
                fn frame(&mut self) -> &mut Frame {
                    &mut self.frame
                }
            }

            impl Grounded for $module::Plan {
                fn base(&self) -> &Base {
                    &self.base
                }

                fn base_mut(&mut self) -> &mut Base {
                    &mut self.base
                }
            }
        )+

        impl report::Sections for Sections {
            fn present(&self) -> Vec<report::Present<'_>> {
                let mut out = Vec::new();
                $(
                    if let Some(section) = &self.$module {
                        let about = &<$module::$kind as Scenario>::ABOUT;
                        out.push(report::Present {
                            name: about.name,
                            title: about.title,
                            measures_again: about.measures_again,
                            stores: about.stores,
                            looks: section.frame.looks,
                            block: &section.frame.block,
                            section,
                        });
                    }
                )+
                out
            }

            fn comparisons_mut(&mut self) -> Vec<(usize, &mut greet_stats::paired::Comparison)> {
                let mut out = Vec::new();
                $(
                    if let Some(section) = &mut self.$module {
                        let looks = section.frame.looks;
                        out.extend(Compared::comparisons(section).into_iter().map(|c| (looks, c)));
                    }
                )+
                out
            }
        }
    };
}

/// The list, with `extra` after it: nothing, but for the proof that a scenario leaving out
/// the contract's parts does not build.
macro_rules! listed {
    ($($extra:tt)*) => {
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
            cost::Cost,
            knobs::Knobs,
            $($extra)*
        );
    };
}

#[cfg(not(feature = "incomplete-scenario"))]
listed!();
#[cfg(feature = "incomplete-scenario")]
listed!(incomplete::Incomplete);

use anyhow::Result;

impl Kind {
    /// Its name: its subcommand, its key in results.json and its anchor in report.html.
    pub fn name(self) -> &'static str {
        self.about().name
    }

    /// Its heading in the report.
    pub fn title(self) -> &'static str {
        self.about().title
    }

    /// Which scenario is called `name`.
    pub fn named(name: &str) -> Option<Kind> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }
}

impl Planned {
    /// The servers it loads that the harness does not start.
    pub(crate) fn targets(&self) -> &[greet_model::plan::Target] {
        self.base().targets()
    }

    /// Runs it on `servers`, less the reference servers where it takes none (`all`).
    fn set_servers(&mut self, servers: &[String]) {
        let kept: Vec<String> = servers
            .iter()
            .filter(|s| self.kind().about().references || !greet_model::plan::is_reference(s))
            .cloned()
            .collect();
        self.base_mut().set_servers(&kept);
    }
}

/// The whole of results.json: the envelope, with every scenario's section.
pub type Results = greet_model::results::Results<Sections>;

/// A whole run: the shared settings and the scenarios, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Agenda {
    /// What every scenario shares.
    pub common: Common,
    /// The scenarios, in order.
    pub scenarios: Vec<Planned>,
}

impl Agenda {
    /// `all`: every scenario with its defaults (or `--quick` sizes) on `servers` (default:
    /// [`greet_model::plan::SERVERS`]), each figure run `repeats` times (default: each scenario's
    /// own).
    pub fn all(
        common: Common,
        quick: bool,
        servers: Option<Vec<String>>,
        repeats: Option<usize>,
    ) -> Self {
        let scenarios = Kind::ALL
            .iter()
            .filter(|kind| kind.about().in_all)
            .map(|kind| {
                let mut scenario = kind.defaults(quick);
                if let Some(servers) = &servers {
                    scenario.set_servers(servers);
                }
                if let Some(n) = repeats {
                    scenario.base_mut().repeats = n;
                }
                scenario
            })
            .collect();
        Self { common, scenarios }
    }

    /// A run of one scenario, `planned`; one that stands for a study is the study's parts,
    /// each run by the scenario that measures it (`Scenario::part`).
    pub fn of(common: Common, planned: Planned) -> Self {
        let scenarios = match planned.study() {
            Some(study) => parts(&study),
            None => vec![planned],
        };
        Self { common, scenarios }
    }

    /// The servers (short names) the run starts from binaries, each once, sorted.
    pub fn binaries(&self) -> Vec<String> {
        let mut shorts: Vec<String> = self.scenarios.iter().flat_map(Planned::binaries).collect();
        shorts.sort_unstable();
        shorts.dedup();
        shorts
    }

    /// A `--protocol`, `--streams` or `--tls-resume` the run cannot honour, a target it cannot
    /// reach over the protocol, or a server a scenario of it cannot take, as one line.
    pub fn check_transport(&self) -> Result<(), TransportError> {
        let each: Vec<checks::Entry<'_>> = self
            .scenarios
            .iter()
            .map(|p| checks::Entry {
                about: p.kind().about(),
                binaries: p.binaries(),
                targets: p.targets(),
            })
            .collect();
        let every: Vec<&About> = Kind::ALL.iter().map(|k| k.about()).collect();
        checks::transport(&self.common, &each, &every)
    }
}

/// The parts of `study` it asks for, in their order, each as the scenario that runs it plans
/// it ([`Scenario::part`]).
fn parts(study: &kit::Study) -> Vec<Planned> {
    /// A scenario's part of the study, if it runs one.
    struct PartOf<'a>(&'a kit::Study);

    impl Visit for PartOf<'_> {
        type Out = Option<(kit::Part, Planned)>;

        fn visit<K: Listed>(self) -> Self::Out {
            K::part(self.0).map(|(part, plan)| (part, K::planned(plan)))
        }
    }

    let parts: Vec<(kit::Part, Planned)> = Kind::ALL
        .iter()
        .filter_map(|k| k.visit(PartOf(study)))
        .collect();
    kit::Part::ALL
        .iter()
        .filter(|part| study.parts.contains(part))
        .filter_map(|part| parts.iter().find(|(p, _)| p == part))
        .map(|(_, planned)| planned.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each scenario's section, empty, as results.json holds it.
    struct Empty;

    impl Visit for Empty {
        type Out = (String, serde_json::Value);

        fn visit<K: Listed>(self) -> Self::Out {
            let section = K::Section::default();
            let json = serde_json::to_value(section).expect("a section writes");
            (K::ABOUT.name.to_owned(), json)
        }
    }

    #[test]
    fn sections_keep_the_keys_runs_before_them_wrote() {
        let written: serde_json::Map<String, serde_json::Value> =
            Kind::ALL.iter().map(|k| k.visit(Empty)).collect();
        assert_eq!(written.len(), Kind::ALL.len());
        let sections: Sections = serde_json::from_value(written.clone().into()).expect("reads");
        let again = serde_json::to_value(&sections).expect("writes");
        assert_eq!(again, serde_json::Value::Object(written.clone()));
        // Protocols and streams are the subject of a scenario that measures each protocol
        // itself, not its transport; one whose every case sets its own has no streams.
        for kind in Kind::ALL {
            let (name, about) = (kind.name(), kind.about());
            let keys = written[name].as_object().expect("an object");
            assert_eq!(
                keys.contains_key("protocol"),
                !about.own_protocols,
                "{name}"
            );
            let streams = !about.own_protocols || about.streams_list;
            assert_eq!(keys.contains_key("streams"), streams, "{name}");
            for key in ["repeats", "failures"] {
                assert!(keys.contains_key(key), "{name} lacks {key}");
            }
        }
        // A section from before --protocol and --streams reads as HTTP/1.1, one stream.
        let mut before = written.clone();
        for kind in Kind::ALL.iter().filter(|k| !k.about().own_protocols) {
            let keys = before[kind.name()].as_object_mut().expect("an object");
            keys.remove("protocol");
            keys.remove("streams");
        }
        let read: Sections = serde_json::from_value(before.into()).expect("reads");
        assert_eq!(read, sections);
    }

    #[test]
    fn all_is_every_scenario_on_the_chosen_servers() {
        let agenda = Agenda::all(Common::default(), true, Some(vec!["hyper".into()]), None);
        let names: Vec<_> = agenda.scenarios.iter().map(|s| s.kind()).collect();
        let in_all: Vec<Kind> = Kind::ALL
            .iter()
            .copied()
            .filter(|k| k.about().in_all)
            .collect();
        assert_eq!(names, in_all);
        assert!(
            !in_all.contains(&Kind::Knobs),
            "knobs builds: never unasked"
        );
        assert_eq!(agenda.binaries(), ["hyper"]);
        for (planned, kind) in agenda.scenarios.iter().zip(&in_all) {
            let mut quick = kind.defaults(true);
            quick.base_mut().set_servers(&["hyper".to_owned()]);
            assert_eq!(*planned, quick, "{kind:?}");
        }
        let full = Agenda::all(Common::default(), false, None, None);
        // cost runs the floor beside the crates by default.
        assert_eq!(full.binaries(), ["actix", "axum", "floor", "hyper"]);
        for (planned, kind) in full.scenarios.iter().zip(&in_all) {
            assert_eq!(*planned, kind.defaults(false), "{kind:?}");
        }
    }

    #[test]
    fn the_defaults_are_the_original_experiments() {
        let ladder = <ladder::Plan as Based>::defaults(false);
        assert_eq!(
            (ladder.levels, ladder.base.server.delay_ms),
            (vec![100, 300, 900, 2700], 1000)
        );
        assert_eq!(ladder.base.server.blocking_threads, 200);
        assert_eq!(
            <loops::Plan as Based>::defaults(false).shapes,
            [(100, 1000), (1000, 100)]
        );
        assert_eq!(
            <soak::Plan as Based>::defaults(false).levels,
            [50, 100, 200]
        );
        assert_eq!(
            <sweep::Plan as Based>::defaults(false).blocking_threads,
            [2, 200]
        );
    }

    #[test]
    fn a_list_of_streams_goes_only_where_it_is_taken() {
        let mut common = Common {
            streams_each: vec![1, 10],
            protocol: greet_model::plan::Protocol::H2c,
            ..Common::default()
        };
        let agenda = |common: &Common, kinds: &[Kind]| Agenda {
            common: common.clone(),
            scenarios: kinds.iter().map(|k| k.defaults(true)).collect(),
        };
        assert_eq!(agenda(&common, &[Kind::Capacity]).check_transport(), Ok(()));
        let refused = agenda(&common, &[Kind::Capacity, Kind::Soak])
            .check_transport()
            .expect_err("soak takes one count");
        assert_eq!(
            refused.to_string(),
            "--streams 1,10: only capacity and protocols take a list of streams; give the \
             others one"
        );
        common.protocol = greet_model::plan::Protocol::Http1;
        assert!(matches!(
            agenda(&common, &[Kind::Capacity]).check_transport(),
            Err(TransportError::StreamsNeedHttp2 { .. })
        ));
        assert_eq!(
            agenda(&common, &[Kind::Protocols]).check_transport(),
            Ok(())
        );
    }
}
