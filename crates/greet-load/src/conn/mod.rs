//! The load generator's connection, over HTTP/1.1 or HTTP/2, in cleartext or over TLS
//! ([`Wire`], `wire.rs`): one request written whole, its answer read and checked; and the
//! one-request check a scenario makes before it measures.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use greet_probe::http1::{self, Options, Response};
use h2::client::SendRequest;
use tokio::io::AsyncWriteExt;

use crate::count::{ErrorKind, Opened, Outcome};
use crate::expect::Check;
use crate::message::{Header, RequestBody};

mod check;
mod pipelined;
mod wire;
mod ws;

pub use check::{check_once, check_request, CheckFailed, Unanswered};
pub use wire::Wire;

use wire::Io;

/// A request for `target` on `addr`, built once: every request of a load is the same.
#[derive(Debug)]
pub(crate) struct Request {
    /// The HTTP/1.1 request, bytes written whole.
    http1: Vec<u8>,
    /// Its URI for HTTP/2, scheme and authority included.
    uri: http::Uri,
    /// Its header fields for HTTP/2.
    headers: http::HeaderMap,
    /// Its body for HTTP/2, when it is a POST.
    body: Option<Bytes>,
    /// Over HTTP/2, the DATA frames' most bytes each, when the body goes in chunks.
    chunk: Option<usize>,
    /// Over a WebSocket, the message each request is instead.
    ws: Option<ws::Echo>,
}

impl Request {
    /// The HTTP/1.1 request's bytes.
    pub(crate) fn http1(&self) -> &[u8] {
        &self.http1
    }

    /// `n` of the HTTP/1.1 request, back to back: what a pipelining user writes at once.
    pub(crate) fn pipelined(&self, n: usize) -> Vec<u8> {
        self.http1.repeat(n)
    }
}

/// The request every send of a load makes, with `headers` besides its own: a GET, or a POST
/// of `body`.
pub(crate) fn request(
    addr: SocketAddr,
    target: &str,
    headers: &[Header],
    body: Option<&RequestBody>,
    wire: &Wire,
) -> Arc<Request> {
    let body_of = body;
    let body = body.map(RequestBody::bytes);
    let method = if body.is_some() { "POST" } else { "GET" };
    let mut http1 =
        format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: greet-bench\r\n");
    for header in headers {
        http1.push_str(&format!("{header}\r\n"));
    }
    let chunk = body_of.and_then(RequestBody::chunk);
    match (&body, chunk) {
        (Some(_), Some(_)) => http1.push_str("Transfer-Encoding: chunked\r\n"),
        (Some(body), None) => http1.push_str(&format!("Content-Length: {}\r\n", body.len())),
        (None, _) => {}
    }
    http1.push_str("\r\n");
    let mut http1 = http1.into_bytes();
    match (&body, chunk) {
        (Some(body), Some(chunk)) => {
            for piece in body.chunks(chunk) {
                http1.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
                http1.extend_from_slice(piece);
                http1.extend_from_slice(b"\r\n");
            }
            http1.extend_from_slice(b"0\r\n\r\n");
        }
        (Some(body), None) => http1.extend_from_slice(body),
        (None, _) => {}
    }
    // A `Header` is a valid name and value by construction.
    let headers = headers
        .iter()
        .filter_map(|h| {
            let name = http::HeaderName::from_bytes(h.name().as_bytes()).ok()?;
            Some((name, http::HeaderValue::from_str(h.value()).ok()?))
        })
        .collect();
    let scheme = if wire.protocol.tls() { "https" } else { "http" };
    // A target the CLI accepted is a path and query; a URI it cannot make fails every request.
    let uri = format!("{scheme}://{addr}{target}")
        .parse()
        .unwrap_or_else(|_| http::Uri::from_static("http://invalid./"));
    let ws = wire
        .is_websocket()
        .then(|| ws::echo(addr, target, body_of, wire));
    Arc::new(Request {
        http1,
        uri,
        headers,
        body,
        chunk,
        ws,
    })
}

/// An HTTP/2 connection shared by the users of one group (`--streams`), each with a stream of
/// its own at a time; the first user to find it closed opens the next one. Each connection
/// gets the next number, so a user whose request failed on an old one does not close its
/// successor.
#[derive(Default)]
pub(crate) struct Shared {
    slot: tokio::sync::Mutex<Option<(u64, SendRequest<Bytes>)>>,
    opened: std::sync::atomic::AtomicU64,
}

