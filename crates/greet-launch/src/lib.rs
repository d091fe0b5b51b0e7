//! Starting the processes the tests and the harness run, one way everywhere in the workspace:
//! the contract suite's process tests, the harness and the store tests share these launchers
//! rather than each writing its own.
//!
//! - [`process`]: starting a server binary with `--port 0` and learning its address from its
//!   start-up log line; signals, graceful stop, the last lines of its stderr; CPU pinning.
//! - [`stores`]: real PostgreSQL and Redis servers from the machine's packages, on loopback
//!   ports in a temporary directory, stopped and removed with their owner.
//!
//! The supervisor fails with an `io::Error` (its kind tells a timeout from the rest); the
//! store launcher with one `String` line that says what failed and, for a missing program,
//! the `apt-get install` line: every caller prints it or fails a test with it.

pub mod process;
pub mod stores;
