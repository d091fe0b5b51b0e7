//! The shared `main` of the three server binaries: flags, logging, binding, exit code.

use std::io;
use std::net::TcpListener;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use crate::{net, ServerConfig};

/// Runs a server binary: parses [`ServerConfig`] from the command line and environment,
/// answers `--help`, `--version` and `--health-check`, sets up logging, binds with the
/// configured backlog, and hands the listener to `serve`, which blocks until the server has
/// shut down. Bad flags and bind failures are one line on stderr and a non-zero exit.
pub fn main<F>(server: &str, serve: F) -> ExitCode
where
    F: FnOnce(TcpListener, ServerConfig) -> io::Result<()>,
{
    let config: ServerConfig = match parse_args(server) {
        Ok(config) => config,
        Err(code) => return code,
    };

    if config.health_check {
        let healthy = net::probe_health(net::local_target(config.addr()), Duration::from_secs(2));
        return if healthy {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }

    init_tracing();
    let listener = match net::bind(config.addr(), config.backlog.get()) {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("{server}: error: cannot listen on {}: {err}", config.addr());
            return ExitCode::FAILURE;
        }
    };
    let addr = listener.local_addr().unwrap_or_else(|_| config.addr());
    tracing::info!(
        %addr,
        workers = config.workers,
        delay_ms = config.delay_ms,
        blocking_threads = config.blocking_threads,
        backlog = config.backlog,
        "{server} listening"
    );
    match serve(listener, config) {
        Ok(()) => {
            tracing::info!("{server} stopped");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("{server}: error: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Parses `T` from the command line the way every binary here does: `--help` and
/// `--version` print and give `Err(0)`; a bad flag is one line on stderr, `program: error:
/// …`, and `Err(2)`.
pub fn parse_args<T: Parser>(program: &str) -> Result<T, ExitCode> {
    T::try_parse().map_err(|err| {
        if err.use_stderr() {
            let rendered = err.render().to_string();
            let line = rendered.lines().next().unwrap_or("error: bad arguments");
            eprintln!("{program}: {line} (see --help)");
            ExitCode::from(2)
        } else {
            let _ = err.print();
            ExitCode::SUCCESS
        }
    })
}

/// Logs to stderr through `tracing`, filtered by `RUST_LOG` (default `info`). Servers log
/// start-up and shutdown only: per-request logging would distort the comparison.
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(io::IsTerminal::is_terminal(&io::stderr()))
        .try_init();
}