/// A connection of the load generator: opened when a request needs one, reused while the
/// server keeps it open, dropped when the server closes it or a request fails. A request that
/// finds a kept-alive connection closed by the server (every server closes one idle for 5 s)
/// before anything of its answer came goes again once on a fresh connection, as HTTP clients
/// do, rather than counting as a failure. Every load shape sends through it. Over HTTP/1.1 a request is written whole in one `write` and its answer
/// parsed by `greet_probe::http1`: hyper's client connection machinery (dispatch channel,
/// connection task) cost about 20 µs more per request on the load generator's core, which at
/// 2700 concurrent delayed the last request by ~50 ms. Over HTTP/2 it is the `h2` crate's
/// client, hyper's own HTTP/2, without hyper's dispatch on top.
pub(crate) struct Connection {
    addr: SocketAddr,
    wire: Wire,
    http1: Option<Io>,
    ws: Option<ws::Socket>,
    /// The length of the last echo, over a WebSocket.
    echoed: usize,
    h2: Arc<Shared>,
    /// The number of the shared HTTP/2 connection this user sent on last.
    using: u64,
    buf: Vec<u8>,
    res: Response,
    status: u16,
}

impl Connection {
    /// A connection of its own.
    pub(crate) fn new(addr: SocketAddr, wire: &Wire) -> Self {
        Self::sharing(addr, wire, Arc::default())
    }

    /// One of the users of `h2`, when the protocol is HTTP/2 (HTTP/1.1 has no sharing).
    pub(crate) fn sharing(addr: SocketAddr, wire: &Wire, h2: Arc<Shared>) -> Self {
        Self {
            addr,
            wire: wire.clone(),
            http1: None,
            ws: None,
            echoed: 0,
            h2,
            using: 0,
            buf: Vec::with_capacity(512),
            res: Response::new(),
            status: 0,
        }
    }

    /// Sends `request` and reads and validates its answer within `timeout`, opening the
    /// connection first when there is none (its connect timed from `sent`, then its TLS
    /// handshake); the latency counts from `from`.
    pub(crate) async fn send(
        &mut self,
        request: &Request,
        check: &Check,
        timeout: Duration,
        sent: Instant,
        from: Instant,
    ) -> Outcome {
        let mut connect = None;
        let attempt = async {
            match self.exchange(request, check, sent, &mut connect).await {
                Err(Miss::Stale) => {
                    self.close().await;
                    let again = self.exchange(request, check, Instant::now(), &mut connect);
                    again.await
                }
                done => done,
            }
            .map_err(ErrorKind::from)
        };
        let result = match tokio::time::timeout(timeout, attempt).await {
            Ok(result) => result,
            Err(_) => Err(ErrorKind::Timeout),
        };
        match result {
            Ok(()) => Outcome::Ok {
                latency: from.elapsed(),
                connect,
                bytes: if self.wire.is_websocket() {
                    self.echoed
                } else {
                    self.answer().1.len()
                } as u64,
            },
            Err(kind) => {
                if !matches!(kind, ErrorKind::Status | ErrorKind::Body) {
                    self.close().await;
                }
                Outcome::Failed { kind, connect }
            }
        }
    }

    async fn exchange(
        &mut self,
        request: &Request,
        check: &Check,
        sent: Instant,
        connect: &mut Option<Opened>,
    ) -> Result<(), Miss> {
        if let Some(echo) = &request.ws {
            self.exchange_ws(echo, sent, connect).await
        } else if self.wire.protocol.http2() {
            self.exchange_h2(request, check, sent, connect).await
        } else {
            self.exchange_http1(request, check, sent, connect).await
        }
    }

    async fn exchange_http1(
        &mut self,
        request: &Request,
        check: &Check,
        sent: Instant,
        connect: &mut Option<Opened>,
    ) -> Result<(), Miss> {
        let reused = self.http1.is_some();
        if !reused {
            let (io, opened) = self.wire.open(self.addr, sent).await?;
            self.http1 = Some(io);
            *connect = Some(opened);
        }
        let Some(io) = self.http1.as_mut() else {
            return Err(Miss::Failed(ErrorKind::Connect));
        };
        self.buf.clear();
        let written = async {
            io.write_all(&request.http1).await?;
            io.flush().await
        };
        let read = match written.await {
            // `read` starts by clearing the response: a status means a head came.
            Ok(()) => http1::read(io, &mut self.buf, &mut self.res, Options::default())
                .await
                .map_err(|_| self.buf.is_empty() && self.res.status() == 0),
            Err(_) => Err(true),
        };
        if let Err(nothing_came) = read {
            return Err(if reused && nothing_came {
                Miss::Stale
            } else {
                Miss::Failed(ErrorKind::Io)
            });
        }
        // Nothing is pipelined: bytes after the response mean its framing was wrong.
        if !self.buf.is_empty() {
            return Err(Miss::Failed(ErrorKind::Io));
        }
        self.status = self.res.status();
        let checked = check.check(self.status, self.res.body());
        if !self.res.keep_alive() {
            self.http1 = None;
        }
        Ok(checked?)
    }

