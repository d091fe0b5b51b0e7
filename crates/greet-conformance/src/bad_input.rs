//! The bad-input table: raw requests no well-behaved client sends, with the answer every
//! server gives. Where the three frameworks' parsers cannot give the same answer and the
//! shared layer cannot see the difference (it happens inside a parser), the row allows each
//! answer and says why. `docs/bad-input.md` is this table with each server's answer, generated
//! by [`markdown`] and kept in step by a test.

use std::net::SocketAddr;
use std::time::Duration;

use greet_core::ws::MAX_MESSAGE_BYTES;
use greet_probe::http1::{self, Options};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What a server may answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// A response with this status.
    Status(u16),
    /// The connection closed without a response.
    Closed,
    /// HTTP/2: the server's SETTINGS frame, as after a client's connection preface.
    Http2,
    /// A response with this status, then the connection closed: the rest of the request is
    /// not read.
    Closing(u16),
    /// A WebSocket's `101 Switching Protocols`, then the server's close frame with this code.
    WsClose(u16),
}

use Answer::{Closing, Http2, Status, WsClose};

/// One row: a raw request and the answers allowed.
#[derive(Debug, Clone)]
pub struct BadInput {
    /// What the row tries.
    pub name: &'static str,
    /// The bytes sent.
    pub request: Vec<u8>,
    /// The answers allowed: one when all three servers agree.
    pub expect: Vec<Answer>,
    /// Why more than one answer is allowed.
    pub why: &'static str,
}

fn row(name: &'static str, request: impl Into<Vec<u8>>, status: u16) -> BadInput {
    BadInput {
        name,
        request: request.into(),
        expect: vec![Status(status)],
        why: "",
    }
}

fn closing(name: &'static str, request: impl Into<Vec<u8>>, status: u16) -> BadInput {
    BadInput {
        expect: vec![Closing(status)],
        ..row(name, request, status)
    }
}

fn ws_closes(name: &'static str, request: impl Into<Vec<u8>>, code: u16) -> BadInput {
    BadInput {
        expect: vec![WsClose(code)],
        ..row(name, request, 101)
    }
}

/// The close code of a message too big (RFC 6455 §7.4.1).
const TOO_BIG: u16 = greet_core::ws::TOO_BIG.code;

fn differs(
    name: &'static str,
    request: impl Into<Vec<u8>>,
    expect: &[Answer],
    why: &'static str,
) -> BadInput {
    BadInput {
        name,
        request: request.into(),
        expect: expect.to_vec(),
        why,
    }
}

/// `GET /health` with `Host` and the given extra header lines.
fn health(extra: &str) -> Vec<u8> {
    format!("GET /health HTTP/1.1\r\nHost: x\r\n{extra}\r\n").into_bytes()
}

fn greet(query: &str) -> Vec<u8> {
    route(&format!("/greetings?{query}"))
}

fn route(target: &str) -> Vec<u8> {
    route_with(target, "")
}

fn route_with(target: &str, extra: &str) -> Vec<u8> {
    format!("GET {target} HTTP/1.1\r\nHost: x\r\n{extra}\r\n").into_bytes()
}

/// A chunked upload `past` bytes over the default `--max-upload`, without its last chunk: a
/// server that reads on waits for the rest and never answers; one that refuses as the limit
/// is crossed answers at once.
fn unended_upload(past: usize) -> Vec<u8> {
    const CHUNK: usize = 1 << 20;
    let data = greet_core::upload::DEFAULT_MAX_UPLOAD as usize + past;
    let mut raw =
        b"POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    raw.reserve(data + data / CHUNK * 12);
    let chunk = vec![b'x'; CHUNK];
    for start in (0..data).step_by(CHUNK) {
        let len = CHUNK.min(data - start);
        raw.extend_from_slice(format!("{len:x}\r\n").as_bytes());
        raw.extend_from_slice(&chunk[..len]);
        raw.extend_from_slice(b"\r\n");
    }
    raw
}

