//! The one HTTP/1 response reader of the workspace: the contract suite, the bad-input table,
//! the harness's load generator, the criterion benches and the servers' `--health-check` all
//! read answers through it.
//!
//! [`Parser`] is sans-IO, as mini-redis's framing is: it is fed bytes and says how many it took
//! and whether a response is complete, so one state machine serves a blocking socket
//! ([`read_blocking`]) and an async one ([`read`]), both in `drivers.rs`. It reads any valid
//! HTTP/1.x response: interim (1xx) answers skipped, bodies framed by `content-length`, by
//! chunked transfer-coding (decoded, trailers skipped) or by the end of the connection, no
//! body after HEAD or on 204 and 304, and whether the connection may carry another request.
//!
//! The load generator reads tens of thousands of answers a second on one core, so a
//! [`Response`] is reused: its head is kept as bytes with offsets, not as owned strings, and
//! reading into a used one allocates nothing once its buffers have grown.

use std::borrow::Cow;
use std::fmt;
use std::io;

mod drivers;

pub use drivers::{get_blocking, read, read_blocking};

/// Most header fields a response may have.
pub const MAX_FIELDS: usize = 64;
/// Largest response head, in bytes, unless [`Options::max_head`] says otherwise.
pub const MAX_HEAD: usize = 64 * 1024;
/// Longest chunk-size or trailer line.
const MAX_LINE: usize = 4096;

/// What the reader needs to know of the request the response answers.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The request was a HEAD: the response has no body whatever its framing headers say.
    pub head: bool,
    /// Largest head accepted, in bytes.
    pub max_head: usize,
    /// Largest body accepted, in bytes.
    pub max_body: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            head: false,
            max_head: MAX_HEAD,
            max_body: 16 * 1024 * 1024,
        }
    }
}

impl Options {
    /// The options for the answer to a HEAD request.
    pub fn head() -> Self {
        Self {
            head: true,
            ..Self::default()
        }
    }
}

/// Why no response could be read.
#[derive(Debug)]
pub enum Error {
    /// The socket failed (or timed out).
    Io(io::Error),
    /// The connection ended before a complete response head.
    Closed,
    /// The connection ended inside the body.
    Truncated,
    /// The bytes are not an HTTP/1 response.
    Invalid(&'static str),
    /// The head or the body is larger than allowed.
    TooLarge,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(err) => write!(f, "{err}"),
            Self::Closed => f.write_str("connection closed before a complete response head"),
            Self::Truncated => f.write_str("connection closed inside the response body"),
            Self::Invalid(why) => write!(f, "not an HTTP/1 response: {why}"),
            Self::TooLarge => f.write_str("response too large"),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(err: io::Error) -> Self {
        Self::Io(err)
    }
}

/// One response: status, header fields and the body as decoded. Reusable: reading into it
/// again clears it first.
#[derive(Debug, Clone, Default)]
pub struct Response {
    version: u8,
    status: u16,
    head: Vec<u8>,
    fields: Vec<Field>,
    body: Vec<u8>,
    keep_alive: bool,
}

/// A header field's name and value as offsets into the head.
#[derive(Debug, Clone, Copy)]
struct Field {
    name: (usize, usize),
    value: (usize, usize),
}

impl Response {
    /// An empty response to read into.
    pub fn new() -> Self {
        Self::default()
    }

    /// The status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The minor version: 1 for HTTP/1.1, 0 for HTTP/1.0.
    pub fn version(&self) -> u8 {
        self.version
    }

    /// Every header field in order, as `(name, value)`; names as sent.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.fields.iter().map(|f| {
            let name = &self.head[f.name.0..f.name.1];
            // httparse accepts only token characters in names: ASCII.
            let name = std::str::from_utf8(name).unwrap_or_default();
            (name, &self.head[f.value.0..f.value.1])
        })
    }

    /// The first value of header `name` (case-insensitive), trimmed, if it is UTF-8.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| std::str::from_utf8(v).ok())
            .map(str::trim)
    }

    /// The body, decoded from its transfer-coding (empty for HEAD, 1xx, 204, 304).
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// The body as text (lossy).
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.body)
    }

    /// Whether the connection may carry another request: HTTP/1.1 without `Connection:
    /// close`, or HTTP/1.0 with `Connection: keep-alive`, and a body not delimited by the end
    /// of the connection.
    pub fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    /// Empties it for the next response, keeping its buffers.
    pub fn clear(&mut self) {
        self.version = 0;
        self.status = 0;
        self.head.clear();
        self.fields.clear();
        self.body.clear();
        self.keep_alive = false;
    }

    fn has_token(&self, name: &str, token: &str) -> bool {
        self.headers()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .filter_map(|(_, v)| std::str::from_utf8(v).ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    }
}

