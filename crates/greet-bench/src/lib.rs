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
//! [`plan::Placement`](greet_model::plan::Placement), which the harness reads and no scenario does.
//!
//! **A scenario is one folder**, `scenario/<name>/`: what it is (`mod.rs`: what it says of
//! itself, its plan and defaults), its own flags (`flags.rs`), its run (`run.rs`) and its
//! report (`report.rs`: its section of results.json, tables, charts, CSV, figures, scorecard
//! rows), built with one kit (`scenario/kit/`: the `Scenario` trait, the run skeleton and
//! the `Book` it records into). The list of scenarios is one line each (and a plain `pub
//! mod`), in `scenario/mod.rs`;
//! the command line's subcommands, `all`, results.json's sections and the report's order come
//! from it. What every scenario's plan holds, [`plan::Base`](greet_model::plan::Base), and
//! its one flag group are written once. The layers below keep only what every scenario
//! shares.
//!
//! Only what the tests and the binary use is public (the plans and sections, the command
//! line's `main`); the rest is the crate's own. Layout, one job a module; dependencies point
//! down this list, never up (a test, `tests/harness/layering/`, holds them to it, and within
//! each directory module too):
//! - [`cli`]: the commands and their exit codes, made from the list of scenarios; it runs
//!   nothing itself;
//! - `run`: one run from its [`scenario::Agenda`] to report (servers found once, CPUs split,
//!   Ctrl-C, the baseline and the thresholds at the end);
//! - `tools`: the small programs: `compare`, `check` (running servers against the contract),
//!   `merge` (agents' reports as one level), `kube` (one level as manifests);
//! - `gate`: `--threshold`s held to a run's figures or a comparison's ratios; `diff`: the
//!   run-to-run comparison, two runs' figures paired, NEW/OLD with verdicts, and how it
//!   prints;
//! - [`scenario`]: the scenarios, one folder each, their list, [`Results`], the kit;
//! - `open_loop`: what the open-loop scenarios share: the closed-loop probe, the client's
//!   limit, one paced run;
//! - `harness`: `Harness`, what scenarios share: bring a server up where the placement says
//!   and verify it, hand a load to where it runs and get one merged result back, progress,
//!   saving;
//! - `flags`: the base's flag group, the flags several scenarios share, and flag values (with
//!   each scenario's `flags.rs` and `cli`, the only code that sees clap).
//!
//! Below the crate, as crates of their own, one on the other:
//! - `greet_bed`: the bed, `server` (servers as processes, containers or swarm stacks,
//!   pinned, timed and stopped, the stores beside them, the agents' swarm job,
//!   `build_command` that builds the servers as the harness does, the original's Tomcat and
//!   Jetty servers as peers in `jvm`, Debian's nginx as the outside anchor in `nginx`) and
//!   `sample` (a server seen while loaded: /proc, or a container's stats from the engine or a
//!   watch task beside it; the counts of a process under an instrument);
//! - `greet_report`: the output formats as primitives (tables, CSV, SVG charts, one HTML
//!   page), `write_all` over every section a run has through `greet_report::Render`, the
//!   scorecard, and `points`, every figure of a run, flat (scenario, server, cell, metric,
//!   values), for thresholds and comparisons; it names no scenario;
//! - `greet_model`: the data model, its `plan` (what every scenario's plan shares, as plain
//!   values) and its `results` (the envelope of `results.json` and its reader, and what every
//!   section records: one [`Trial`](greet_model::results::Trial) per load, a
//!   [`Frame`](greet_model::results::Frame));
//! - `greet_stats`: medians, summaries, the paired verdict (`greet_stats::paired`) and,
//!   between two runs, the unpaired one (`greet_stats::mann_whitney`).

pub mod cli;
mod diff;
mod flags;
mod gate;
mod harness;
mod open_loop;
mod run;
pub mod scenario;
mod tools;

pub use scenario::Results;
