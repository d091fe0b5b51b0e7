//! The serving layer the raw-hyper and axum servers share, as their users would write it over
//! hyper 1: what is not a framework's routing but has to be there for a server to keep the
//! contract (axum's own `axum::serve` has no head-read timeout, no parser or HTTP/2 limits to
//! set, and no TLS).
//!
//! - [`serve_with`]: the accept loop for any hyper service: a task per connection, TLS
//!   through tokio-rustls, HTTP/1.1 or HTTP/2 by the client's preface (h2c) or by ALPN, the
//!   head-read timeout, parser and HTTP/2 limits, the idle limit, graceful drain.
//! - [`runtime`]: the Tokio runtime the flags ask for.
//! - [`head_info`], [`response`]: the glue between `http` 1.x types and `greet-core`.
//! - [`compression`]: tower-http's compression layer under the shared rule
//!   ([`greet_core::compress`]).
//! - [`post_greetings`], [`upload()`], [`static_file`] (`routes.rs`): the routes that read a
//!   body or serve a file, each with what hyper's and axum's users read and serve with
//!   (http-body-util's `Limited` and data stream, tower-http's `ServeFile`).
//! - [`ws`]: the WebSocket handshake rule on an `http` request, and what a tungstenite error
//!   means to the shared echo.
//!
//! `greet-hyper` is raw hyper's entry (its own router and handlers) over this; `greet-axum` is
//! axum's router over this. What each entry adds is its own.

use std::error::Error as StdError;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::future::Either as OneOf;
use greet_core::limits::{
    Target, H2_MAX_CONCURRENT_STREAMS, H2_MAX_FRAME_BYTES, H2_MAX_HEADER_LIST_BYTES,
    HEAD_READ_TIMEOUT, IDLE_TIMEOUT, MAX_HEAD_BYTES,
};
use greet_core::ws::Sockets;
use greet_core::{HeadInfo, Reply};
use greet_server::idle::{Busy, InFlight};
use greet_server::{Knob, Listener, ServerConfig};
use http_body_util::{Either, Full};
use hyper::body::{Body, Bytes, Incoming};
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE, SERVER};
use hyper::server::conn::{http1, http2};
use hyper::service::Service;
use hyper::{Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;
use tower_http::services::fs::ServeFileSystemResponseBody;

mod routes;
pub mod ws;

pub use routes::{compression, post_greetings, static_file, upload};

/// hyper's own parser limit on header fields, the same as actix-web's fixed one, so that
/// heads past [`greet_core::limits::MAX_HEADERS`] but under this get the shared plain-text
/// 431 and heads past this get the parser's bare 431 on every server alike.
const PARSER_MAX_HEADERS: usize = 96;
/// hyper's read-buffer limit, as actix-web's (128 KiB): a head larger than this is a bare 431.
const PARSER_MAX_BUF: usize = 128 * 1024;
const _: () = assert!(PARSER_MAX_BUF > MAX_HEAD_BYTES);
// hyper's head-read timer runs while an HTTP/1 connection waits for its next request, so it
// is that connection's idle limit too.
const _: () = assert!(IDLE_TIMEOUT.as_nanos() == HEAD_READ_TIMEOUT.as_nanos());

/// What [`check_head`](greet_core::limits::check_head) needs, read off an `http` 1.x request.
pub fn head_info<B>(req: &Request<B>) -> HeadInfo {
    let uri = req.uri();
    let target = Target {
        scheme: uri.scheme_str(),
        authority: uri.authority().map(|a| a.as_str()),
        path_and_query: uri.path_and_query().map(|pq| pq.as_str()),
    };
    let fields = req
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_bytes()));
    HeadInfo::new(req.version() == Version::HTTP_11, target, fields)
}

/// The shared head check ([`greet_core::check_head`]) in front of a tower service: a refused
/// head is answered at once with the shared error (`refuse` makes it the service's response),
/// the rest go on to `S`. A plain wrapper whose future is `S`'s or a ready answer: axum's
/// `middleware::from_fn` would box `S`'s future and its `Next` for every request (five
/// allocations), a cost of this workspace's contract, not of the crate.
pub struct HeadChecked<S, R> {
    inner: S,
    refuse: fn(Reply) -> R,
}

// By hand: derived, they would ask the response type to be `Clone` and `Debug` too.
impl<S: Clone, R> Clone for HeadChecked<S, R> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            refuse: self.refuse,
        }
    }
}

impl<S: std::fmt::Debug, R> std::fmt::Debug for HeadChecked<S, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeadChecked")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<S, R> HeadChecked<S, R> {
    /// `inner` behind the head check, refused heads answered by `refuse`.
    pub fn new(inner: S, refuse: fn(Reply) -> R) -> Self {
        Self { inner, refuse }
    }
}