/// How much a [`Parser::feed`] took, and whether the response is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of the input consumed; the rest belongs to what follows.
    pub consumed: usize,
    /// The response is complete.
    pub done: bool,
}

/// The reader's state machine, free of I/O.
#[derive(Debug, Clone)]
pub struct Parser {
    options: Options,
    state: State,
}

#[derive(Debug, Clone, Copy)]
enum State {
    Head,
    Length(usize),
    Chunked(Chunk),
    UntilClose,
    Done,
}

#[derive(Debug, Clone, Copy)]
enum Chunk {
    Size,
    Data(usize),
    DataEnd,
    Trailer,
}

impl Parser {
    /// A parser for one response.
    pub fn new(options: Options) -> Self {
        Self {
            options,
            state: State::Head,
        }
    }

    /// Parses what it can of `input` into `res` (which must be the same for every call of
    /// one response).
    pub fn feed(&mut self, input: &[u8], res: &mut Response) -> Result<Progress, Error> {
        let mut pos = 0;
        loop {
            let rest = &input[pos..];
            let before = pos;
            match self.state {
                State::Done => break,
                State::Head => {
                    let Some(used) = self.head(rest, res)? else {
                        break;
                    };
                    pos += used;
                }
                State::Length(remaining) => {
                    let take = remaining.min(rest.len());
                    self.push_body(res, &rest[..take])?;
                    pos += take;
                    self.state = if take == remaining {
                        State::Done
                    } else {
                        State::Length(remaining - take)
                    };
                }
                State::UntilClose => {
                    self.push_body(res, rest)?;
                    pos += rest.len();
                }
                State::Chunked(chunk) => pos += self.chunked(chunk, rest, res)?,
            }
            if pos == before && !matches!(self.state, State::Done) {
                break;
            }
        }
        Ok(Progress {
            consumed: pos,
            done: matches!(self.state, State::Done),
        })
    }

    /// The connection ended: a body delimited by the close is complete, anything else is cut.
    pub fn finish(&mut self, res: &mut Response) -> Result<(), Error> {
        match self.state {
            State::Done => Ok(()),
            State::UntilClose => {
                self.state = State::Done;
                res.keep_alive = false;
                Ok(())
            }
            State::Head => Err(Error::Closed),
            State::Length(_) | State::Chunked(_) => Err(Error::Truncated),
        }
    }

    fn push_body(&self, res: &mut Response, bytes: &[u8]) -> Result<(), Error> {
        if res.body.len() + bytes.len() > self.options.max_body {
            return Err(Error::TooLarge);
        }
        res.body.extend_from_slice(bytes);
        Ok(())
    }

