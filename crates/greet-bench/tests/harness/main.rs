//! greet-bench's integration tests, one binary (as ripgrep's are): the harness is linked once
//! rather than once per file. `cargo test -p greet-bench --test harness MODULE::` runs one file.

mod common;

mod agents;
mod bed;
mod build_once;
mod business;
mod cli;
mod compare;
mod cost;
mod docker;
mod knobs;
mod ladder;
mod layering;
mod open_loop;
mod peers;
mod protocols;
mod ramp;
mod rate;
mod references;
mod scenarios;
mod swarm;
mod targets;
mod verdicts;
