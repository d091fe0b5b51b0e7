//! The reference server: the machine's floor that the three frameworks are measured against,
//! never a contender. It is as small as an HTTP/1.1 server can be and still keep the
//! endpoints the harness loads it on:
//!
//! - one event loop per worker (`--workers`, one per core by default), each a thread with its
//!   own epoll (mio) over the one listening socket, so no request crosses a thread;
//! - requests parsed by `httparse` (hyper's parser), pipelined requests answered in order,
//!   every answer of one read written with one `write`;
//! - answers prebuilt at start-up: `/health` (`ok`), `/plaintext` (`Hello, World!`) and
//!   `/json` (`{"message":"Hello, World!"}`) are fixed bytes around a `Date` line refreshed
//!   once a second; `/greetings` and `/greetings/blocking` answer at once (no delay, whatever
//!   `--delay-ms` says) with the greeting `greet-core` draws, so soak and capacity can load
//!   the floor on the endpoint they load the frameworks on.
//!
//! Nothing else: no TLS, no HTTP/2, no request bodies but `Content-Length` ones (skipped),
//! no timeouts. Anything else is 404, a method other than GET or HEAD 405, and a request
//! `httparse` refuses 400 and the connection closed. The binary takes every server's flags
//! (`greet-server`'s) and logs the same start-up line, so the harness starts it as it starts
//! the others; SIGTERM and Ctrl-C stop it with exit 0.
//!
//! Here are the event loops, their connections and what a request is answered with;
//! `start.rs` starts the loops and stops them.

use std::io::{self, ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

/// The server's name, in its log lines and its `Server` header.
pub const NAME: &str = "greet-floor";

/// The most bytes of a request head kept waiting for its end: a longer head is refused.
const MAX_HEAD: usize = 64 * 1024;

const LISTEN: Token = Token(0);
const WAKE: Token = Token(1);
/// Connections are tokens from here on: slot `i` is `Token(FIRST + i)`.
const FIRST: usize = 2;

mod start;

pub use start::{start, Floor};

/// One thread's loop: its accepts, its connections, its clock.
struct EventLoop {
    poll: Poll,
    listener: TcpListener,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    clock: Clock,
    /// What each read lands in, zeroed once.
    scratch: Vec<u8>,
}

impl EventLoop {
    fn new(poll: Poll, listener: TcpListener) -> Self {
        Self {
            poll,
            listener,
            conns: Vec::new(),
            free: Vec::new(),
            clock: Clock::new(),
            scratch: vec![0; 16 * 1024],
        }
    }

    fn run(mut self, stop: &AtomicBool) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        loop {
            match self.poll.poll(&mut events, None) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            self.clock.tick();
            for event in &events {
                match event.token() {
                    WAKE if stop.load(Ordering::SeqCst) => return Ok(()),
                    WAKE => {}
                    LISTEN => self.accept(),
                    Token(t) => self.serve(t - FIRST),
                }
            }
        }
    }

    /// Takes every connection waiting: the listener is edge-triggered.
    fn accept(&mut self) {
        loop {
            let mut stream = match self.listener.accept() {
                Ok((stream, _)) => stream,
                // Another loop took it, or the queue is empty.
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::ConnectionAborted => continue,
                // Out of descriptors: the next connection's event tries again.
                Err(_) => return,
            };
            let _ = stream.set_nodelay(true);
            let slot = self.free.pop().unwrap_or_else(|| {
                self.conns.push(None);
                self.conns.len() - 1
            });
            // Readable only: a writable edge after every answer would wake the loop twice a
            // request. A connection whose answers do not fit the socket asks for it too.
            let interest = Interest::READABLE;
            if self
                .poll
                .registry()
                .register(&mut stream, Token(FIRST + slot), interest)
                .is_ok()
            {
                self.conns[slot] = Some(Conn::new(stream));
            } else {
                self.free.push(slot);
            }
        }
    }

    fn serve(&mut self, slot: usize) {
        let Some(conn) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        let open = match conn.ready(&mut self.scratch, self.clock.date()) {
            Some(blocked) if blocked != conn.blocked => {
                conn.blocked = blocked;
                let interest = if blocked {
                    Interest::READABLE | Interest::WRITABLE
                } else {
                    Interest::READABLE
                };
                let token = Token(FIRST + slot);
                self.poll
                    .registry()
                    .reregister(&mut conn.stream, token, interest)
                    .is_ok()
            }
            Some(_) => true,
            None => false,
        };
        if !open {
            if let Some(mut conn) = self.conns[slot].take() {
                let _ = self.poll.registry().deregister(&mut conn.stream);
            }
            self.free.push(slot);
        }
    }
}

/// The `Date` value, formatted once a second.
struct Clock {
    date: String,
    next: Instant,
}

impl Clock {
    fn new() -> Self {
        Self {
            date: httpdate::fmt_http_date(SystemTime::now()),
            next: Instant::now() + Duration::from_secs(1),
        }
    }

