//! Looking at a server from outside, one way everywhere in the workspace: the contract suite,
//! the harness, the benches and the servers' own `--health-check` share these readers rather
//! than each writing its own.
//!
//! - [`http1`]: the HTTP/1 response reader, a sans-IO [`http1::Parser`] with blocking and
//!   async drivers (content-length, chunked and close-delimited bodies, interim answers,
//!   connection reuse).
//! - [`tls`]: the client side of TLS (rustls on ring): trust one certificate, or any.
//! - [`procfs`]: a process's CPU time, memory, threads and parent from /proc, and the
//!   machine's facts a report names.
//! - [`cgroup`]: a container's CPU time, memory and tasks from its control group, as the
//!   Docker engine's stats count them; [`watch`]: the task that prints them beside the
//!   container every interval, and the line it prints.
//! - [`protocol`]: the four protocols a client speaks ([`Protocol`]), and a server's URL
//!   resolved to its address ([`resolve`]).
//!
//! Starting servers and stores is `greet-launch`'s.

pub mod cgroup;
pub mod http1;
pub mod procfs;
pub mod protocol;
pub mod tls;
pub mod watch;

pub use protocol::{resolve, Protocol};