    /// Parses a head at the start of `input`; `None` until it is complete. Interim answers
    /// are consumed and forgotten.
    fn head(&mut self, input: &[u8], res: &mut Response) -> Result<Option<usize>, Error> {
        let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
        let mut parsed = httparse::Response::new(&mut fields);
        let len = match parsed.parse(input) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) if input.len() > self.options.max_head => {
                return Err(Error::TooLarge)
            }
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(httparse::Error::TooManyHeaders) => return Err(Error::TooLarge),
            Err(_) => return Err(Error::Invalid("malformed head")),
        };
        let status = parsed.code.unwrap_or(0);
        if (100..200).contains(&status) && status != 101 {
            return Ok(Some(len));
        }
        res.clear();
        res.version = parsed.version.unwrap_or(1);
        res.status = status;
        res.head.extend_from_slice(&input[..len]);
        let base = input.as_ptr() as usize;
        let span = |s: &[u8]| {
            let start = s.as_ptr() as usize - base;
            (start, start + s.len())
        };
        res.fields.extend(parsed.headers.iter().map(|h| Field {
            name: span(h.name.as_bytes()),
            value: span(h.value),
        }));
        self.state = self.framing(res)?;
        res.keep_alive = if res.version >= 1 {
            !res.has_token("connection", "close")
        } else {
            res.has_token("connection", "keep-alive")
        } && !matches!(self.state, State::UntilClose);
        Ok(Some(len))
    }

    /// How the body is delimited (RFC 9112, section 6.3).
    fn framing(&self, res: &Response) -> Result<State, Error> {
        let status = res.status;
        if self.options.head || status == 204 || status == 304 || status == 101 {
            return Ok(State::Done);
        }
        if let Some(coding) = res.header("transfer-encoding") {
            let last = coding.rsplit(',').next().unwrap_or_default().trim();
            return Ok(if last.eq_ignore_ascii_case("chunked") {
                State::Chunked(Chunk::Size)
            } else {
                State::UntilClose
            });
        }
        let mut length = None;
        for (name, value) in res.headers() {
            if !name.eq_ignore_ascii_case("content-length") {
                continue;
            }
            let value = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .ok_or(Error::Invalid("bad content-length"))?;
            if length.is_some_and(|l| l != value) {
                return Err(Error::Invalid("conflicting content-lengths"));
            }
            length = Some(value);
        }
        match length {
            Some(n) if n > self.options.max_body => Err(Error::TooLarge),
            Some(0) => Ok(State::Done),
            Some(n) => Ok(State::Length(n)),
            None => Ok(State::UntilClose),
        }
    }

    /// One step of chunked decoding; the bytes of `input` it used.
    fn chunked(&mut self, chunk: Chunk, input: &[u8], res: &mut Response) -> Result<usize, Error> {
        match chunk {
            Chunk::Size => {
                let Some((line, used)) = line(input)? else {
                    return Ok(0);
                };
                // Chunk extensions follow a `;` and mean nothing here.
                let size = line.split(|&b| b == b';').next().unwrap_or_default();
                let size = std::str::from_utf8(size)
                    .ok()
                    .map(str::trim)
                    .filter(|s| !s.is_empty() && s.len() <= 16)
                    .and_then(|s| usize::from_str_radix(s, 16).ok())
                    .ok_or(Error::Invalid("bad chunk size"))?;
                self.state = State::Chunked(if size == 0 {
                    Chunk::Trailer
                } else {
                    Chunk::Data(size)
                });
                Ok(used)
            }
            Chunk::Data(remaining) => {
                let take = remaining.min(input.len());
                self.push_body(res, &input[..take])?;
                self.state = State::Chunked(if take == remaining {
                    Chunk::DataEnd
                } else {
                    Chunk::Data(remaining - take)
                });
                Ok(take)
            }
            Chunk::DataEnd => match line(input)? {
                Some((&[], used)) => {
                    self.state = State::Chunked(Chunk::Size);
                    Ok(used)
                }
                Some(_) => Err(Error::Invalid("chunk longer than its size")),
                None => Ok(0),
            },
            Chunk::Trailer => {
                let Some((line, used)) = line(input)? else {
                    return Ok(0);
                };
                if line.is_empty() {
                    self.state = State::Done;
                }
                Ok(used)
            }
        }
    }
}

