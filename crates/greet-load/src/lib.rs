//! greet-load: the load engine. It sends requests (GETs, POSTs of a body declared or
//! chunked, or messages on WebSockets, [`Wire::websocket`]) to one server in one of three
//! shapes, checks every answer, counts every outcome into a tally that merges exactly, and
//! runs one shard of a level as an agent does, so that a level split over agents (processes
//! here, a swarm job, a Kubernetes Job) comes back as one. It links no server, no store client and no
//! harness: its agent binary, `greet-agent`, is what a cluster runs.
//!
//! Layout, each module using only those below it:
//! - [`local`]: agents as processes on this machine, started together, their reports read;
//! - [`agent`]: the agent's command line and its programs: one shard, or the watch task. A
//!   shard's flags are written and read in one file of it, `agent/flags.rs`: written by
//!   [`Shard::flags`] and [`Shard::level_flags`] (for `local`'s processes, a swarm job, a
//!   Kubernetes Job), read back by [`agent::ShardArgs`] (or refused, [`agent::BadFlags`]);
//! - [`shard`]: one agent's share of a level ([`Shard`], `shard/mod.rs`), run ([`run_shard`],
//!   `shard/run.rs`) and reported ([`Report`]); every agent's report gathered and merged
//!   ([`gather_reports`], [`merge`]; `shard/report.rs`);
//! - [`run()`]: any load, by its [`Work`], into what it [`Counted`];
//! - the loops, one per shape: `fresh` (one request per fresh connection, the clock started
//!   before connect, the ladder's), `sessions` (keep-alive virtual users, the closed-loop
//!   scenarios', on one connection each or a new one every N requests) and `paced` (open loop on a [`Schedule`], each request timed from its
//!   intended send: no coordinated omission; counted per quarter second too, as [`Window`]s; one
//!   thread around one epoll, `paced::event`, with an engine per protocol, `paced::http1` and
//!   `paced::http2`, over a cleartext or TLS `paced::stream`);
//! - `workers`: what every loop does with its workers: a panic inside an attempt counted as
//!   [`ErrorKind::Panic`] rather than lost with the worker's tally, and the workers' tallies
//!   gathered into the load's;
//! - [`message`]: what its requests carry besides the target (header fields, a body);
//! - [`work`]: a load as one value ([`Load`], [`Work`], [`Stop`]);
//! - [`schedule`]: an open loop's target rate over time ([`Schedule`], constant or in ramping
//!   [`Stage`]s) and every request's intended send;
//! - [`conn`]: the connection every loop sends through, over HTTP/1.1 or HTTP/2, in cleartext
//!   or over TLS, or a WebSocket on HTTP/1.1 ([`Wire`], how it reaches the server:
//!   `conn/wire.rs`), and the one-request light check ([`check_once`]);
//! - [`expect`]: what a valid answer is ([`Expect`], the rule; [`Check`], its check);
//! - [`count`]: one request's [`Outcome`] and the [`Tally`] every loop pushes outcomes into,
//!   which serializes losslessly (an agent's crosses a process boundary as JSON);
//! - [`figures`]: what a tally comes to ([`Figures`], [`AgentRun`]), as results files keep it;
//! - [`flags`]: the values of a load's flags, for the agent and the harness alike.
//!
//! This file only declares the modules and re-exports what the harness uses most.

pub mod agent;
pub mod conn;
pub mod count;
pub mod expect;
pub mod figures;
pub mod flags;
pub mod local;
pub mod message;
pub mod schedule;
pub mod shard;
pub mod work;

#[cfg(test)]
mod fake;
mod fresh;
mod paced;
mod run;
mod sessions;
mod workers;

pub use conn::{check_once, check_request, CheckFailed, Wire};
pub use count::{ErrorKind, Opened, Outcome, Tally, SPECTRUM};
pub use expect::{Check, Expect};
pub use figures::{AgentRun, Connect, Figures, Handshakes, Latency};
pub use message::{Header, RequestBody};
pub use paced::{PacedTally, Window, LATE, WINDOW};
pub use run::{run, Counted};
pub use schedule::{Schedule, Stage};
pub use shard::{gather_reports, merge, run_shard, Report, Shard};
pub use work::{Load, Stop, Work};
