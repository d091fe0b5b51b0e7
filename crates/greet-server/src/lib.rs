//! What makes the Greetings API a server process, one definition for the three frameworks:
//! each server crate adds only its framework's glue to this and to `greet-core`.
//!
//! - [`config`]: [`ServerConfig`], the flags and environment variables of every server
//!   binary, and the [`Api`] (greeter and stores) they describe.
//! - [`net`]: binding with an explicit listen backlog, and the [`Listener`] a server serves
//!   on (a socket, with TLS or without).
//! - [`tls`]: [`Tls`], the rustls configuration every server terminates TLS with (PEM files
//!   or a self-signed certificate, ALPN `h2` and `http/1.1`).
//! - [`knob`]: [`Knob`], a setting a crate documents for speed that this workspace leaves
//!   off (`--knob`), with what it gives up; a server refuses one that is not its own.
//! - [`statics`]: [`Statics`], the directory `GET /static/<path>` serves (`--static-dir`, or
//!   a default set written on first use) and the rule of which paths in it may be served.
//! - [`idle`]: [`idle::InFlight`], the count of a connection's requests in flight that closes
//!   HTTP/2 connections idle for `greet_core::limits::IDLE_TIMEOUT`.
//! - [`shutdown`]: the SIGTERM / Ctrl-C future every server drains on.
//! - [`cli`]: the shared `main` of the server binaries (flags, `--health-check`, logging,
//!   binding, exit code), and the one-line rendering of flag errors the harness uses too.

pub mod cli;
pub mod config;
pub mod flag;
pub mod idle;
pub mod knob;
pub mod net;
pub mod shutdown;
pub mod statics;
pub mod tls;

pub use config::{Api, ServerConfig};
pub use flag::ServerFlag;
pub use knob::Knob;
pub use net::Listener;
pub use statics::Statics;
pub use tls::Tls;

// The `mimalloc` build knob (`Knob::Mimalloc`): declared here, the one crate every server
// binary links, so that the feature alone decides the allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