    fn tick(&mut self) {
        let now = Instant::now();
        if now >= self.next {
            self.date = httpdate::fmt_http_date(SystemTime::now());
            self.next = now + Duration::from_secs(1);
        }
    }

    fn date(&self) -> &[u8] {
        self.date.as_bytes()
    }
}

/// A connection: what it sent that is not answered yet, and what is not written yet.
struct Conn {
    stream: TcpStream,
    input: Vec<u8>,
    output: Vec<u8>,
    written: usize,
    close: bool,
    /// Its answers did not all fit the socket: it waits to be writable too.
    blocked: bool,
}

impl Conn {
    fn new(stream: TcpStream) -> Self {
        Self {
            stream,
            input: Vec::with_capacity(4096),
            output: Vec::with_capacity(4096),
            written: 0,
            close: false,
            blocked: false,
        }
    }

    /// Reads what there is (through `buf`), answers every complete request, writes: whether
    /// answers wait for the socket to take them, or none when the connection is done.
    fn ready(&mut self, buf: &mut [u8], date: &[u8]) -> Option<bool> {
        loop {
            match self.stream.read(buf) {
                Ok(0) => return None,
                Ok(n) => {
                    self.input.extend_from_slice(&buf[..n]);
                    // A read that did not fill the buffer emptied the socket: what comes
                    // later raises a new edge, so no read is spent on learning it is empty.
                    if n < buf.len() {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        let mut used = 0;
        while !self.close && used < self.input.len() {
            match answer(&self.input[used..], &mut self.output, date) {
                Parsed::Answered { bytes, close } => {
                    used += bytes;
                    self.close = close;
                }
                Parsed::Partial => break,
            }
        }
        self.input.drain(..used);
        if !self.close && self.input.len() > MAX_HEAD {
            Fixed::TooLarge
                .prebuilt()
                .write(&mut self.output, date, Head::Close, false);
            self.close = true;
        }
        self.flush()
    }

    /// Writes what is pending: whether some of it waits for the socket, or none when it is
    /// all written and the connection closes, or the peer is gone.
    fn flush(&mut self) -> Option<bool> {
        while self.written < self.output.len() {
            match self.stream.write(&self.output[self.written..]) {
                Ok(0) => return None,
                Ok(n) => self.written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Some(true),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        self.output.clear();
        self.written = 0;
        (!self.close).then_some(false)
    }
}

enum Parsed {
    /// One request answered: its bytes (head and body), and whether the connection closes.
    Answered { bytes: usize, close: bool },
    /// The request is not all here yet.
    Partial,
}

/// A 400 for what `input` holds, into `out`: the rest of it dropped, the connection closed.
fn refused(input: &[u8], out: &mut Vec<u8>, date: &[u8]) -> Parsed {
    Fixed::BadRequest
        .prebuilt()
        .write(out, date, Head::Close, false);
    Parsed::Answered {
        bytes: input.len(),
        close: true,
    }
}

/// Answers the request at the start of `input` into `out`.
fn answer(input: &[u8], out: &mut Vec<u8>, date: &[u8]) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut request = httparse::Request::new(&mut headers);
    let head = match request.parse(input) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(_) => return refused(input, out, date),
    };
    let mut close = request.version == Some(0);
    let mut length = 0usize;
    let mut chunked = false;
    for header in request.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("connection") {
            if has_token(header.value, b"close") {
                close = true;
            } else if has_token(header.value, b"keep-alive") {
                close = false;
            }
        } else if name.eq_ignore_ascii_case("content-length") {
            match std::str::from_utf8(header.value)
                .ok()
                .and_then(|v| v.trim().parse().ok())
            {
                Some(n) => length = n,
                None => chunked = true,
            }
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = true;
        }
    }
    let how = if close { Head::Close } else { Head::KeepAlive };
    if chunked {
        // Bodies whose end this server cannot find: refused, and the connection closed.
        return refused(input, out, date);
    }
    if input.len() < head + length {
        return Parsed::Partial;
    }
    let method = request.method.unwrap_or("");
    let target = request.path.unwrap_or("/");
    let bare = method == "HEAD";
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    let fixed = match path {
        _ if method != "GET" && !bare => Some(Fixed::NotAllowed),
        greet_core::paths::HEALTH => Some(Fixed::Health),
        greet_core::paths::PLAINTEXT => Some(Fixed::Plaintext),
        greet_core::paths::JSON => Some(Fixed::Json),
        greet_core::paths::GREETINGS | greet_core::paths::GREETINGS_BLOCKING => None,
        _ => Some(Fixed::NotFound),
    };
    match fixed {
        Some(fixed) => fixed.prebuilt().write(out, date, how, bare),
        // Only the body is made per request: the head is the greeting's, or a 400's.
        None => {
            let (head, body) = match greet_core::name::name_from_query(query) {
                Ok(name) => (Fixed::Greeting, greet_core::greeting::greeting(&name)),
                Err(err) => (Fixed::BadRequest, err.to_string()),
            };
            let answer = head.prebuilt();
            answer.write_body(out, date, how, body.as_bytes(), bare);
        }
    }
    Parsed::Answered {
        bytes: head + length,
        close,
    }
}

/// Whether `value` holds `token`, in any case.
fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .windows(token.len())
        .any(|w| w.eq_ignore_ascii_case(token))
}

/// The answers that never change but for their date (the greeting's head, whose body is
/// drawn per request, among them), in [`FIXED`]'s order.
#[derive(Debug, Clone, Copy)]
enum Fixed {
    Greeting,
    Health,
    Plaintext,
    Json,
    NotFound,
    NotAllowed,
    BadRequest,
    TooLarge,
}

const FIXED: [Fixed; 8] = [
    Fixed::Greeting,
    Fixed::Health,
    Fixed::Plaintext,
    Fixed::Json,
    Fixed::NotFound,
    Fixed::NotAllowed,
    Fixed::BadRequest,
    Fixed::TooLarge,
];

// `Fixed::prebuilt` finds each answer at its discriminant.
const _: () = {
    let mut i = 0;
    while i < FIXED.len() {
        assert!(FIXED[i] as usize == i);
        i += 1;
    }
};

/// Every fixed answer's bytes, built once: a request adds only the date.
static PREBUILT: std::sync::LazyLock<[Answer; FIXED.len()]> =
    std::sync::LazyLock::new(|| FIXED.map(Fixed::answer));

impl Fixed {
    fn prebuilt(self) -> &'static Answer {
        &PREBUILT[self as usize]
    }

    fn answer(self) -> Answer {
        let text = greet_core::CONTENT_TYPE;
        let (status, content_type, body): (_, _, &[u8]) = match self {
            Self::Greeting => ("200 OK", text, b""),
            Self::Health => ("200 OK", text, b"ok"),
            Self::Plaintext => ("200 OK", text, b"Hello, World!"),
            Self::Json => (
                "200 OK",
                greet_core::JSON_CONTENT_TYPE,
                br#"{"message":"Hello, World!"}"#,
            ),
            Self::NotFound => ("404 Not Found", text, b"not found"),
            Self::NotAllowed => ("405 Method Not Allowed", text, b"method not allowed"),
            Self::BadRequest => ("400 Bad Request", text, b"bad request"),
            Self::TooLarge => (
                "431 Request Header Fields Too Large",
                text,
                b"request header fields too large",
            ),
        };
        let allow = matches!(self, Self::NotAllowed).then_some(greet_core::ALLOWED_METHODS);
        Answer::new(status, content_type, body, allow)
    }
}

/// An answer as bytes: what comes before the date, the headers after it with its own
/// body's length, and that body.
struct Answer {
    before: Vec<u8>,
    after: Vec<u8>,
    /// `after` without its `content-length`, for another body.
    head_only: usize,
    body: Vec<u8>,
}

impl Answer {
    fn new(status: &str, content_type: &str, body: &[u8], allow: Option<&str>) -> Self {
        let mut after = format!("\r\ncontent-type: {content_type}");
        if let Some(allow) = allow {
            after += &format!("\r\nallow: {allow}");
        }
        let head_only = after.len();
        after += &format!("\r\ncontent-length: {}", body.len());
        Self {
            before: format!("HTTP/1.1 {status}\r\nserver: {NAME}\r\ndate: ").into_bytes(),
            after: after.into_bytes(),
            head_only,
            body: body.to_vec(),
        }
    }