impl<S, B, R> tower::Service<Request<B>> for HeadChecked<S, R>
where
    S: tower::Service<Request<B>, Response = R>,
{
    type Response = R;
    type Error = S::Error;
    type Future = OneOf<std::future::Ready<Result<R, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        match greet_core::check_head(&head_info(&req)) {
            Ok(()) => OneOf::Right(self.inner.call(req)),
            Err(err) => OneOf::Left(std::future::ready(Ok((self.refuse)(err.into())))),
        }
    }
}

/// What a route answers with: a reply's bytes, or a file as tower-http streams it.
pub type ApiBody = Either<Full<Bytes>, ServeFileSystemResponseBody>;

/// A [`Reply`] as an `http` 1.x response from `server`: its content type, `nosniff`, the
/// `server` header, and `Allow` on a 405. hyper adds `content-length` from the body's exact
/// size and `date`, and drops the body for HEAD.
pub fn response(server: &'static str, reply: Reply) -> Response<Full<Bytes>> {
    let body = match reply.body {
        std::borrow::Cow::Borrowed(s) => Bytes::from_static(s.as_bytes()),
        std::borrow::Cow::Owned(s) => Bytes::from(s),
    };
    let mut res = Response::new(Full::new(body));
    *res.status_mut() =
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = res.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(reply.content_type));
    headers.insert(SERVER, HeaderValue::from_static(server));
    headers.insert(
        greet_core::NOSNIFF_HEADER,
        HeaderValue::from_static(greet_core::NOSNIFF_VALUE),
    );
    if let Some(allow) = reply.allow {
        headers.insert(ALLOW, HeaderValue::from_static(allow));
    }
    res
}

/// A multi-threaded Tokio runtime with `config.workers` workers.
pub fn runtime(config: &ServerConfig) -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.workers.get())
        .enable_all()
        .build()
}

/// How every connection is served, HTTP/1.1 or HTTP/2: a head-read timeout and the parser
/// limits set as actix-web's on HTTP/1, the shared HTTP/2 limits of `greet_core::limits`; the
/// knobs of hyper's that `--knob` turns on ([`Knob`]).
#[derive(Debug)]
struct Builders {
    http1: http1::Builder,
    http2: http2::Builder<TokioExecutor>,
}

impl Builders {
    fn new(knobs: &[Knob]) -> Self {
        let on = |knob| knobs.contains(&knob);
        let mut http1 = http1::Builder::new();
        http1
            .timer(TokioTimer::new())
            .header_read_timeout((!on(Knob::NoHeadTimeout)).then_some(HEAD_READ_TIMEOUT))
            .pipeline_flush(on(Knob::PipelineFlush))
            .max_buf_size(PARSER_MAX_BUF);
        // hyper's docs say a limit moves its header array to the heap; up to its default of
        // 100 the array stays inline (a SmallVec), and counted, the knob changes nothing.
        if !on(Knob::StackHeaders) {
            http1.max_headers(PARSER_MAX_HEADERS);
        }
        let mut http2 = http2::Builder::new(TokioExecutor::new());
        http2
            .timer(TokioTimer::new())
            .max_concurrent_streams(H2_MAX_CONCURRENT_STREAMS)
            .max_header_list_size(H2_MAX_HEADER_LIST_BYTES)
            .max_frame_size(H2_MAX_FRAME_BYTES);
        Self { http1, http2 }
    }

    /// Serves `io` over HTTP/2 or HTTP/1.1 on a task of its own until it closes, until
    /// `drain` has let its requests finish, or, on HTTP/2, until it has been idle for
    /// [`IDLE_TIMEOUT`].
    fn spawn<I, S, B>(&self, io: I, http2: bool, service: S, drain: Drain)
    where
        I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
        S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Into<Box<dyn StdError + Send + Sync>>,
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn StdError + Send + Sync>>,
    {
        if http2 {
            let in_flight = InFlight::new();
            let idle = in_flight.idle(IDLE_TIMEOUT);
            let conn = self
                .http2
                .serve_connection(io, Counted { service, in_flight });
            tokio::spawn(drive(conn, |c| c.graceful_shutdown(), drain, idle));
        } else {
            let conn = self.http1.serve_connection(io, service).with_upgrades();
            let idle = std::future::pending();
            tokio::spawn(drive(conn, |c| c.graceful_shutdown(), drain, idle));
        }
    }
}

/// The accept loop's word to every connection that the server is draining: `true` once it
/// is. The loop waits for every connection to drop its receiver.
type Drain = watch::Receiver<bool>;