    async fn exchange_h2(
        &mut self,
        request: &Request,
        check: &Check,
        sent: Instant,
        connect: &mut Option<Opened>,
    ) -> Result<(), Miss> {
        let (number, sender, reused) = {
            let mut slot = self.h2.slot.lock().await;
            let reused = slot.is_some();
            if !reused {
                let (io, opened) = self.wire.open(self.addr, sent).await?;
                // The handshake returns once the preface is written; a server that does not
                // speak HTTP/2 shows in the first answer, as a protocol error.
                let (sender, conn) = h2::client::handshake(io)
                    .await
                    .map_err(|_| ErrorKind::Protocol)?;
                *connect = Some(opened);
                tokio::spawn(async move {
                    let _ = conn.await;
                });
                let number = self.h2.opened.fetch_add(1, Ordering::Relaxed) + 1;
                *slot = Some((number, sender));
            }
            let (number, sender) = slot.clone().ok_or(ErrorKind::Connect)?;
            (number, sender, reused)
        };
        self.using = number;
        // Until the answer's head comes, a failure on a connection that was already open is
        // the server having closed it (GOAWAY, or the socket).
        let before_answer = |err| match h2_error(err) {
            ErrorKind::Io if reused => Miss::Stale,
            kind => Miss::Failed(kind),
        };
        let head = async {
            let mut sender = sender.ready().await?;
            let mut head = http::Request::new(());
            *head.uri_mut() = request.uri.clone();
            *head.headers_mut() = request.headers.clone();
            let Some(body) = &request.body else {
                return sender.send_request(head, true)?.0.await;
            };
            *head.method_mut() = http::Method::POST;
            let (answer, mut stream) = sender.send_request(head, false)?;
            // h2 keeps what the flow-control window does not take yet, and sends it as the
            // server opens the window.
            let chunk = request.chunk.unwrap_or(body.len()).max(1);
            let mut at = 0;
            loop {
                let end = (at + chunk).min(body.len());
                stream.send_data(body.slice(at..end), end == body.len())?;
                if end == body.len() {
                    break;
                }
                at = end;
            }
            answer.await
        };
        let (parts, mut body) = head.await.map_err(before_answer)?.into_parts();
        self.buf.clear();
        while let Some(chunk) = body.data().await {
            let chunk = chunk.map_err(h2_error)?;
            self.buf.extend_from_slice(&chunk);
            let _ = body.flow_control().release_capacity(chunk.len());
        }
        self.status = parts.status.as_u16();
        Ok(check.check(self.status, &self.buf)?)
    }

    /// The last answer's status and body, when there was one.
    fn answer(&self) -> (u16, &[u8]) {
        if self.wire.protocol.http2() {
            (self.status, &self.buf)
        } else {
            (self.status, self.res.body())
        }
    }

    /// Closes it: a fresh-connection load's client closes after each answer, and a
    /// connection a panic left behind is in no known state. A shared HTTP/2 connection is
    /// closed for all its users, unless one of them has opened another since.
    pub(crate) async fn close(&mut self) {
        self.http1 = None;
        self.close_ws().await;
        let mut slot = self.h2.slot.lock().await;
        if slot.as_ref().is_some_and(|(n, _)| *n == self.using) {
            *slot = None;
        }
    }
}

/// Why an exchange did not end in a valid answer.
enum Miss {
    /// It failed.
    Failed(ErrorKind),
    /// The server had closed the kept-alive connection it went on: nothing of an answer
    /// came, so it may go again on a fresh one.
    Stale,
}

impl From<ErrorKind> for Miss {
    fn from(kind: ErrorKind) -> Self {
        Miss::Failed(kind)
    }
}

impl From<Miss> for ErrorKind {
    fn from(miss: Miss) -> Self {
        match miss {
            Miss::Failed(kind) => kind,
            Miss::Stale => ErrorKind::Io,
        }
    }
}

/// An HTTP/2 failure as an error kind: what the client's own HTTP/2 found wrong in the
/// peer's frames (an HTTP/1.1 answer to the preface among them) is the peer not speaking
/// HTTP/2; the peer's resets, GOAWAYs and I/O errors are the connection failing.
fn h2_error(err: h2::Error) -> ErrorKind {
    if err.is_library() {
        ErrorKind::Protocol
    } else {
        ErrorKind::Io
    }
}
