//! What every scenario is built with: the [`Scenario`] trait and what it says of itself
//! ([`About`]), the run skeleton ([`run`]: preflight, the scenario's own steps, the last
//! save) and the [`Book`] a scenario records into (its section opened, each step of a
//! subject run unless that subject already failed, a failure recorded, the comparisons
//! recomputed and everything saved after each step).
//!
//! A scenario's folder imports this module and nothing else of `scenario/`; the list of
//! scenarios (`scenario/mod.rs`) imports the folders and this module. Beside the contract
//! here: `blocks.rs`, how a scenario measures in blocks and what it compares; `study.rs`, a
//! scenario that stands for parts other scenarios run.

mod blocks;
mod study;

pub(crate) use blocks::{contenders_pairwise, grid_with, in_order, settle, Leftover, Members};
pub(crate) use study::{Part, Study};

use std::fmt::Debug;

use anyhow::Result;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::harness::Harness;
use greet_model::plan::{Based, Containers, Grounded, Store};
use greet_model::results::{Failure, Frame};
use greet_report as report;

/// What a scenario says of itself: to the list of scenarios, the command line (its
/// subcommand, help and examples) and the report (its heading), and how it loads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct About {
    /// Its subcommand, its key in results.json and its anchor in report.html.
    pub(crate) name: &'static str,
    /// Its heading in the report.
    pub(crate) title: &'static str,
    /// Its subcommand's help in one line (`-h`).
    pub(crate) summary: &'static str,
    /// What `--help` says besides, a paragraph.
    pub(crate) detail: &'static str,
    /// Two or three examples under its help, a line each: the command, then what it does.
    pub(crate) examples: &'static [&'static str],
    /// It measures each protocol (and stream count) itself: `--protocol`, `--streams` and
    /// `--tls-resume` are its cases, not one transport for every request.
    pub(crate) own_protocols: bool,
    /// It takes a list of `--streams`, one case a count.
    pub(crate) streams_list: bool,
    /// Its load is keep-alive users, which `--requests-per-connection` can make reconnect.
    pub(crate) keep_alive: bool,
    /// What one of its blocks is, in a phrase (recorded in results.json, [`Frame::block`]):
    /// every block takes each server once, close together, in a Williams order
    /// ([`greet_stats::order`]), so a drift of the machine falls on all of them alike. Empty
    /// for one that judges nothing by blocks.
    pub(crate) block: &'static str,
    /// The reference servers (`floor`, `nginx`) can join it: its loads are on endpoints they
    /// serve, in cleartext HTTP/1.1.
    pub(crate) references: bool,
    /// `all` runs it; false for one whose builds take too long to run unasked.
    pub(crate) in_all: bool,
    /// A load its comparisons rest on is measured once more where heavy steal disturbed it
    /// (`Harness::measure`); the report says which scenarios do.
    pub(crate) measures_again: bool,
    /// It loads the stores (PostgreSQL, Redis) the harness starts: the report shows their
    /// CPUs.
    pub(crate) stores: bool,
}

impl About {
    /// What most scenarios are: keep-alive load, repeats in turn, no reference servers.
    pub(crate) const DEFAULT: About = About {
        name: "",
        title: "",
        summary: "",
        detail: "",
        examples: &[],
        own_protocols: false,
        streams_list: false,
        keep_alive: true,
        block: "",
        references: false,
        in_all: true,
        measures_again: false,
        stores: false,
    };
}

/// What every scenario is to the rest of the harness: what it says of itself, its plan and
/// flags, and its section of results.json, which the report draws through
/// [`report::Render`] (how it runs is its [`Run`]). Everything that only reads or sets the plan's
/// [`greet_model::plan::Base`] is written here, once.
pub(crate) trait Scenario: Sized + 'static {
    /// What it says of itself.
    const ABOUT: About;

    /// Its settings, every default applied.
    type Plan: Based + Debug + Clone + PartialEq + Send + Sync;
    /// Its own flags, those no other scenario takes, and how they set its plan.
    type Flags: crate::flags::Own<Self::Plan>;
    /// Its section of results.json.
    type Section: Serialize
        + DeserializeOwned
        + Debug
        + Default
        + Clone
        + PartialEq
        + report::Render
        + Framed
        + Compared;

    /// Its servers run as containers of their images (`--docker`): none to build.
    fn containers(_plan: &Self::Plan) -> Option<&Containers> {
        None
    }

    /// The stores its database routes are loaded on.
    fn stores(_plan: &Self::Plan) -> &[Store] {
        &[]
    }

    /// The servers (short names) it starts from binaries.
    fn binaries(plan: &Self::Plan) -> Vec<String> {
        if Self::containers(plan).is_some() {
            return Vec::new();
        }
        // A build with knobs runs as a process only: a swarm run refuses it (preflight)
        // without building it first.
        let swarm = matches!(plan.base().place, greet_model::plan::Placement::Swarm(_));
        let mut shorts = plan.base().shorts();
        shorts.retain(|s| !swarm || greet_model::plan::build_of(s).is_none());
        shorts
    }

    /// Checks, before anything runs, that it has something to load and that its servers
    /// and stores can be started where it puts them.
    fn preflight(harness: &Harness, plan: &Self::Plan) -> Result<()> {
        let base = plan.base();
        let targets = !base.targets().is_empty();
        if base.servers.is_empty() && !targets {
            anyhow::bail!("nothing to benchmark: --servers is empty and no --target was given");
        }
        let shorts = base.shorts();
        let shorts: Vec<&str> = shorts.iter().map(String::as_str).collect();
        harness.preflight(base.place, &shorts, targets, Self::containers(plan))?;
        greet_bed::server::provision::preflight(Self::stores(plan), base.place)
    }

    /// What in `plan` its flags set but it cannot run, as one line (checked before the run,
    /// as a bad flag is).
    fn check(_plan: &Self::Plan) -> Result<(), String> {
        Ok(())
    }

    /// The part of a study it runs, and its plan for `study`; none for most.
    fn part(_study: &Study) -> Option<(Part, Self::Plan)> {
        None
    }

    /// The study `plan` stands for, run as the parts other scenarios run
    /// ([`Scenario::part`]); none for most.
    fn study(_plan: &Self::Plan) -> Option<Study> {
        None
    }
}

