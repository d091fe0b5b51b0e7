//! `greet-floor`: the reference server, the floor the frameworks are measured against. See
//! the crate docs and `--help` (every server's flags; `--workers` is its event loops).

use std::io;
use std::process::ExitCode;

use nix::sys::signal::{SigSet, Signal};

fn main() -> ExitCode {
    // Blocked before anything else: the start-up line (which a harness may answer with a
    // SIGTERM at once) is logged before the listener reaches the closure below, and a signal
    // in between would otherwise kill the process instead of stopping it. The loops inherit
    // the mask, and the signal waits here.
    let mut signals = SigSet::empty();
    signals.add(Signal::SIGTERM);
    signals.add(Signal::SIGINT);
    if let Err(e) = signals.thread_block() {
        eprintln!(
            "{}: cannot block SIGTERM and SIGINT: {e}",
            greet_floor::NAME
        );
        return ExitCode::FAILURE;
    }
    greet_server::cli::main(greet_floor::NAME, |listener, config| {
        if listener.tls.is_some() {
            return Err(io::Error::other(
                "the floor serves HTTP/1.1 in cleartext only: drop the TLS flags",
            ));
        }
        let floor = greet_floor::start(&listener.tcp, config.workers)?;
        signals.wait().map_err(io::Error::from)?;
        floor.stop()
    })
}