/// Serves `conn` until it ends; once `drain` says so or `idle` resolves, asks it to close
/// (`close`: HTTP/1 closes when its request in flight is answered, HTTP/2 sends GOAWAY and
/// answers the streams it has) and serves it until it has: the drain's own timeout bounds
/// that, and after `idle`, [`IDLE_TIMEOUT`] more. HTTP/2's graceful close waits for the
/// client's answer to a PING before its last GOAWAY, so a client that never reads would
/// otherwise keep its idle connection for ever.
async fn drive<C: Future>(
    conn: C,
    close: impl FnOnce(Pin<&mut C>),
    mut drain: Drain,
    idle: impl Future<Output = ()>,
) {
    let mut conn = std::pin::pin!(conn);
    let idled = tokio::select! {
        // The connection first: asked to close before it has read a byte, hyper closes it
        // unread, and a connection accepted as the drain begins may hold a request already.
        biased;
        _ = conn.as_mut() => return,
        _ = drain.wait_for(|&draining| draining) => false,
        () = idle => true,
    };
    close(conn.as_mut());
    if idled {
        let _ = tokio::time::timeout(IDLE_TIMEOUT, conn).await;
    } else {
        let _ = conn.await;
    }
}

/// A service whose every call counts as a request in flight on its connection until its
/// response is ready.
#[derive(Debug, Clone)]
struct Counted<S> {
    service: S,
    in_flight: InFlight,
}

impl<R, S: Service<R>> Service<R> for Counted<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = CountedFuture<S::Future>;

    fn call(&self, req: R) -> Self::Future {
        CountedFuture {
            future: self.service.call(req),
            _busy: self.in_flight.begin(),
        }
    }
}

pin_project_lite::pin_project! {
    /// A response future and the request it keeps in flight.
    struct CountedFuture<F> {
        #[pin]
        future: F,
        _busy: Busy,
    }
}

impl<F: Future> Future for CountedFuture<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.project().future.poll(cx)
    }
}

/// Whether a cleartext connection opens with HTTP/2's preface (h2c with prior knowledge),
/// looked at without reading it, so the chosen parser sees every byte; `None` when the client
/// sends nothing within [`HEAD_READ_TIMEOUT`] or goes away. Peeking rather than reading
/// keeps an HTTP/1 connection as it was: hyper-util's `auto` builder reads the first bytes
/// into a buffer of its own and hands them back, which made hyper's HTTP/1 read buffer grow a
/// second time and cost about 12 KiB a connection (32 MiB at 2700).
async fn opens_with_h2_preface(stream: &tokio::net::TcpStream) -> Option<bool> {
    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    let deadline = tokio::time::Instant::now() + HEAD_READ_TIMEOUT;
    let mut first = [0u8; PREFACE.len()];
    loop {
        let n = match tokio::time::timeout_at(deadline, stream.peek(&mut first)).await {
            Ok(Ok(n)) if n > 0 => n,
            _ => return None,
        };
        if first[..n] != PREFACE[..n] {
            return Some(false);
        }
        if n == PREFACE.len() {
            return Some(true);
        }
        // A preface split across segments: rare, and bounded by the deadline.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A cleartext connection's task: HTTP/1.1 served in place, or, when it opens with the
/// preface, HTTP/2 handed to a task of its own. The task is sized for an HTTP/1 connection
/// alone (1.1 KiB): a first task that held room for a TLS handshake too, and handed every
/// connection on to a second task, left 1.4-1.7 KiB more resident per HTTP/1 connection
/// (4 MiB at 2700). Client resets and cut slow heads end here; none of them
/// concern the server.
async fn cleartext_connection<S, B>(
    stream: tokio::net::TcpStream,
    builders: Arc<Builders>,
    service: S,
    drain: Drain,
) where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    match opens_with_h2_preface(&stream).await {
        Some(false) => {
            let http1 = builders
                .http1
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            drive(
                http1,
                |c| c.graceful_shutdown(),
                drain,
                std::future::pending(),
            )
            .await;
        }
        Some(true) => builders.spawn(TokioIo::new(stream), true, service, drain),
        None => {}
    }
}

/// A TLS connection's first task: the handshake within [`HEAD_READ_TIMEOUT`], then what ALPN
/// agreed on a task of its own, which does not keep the handshake's room (rustls' state is
/// over a kilobyte). Failed and stalled handshakes end here.
async fn tls_connection<S, B>(
    stream: tokio::net::TcpStream,
    acceptor: TlsAcceptor,
    builders: Arc<Builders>,
    service: S,
    drain: Drain,
) where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let handshake = tokio::time::timeout(HEAD_READ_TIMEOUT, acceptor.accept(stream));
    if let Ok(Ok(stream)) = handshake.await {
        let http2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
        builders.spawn(TokioIo::new(stream), http2, service, drain);
    }
}