/// How a scenario runs, written in its `run.rs` (`impl Run for <Scenario>`): what it loads
/// and records, and what a step changes besides its own cells.
pub(crate) trait Run: Scenario {
    /// Loads and records: opens its section in `book`, then runs its steps through
    /// [`Book::step`].
    async fn run(harness: &Harness, plan: &Self::Plan, book: &mut Book<'_, Self>) -> Result<()>;

    /// Recomputes what a step changes besides its own cells (the comparisons between servers).
    fn compare(_section: &mut Self::Section) {}
}

/// The part of a section every scenario has, [`Frame`], and where the section keeps it:
/// written for every section by the list of scenarios (`scenarios!`), from its field `frame`.
pub(crate) trait Framed {
    /// The shared part.
    fn frame(&mut self) -> &mut Frame;
}

/// What a section compares, written in its scenario's `report.rs` (`impl Compared for
/// Section`): every comparison it makes between servers or settings, one family.
pub(crate) trait Compared {
    /// Its comparisons (none for a section that judges no pair).
    fn comparisons(&mut self) -> Vec<&mut greet_stats::paired::Comparison>;
}

/// Where scenario `K`'s section is kept, and everything saved: the run's results.
pub(crate) trait Sheet<K: Scenario> {
    /// Its section, when opened.
    fn slot(&mut self) -> &mut Option<K::Section>;
    /// Writes every output file.
    fn save(&mut self, harness: &Harness) -> Result<()>;
}

/// Runs scenario `K` into `sheet`: its preflight (nothing is written before it has passed:
/// a run refused at once leaves no empty results directory behind), its steps, and a last
/// save; false when a server failed.
pub(crate) async fn run<K: Run>(
    harness: &Harness,
    plan: &K::Plan,
    sheet: &mut dyn Sheet<K>,
) -> Result<bool> {
    K::preflight(harness, plan)?;
    let mut book = Book::<K> {
        harness,
        sheet,
        failed: Vec::new(),
    };
    K::run(harness, plan, &mut book).await?;
    book.save()?;
    Ok(book.failed.is_empty())
}

/// What a scenario records into: its section of the results, the subjects that failed, and
/// saving.
pub(crate) struct Book<'a, K: Run> {
    harness: &'a Harness,
    sheet: &'a mut dyn Sheet<K>,
    /// Who failed, as each failure names them.
    failed: Vec<String>,
}

impl<K: Run> Debug for Book<'_, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Book")
            .field("scenario", &K::ABOUT.name)
            .field("failed", &self.failed)
            .finish()
    }
}

impl<K: Run> Book<'_, K> {
    /// Starts the scenario's section.
    pub(crate) fn open(&mut self, mut section: K::Section) {
        section.frame().block = K::ABOUT.block.to_owned();
        *self.sheet.slot() = Some(section);
    }

    /// The scenario's section.
    pub(crate) fn section(&mut self) -> &mut K::Section {
        self.sheet
            .slot()
            .as_mut()
            .expect("a scenario opens its section before its first step")
    }

    /// Writes every output file.
    pub(crate) fn save(&mut self) -> Result<()> {
        self.sheet.save(self.harness)
    }

    /// Whether every scorecard row of the section whose figure `pick` takes is decided (no
    /// cell undecided), the section judged alone as the report judges a run of it alone. In
    /// a run of several scenarios the report judges them all as one family, which may decide
    /// a little more or less: this only says when to stop adding blocks.
    pub(crate) fn decided(&mut self, pick: impl Fn(&str) -> bool) -> bool {
        let band = self.harness.band();
        let section = self.section();
        let looks = section.frame().looks;
        let mut members: Vec<_> = (section.comparisons().into_iter())
            .map(|c| c.member(band, looks))
            .collect();
        let rows = report::Render::scorecard(section);
        members.extend(report::scorecard::row_members(&rows, band, looks));
        let alpha = greet_stats::paired::threshold(members) / looks.max(1) as f64;
        report::scorecard::judged(K::ABOUT.name, rows, alpha, band)
            .iter()
            .filter(|r| pick(&r.figure))
            .all(|r| {
                r.cells
                    .iter()
                    .all(|c| c.mark != greet_model::results::Mark::Undecided)
            })
    }

    /// Whether `who` has failed already (its later steps are not run).
    pub(crate) fn has_failed(&self, who: &str) -> bool {
        self.failed.iter().any(|f| f == who)
    }

    /// Records that `who` failed: one line on stderr, and a [`Failure`] in the section.
    pub(crate) fn fail(&mut self, who: &str, err: &anyhow::Error) {
        let error = format!("{err:#}");
        eprintln!("greet-bench: {}: {who}: {error}", K::ABOUT.name);
        self.section().frame().failures.push(Failure {
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
    /// everything saved (which judges them: [`report::scorecard::judge_run`]), so an
    /// interrupted run keeps what it measured. Ok unless saving failed.
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
