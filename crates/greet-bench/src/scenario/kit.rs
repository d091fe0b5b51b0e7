//! What every scenario is built with: the [`Scenario`] trait and what it says of itself
//! ([`About`]), the run skeleton ([`run`]: preflight, the scenario's own steps, the last
//! save) and the [`Book`] a scenario records into (its section opened, each step of a
//! subject run unless that subject already failed, a failure recorded, the comparisons
//! recomputed and everything saved after each step).
//!
//! A scenario's folder imports this file and nothing else of `scenario/`; the list of
//! scenarios (`scenario/mod.rs`) imports the folders and this file.

use std::fmt::Debug;
use std::time::Instant;

use anyhow::Result;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::harness::{Harness, Up};
use crate::plan::{Based, Budget, Containers, Store};
use crate::report;
use crate::results::{Failure, Frame};

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
    /// Its repeats take the servers in turn (A B C A B C), so a drift of the machine falls on
    /// all of them alike; false: one server's runs, then the next's.
    pub(crate) interleaved: bool,
    /// The reference servers (`floor`, `nginx`) can join it: its loads are on endpoints they
    /// serve, in cleartext HTTP/1.1.
    pub(crate) references: bool,
    /// A server named twice in its `--servers` is measured twice, the second as a server of
    /// its own (`greet-hyper#2`): an A/A check of its noise. Its servers run one at a time.
    pub(crate) again: bool,
    /// `all` runs it; false for one whose builds take too long to run unasked.
    pub(crate) in_all: bool,
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
        interleaved: true,
        references: false,
        again: false,
        in_all: true,
    };
}

/// A part of a study of knobs (`knobs`): what judges each knob against its crate, each part
/// run by the scenario that measures it ([`Scenario::knob_part`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KnobPart {
    /// What a request costs, counted.
    Counted,
    /// Throughput against the crate, paired block by block.
    Timed,
    /// The contract's rows each knob changes.
    Contract,
}

impl KnobPart {
    /// Every part, in the order they run.
    pub(crate) const ALL: [KnobPart; 3] = [Self::Counted, Self::Timed, Self::Contract];

    /// Its name on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Counted => "counted",
            Self::Timed => "timed",
            Self::Contract => "contract",
        }
    }
}

impl std::str::FromStr for KnobPart {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == text.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
                format!("{text:?} is no part: {}", names.join(", "))
            })
    }
}

impl std::fmt::Display for KnobPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A study of knobs, as the scenarios that run its parts take it: every crate at its
/// defaults and with each knob (`hyper`, `hyper+pipeline-flush`), the sizes, the blocks of a
/// timed part.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KnobStudy {
    /// The servers, by short name.
    pub(crate) servers: Vec<String>,
    /// At the `--quick` sizes.
    pub(crate) quick: bool,
    /// Blocks of a timed part.
    pub(crate) blocks: usize,
    /// The parts it runs.
    pub(crate) parts: Vec<KnobPart>,
}

/// What every scenario is to the rest of the harness: what it says of itself, its plan and
/// flags, how it runs, and its section of results.json (which the report draws through
/// [`report::Render`]). Everything that only reads or sets the plan's
/// [`crate::plan::Base`] is written here, once.
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
        + Framed;

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
        let swarm = matches!(plan.base().place, crate::plan::Placement::Swarm(_));
        let mut shorts = plan.base().shorts();
        shorts.retain(|s| !swarm || crate::plan::build_of(s).is_none());
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
        crate::server::provision::preflight(Self::stores(plan), base.place)
    }

    /// Loads and records: opens its section in `book`, then runs its steps through
    /// [`Book::step`].
    async fn run(harness: &Harness, plan: &Self::Plan, book: &mut Book<'_, Self>) -> Result<()>;

    /// Recomputes what a step changes besides its own cells (the comparisons between servers).
    fn compare(_section: &mut Self::Section) {}

    /// The part of a study of knobs it runs, and its plan for `study`; none for most.
    fn knob_part(_study: &KnobStudy) -> Option<(KnobPart, Self::Plan)> {
        None
    }

    /// The study of knobs `plan` stands for, run as the parts other scenarios run
    /// ([`Scenario::knob_part`]); none for most.
    fn knob_study(_plan: &Self::Plan) -> Option<KnobStudy> {
        None
    }
}

/// The part of a section every scenario has, [`Frame`], and where the section keeps it.
pub(crate) trait Framed {
    /// The shared part.
    fn frame(&mut self) -> &mut Frame;
    /// Every comparison it makes between servers or settings: one family.
    fn comparisons(&mut self) -> Vec<&mut crate::stats::paired::Comparison>;
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
pub(crate) async fn run<K: Scenario>(
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
pub(crate) struct Book<'a, K: Scenario> {
    harness: &'a Harness,
    sheet: &'a mut dyn Sheet<K>,
    /// Who failed, as each failure names them.
    failed: Vec<String>,
}

impl<K: Scenario> Debug for Book<'_, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Book")
            .field("scenario", &K::ABOUT.name)
            .field("failed", &self.failed)
            .finish()
    }
}

