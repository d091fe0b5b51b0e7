//! `greet-floor`: the reference server, the floor the frameworks are measured against. See
//! the crate docs and `--help` (every server's flags; `--workers` is its event loops).

use std::io;

use nix::sys::signal::{SigSet, Signal};

fn main() -> std::process::ExitCode {
    greet_server::cli::main(greet_floor::NAME, |listener, config| {
        if listener.tls.is_some() {
            return Err(io::Error::other(
                "the floor serves HTTP/1.1 in cleartext only: drop the TLS flags",
            ));
        }
        // Blocked before the loops start, so they inherit the mask and the signal waits here.
        let mut signals = SigSet::empty();
        signals.add(Signal::SIGTERM);
        signals.add(Signal::SIGINT);
        signals.thread_block().map_err(io::Error::from)?;
        let floor = greet_floor::start(&listener.tcp, config.workers)?;
        signals.wait().map_err(io::Error::from)?;
        floor.stop()
    })
}