/// The accept loop: one task per connection; on cleartext, HTTP/2 when the connection opens
/// with its preface and HTTP/1.1 otherwise; on TLS, the handshake within
/// [`HEAD_READ_TIMEOUT`] and then what ALPN agreed. When `shutdown` resolves it stops
/// accepting, tells `sockets` to go away, lets every in-flight request finish (idle
/// connections close at once) and every socket close, for up to `config.shutdown_timeout()`,
/// and returns.
pub async fn serve_with<S, B>(
    listener: Listener,
    config: &ServerConfig,
    service: S,
    sockets: Sockets,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()>
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let Listener { tcp, tls } = listener;
    let listener = tokio::net::TcpListener::from_std(tcp)?;
    let acceptor = tls.map(|tls| TlsAcceptor::from(tls.config));
    let builders = Arc::new(Builders::new(&config.knobs));
    let (draining, drain) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);

    let spawn = |stream: tokio::net::TcpStream| {
        let _ = stream.set_nodelay(true);
        let (builders, service, drain) = (builders.clone(), service.clone(), drain.clone());
        match &acceptor {
            None => tokio::spawn(cleartext_connection(stream, builders, service, drain)),
            Some(acceptor) => tokio::spawn(tls_connection(
                stream,
                acceptor.clone(),
                builders,
                service,
                drain,
            )),
        };
    };
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => spawn(stream),
                Err(err) => backoff_after(&err).await,
            },
            () = &mut shutdown => break,
        }
    }
    // The kernel completed these handshakes before the shutdown: to their clients they are
    // connected, and may have sent a request. Closing the listener would reset them, so each
    // is served like the rest (once, then closed, as the drain asks).
    for stream in queued(listener.into_std()?) {
        spawn(stream);
    }

    drop(drain);
    draining.send_replace(true);
    sockets.going_away();
    let drained = async {
        draining.closed().await;
        sockets.closed().await;
    };
    if tokio::time::timeout(config.shutdown_timeout(), drained)
        .await
        .is_err()
    {
        tracing::warn!(
            timeout_secs = config.shutdown_timeout_secs,
            "shutdown timeout: dropping connections still in flight"
        );
    }
    Ok(())
}

/// The connections still in `listener`'s accept queue, taken without waiting.
fn queued(listener: std::net::TcpListener) -> impl Iterator<Item = tokio::net::TcpStream> {
    std::iter::from_fn(move || loop {
        match listener.accept() {
            Ok((stream, _peer)) => {
                let stream = stream
                    .set_nonblocking(true)
                    .and_then(|()| tokio::net::TcpStream::from_std(stream));
                match stream {
                    Ok(stream) => return Some(stream),
                    Err(_) => continue,
                }
            }
            Err(err) if err.kind() == io::ErrorKind::ConnectionAborted => continue,
            // WouldBlock: the queue is empty.
            Err(_) => return None,
        }
    })
}

/// After a failed `accept`: nothing for an error about one connection; a pause when the
/// process is out of file descriptors or memory, so a flood cannot spin a core.
async fn backoff_after(err: &io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if !matches!(
        err.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        tracing::warn!(%err, "accept failed; pausing");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use super::*;

    /// A cleartext connection's task holds an HTTP/1 connection and little more: the room a
    /// TLS handshake or an HTTP/2 connection takes is elsewhere (see `cleartext_connection`).
    #[tokio::test]
    async fn a_connection_task_is_sized_for_http1() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let accept = || async {
            let _client = tokio::net::TcpStream::connect(addr).await.expect("connect");
            listener.accept().await.expect("accept").0
        };
        let service = hyper::service::service_fn(|_req: Request<Incoming>| async {
            Ok::<_, Infallible>(response("test", Reply::health()))
        });
        let (builders, (_draining, drain)) = (Arc::new(Builders::new(&[])), watch::channel(false));
        let task = cleartext_connection(accept().await, builders.clone(), service, drain.clone());
        let http1 = builders
            .http1
            .serve_connection(TokioIo::new(accept().await), service)
            .with_upgrades();
        let http1 = drive(
            http1,
            |c| c.graceful_shutdown(),
            drain,
            std::future::pending(),
        );
        let (task, http1) = (size_of_val(&task), size_of_val(&http1));
        eprintln!("a connection's task: {task} bytes; its HTTP/1 connection: {http1} bytes");
        assert!(task <= http1 + 256, "{task} bytes against {http1}");
    }
}
