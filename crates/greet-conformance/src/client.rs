//! A raw HTTP/1.1 client over a plain socket: the contract suite must send requests no
//! well-behaved client library would (no `Host`, oversized heads, broken escapes, heads that
//! never finish) and see every byte of the answer, those after the response included. The
//! answer is read by the workspace's one reader, `greet_probe::http1`.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use greet_probe::http1::{self, Options};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long one exchange may take before it counts as a hang.
pub const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(10);

/// One response, and what the server sent after it before closing.
#[derive(Debug, Clone)]
pub struct Response {
    /// The response as read.
    pub message: http1::Response,
    /// It answers a HEAD: its `content-length` is the GET's, and it has no body.
    pub head: bool,
    /// Bytes after the response, up to the close: none from a server whose framing is right
    /// (every request here asks it to close).
    pub after: Vec<u8>,
}

impl Response {
    /// The status code.
    pub fn status(&self) -> u16 {
        self.message.status()
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.message.header(name)
    }

    /// The body, as its framing delimits it.
    pub fn body(&self) -> &[u8] {
        self.message.body()
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        self.message.text().into_owned()
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

/// `POST /greetings` with `body`, its `content-type` (none when `None`) and its length.
pub fn post_greetings_request(content_type: Option<&str>, body: &[u8]) -> Vec<u8> {
    let content_type = content_type.map_or(String::new(), |ct| format!("Content-Type: {ct}\r\n"));
    let extra = format!("{content_type}Content-Length: {}\r\n", body.len());
    let mut raw = request("POST", "/greetings", &extra);
    raw.extend_from_slice(body);
    raw
}

/// `GET target` on a fresh connection.
pub async fn get(addr: SocketAddr, target: &str) -> io::Result<Response> {
    exchange(addr, &get_request(target), false).await
}

/// Sends `raw` on a fresh connection, reads one response (a HEAD's when `head`), then
/// whatever follows it until the server closes. Times out after [`EXCHANGE_TIMEOUT`].
pub async fn exchange(addr: SocketAddr, raw: &[u8], head: bool) -> io::Result<Response> {
    exchange_within(addr, raw, head, EXCHANGE_TIMEOUT).await
}

/// [`exchange`] with a time limit of its own.
pub async fn exchange_within(
    addr: SocketAddr,
    raw: &[u8],
    head: bool,
    limit: Duration,
) -> io::Result<Response> {
    tokio::time::timeout(limit, async {
        let mut stream = TcpStream::connect(addr).await?;
        // A server may answer and close before reading all of an oversized request.
        if let Err(err) = stream.write_all(raw).await {
            if err.kind() != io::ErrorKind::BrokenPipe
                && err.kind() != io::ErrorKind::ConnectionReset
            {
                return Err(err);
            }
        }
        let options = if head {
            Options::head()
        } else {
            Options::default()
        };
        let mut after = Vec::new();
        let mut message = http1::Response::new();
        http1::read(&mut stream, &mut after, &mut message, options)
            .await
            .map_err(into_io)?;
        // A reset once the response is in is the server closing with request bytes unread.
        if let Err(err) = stream.read_to_end(&mut after).await {
            if err.kind() != io::ErrorKind::ConnectionReset {
                return Err(err);
            }
        }
        Ok(Response {
            message,
            head,
            after,
        })
    })
    .await
    .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "no complete response in time"))?
}

/// The reader's error as an I/O error (its kind kept where it has one).
pub fn into_io(err: http1::Error) -> io::Error {
    match err {
        http1::Error::Io(err) => err,
        http1::Error::Closed | http1::Error::Truncated => {
            io::Error::new(io::ErrorKind::UnexpectedEof, err.to_string())
        }
        other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
    }
}
