//! greet-bench: the harness that reproduces the Greetings API experiments for the axum,
//! actix-web and hyper servers of this workspace.
//!
//! `cargo run --release -p greet-bench` runs the ladder, the original experiment: it builds
//! the release servers, then for each one starts it pinned to its own CPUs and times its
//! start-up, verifies it against the contract (`greet_conformance::check`), fires 100, 300,
//! 900 and 2700 concurrent requests (one per fresh connection, the clock started before
//! connect) while sampling its CPU, memory and threads, and stops it with SIGTERM. The
//! `loops`, `soak` and `sweep` subcommands reproduce the study's other experiments over
//! keep-alive load, and `all` runs the four into one report. Every run prints text tables and
//! writes JSON, CSV, SVG charts and an HTML report after every step.
//!
//! Layout, one module per concern:
//! - [`cli`]: flags and the binary's `main` (flags in, exit code out);
//! - [`runner`]: one run from plan to report, and [`runner::Bench`], what scenarios share;
//! - [`scenario`]: the ladder, loops, soak and sweep, one module each;
//! - [`server`]: finding, building, starting (pinned), timing and stopping server binaries;
//! - [`load`]: the load generator (one request per fresh connection, or keep-alive users),
//!   validating every response;
//! - [`sample`]: /proc sampling of CPU %, RSS and threads (live, and every id seen);
//! - [`stats`]: from request outcomes to figures (HDR histogram), medians of repeats;
//! - [`compare`]: whether two servers differ beyond run-to-run noise (Mann-Whitney U);
//! - [`results`]: the data written to `results.json`;
//! - [`report`]: text tables, CSV, SVG charts, HTML, and writing them all.

pub mod cli;
pub mod compare;
pub mod load;
pub mod report;
pub mod results;
pub mod runner;
pub mod sample;
pub mod scenario;
pub mod server;
pub mod stats;