    /// Appends it to `out`: its head with `date`, and its body unless `bare` (HEAD).
    fn write(&self, out: &mut Vec<u8>, date: &[u8], how: Head, bare: bool) {
        self.start(out, date, &self.after);
        Self::finish(out, how, &self.body, bare);
    }

    /// Appends its head with `date` and `body`'s length, then `body` unless `bare`.
    fn write_body(&self, out: &mut Vec<u8>, date: &[u8], how: Head, body: &[u8], bare: bool) {
        self.start(out, date, &self.after[..self.head_only]);
        // Into the buffer itself: no allocation for the digits.
        let _ = write!(out, "\r\ncontent-length: {}", body.len());
        Self::finish(out, how, body, bare);
    }

    fn start(&self, out: &mut Vec<u8>, date: &[u8], after: &[u8]) {
        out.extend_from_slice(&self.before);
        out.extend_from_slice(date);
        out.extend_from_slice(after);
    }

    fn finish(out: &mut Vec<u8>, how: Head, body: &[u8], bare: bool) {
        if how == Head::Close {
            out.extend_from_slice(b"\r\nconnection: close");
        }
        out.extend_from_slice(b"\r\n\r\n");
        if !bare {
            out.extend_from_slice(body);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Head {
    KeepAlive,
    Close,
}
