//! A raw HTTP/1.1 client over a plain socket: the contract suite must send requests no
//! well-behaved client library would (no `Host`, oversized heads, broken escapes, heads
//! that never finish), and read the answer byte for byte.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long one exchange may take before it counts as a hang.
pub const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_HEAD: usize = 64 * 1024;

/// One parsed response.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Header fields in order, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body as sent (empty for HEAD).
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A `GET` of `target` with `Host` and `Connection: close`.
pub fn get_request(target: &str) -> Vec<u8> {
    request("GET", target, "")
}

/// A request with `Host`, `Connection: close` and `extra` header lines (each ending in CRLF).
pub fn request(method: &str, target: &str, extra: &str) -> Vec<u8> {
    format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{extra}\r\n")
        .into_bytes()
}

/// `GET target` on a fresh connection.
pub async fn get(addr: SocketAddr, target: &str) -> io::Result<Response> {
    exchange(addr, &get_request(target), false).await
}

/// Sends `raw` on a fresh connection and reads one response; `head` says the request was a
/// HEAD, whose response has no body whatever its `content-length`. Times out after
/// [`EXCHANGE_TIMEOUT`].
pub async fn exchange(addr: SocketAddr, raw: &[u8], head: bool) -> io::Result<Response> {
    tokio::time::timeout(EXCHANGE_TIMEOUT, async {
        let mut stream = TcpStream::connect(addr).await?;
        // A server may answer and close before reading all of an oversized request.
        if let Err(err) = stream.write_all(raw).await {
            if err.kind() != io::ErrorKind::BrokenPipe
                && err.kind() != io::ErrorKind::ConnectionReset
            {
                return Err(err);
            }
        }
        read_response(&mut stream, head).await
    })
    .await
    .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "no complete response in time"))?
}

/// Reads one response from `stream`.
pub async fn read_response(stream: &mut TcpStream, head: bool) -> io::Result<Response> {
    let mut buf = Vec::with_capacity(1024);
    let head_end = loop {
        if let Some(pos) = find(&buf, b"\r\n\r\n") {
            break pos + 4;
        }
        if buf.len() > MAX_HEAD {
            return Err(invalid("response head too large"));
        }
        let mut chunk = [0u8; 4096];
        let n = match stream.read(&mut chunk).await {
            Ok(n) => n,
            // A server that answered then reset the connection (it had unread request bytes)
            // still answered: keep what arrived.
            Err(err) if err.kind() == io::ErrorKind::ConnectionReset && !buf.is_empty() => 0,
            Err(err) => return Err(err),
        };
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed before a complete response head",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let (status, headers) = parse_head(&buf[..head_end])?;
    let mut body = buf[head_end..].to_vec();
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map(|(_, v)| {
            v.parse::<usize>()
                .map_err(|_| invalid("bad content-length"))
        })
        .transpose()?;
    if head || status == 204 || status == 304 || (100..200).contains(&status) {
        body.clear();
    } else if let Some(length) = length {
        while body.len() < length {
            let mut chunk = vec![0u8; (length - body.len()).min(64 * 1024)];
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "body shorter than content-length",
                ));
            }
            body.extend_from_slice(&chunk[..n]);
        }
        body.truncate(length);
    } else {
        // No length: the body runs to the end of the connection (chunked is never used by
        // these servers for their sized bodies).
        let _ = stream.read_to_end(&mut body).await;
    }
    Ok(Response {
        status,
        headers,
        body,
    })
}

fn parse_head(head: &[u8]) -> io::Result<(u16, Vec<(String, String)>)> {
    let text = std::str::from_utf8(head).map_err(|_| invalid("response head not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/1.") {
        return Err(invalid("not an HTTP/1 status line"));
    }
    let status = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid("bad status code"))?;
    let headers = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (n, v) = l
                .split_once(':')
                .ok_or_else(|| invalid("bad header line"))?;
            Ok((n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        })
        .collect::<io::Result<_>>()?;
    Ok((status, headers))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn invalid(msg: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}