/// The first line of `input` without its line ending, and the bytes it took with it.
fn line(input: &[u8]) -> Result<Option<(&[u8], usize)>, Error> {
    match input.iter().position(|&b| b == b'\n') {
        Some(end) => {
            let line = &input[..end];
            Ok(Some((line.strip_suffix(b"\r").unwrap_or(line), end + 1)))
        }
        None if input.len() > MAX_LINE => Err(Error::Invalid("line too long")),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `wire` fed one byte at a time (the hardest split), and whole; both must agree.
    fn parse(wire: &[u8], options: Options) -> Result<(Response, usize), Error> {
        let mut whole = Response::new();
        let mut parser = Parser::new(options);
        let progress = parser.feed(wire, &mut whole)?;
        if !progress.done {
            parser.finish(&mut whole)?;
        }
        let mut bytewise = Response::new();
        let mut parser = Parser::new(options);
        let mut pending = Vec::new();
        let mut done = false;
        let mut consumed = 0;
        for &b in wire {
            pending.push(b);
            let p = parser.feed(&pending, &mut bytewise)?;
            pending.drain(..p.consumed);
            consumed += p.consumed;
            if p.done {
                done = true;
                break;
            }
        }
        if !done {
            parser.finish(&mut bytewise)?;
        }
        assert_eq!(bytewise.body(), whole.body(), "split reads agree");
        assert_eq!(consumed, progress.consumed, "split reads consume alike");
        Ok((whole, progress.consumed))
    }

    #[test]
    fn content_length_and_what_follows() {
        let wire =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhelloNEXT";
        let (res, consumed) = parse(wire, Options::default()).unwrap();
        assert_eq!(
            (res.status(), res.version(), res.body()),
            (200, 1, &b"hello"[..])
        );
        assert_eq!(res.header("content-type"), Some("text/plain"));
        assert_eq!(res.header("CONTENT-LENGTH"), Some("5"));
        assert!(res.keep_alive());
        assert_eq!(
            &wire[consumed..],
            b"NEXT",
            "the rest is left for the next response"
        );
    }

    #[test]
    fn chunked_bodies_are_decoded() {
        let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\
                     5;ext=1\r\nHello\r\n7\r\n World!\r\n0\r\nX-Trailer: t\r\n\r\n";
        let (res, consumed) = parse(wire, Options::default()).unwrap();
        assert_eq!(res.text(), "Hello World!");
        assert_eq!(consumed, wire.len());
        assert!(res.keep_alive());
        let bad = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
        assert!(matches!(
            parse(bad, Options::default()),
            Err(Error::Invalid(_))
        ));
        let long = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n";
        assert!(matches!(
            parse(long, Options::default()),
            Err(Error::Invalid(_))
        ));
    }

    #[test]
    fn bodies_without_length_run_to_the_close() {
        let wire = b"HTTP/1.0 200 OK\r\n\r\nuntil the end";
        let (res, _) = parse(wire, Options::default()).unwrap();
        assert_eq!((res.version(), res.text().as_ref()), (0, "until the end"));
        assert!(!res.keep_alive());
        let cut = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort";
        assert!(matches!(
            parse(cut, Options::default()),
            Err(Error::Truncated)
        ));
        assert!(matches!(
            parse(b"HTTP/1.1 200", Options::default()),
            Err(Error::Closed)
        ));
    }

    #[test]
    fn connection_reuse() {
        let close = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
        assert!(!parse(close, Options::default()).unwrap().0.keep_alive());
        let old = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n";
        assert!(parse(old, Options::default()).unwrap().0.keep_alive());
        let old = b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert!(!parse(old, Options::default()).unwrap().0.keep_alive());
    }

    #[test]
    fn no_body_after_head_interim_or_204() {
        let wire = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n";
        let (res, consumed) = parse(wire, Options::head()).unwrap();
        assert_eq!(
            (res.status(), res.body().len(), consumed),
            (200, 0, wire.len())
        );
        let wire = b"HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n";
        assert_eq!(parse(wire, Options::default()).unwrap().0.body().len(), 0);
    }

    #[test]
    fn malformed_answers_are_errors() {
        for wire in [
            &b"NOT HTTP\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        ] {
            assert!(matches!(
                parse(wire, Options::default()),
                Err(Error::Invalid(_))
            ));
        }
        let options = Options {
            max_head: 32,
            ..Options::default()
        };
        let big = format!("HTTP/1.1 200 OK\r\nX: {}", "v".repeat(64));
        assert!(matches!(
            parse(big.as_bytes(), options),
            Err(Error::TooLarge)
        ));
    }

    #[test]
    fn blocking_reads_leave_the_rest_in_the_buffer() {
        let two = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        let mut io = &two[..];
        let (mut buf, mut res) = (Vec::new(), Response::new());
        read_blocking(&mut io, &mut buf, &mut res, Options::default()).unwrap();
        assert_eq!((res.status(), res.body()), (200, &b"ok"[..]));
        read_blocking(&mut io, &mut buf, &mut res, Options::default()).unwrap();
        assert_eq!((res.status(), res.body().len(), buf.len()), (404, 0, 0));
        assert!(matches!(
            read_blocking(&mut io, &mut buf, &mut res, Options::default()),
            Err(Error::Closed)
        ));
    }

    #[tokio::test]
    async fn async_reads_match() {
        let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
        let mut io = &wire[..];
        let (mut buf, mut res) = (Vec::new(), Response::new());
        read(&mut io, &mut buf, &mut res, Options::default())
            .await
            .unwrap();
        assert_eq!(res.text(), "ok");
    }
}