impl<K: Scenario> Book<'_, K> {
    /// Starts the scenario's section.
    pub(crate) fn open(&mut self, section: K::Section) {
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
        let alpha = crate::stats::paired::threshold(members) / looks.max(1) as f64;
        report::scorecard::judged(K::ABOUT.name, rows, alpha, band)
            .iter()
            .filter(|r| pick(&r.figure))
            .all(|r| {
                r.cells
                    .iter()
                    .all(|c| c.mark != crate::results::Mark::Undecided)
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

/// Servers started once and measured in blocks: each block measures every member once (a
/// server, or a server in one case), in an order that rotates from block to block, so that a
/// slow spell of the machine falls on a block's members alike and cancels in their ratios
/// ([`crate::stats::paired`]). A member is named by who fails with it (its server).
pub(crate) struct Members {
    each: Vec<(String, Option<Up>)>,
}

impl Members {
    /// None yet.
    pub(crate) fn new() -> Self {
        Self { each: Vec::new() }
    }

    /// Starts a member of `who` in a step of its own (`start` brings it up and warms it);
    /// one that fails to start is left out of every block.
    pub(crate) async fn start<K: Scenario>(
        &mut self,
        book: &mut Book<'_, K>,
        who: &str,
        start: impl AsyncFnOnce() -> Result<Up>,
    ) -> Result<()> {
        let mut slot = None;
        book.step(who, async |_| {
            slot = Some(start().await?);
            Ok(())
        })
        .await?;
        self.each.push((who.to_owned(), slot));
        Ok(())
    }

    /// `least` blocks, then `more.step` blocks at a time while `decided(book)` is false and
    /// `more` has looks and time left (`until`): for each block,
    /// `slice(book, member, block, up)` for every member still up, in a rotated order; a
    /// member whose server fails is dropped from the rest. Returns the blocks run.
    pub(crate) async fn blocks<'a, K: Scenario>(
        &mut self,
        book: &mut Book<'a, K>,
        (least, more, until): (usize, Budget, Instant),
        decided: impl Fn(&mut Book<'a, K>) -> bool,
        mut slice: impl AsyncFnMut(&mut Book<'a, K>, usize, usize, &mut Up) -> Result<()>,
    ) -> Result<usize> {
        let n = self.each.len();
        let (mut done, mut target, mut looks) = (0, least, 1);
        loop {
            while done < target {
                for k in 0..n {
                    let i = (k + done) % n;
                    let (who, slot) = &mut self.each[i];
                    let Some(up) = slot.as_mut() else { continue };
                    book.step(who, async |book| slice(book, i, done, up).await)
                        .await?;
                    if book.has_failed(who) {
                        *slot = None;
                    }
                }
                done += 1;
            }
            if looks >= more.looks() || Instant::now() >= until || decided(book) {
                return Ok(done);
            }
            looks += 1;
            target += more.step;
        }
    }

    /// Stops every member still up, each in a step of its own.
    pub(crate) async fn release<K: Scenario>(
        self,
        harness: &Harness,
        book: &mut Book<'_, K>,
    ) -> Result<()> {
        for (who, up) in self.each {
            if let Some(up) = up {
                book.step(&who, async |_| harness.release(up).await).await?;
            }
        }
        Ok(())
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

/// Whether a study of knobs compares servers `a` and `b` (table names): two crates at their
/// defaults, or a crate with knobs against the same crate at its defaults. Never two servers
/// with knobs: each knob is judged against its crate, and with a score of them every pair
/// would be hundreds of comparisons.
pub(crate) fn in_knob_study(a: &str, b: &str) -> bool {
    use crate::plan::{crate_of, is_tuned};
    match (is_tuned(a), is_tuned(b)) {
        (false, false) => true,
        (true, true) => false,
        _ => crate_of(a) == crate_of(b),
    }
}

/// Every pair of `samples` (labels that start with the server's table name) compared on
/// `figure`, but the reference servers': they are measured against, never compared.
pub(crate) fn contenders_pairwise(
    figure: crate::stats::paired::Figure,
    samples: &[(String, Vec<f64>)],
) -> Vec<crate::stats::paired::Comparison> {
    let kept: Vec<(String, Vec<f64>)> = samples
        .iter()
        .filter(|(label, _)| {
            let server = label.split_whitespace().next().unwrap_or_default();
            crate::plan::reference_role(server).is_none()
        })
        .cloned()
        .collect();
    crate::stats::paired::pairwise(figure, &kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_study_of_knobs_sets_each_knob_against_its_crate() {
        assert!(in_knob_study("greet-hyper", "greet-actix"));
        assert!(in_knob_study("greet-hyper+pipeline-flush", "greet-hyper"));
        assert!(in_knob_study("greet-hyper", "greet-hyper+mimalloc"));
        assert!(!in_knob_study("greet-hyper+mimalloc", "greet-axum"));
        assert!(!in_knob_study(
            "greet-hyper+mimalloc",
            "greet-hyper+fat-lto"
        ));
    }
}
