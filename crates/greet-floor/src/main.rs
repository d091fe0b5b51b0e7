//! `greet-floor`: the reference server, the floor the frameworks are measured against. See
//! the crate docs and `--help` (every server's flags; `--workers` is its event loops).

use std::io;
use std::process::ExitCode;

use greet_server::cli::Speaks;

fn main() -> ExitCode {
    // The shared main holds SIGTERM and SIGINT back before its start-up line
    // (`greet_server::shutdown::hold`); the loops inherit the mask, and the signal waits here.
    greet_server::cli::main(
        greet_floor::NAME,
        Speaks::Http1Cleartext,
        |listener, config| {
            let floor = greet_floor::start(&listener.tcp, config.workers)?;
            greet_server::shutdown::drain_signals()
                .wait()
                .map_err(io::Error::from)?;
            floor.stop()
        },
    )
}
