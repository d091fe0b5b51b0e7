//! Starting a server in-process, for tests and benches: bound on an ephemeral port before
//! the call returns, served on its own thread and runtime, stopped gracefully on drop.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::thread::JoinHandle;

use greet_server::{Listener, ServerConfig};
use rustls::pki_types::CertificateDer;
use tokio::sync::oneshot;

/// The configuration of the quick cases: port 0, delay 0, two workers, a 2 s drain.
pub fn quick() -> ServerConfig {
    ServerConfig {
        port: 0,
        delay_ms: 0,
        workers: 2.try_into().expect("non-zero"),
        shutdown_timeout_secs: 2,
        ..ServerConfig::default()
    }
}

/// The shutdown future handed to a server's `run`.
pub type Shutdown = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A server crate's `run(listener, config, shutdown)` as a function pointer, for lists of the
/// servers ([`crate::for_each_server!`]).
pub type Run = fn(Listener, ServerConfig, Shutdown) -> io::Result<()>;

/// A server running on a thread of its own.
#[derive(Debug)]
pub struct Spawned {
    addr: SocketAddr,
    certificate: Option<CertificateDer<'static>>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

/// Prepares the stores as a server binary does ([`ServerConfig::prepare_stores`]: waits for
/// PostgreSQL and Redis, seeds), reads or makes its TLS certificate if it asks for TLS, binds `config.addr()` (use port 0) with the configured
/// backlog and runs `run` on a new thread; `run` is a server crate's
/// `run(listener, config, shutdown)`.
pub fn spawn<F>(run: F, config: ServerConfig) -> io::Result<Spawned>
where
    F: FnOnce(Listener, ServerConfig, Shutdown) -> io::Result<()> + Send + 'static,
{
    config.prepare_stores().map_err(io::Error::other)?;
    spawn_unprepared(run, config)
}

/// [`spawn`] without preparing the stores: for a server whose stores are down on purpose.
pub fn spawn_unprepared<F>(run: F, config: ServerConfig) -> io::Result<Spawned>
where
    F: FnOnce(Listener, ServerConfig, Shutdown) -> io::Result<()> + Send + 'static,
{
    let tls = config.tls().map_err(io::Error::other)?;
    let certificate = tls.as_ref().map(|tls| tls.certificate.clone());
    let tcp = greet_server::net::bind(config.addr(), config.backlog.get())?;
    let addr = tcp.local_addr()?;
    let listener = Listener { tcp, tls };
    let (stop, stopped) = oneshot::channel::<()>();
    let shutdown: Shutdown = Box::pin(async move {
        let _ = stopped.await;
    });
    let thread = std::thread::Builder::new()
        .name(format!("server-{}", addr.port()))
        .spawn(move || run(listener, config, shutdown))?;
    Ok(Spawned {
        addr,
        certificate,
        stop: Some(stop),
        thread: Some(thread),
    })
}

impl Spawned {
    /// Where the server listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://addr`, or `https://addr` with TLS.
    pub fn base_url(&self) -> String {
        let scheme = if self.certificate.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// The certificate it serves TLS with, if it does: what a client trusts.
    pub fn certificate(&self) -> Option<&CertificateDer<'static>> {
        self.certificate.as_ref()
    }
}

impl Drop for Spawned {
    /// Signals shutdown and waits for the server to drain and its thread to end.
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
