//! The harness's data model, as plain values: what a run is asked to do ([`plan`]: the
//! shared settings, what every scenario's plan is built on, the servers and their knobs, the
//! stores, the thresholds) and what it records ([`results`]: the envelope of `results.json`,
//! its reader, and what every section holds: a [`results::Trial`] per load, a
//! [`results::Frame`]).
//!
//! It sits under greet-bench (the scenarios and the harness), greet-bed and greet-report,
//! which all import it, and imports none of them: below it are only the statistics (`greet-stats`) and the workspace's
//! plain crates whose types it stores (the load engine's figures, the probe's protocol, the
//! store URLs, the servers' knob list). Nothing here sees a flag, starts a process or writes a
//! file but `results.json`'s reader.
//!
//! Layout: `plan/` (`mod.rs`: the run's settings, the servers by short name; `base.rs`: the
//! base every plan is built on; `placement.rs`: where the load runs; `profile.rs`: a workload's
//! requests; `store.rs`: the stores; `threshold.rs`: `--threshold` parsed) under `results/`
//! (`mod.rs`: the envelope and its reader; `trial.rs`: one load; `paced.rs`: an open-loop
//! run; `scorecard.rs`: the scorecard's rows).

pub mod plan;
pub mod results;
