//! What makes the Greetings API a server process, one definition for the three frameworks:
//! each server crate adds only its framework's glue to this and to `greet-core`.
//!
//! - [`config`]: [`ServerConfig`], the flags and environment variables of every server
//!   binary, and the [`Api`] (greeter and stores) they describe.
//! - [`net`]: binding with an explicit listen backlog.
//! - [`shutdown`]: the SIGTERM / Ctrl-C future every server drains on.
//! - [`cli`]: the shared `main` of the server binaries (flags, `--health-check`, logging,
//!   binding, exit code), and the one-line rendering of flag errors the harness uses too.

pub mod cli;
pub mod config;
pub mod flag;
pub mod net;
pub mod shutdown;

pub use config::{Api, ServerConfig};
pub use flag::ServerFlag;
