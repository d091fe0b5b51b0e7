//! greet-bench: the harness that reproduces the Greetings API experiments for the axum,
//! actix-web and hyper servers of this workspace.
//!
//! `cargo run --release -p greet-bench` runs the original experiment: it builds the release
//! servers, then for each one starts it pinned to its own CPUs and times its start-up,
//! verifies it against the contract (`greet_conformance::check`), fires 100, 300, 900 and 2700
//! concurrent requests (one per fresh connection, the clock started before connect) while
//! sampling its CPU, memory and threads, and stops it with SIGTERM. Each other scenario is a
//! subcommand (the study's other experiments over keep-alive load, open-loop rates and
//! capacity, protocols, TechEmpower's tests), and `all` runs them all into one report. Every
//! run prints text tables and writes JSON, CSV, SVG charts and an HTML report after every
//! step. `--threshold`s gate any run (exit 3), `--save-baseline`/`--baseline` keep and compare
//! runs, and `compare OLD NEW` sets two runs side by side.
//!
//! The load itself is `greet_load`'s (the loops, the checks, the tallies, an agent's shard);
//! where it runs, the harness's own process, agents here or a swarm job, is the plan's
//! [`plan::Placement`], which the harness reads and no scenario does.
//!
//! **A scenario is one folder**, `scenario/<name>/`: its plan, flags, run, section of
//! results.json, tables and charts, behind one small trait (`scenario::Scenario`); the list
//! of scenarios is written once, in `scenario/mod.rs`, and with the shared run skeleton and
//! the shared section header. The layers below keep only what every scenario shares.
//!
//! Only what the tests and the binary use is public (the plans and sections, the results, the
//! statistics, the command line's `main`); the rest is the crate's own. Layout, one job a
//! module; dependencies point down this list, never up (a test, `tests/harness/layering.rs`,
//! holds them to it, and within each directory module too):
//! - [`cli`]: the commands and their exit codes; it runs nothing itself;
//! - `run`: one run from plan to report (servers found once, CPUs split, Ctrl-C, the
//!   baseline and the thresholds at the end);
//! - `tools`: the small programs: `compare`, `check` (running servers against the contract),
//!   `merge` (agents' reports as one level), `kube` (one level as manifests);
//! - `gate`: `--threshold`s held to a run's figures or a comparison's ratios; `diff`: the
//!   run-to-run comparison, two runs' figures paired, NEW/OLD with verdicts, and how it
//!   prints;
//! - [`scenario`]: the scenarios, one folder each, their list, [`Results`], the run skeleton;
//! - `open_loop`: what the open-loop scenarios share: the closed-loop probe, the client's
//!   limit, one paced run;
//! - `harness`: `Harness`, what scenarios share: bring a server up where the placement says
//!   and verify it, hand a load to where it runs and get one merged result back, progress,
//!   saving;
//! - `server`: servers as processes, containers or swarm stacks, pinned, timed and stopped,
//!   the stores beside them, the agents' swarm job ([`build_command`] builds the servers as
//!   the harness does); [`jvm`]: the original's Tomcat and Jetty servers as peers; `nginx`:
//!   Debian's nginx as the outside anchor, from a configuration written per start (the
//!   floor, `greet-floor`, is a workspace binary like the servers);
//! - `sample`: a server seen while loaded: /proc (`proc`), or a container's stats from the
//!   engine or a watch task beside it (`engine`);
//! - `report`: the output formats as primitives (tables, CSV, SVG charts, one HTML page),
//!   `write_all` over every section a run has, and `points`, every figure of a run, flat
//!   (scenario, server, place, metric, runs), for thresholds and comparisons;
//! - `flags`: the flags several scenarios share, and flag values (with each scenario's
//!   `flags.rs` and `cli`, the only code that sees clap);
//! - [`results`]: the envelope of `results.json` and its reader, and what every section
//!   records: one [`results::Run`] per load, a [`results::Header`];
//! - [`stats`]: medians, summaries, percentages, and whether two samples differ beyond
//!   run-to-run noise (`stats::mann_whitney`);
//! - [`plan`]: what every scenario's plan shares, as plain values.

pub mod cli;
mod diff;
mod flags;
mod gate;
mod harness;
mod open_loop;
pub mod plan;
mod report;
pub mod results;
mod run;
mod sample;
pub mod scenario;
mod server;
pub mod stats;
mod tools;

pub use scenario::Results;
pub use server::{build_command, jvm};
