//! greet-bench: the harness that reproduces the Greetings API experiments for the axum,
//! actix-web and hyper servers of this workspace.
//!
//! `cargo run --release -p greet-bench` runs the ladder, the original experiment: it builds
//! the release servers, then for each one starts it pinned to its own CPUs and times its
//! start-up, verifies it against the contract (`greet_conformance::check`), fires 100, 300,
//! 900 and 2700 concurrent requests (one per fresh connection, the clock started before
//! connect) while sampling its CPU, memory and threads, and stops it with SIGTERM. The
//! `loops`, `soak`, `sweep` and `business` subcommands reproduce the study's other
//! experiments over keep-alive load (`business` on a real database and cache, which it starts
//! itself), `rate` loads at fixed request rates (open loop), `protocols` compares HTTP/1.1,
//! h2c and TLS, and `all` runs them all into one report. Every run prints text tables and
//! writes JSON, CSV, SVG charts and an HTML report after every step. `--threshold`s gate any
//! run (exit 3), `--save-baseline`/`--baseline` keep and compare runs, and `compare OLD NEW`
//! sets two runs side by side.
//!
//! The load itself is `greet_load`'s (the loops, the checks, the tallies, an agent's shard);
//! where it runs, the harness's own process, agents here or a swarm job, is the plan's
//! [`plan::Placement`], which the harness reads and no scenario does.
//!
//! Only what the tests and the binary use is public (the plan, the results, the statistics,
//! the command line's `main`); the rest is the crate's own. Layout, one job a module;
//! dependencies point down this list, never up (a test,
//! `tests/harness/layering.rs`, holds them to it, and within each directory module too):
//! - [`cli`]: flags in, a [`plan::Plan`] out, the outcome as an exit code: the only module
//!   that sees clap, and it runs nothing itself;
//! - `run`: one run from plan to report (servers found once, CPUs split, Ctrl-C);
//! - `check`, `merge`, `kube`: the commands `check` (running servers against the
//!   contract), `merge` (agents' reports as one level) and `kubernetes` (one level as
//!   manifests);
//! - `scenario`: the ladder, loops, soak, sweep, business, rate and protocols, one module
//!   each: what to load, and what to record;
//! - `harness`: `Harness`, what scenarios share: bring a server up where the
//!   placement says and verify it, hand a load to where it runs and get one merged result
//!   back, progress, saving;
//! - `server`: servers as processes, containers or swarm stacks, pinned, timed and stopped,
//!   and the stores beside them ([`build_command`] builds them as the harness does); [`jvm`]:
//!   the original's Tomcat and Jetty servers as peers;
//! - `sample`: a server seen while loaded: /proc (`proc`), or a container's stats from the
//!   engine or a watch task beside it (`engine`);
//! - `report`: tables, CSV, charts and HTML, by output format over the results (and a
//!   comparison of two runs, `report::comparison`);
//! - `compare`: the `compare` command: two runs' figures paired, NEW/OLD with verdicts;
//! - `gate`: `--threshold`s held to a run's figures or a comparison's ratios;
//! - `points`: every figure of a run, flat (scenario, server, place, metric, runs);
//! - [`results`]: the data model of `results.json`, one [`results::Run`] per load;
//! - [`stats`]: medians, summaries, percentages, and whether two samples differ beyond
//!   run-to-run noise (`stats::mann_whitney`);
//! - [`plan`]: what a run is to do, every default and `--quick` size, as plain values.
//!
//! The scenarios are one list, [`plan::ScenarioKind`]. Each has a file of its own in every
//! layer it touches: `plan/`, `scenario/`, `results/`, `report/table/` and `report/charts/`
//! (CONTRIBUTING.md lists them).

mod check;
pub mod cli;
mod compare;
mod gate;
mod harness;
pub mod jvm;
mod kube;
mod merge;
pub mod plan;
mod points;
mod report;
pub mod results;
mod run;
mod sample;
mod scenario;
mod server;
pub mod stats;

pub use server::build_command;
