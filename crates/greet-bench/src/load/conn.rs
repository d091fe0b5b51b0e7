//! The load generator's connection: one request written whole, its answer read and checked;
//! and the one-request check a scenario makes before it measures.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use greet_probe::http1::{self, Options, Response};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::check::Expect;
use super::count::{ErrorKind, Outcome};

/// A request for `target` on `addr`, built once: every request of a load is the same bytes.
pub(super) fn request(addr: SocketAddr, target: &str) -> Arc<[u8]> {
    format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: greet-bench\r\n\r\n")
        .into_bytes()
        .into()
}

/// A connection of the load generator: opened when a request needs one, reused while the
/// server keeps it open, dropped when the server closes it or a request fails. Every load shape
/// sends through it. A request is written whole in one `write` and its answer parsed by
/// `greet_probe::http1`: hyper's client connection machinery (dispatch channel, connection
/// task) cost about 20 µs more per request on the load generator's core, which at 2700
/// concurrent delayed the last request by ~50 ms.
pub(super) struct Connection {
    addr: SocketAddr,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
    res: Response,
}

impl Connection {
    pub(super) fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            stream: None,
            buf: Vec::with_capacity(512),
            res: Response::new(),
        }
    }

    /// Sends `request` and reads and validates its answer within `timeout`, opening the
    /// connection first when there is none (its connect timed from `sent`); the latency
    /// counts from `from`.
    pub(super) async fn send(
        &mut self,
        request: &[u8],
        expect: &Expect,
        timeout: Duration,
        sent: Instant,
        from: Instant,
    ) -> Outcome {
        let Self {
            addr,
            stream,
            buf,
            res,
        } = self;
        let mut connect = None;
        let attempt = async {
            if stream.is_none() {
                let opened = TcpStream::connect(*addr)
                    .await
                    .map_err(|_| ErrorKind::Connect)?;
                let _ = opened.set_nodelay(true);
                connect = Some(sent.elapsed());
                *stream = Some(opened);
            }
            let Some(open) = stream.as_mut() else {
                return Err(ErrorKind::Connect);
            };
            open.write_all(request).await.map_err(|_| ErrorKind::Io)?;
            buf.clear();
            read(open, buf, res, expect).await
        };
        let result = match tokio::time::timeout(timeout, attempt).await {
            Ok(result) => result,
            Err(_) => Err(ErrorKind::Timeout),
        };
        match result {
            Ok(keep) => {
                if !keep {
                    *stream = None;
                }
                Outcome::Ok {
                    latency: from.elapsed(),
                    connect,
                }
            }
            Err(kind) => {
                *stream = None;
                Outcome::Failed { kind, connect }
            }
        }
    }

    /// Closes it: a fresh-connection load's client closes after each answer, and a
    /// connection a panic left behind is in no known state.
    pub(super) fn close(&mut self) {
        self.stream = None;
    }
}

/// Reads and validates one response; whether the connection may carry another request.
async fn read(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    res: &mut Response,
    expect: &Expect,
) -> Result<bool, ErrorKind> {
    http1::read(stream, buf, res, Options::default())
        .await
        .map_err(|_| ErrorKind::Io)?;
    // Nothing is pipelined: bytes after the response mean its framing was wrong.
    if !buf.is_empty() {
        return Err(ErrorKind::Io);
    }
    expect.check(res)?;
    Ok(res.keep_alive())
}

/// The light check: one `GET target` on a fresh connection, valid as `expect` says, within
/// `timeout`; else one short line saying what came back.
pub async fn check_once(
    addr: SocketAddr,
    target: &str,
    expect: &Expect,
    timeout: Duration,
) -> Result<(), String> {
    let request = request(addr, target);
    let exchange = async {
        let mut stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        stream
            .write_all(&request)
            .await
            .map_err(|e| format!("cannot send: {e}"))?;
        let mut res = Response::new();
        http1::read(&mut stream, &mut Vec::new(), &mut res, Options::default())
            .await
            .map_err(|e| e.to_string())?;
        expect.check(&res).map_err(|_| {
            let body = res.text();
            let body: String = body.chars().take(60).collect();
            let cut = if res.text().chars().count() > 60 {
                "…"
            } else {
                ""
            };
            format!(
                "answered {} {:?}{cut}, which is not what --expect asks for",
                res.status(),
                body.replace(['\r', '\n'], " ")
            )
        })
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| format!("no answer within {timeout:?}"))?
        .map_err(|why| format!("GET {target}: {why}"))
}