/// A WebSocket handshake on `/ws`, then `frames` (the client's, so masked).
fn ws_then(frames: &[u8]) -> Vec<u8> {
    let mut raw = b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        .to_vec();
    raw.extend_from_slice(frames);
    raw
}

/// A masked frame's header (first byte `first`: FIN and opcode) declaring `len` payload
/// bytes in the 64-bit form; none of the payload follows.
fn frame_head(first: u8, len: u64) -> Vec<u8> {
    let mut head = vec![first, 0x80 | 127];
    head.extend_from_slice(&len.to_be_bytes());
    head.extend_from_slice(&[1, 2, 3, 4]);
    head
}

/// Rows in [`table`]; a test holds the table to it, so a row cannot go missing unseen.
pub const ROWS: usize = 93;

/// The table: [`ROWS`] rows.
pub fn table() -> Vec<BadInput> {
    let many = |n: usize| (0..n).map(|i| format!("X-{i}: v\r\n")).collect::<String>();
    vec![
        // Request line.
        row("lowercase method", "get /health HTTP/1.1\r\nHost: x\r\n\r\n", 405),
        row("unknown method", "BREW /health HTTP/1.1\r\nHost: x\r\n\r\n", 405),
        row("space inside the method", "G ET /health HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        row("no target", "GET HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        row("no version", "GET /health\r\nHost: x\r\n\r\n", 400),
        row("HTTP/0.9 request", "GET /health\r\n\r\n", 400),
        row("HTTP/2.0 in an HTTP/1 request line", "GET /health HTTP/2.0\r\nHost: x\r\n\r\n", 400),
        row("HTTP/1.2", "GET /health HTTP/1.2\r\nHost: x\r\n\r\n", 400),
        row("HTTP/9.9", "GET /health HTTP/9.9\r\nHost: x\r\n\r\n", 400),
        row("lowercase version", "GET /health http/1.1\r\nHost: x\r\n\r\n", 400),
        row("double spaces in the request line", "GET  /health  HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        row("space inside the target", "GET /he alth HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        row("target without a leading slash", "GET health HTTP/1.1\r\nHost: x\r\n\r\n", 404),
        row("absolute-form target", "GET http://x/health HTTP/1.1\r\nHost: x\r\n\r\n", 200),
        row("asterisk target on GET", "GET * HTTP/1.1\r\nHost: x\r\n\r\n", 404),
        row("CONNECT", "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n", 404),
        row("OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 404),
        // The cleartext port speaks h2c: the preface starts an HTTP/2 connection.
        BadInput {
            name: "HTTP/2 connection preface",
            request: b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec(),
            expect: vec![Http2],
            why: "",
        },
        row("TLS ClientHello", &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"[..], 400),
        row("binary garbage", &b"\x00\x01\x02\x03\xff\xfe\r\n\r\n"[..], 400),
        // Host.
        row("HTTP/1.1 without Host", "GET /health HTTP/1.1\r\n\r\n", 400),
        row("HTTP/1.0 without Host", "GET /health HTTP/1.0\r\n\r\n", 200),
        row("two Host fields", health("Host: y\r\n"), 400),
        row("empty Host", "GET /health HTTP/1.1\r\nHost:\r\n\r\n", 200),
        // Header syntax.
        row("obs-fold continuation line", health("X-A: a\r\n  b\r\n"), 400),
        row("NUL in a header value", &b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n"[..], 400),
        row("header line without a colon", health("Bad Header\r\n"), 400),
        row("space before the colon", health("X-A : b\r\n"), 400),
        row("empty header name", health(": b\r\n"), 400),
        row("parenthesis in a header name", health("X(A): b\r\n"), 400),
        row("bare LF line endings", "GET /health HTTP/1.1\nHost: x\n\n", 200),
        row("bare CR line endings", "GET /health HTTP/1.1\rHost: x\r\r", 400),
        // Message length.
        row("negative Content-Length", health("Content-Length: -1\r\n"), 400),
        row("garbage Content-Length", health("Content-Length: abc\r\n"), 400),
        row("conflicting Content-Lengths", [health("Content-Length: 1\r\nContent-Length: 2\r\n"), b"ab".to_vec()].concat(), 400),
        differs(
            "identical repeated Content-Length",
            [health("Content-Length: 2\r\nContent-Length: 2\r\n"), b"ab".to_vec()].concat(),
            &[Status(200), Status(400)],
            "RFC 9110 allows either: hyper merges identical values inside its parser (out of the application's sight), actix-web rejects",
        ),
        row("Content-Length list", [health("Content-Length: 2, 2\r\n"), b"ab".to_vec()].concat(), 400),
        row("Content-Length overflowing 64 bits", health("Content-Length: 99999999999999999999999\r\n"), 400),
        differs(
            "Content-Length and Transfer-Encoding",
            "POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            &[Status(405), Status(400)],
            "RFC 9112 allows either: hyper lets chunked win and drops Content-Length inside its parser (then the route's 405), actix-web rejects",
        ),
        row("unknown transfer coding", "POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
        row("chunked not the last coding", "POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400),
        row("Transfer-Encoding on HTTP/1.0", "POST /health HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        row("bad chunk size", "POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n", 405),
        row("body on GET", [health("Content-Length: 5\r\n"), b"hello".to_vec()].concat(), 200),
        row("chunked body on GET", [health("Transfer-Encoding: chunked\r\n"), b"5\r\nhello\r\n0\r\n\r\n".to_vec()].concat(), 200),
        row("Expect: 100-continue then the body", "POST /greetings HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc", 415),
        // Sizes.
        row("target of 8 KiB + 1", format!("GET /health?{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(8185)), 414),
        differs(
            "target of 70 KiB",
            format!("GET /health?{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(70_000)),
            &[Status(414), Status(400)],
            "past 64 KiB the http crate cannot hold the URI: hyper answers 414, actix-web's parser 400",
        ),
        row("one 17 KiB header", health(&format!("X-A: {}\r\n", "v".repeat(17_000))), 431),
        row("a 200 KiB head", health(&format!("X-A: {}\r\n", "v".repeat(200_000))), 431),
        row("65 header fields", health(&many(64)), 431),
        row("120 header fields", health(&many(119)), 431),
        // Target contents and names.
        row("raw UTF-8 in the target", "GET /greetings?name=João HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        row("raw DEL in the target", &b"GET /greetings?name=a\x7f HTTP/1.1\r\nHost: x\r\n\r\n"[..], 400),
        row("bad percent-encoding", greet("name=%ZZ"), 400),
        row("not UTF-8 after decoding", greet("name=%FF"), 400),
        row("overlong UTF-8 (%C0%AF)", greet("name=%C0%AF"), 400),
        row("name of 257 characters", greet(&format!("name={}", "a".repeat(257))), 400),
        row("NUL in the name", greet("name=a%00"), 400),
        row("terminal escape in the name", greet("name=%1B%5B31m"), 400),
        row("script in the name (stays text/plain + nosniff)", greet("name=%3Cscript%3Ealert(1)%3C%2Fscript%3E"), 200),
        row("fragment in the target", greet("name=a#frag"), 200),
        row("dot segments", "GET /../greetings HTTP/1.1\r\nHost: x\r\n\r\n", 404),
        row("double slash", "GET //greetings HTTP/1.1\r\nHost: x\r\n\r\n", 404),
        // The store-bound routes read names and numbers by the same rules.
        row("bad percent-encoding in /business", route("/business?name=%ZZ"), 400),
        row("NUL in a /business name", route("/business?name=a%00"), 400),
        row("/business name of 257 characters", route(&format!("/business?name={}", "a".repeat(257))), 400),
        row("/queries count not a number", route("/queries?queries=%ZZ"), 200),
        row("/queries count past 64 bits", route("/queries?queries=99999999999999999999999"), 200),
        row("POST /db", "POST /db HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405),
        // TechEmpower's routes: counts read as /queries reads them, nothing else echoed.
        row("/updates count not UTF-8", route("/updates?queries=%FF"), 200),
        row("/updates count past 64 bits", route("/updates?queries=99999999999999999999999"), 200),
        row("/cached-queries count negative", route("/cached-queries?count=-1"), 200),
        row("/fortunes with a script in the query", route("/fortunes?x=%3Cscript%3E"), 200),
        row("/plaintext with a broken escape in the query", route("/plaintext?%ZZ"), 200),
        row("POST /updates", "POST /updates HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405),
        // Uploads (the server's default --max-upload, 64 MiB) and compression.
        row("GET /upload", route("/upload"), 405),
        closing("upload of 100 GB declared, none sent", "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000000\r\n\r\n", 413),
        closing("chunked upload 1 MiB past the limit, unended", unended_upload(1 << 20), 413),
        row("upload with a bad chunk size", "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n", 400),
        row("Accept-Encoding: identity;q=0 alone", route_with("/fortunes", "Accept-Encoding: identity;q=0\r\n"), 200),
        row("Accept-Encoding of 1,000 codings", route_with("/fortunes", &format!("Accept-Encoding: {}\r\n", "x;q=0.5, ".repeat(1000))), 200),
        row("Accept-Encoding with a bad weight", route_with("/fortunes", "Accept-Encoding: gzip;q=2, br;q=x\r\n"), 200),
        // WebSocket handshakes that are not one (RFC 6455 §4.2.1), and other methods.
        row("GET /ws without Upgrade", route("/ws"), 400),
        row("WebSocket handshake of version 8", "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n", 400),
        row("WebSocket handshake with a 15-byte key", "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAA\r\nSec-WebSocket-Version: 13\r\n\r\n", 400),
        row("WebSocket handshake with two keys", "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", 400),
        row("WebSocket handshake over HTTP/1.0", "GET /ws HTTP/1.0\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", 400),
        row("POST /ws", "POST /ws HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405),
        // WebSocket frames that declare more than a message may hold (64 KiB), their payload
        // not sent: each is refused by its header (RFC 6455 §7.4.1, 1009), not waited for.
        ws_closes("WebSocket frame declaring 2^34 bytes", ws_then(&[frame_head(0x82, 1 << 34), b"abcd".to_vec()].concat()), TOO_BIG),
        ws_closes("WebSocket frame declaring the limit + 1", ws_then(&frame_head(0x82, MAX_MESSAGE_BYTES as u64 + 1)), TOO_BIG),
        ws_closes("WebSocket continuation declaring 2^34 bytes", ws_then(&[&[0x02, 0x81, 1, 2, 3, 4, b'a' ^ 1][..], &frame_head(0x80, 1 << 34)].concat()), TOO_BIG),
        differs(
            "percent-encoded path (/%67reetings)",
            "GET /%67reetings HTTP/1.1\r\nHost: x\r\n\r\n",
            &[Status(404), Status(200)],
            "actix-web's router decodes unreserved escapes before matching (RFC 3986 calls them equivalent); axum and hyper match the path as sent",
        ),
    ]
}

/// Sends `row`'s request and reads the first final answer (1xx skipped), or sees the
/// connection close without one. After a `101` it reads the WebSocket's first frame; where
/// the row expects [`Answer::Closing`], it waits up to 2 s for the connection to close.
pub async fn answer(addr: SocketAddr, row: &BadInput) -> std::io::Result<Answer> {
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await?;
        // A server may answer and close before reading all of an oversized request.
        let _ = stream.write_all(&row.request).await;
        let mut first = vec![0; 9];
        let read = match stream.read(&mut first).await {
            Ok(0) | Err(_) => return Ok(Answer::Closed),
            Ok(n) => n,
        };
        first.truncate(read);
        // An HTTP/2 frame header: 3 bytes of length, then the type, SETTINGS being 4.
        if read == 9 && first[3] == 4 {
            return Ok(Answer::Http2);
        }
        let mut res = http1::Response::new();
        match http1::read(&mut stream, &mut first, &mut res, Options::default()).await {
            Ok(()) if res.status() == 101 => Ok(close_code(&mut stream, first)
                .await
                .map_or(Status(101), WsClose)),
            Ok(()) if row.expect.iter().any(|a| matches!(a, Closing(_))) => {
                let closed = closes(&mut stream, first).await;
                Ok(if closed {
                    Closing(res.status())
                } else {
                    Status(res.status())
                })
            }
            Ok(()) => Ok(Status(res.status())),
            // Closed, or reset, before any answer.
            Err(http1::Error::Closed | http1::Error::Io(_)) => Ok(Answer::Closed),
            Err(err) => Err(crate::client::into_io(err)),
        }
    };
    tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))?
}

/// The code of the server's first WebSocket frame if it is a close with one (`read` holds
/// what came after the `101`).
async fn close_code(stream: &mut TcpStream, mut read: Vec<u8>) -> Option<u16> {
    while read.len() < 4 {
        read.reserve(64);
        match stream.read_buf(&mut read).await {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
    }
    // A server's frames are unmasked: FIN and opcode 8, a length of 2 or more, the code.
    (read[0] == 0x88 && read[1] >= 2).then(|| u16::from_be_bytes([read[2], read[3]]))
}

/// Whether the connection ends (read to its end, or reset) within 2 s with nothing after
/// the answer (`read`).
async fn closes(stream: &mut TcpStream, read: Vec<u8>) -> bool {
    let mut byte = [0u8; 1];
    let ended = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut byte)).await;
    read.is_empty() && matches!(ended, Ok(Ok(0) | Err(_)))
}

/// The table as Markdown, with what each server answered (`answers[server][row]`, servers
/// named in `servers`): `docs/bad-input.md`.
pub fn markdown(servers: &[&str], answers: &[Vec<std::io::Result<Answer>>]) -> String {
    let mut out = String::from(
        "# Bad input: what each server answers\n\n\
         Generated from `greet_conformance::bad_input::table` by \
         `GREET_UPDATE_DOCS=1 cargo test -p greet-conformance --test docs`; the same test fails \
         when this file and the code disagree. Each row is one raw request no well-behaved \
         client sends; where the frameworks' parsers cannot give the same answer, the row \
         allows each and says why.\n\n\
         A refusal costs the server nothing more: \"413, closed\" is a 413 sent as the \
         upload's limit (64 MiB by default) is crossed, then the connection closed with the \
         rest of the body unread (the chunked row sends 1 MiB past the limit and no end: a \
         server that read on would wait for the rest). Over HTTP/2 the contract suite holds \
         the same with DATA frames: a 413, then the stream reset. \"101, close 1009\" is a \
         WebSocket closed as \"message too big\" from a frame's header alone, before any of \
         the payload it declares is sent.\n\n",
    );
    out.push_str(&format!(
        "| input | {} | why they differ |\n",
        servers.join(" | ")
    ));
    out.push_str(&format!("|---|{}---|\n", "---|".repeat(servers.len())));
    for (i, row) in table().iter().enumerate() {
        let cells: Vec<String> = answers
            .iter()
            .map(|server| match server.get(i) {
                Some(Ok(Answer::Status(s))) => s.to_string(),
                Some(Ok(Answer::Closed)) => "closed".to_owned(),
                Some(Ok(Answer::Http2)) => "HTTP/2".to_owned(),
                Some(Ok(Answer::Closing(s))) => format!("{s}, closed"),
                Some(Ok(Answer::WsClose(code))) => format!("101, close {code}"),
                Some(Err(err)) => format!("error: {err}"),
                None => "-".to_owned(),
            })
            .collect();
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            row.name,
            cells.join(" | "),
            row.why
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_large_and_explains_every_difference() {
        let table = table();
        assert_eq!(
            table.len(),
            ROWS,
            "rows added or removed: update ROWS and the docs"
        );
        for row in &table {
            assert!(!row.expect.is_empty(), "{}: no expected answer", row.name);
            assert_eq!(row.expect.len() > 1, !row.why.is_empty(), "{}", row.name);
        }
        let mut names: Vec<_> = table.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), table.len(), "row names are unique");
    }
}
