//! The bed the harness measures on: the servers it runs and the stores beside them
//! ([`server`]: found or built, started as processes, containers or swarm stacks, pinned,
//! timed from spawn to their first `/health`, and stopped gracefully; PostgreSQL and Redis
//! provisioned for a scenario; the original's JVM servers and Debian's nginx as peers and
//! anchor), and what it sees of them while a load runs ([`sample`]: /proc, the Docker
//! engine's stats or a watch task beside a container, the machine's steal and pace, and the
//! counts of a process under an instrument).
//!
//! A crate of its own under the harness (`greet-bench`): it knows no scenario and no flag,
//! and runs no load itself (the agents' swarm job it deploys runs `greet-load`'s shards).
//! `server` imports `sample` and nothing imports `server` here; both read only the data model
//! (`greet-model`) and the workspace's plain crates (`greet-launch` to start and pin
//! processes, `greet-probe` to look at them, `greet-load` for the agents' job).

pub mod sample;
pub mod server;
