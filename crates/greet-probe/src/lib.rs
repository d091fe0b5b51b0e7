//! Looking at a server from outside, one way everywhere in the workspace: the contract suite,
//! the harness, the benches and the servers' own `--health-check` share these readers rather
//! than each writing its own.
//!
//! - [`http1`]: the HTTP/1 response reader, a sans-IO [`http1::Parser`] with blocking and
//!   async drivers (content-length, chunked and close-delimited bodies, interim answers,
//!   connection reuse).
//! - [`procfs`]: a process's CPU time, memory, threads and parent from /proc, and the
//!   machine's facts a report names.
//! - [`process`]: starting a server binary with `--port 0` and learning its address from its
//!   start-up log line; signals, graceful stop, the last lines of its stderr; CPU pinning.
//! - [`stores`]: real PostgreSQL and Redis servers from the machine's packages, on loopback
//!   ports in a temporary directory, for the tests and the harness.

pub mod http1;
pub mod process;
pub mod procfs;
pub mod stores;
