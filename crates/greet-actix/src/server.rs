//! actix-web's `HttpServer` as this crate runs it: its settings (timeouts, keep-alive, the
//! handshake bound, no lingering read), the drain on shutdown, and the idle limit of HTTP/2
//! connections, which actix-web lacks. Apart from the `App` (`lib.rs`): how the API is served,
//! not what it answers.

use std::any::Any;
use std::future::Future;
use std::io;
use std::net::Shutdown;
use std::os::fd::AsFd;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use actix_tls::accept::rustls_0_23::TlsStream;
use actix_web::dev::Extensions;
use actix_web::http::KeepAlive;
use actix_web::rt::net::TcpStream;
use actix_web::HttpServer;
use greet_core::limits::{HEAD_READ_TIMEOUT, IDLE_TIMEOUT};
use greet_server::idle::InFlight;
use greet_server::net::AcceptQueue;
use greet_server::{Knob, Listener, ServerConfig};

use crate::app;

/// TLS handshakes under way at once per worker before actix-web stops accepting: as many as
/// connections it keeps (its default `max_connections`), so that, as on hyper and axum, only
/// the handshake timeout limits them.
const MAX_PENDING_HANDSHAKES: usize = 25_000;

/// How stale actix-http's clock may be: it reads "now" for its keep-alive deadlines from an
/// instant it refreshes every 500 ms, so a keep-alive of exactly [`IDLE_TIMEOUT`] could close
/// an HTTP/1.1 connection up to half a second early (4.499 s after the answer, seen under
/// load). One step more closes it between 5.0 and 5.5 s, never before the limit.
const CLOCK_STEP: Duration = Duration::from_millis(500);

/// Serves [`app`] on `listener` (HTTP/1.1 and h2c, or TLS) with `config.workers` workers
/// until `shutdown` resolves, then drains for up to `config.shutdown_timeout()`. actix's own
/// signal handling is replaced by `shutdown`, so SIGINT drains as SIGTERM does, as on the
/// other servers. actix closes its listener as it stops accepting, which resets the
/// connections still in the kernel's accept queue, so it stops only once that queue has been
/// taken ([`greet_server::shutdown::then_queue_taken`]). Open WebSockets are then told to go
/// away.
pub async fn serve(
    listener: Listener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let queue = AcceptQueue::of(&listener.tcp);
    let api = config.api()?;
    // Open sockets are connections like the rest: the drain waits for them once they close.
    let sockets = api.sockets.clone();
    let shutdown = async move {
        greet_server::shutdown::then_queue_taken(shutdown, queue).await;
        sockets.going_away();
    };
    let compression = config.compression;
    // TechEmpower's actix-web entry: the OS's keep-alive, no timer on a request's head.
    let (head_timeout, keep_alive) = if config.knob(Knob::OsKeepAlive) {
        (Duration::ZERO, KeepAlive::Os)
    } else {
        (
            HEAD_READ_TIMEOUT,
            KeepAlive::Timeout(IDLE_TIMEOUT + CLOCK_STEP),
        )
    };
    let server = HttpServer::new(move || app(api.clone(), compression))
        .workers(config.workers.get())
        .client_request_timeout(head_timeout)
        .keep_alive(keep_alive)
        .on_connect(watch_idle)
        .tls_handshake_timeout(HEAD_READ_TIMEOUT)
        // actix-web lets 256 handshakes per worker be under way and stops accepting beyond
        // them; hyper and axum set no such bound. Stalled handshakes would otherwise hold
        // new clients back for up to the handshake timeout.
        .max_connection_rate(MAX_PENDING_HANDSHAKES)
        .tcp_nodelay(true)
        // No lingering read after an answer that leaves a body unread (a refused upload):
        // actix-web's default reads and drops what the client sends for a second more, which
        // on a fast link is hundreds of megabytes. hyper closes at once, and so does this.
        .client_disconnect_timeout(Duration::ZERO)
        .shutdown_timeout(config.shutdown_timeout_secs)
        .shutdown_signal(shutdown);
    // Cleartext: HTTP/1.1, or HTTP/2 when the first bytes are its preface (h2c); TLS: what
    // ALPN agreed. actix-web sets none of HTTP/2's limits but the window sizes: h2's
    // defaults hold (see greet_core::limits).
    let server = match listener.tls {
        None => server.listen_auto_h2c(listener.tcp)?,
        Some(tls) => server.listen_rustls_0_23(listener.tcp, (*tls.config).clone())?,
    };
    server.run().await
}

/// actix-web's HTTP/2 connections have no idle limit, only a PING every keep-alive period
/// that a live client answers, so on an HTTP/2 connection (ALPN `h2`, or the preface on
/// cleartext) this puts an [`InFlight`] among the connection's data, which every request
/// counts itself in (the shared head check, in front of every route), and spawns a task that
/// shuts the socket down once the connection has had no request in flight for
/// [`IDLE_TIMEOUT`]. actix-web cannot be asked to send GOAWAY from outside: the client sees
/// the connection close. The task holds a duplicate of the socket, so it cannot shut down
/// another connection's, and ends with the connection (its data dropped) or the shutdown.
pub fn watch_idle(io: &dyn Any, data: &mut Extensions) {
    let Some(socket) = http2_socket(io) else {
        return;
    };
    let Ok(socket) = socket.as_fd().try_clone_to_owned() else {
        return;
    };
    let in_flight = InFlight::new();
    let idle = in_flight.idle(IDLE_TIMEOUT);
    actix_web::rt::spawn(async move {
        idle.await;
        let _ = std::net::TcpStream::from(socket).shutdown(Shutdown::Both);
    });
    data.insert(in_flight);
}

/// The TCP socket under `io` if `io` carries HTTP/2: a TLS stream whose ALPN settled on `h2`,
/// or a cleartext stream that opens with the preface, looked at as actix-web itself did just
/// before (the same 12 bytes, already arrived: a peek that would wait counts as HTTP/1).
fn http2_socket(io: &dyn Any) -> Option<&TcpStream> {
    if let Some(tls) = io.downcast_ref::<TlsStream<TcpStream>>() {
        let (tcp, session) = tls.get_ref();
        return (session.alpn_protocol() == Some(b"h2")).then_some(tcp);
    }
    let tcp = io.downcast_ref::<TcpStream>()?;
    const PREFACE: &[u8] = b"PRI * HTTP/2";
    let mut first = [0u8; PREFACE.len()];
    let mut buf = tokio::io::ReadBuf::new(&mut first);
    let peeked = tcp.poll_peek(&mut Context::from_waker(Waker::noop()), &mut buf);
    matches!(peeked, Poll::Ready(Ok(_)) if buf.filled() == PREFACE).then_some(tcp)
}

/// Starts an actix system and serves on it until `shutdown`.
pub fn run(
    listener: Listener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    actix_web::rt::System::new().block_on(serve(listener, config, shutdown))
}
