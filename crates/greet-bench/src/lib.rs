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
//! itself), `rate` loads at fixed request rates (open loop), and `all` runs them all into one
//! report. Every run prints text tables and writes JSON, CSV, SVG charts and an HTML report
//! after every step. `--threshold`s gate any run (exit 3), `--save-baseline`/`--baseline`
//! keep and compare runs, and `compare OLD NEW` sets two runs side by side.
//!
//! Layout, one module per concern; dependencies point down this list, never up (a test,
//! `tests/harness/layering.rs`, holds them to it, and within each directory module too):
//! - [`cli`]: flags in, a [`plan::Plan`] out, the outcome as an exit code: the only module
//!   that sees clap (`args`: each scenario's flags; `values`: parsers and help defaults);
//! - [`run`]: one run from plan to report (servers found once, CPUs split, Ctrl-C);
//! - [`scenario`]: the ladder, loops, soak, sweep, business and rate, one module each;
//! - [`harness`]: [`harness::Harness`], what scenarios share: start, check, sample and stop a
//!   server, keep-alive load with progress, saving;
//! - [`server`]: servers as processes or containers, pinned, timed and stopped (`binaries`,
//!   `process`, `container`); [`jvm`]: the original's Tomcat and Jetty servers as peers;
//! - [`agents`]: a level split over `greet-bench agent` processes starting together, their
//!   tallies merged exactly (`--agents`, `merge`); [`kube`]: the same level as Kubernetes
//!   manifests (`kubernetes`);
//! - [`load`]: the load generator, one loop per shape (`fresh`, `sessions`, `paced`) over one
//!   connection (`conn`), every response validated (`check`), every outcome pushed into one
//!   [`load::Tally`] (`count`);
//! - [`sample`]: /proc sampling of CPU %, RSS and threads (live, and every id seen), of one
//!   process or a group (a database's processes);
//! - [`report`]: tables, CSV, charts and HTML, by output format over the results (and a
//!   comparison of two runs, `report::comparison`);
//! - [`results`]: the data model of `results.json`, one [`results::Run`] per load;
//! - [`diff`]: `compare OLD NEW`, two runs' figures paired, NEW/OLD with verdicts;
//! - [`gate`]: `--threshold`s held to a run's figures or a comparison's ratios;
//! - [`points`]: every figure of a run, flat (scenario, server, place, metric, runs);
//! - [`compare`]: whether two samples differ beyond run-to-run noise (Mann-Whitney U);
//! - [`stats`]: medians, summaries, percentages;
//! - [`plan`]: what a run is to do, every default and `--quick` size, as plain values.
//!
//! The scenarios are one list, [`plan::ScenarioKind`]. Each has a file of its own in every
//! layer it touches: `plan/`, `scenario/`, `results/`, `report/table/` and `report/charts/`
//! (CONTRIBUTING.md lists them).

pub mod agents;
pub mod cli;
pub mod compare;
pub mod diff;
pub mod gate;
pub mod harness;
pub mod jvm;
pub mod kube;
pub mod load;
pub mod plan;
pub mod points;
pub mod report;
pub mod results;
pub mod run;
pub mod sample;
pub mod scenario;
pub mod server;
pub mod stats;
