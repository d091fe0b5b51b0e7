//! The shared `main` of the server binaries (flags, logging, binding, exit code); flag errors
//! are one line, as every binary of the workspace says them (`greet_cli`).

use std::io;
use std::process::ExitCode;
use std::time::Duration;

use greet_cli::parse_args;
use greet_probe::tls::Trust;
use greet_store::StoreError;

use crate::{net, shutdown, Listener, ServerConfig};

/// How long `--health-check` waits for `/health`.
const HEALTH_CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// What a server binary speaks: its start-up line names it, and TLS flags are refused up
/// front where it has no TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaks {
    /// HTTP/1.1 and h2c in cleartext; h2 and HTTP/1.1 by ALPN over TLS (the three servers).
    Http1AndHttp2,
    /// HTTP/1.1 in cleartext only (the floor).
    Http1Cleartext,
}

/// Runs a server binary: parses [`ServerConfig`] from the command line and environment,
/// answers `--help`, `--version` and `--health-check`, sets up logging, binds with the
/// configured backlog, and hands the listener to `serve`, which blocks until the server has
/// shut down. Before binding it waits for the database and cache servers, if any, and seeds
/// the database, and reads or makes the TLS certificate. Bad flags and certificate files are
/// one line on stderr and exit 2; stores that do not come up and bind failures one line and
/// exit 1. `speaks` is what the start-up line names.
pub fn main<F>(server: &str, speaks: Speaks, serve: F) -> ExitCode
where
    F: FnOnce(Listener, ServerConfig) -> io::Result<()>,
{
    let config: ServerConfig = match parse_args(server) {
        Ok(config) => config,
        Err(code) => return code,
    };
    if let Some(knob) = config.knobs.iter().find(|k| !k.applies_to(server)) {
        eprintln!("{server}: error: {}", knob.refusal(server));
        return ExitCode::from(2);
    }
    if let Some(knob) = config.knobs.iter().find(|k| !k.built_in()) {
        eprintln!("{server}: error: {}", knob.not_built(server));
        return ExitCode::from(2);
    }
    let tls_asked = config.tls_cert.is_some() || config.tls_self_signed;
    if tls_asked && speaks == Speaks::Http1Cleartext {
        eprintln!("{server}: error: it serves HTTP/1.1 in cleartext only: drop the TLS flags");
        return ExitCode::from(2);
    }

    if config.health_check {
        let target = net::local_target(config.addr());
        // Its own server, on its own port: any certificate will do.
        let tls = tls_asked
            .then(|| greet_probe::tls::client_config(&Trust::Any, &[b"http/1.1"]).ok())
            .flatten();
        let answer = greet_probe::http1::get_blocking(target, "/health", HEALTH_CHECK_TIMEOUT, tls);
        return if answer.is_ok_and(|res| res.status() == 200) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }

    init_tracing();
    match config.prepare_stores() {
        Ok(()) => {}
        Err(StoreError::Settings(why)) => {
            eprintln!("{server}: error: {why} (see --help)");
            return ExitCode::from(2);
        }
        Err(StoreError::Unavailable(why)) => {
            eprintln!("{server}: error: {why}");
            return ExitCode::FAILURE;
        }
    }
    let tls = match config.tls() {
        Ok(tls) => tls,
        Err(why) => {
            eprintln!("{server}: error: {why:#}");
            return ExitCode::from(2);
        }
    };
    let tcp = match net::bind(config.addr(), config.backlog.get()) {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("{server}: error: cannot listen on {}: {err}", config.addr());
            return ExitCode::FAILURE;
        }
    };
    let addr = tcp.local_addr().unwrap_or_else(|_| config.addr());
    // Before the line a harness may answer with a SIGTERM at once, and before any thread of
    // the server's starts (they inherit the mask): see `shutdown::hold`.
    if let Err(err) = shutdown::hold() {
        eprintln!("{server}: error: cannot hold SIGTERM and SIGINT back: {err}");
        return ExitCode::FAILURE;
    }
    let protocols = match (&tls, speaks) {
        (Some(_), _) => "https: h2, http/1.1 by ALPN",
        (None, Speaks::Http1AndHttp2) => "http: http/1.1, h2c",
        (None, Speaks::Http1Cleartext) => "http: http/1.1",
    };
    // Absent (not empty) in cleartext.
    let fingerprint = tls
        .as_ref()
        .map(|tls| tracing::field::display(tls.fingerprint()));
    tracing::info!(
        %addr,
        protocols,
        sha256 = fingerprint,
        workers = config.workers,
        delay_ms = config.delay_ms,
        blocking_threads = config.blocking_threads,
        backlog = config.backlog,
        store = %config.store,
        cache = %config.cache,
        db_pool = config.db_pool,
        "{server} listening"
    );
    match serve(Listener { tcp, tls }, config) {
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
