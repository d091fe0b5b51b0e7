//! `GET /ws`: a WebSocket that echoes. The rules, the same on every server:
//!
//! 1. the handshake is checked here before the framework sees it ([`check_handshake`]): a
//!    request that is not one (RFC 6455 §4.2.1) is 400 with the shared reason, not the
//!    framework's own words;
//! 2. text and binary messages come back as they came; a ping gets its pong; a close gets
//!    its close;
//! 3. a message over [`MAX_MESSAGE_BYTES`], in one frame or in fragments, closes with 1009
//!    ([`TOO_BIG`]); a frame that breaks the protocol closes with 1002 ([`PROTOCOL`]);
//! 4. a socket that sends nothing for [`IDLE_TIMEOUT`] closes with 1000 ([`IDLE`]), and one
//!    that reads nothing of its echo for as long is dropped;
//! 5. on SIGTERM every socket closes with 1001 ([`GOING_AWAY`], [`Sockets::going_away`]) and
//!    the server waits for them ([`Sockets::closed`]) within its shutdown timeout.
//!
//! Each framework reads and writes frames its own way (axum's `WebSocket`, actix-ws,
//! tokio-tungstenite on hyper's upgrade); [`echo`] is the loop they share, over [`Socket`].

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::GreetError;

/// The largest message a socket takes, whole or in fragments: as large as a
/// `POST /greetings` body may be, so 2,700 sockets hold 170 MiB at most.
pub const MAX_MESSAGE_BYTES: usize = crate::post::MAX_BODY_BYTES;

/// How long a socket may send nothing (nor read its echo) before it is closed: an HTTP
/// connection's idle limit ([`crate::limits::IDLE_TIMEOUT`]).
pub const IDLE_TIMEOUT: Duration = crate::limits::IDLE_TIMEOUT;

/// How long a close waits for the client's close in answer before the connection goes.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// A close frame the server sends: its code (RFC 6455 §7.4.1) and reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Close {
    /// The status code.
    pub code: u16,
    /// The reason, at most 123 bytes.
    pub reason: &'static str,
}

/// A message over [`MAX_MESSAGE_BYTES`].
pub const TOO_BIG: Close = Close {
    code: 1009,
    reason: "message over 65536 bytes",
};
const _: () = assert!(MAX_MESSAGE_BYTES == 65536);

/// A frame that breaks the protocol (unmasked, a bad opcode, a stray continuation).
pub const PROTOCOL: Close = Close {
    code: 1002,
    reason: "protocol error",
};

/// Nothing sent for [`IDLE_TIMEOUT`].
pub const IDLE: Close = Close {
    code: 1000,
    reason: "idle for 5 seconds",
};
const _: () = assert!(IDLE_TIMEOUT.as_secs() == 5);

/// The server is shutting down.
pub const GOING_AWAY: Close = Close {
    code: 1001,
    reason: "server shutting down",
};

/// Rule 1: whether a request opens a WebSocket: any method but GET is 405 (`Allow: GET`),
/// and a GET is 400 unless `http11` (its version is HTTP/1.1: RFC 8441's extended CONNECT
/// over HTTP/2 is not offered) and its header `fields` make a handshake. `Upgrade` must name `websocket` and `Connection` `Upgrade` (as tokens,
/// any case), `Sec-WebSocket-Version` be 13 and `Sec-WebSocket-Key` be one base64 nonce of
/// 16 bytes.
pub fn check_handshake<'a>(
    method: &str,
    http11: bool,
    fields: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<(), GreetError> {
    if method != "GET" {
        return Err(GreetError::WsMethodNotAllowed);
    }
    let (mut upgrade, mut connection, mut version, mut keys) = (false, false, false, 0);
    let mut key_ok = false;
    for (name, value) in fields {
        if name.eq_ignore_ascii_case("upgrade") {
            upgrade |= has_token(value, "websocket");
        } else if name.eq_ignore_ascii_case("connection") {
            connection |= has_token(value, "upgrade");
        } else if name.eq_ignore_ascii_case("sec-websocket-version") {
            version = value.trim_ascii() == b"13";
        } else if name.eq_ignore_ascii_case("sec-websocket-key") {
            keys += 1;
            key_ok = is_nonce(value.trim_ascii());
        }
    }
    if http11 && upgrade && connection && version && keys == 1 && key_ok {
        Ok(())
    } else {
        Err(GreetError::BadHandshake)
    }
}

fn has_token(value: &[u8], token: &str) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

/// 16 bytes in base64: 21 characters, a 22nd that leaves the low four bits zero, and `==`.
fn is_nonce(key: &[u8]) -> bool {
    let base64 = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/');
    key.len() == 24
        && key[..21].iter().all(base64)
        && matches!(key[21], b'A' | b'Q' | b'g' | b'w')
        && &key[22..] == b"=="
}

/// What a [`Socket`] read, as [`echo`] acts on it.
#[derive(Debug)]
pub enum Event<M> {
    /// A message to send back as it is: a text or binary message, or the pong of a ping the
    /// framework does not answer itself.
    Echo(M),
    /// A frame that needs nothing more (a pong, a ping the framework has answered).
    Nothing,
    /// The client's close, answered, or the connection gone.
    Ended,
    /// A message over [`MAX_MESSAGE_BYTES`].
    TooBig,
    /// A frame that breaks the protocol.
    Broken,
}

/// A WebSocket as one framework reads and writes it: what [`echo`] needs of it. Not `Send`:
/// actix-web's sockets live on one worker thread; the others' are `Send` where they are.
pub trait Socket {
    /// The framework's message type.
    type Message;
    /// Reads the next frame (answering a close, and a ping where the framework does).
    fn next(&mut self) -> impl Future<Output = Event<Self::Message>>;
    /// Sends `message`; an error means the connection is gone.
    fn send(&mut self, message: Self::Message) -> impl Future<Output = Result<(), ()>>;
    /// Sends `close` and waits for the client's close in answer.
    fn close(self, close: Close) -> impl Future<Output = ()>;
}

/// Rules 2 to 5 on `socket` until it ends: what every server's `/ws` runs once upgraded.
pub async fn echo<S: Socket>(mut socket: S, mut session: Session) {
    let close = loop {
        let event = tokio::select! {
            biased;
            () = session.going_away() => break GOING_AWAY,
            event = tokio::time::timeout(IDLE_TIMEOUT, socket.next()) => event,
        };
        match event {
            Err(_) => break IDLE,
            Ok(Event::Echo(message)) => {
                match tokio::time::timeout(IDLE_TIMEOUT, socket.send(message)).await {
                    Ok(Ok(())) => {}
                    Ok(Err(())) | Err(_) => return,
                }
            }
            Ok(Event::Nothing) => {}
            Ok(Event::Ended) => return,
            Ok(Event::TooBig) => break TOO_BIG,
            Ok(Event::Broken) => break PROTOCOL,
        }
    };
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, socket.close(close)).await;
}

/// Where a client's frames say they are longer than [`MAX_MESSAGE_BYTES`], from their
/// headers alone, before their payload comes: a sans-IO reader of the bytes a socket receives
/// (RFC 6455 §5.2), for a framework whose own reader waits for a whole frame before it
/// weighs it (actix-http's), where a frame declaring 16 GiB would be waited for, not refused.
#[derive(Debug, Clone, Default)]
pub struct FrameSizes {
    /// Payload bytes of the current frame still to come.
    payload: u64,
    /// The header read so far, while it is incomplete: its first `filled` bytes (a header
    /// is at most 14).
    header: [u8; 14],
    filled: usize,
    /// A frame has declared more than the limit.
    too_big: bool,
}

impl FrameSizes {
    /// Reads `bytes` as the next bytes from the client; true once a frame has declared a
    /// payload over [`MAX_MESSAGE_BYTES`] (it stays true).
    pub fn feed(&mut self, mut bytes: &[u8]) -> bool {
        while !bytes.is_empty() && !self.too_big {
            if self.payload > 0 {
                let take = usize::try_from(self.payload)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                self.payload -= take as u64;
                bytes = &bytes[take..];
                continue;
            }
            self.header[self.filled] = bytes[0];
            self.filled += 1;
            bytes = &bytes[1..];
            if let Some(length) = declared(&self.header[..self.filled]) {
                self.filled = 0;
                if length > MAX_MESSAGE_BYTES as u64 {
                    self.too_big = true;
                } else {
                    self.payload = length;
                }
            }
        }
        self.too_big
    }
}

/// A complete frame header's payload length; none while `header` is too short to say.
fn declared(header: &[u8]) -> Option<u64> {
    let second = *header.get(1)?;
    let masked = second & 0x80 != 0;
    let mask = if masked { 4 } else { 0 };
    let (length, extended) = match second & 0x7f {
        126 => (None, 2),
        127 => (None, 8),
        n => (Some(u64::from(n)), 0),
    };
    if header.len() < 2 + extended + mask {
        return None;
    }
    Some(length.unwrap_or_else(|| {
        header[2..2 + extended]
            .iter()
            .fold(0u64, |n, &b| (n << 8) | u64::from(b))
    }))
}

/// The server's open sockets, told together to go away on shutdown. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Sockets {
    going_away: Arc<watch::Sender<bool>>,
}

/// One open socket, counted until dropped; hand it to [`echo`].
#[derive(Debug)]
pub struct Session {
    going_away: watch::Receiver<bool>,
}

impl Default for Sockets {
    fn default() -> Self {
        Self {
            going_away: Arc::new(watch::Sender::new(false)),
        }
    }
}

impl Sockets {
    /// A session for a socket the handshake has just accepted: taken before the upgrade
    /// answer goes, so that a shutdown that starts after it waits for the socket.
    pub fn open(&self) -> Session {
        Session {
            going_away: self.going_away.subscribe(),
        }
    }

    /// Tells every open socket, and every one opened from now on, to close with 1001.
    pub fn going_away(&self) {
        self.going_away.send_replace(true);
    }

    /// Resolves once no socket is open.
    pub async fn closed(&self) {
        self.going_away.closed().await;
    }

    /// How many sockets are open.
    pub fn open_count(&self) -> usize {
        self.going_away.receiver_count()
    }
}

impl Session {
    async fn going_away(&mut self) {
        if self.going_away.wait_for(|&going| going).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    const KEY: &[u8] = b"dGhlIHNhbXBsZSBub25jZQ==";

    fn fields(extra: &[(&'static str, &'static [u8])]) -> Vec<(&'static str, &'static [u8])> {
        let mut all = vec![
            ("host", &b"x"[..]),
            ("upgrade", b"websocket"),
            ("connection", b"Upgrade"),
            ("sec-websocket-key", KEY),
            ("sec-websocket-version", b"13"),
        ];
        for (name, value) in extra {
            all.retain(|(n, _)| n != name);
            all.push((name, value));
        }
        all
    }

    #[test]
    fn handshakes() {
        assert_eq!(check_handshake("GET", true, fields(&[])), Ok(()));
        let ok = [
            ("connection", &b"keep-alive, Upgrade"[..]),
            ("upgrade", b"WebSocket"),
            ("sec-websocket-key", b"AAAAAAAAAAAAAAAAAAAAAA=="),
        ];
        for field in ok {
            assert_eq!(
                check_handshake("GET", true, fields(&[field])),
                Ok(()),
                "{field:?}"
            );
        }
        let bad = [
            ("connection", &b"keep-alive"[..]),
            ("upgrade", b"h2c"),
            ("sec-websocket-version", b"8"),
            ("sec-websocket-key", b"short=="),
            ("sec-websocket-key", b"dGhlIHNhbXBsZSBub25jZR=="),
            ("sec-websocket-key", b"dGhlIHNhbXBsZSBub25jZQ"),
            ("sec-websocket-key", b"dGhlIHNhbXBsZSBub25j*Q=="),
        ];
        for field in bad {
            let refused = check_handshake("GET", true, fields(&[field]));
            assert_eq!(refused, Err(GreetError::BadHandshake), "{field:?}");
        }
        for method in ["HEAD", "POST", "get"] {
            let refused = check_handshake(method, true, fields(&[]));
            assert_eq!(refused, Err(GreetError::WsMethodNotAllowed), "{method}");
        }
        assert!(
            check_handshake("GET", false, fields(&[])).is_err(),
            "HTTP/2"
        );
        let mut two_keys = fields(&[]);
        two_keys.push(("sec-websocket-key", KEY));
        assert!(check_handshake("GET", true, two_keys).is_err());
        let no_version = fields(&[])
            .into_iter()
            .filter(|(n, _)| *n != "sec-websocket-version");
        assert!(check_handshake("GET", true, no_version).is_err());
    }

    /// A socket that replays `events` and records what it sent and how it closed.
    struct Script {
        events: VecDeque<Event<u32>>,
        sent: Arc<std::sync::Mutex<Vec<u32>>>,
        closed: Arc<std::sync::Mutex<Option<Close>>>,
    }

    impl Socket for Script {
        type Message = u32;
        async fn next(&mut self) -> Event<u32> {
            match self.events.pop_front() {
                Some(event) => event,
                None => std::future::pending().await,
            }
        }
        async fn send(&mut self, message: u32) -> Result<(), ()> {
            self.sent.lock().unwrap().push(message);
            Ok(())
        }
        async fn close(self, close: Close) {
            *self.closed.lock().unwrap() = Some(close);
        }
    }

    async fn run(events: Vec<Event<u32>>, sockets: &Sockets) -> (Vec<u32>, Option<Close>) {
        let script = Script {
            events: events.into(),
            sent: Default::default(),
            closed: Default::default(),
        };
        let (sent, closed) = (script.sent.clone(), script.closed.clone());
        echo(script, sockets.open()).await;
        let sent = sent.lock().unwrap().clone();
        let closed = *closed.lock().unwrap();
        (sent, closed)
    }

    #[tokio::test(start_paused = true)]
    async fn echoes_then_closes_by_the_rules() {
        let sockets = Sockets::default();
        let (sent, closed) = run(
            vec![Event::Echo(1), Event::Nothing, Event::Echo(2), Event::Ended],
            &sockets,
        )
        .await;
        assert_eq!((sent, closed), (vec![1, 2], None));
        let (sent, closed) = run(vec![Event::Echo(3), Event::TooBig], &sockets).await;
        assert_eq!((sent, closed), (vec![3], Some(TOO_BIG)));
        let (_, closed) = run(vec![Event::Broken], &sockets).await;
        assert_eq!(closed, Some(PROTOCOL));
        let started = tokio::time::Instant::now();
        let (_, closed) = run(vec![Event::Echo(4)], &sockets).await;
        assert_eq!(closed, Some(IDLE));
        assert_eq!(started.elapsed(), IDLE_TIMEOUT);
    }

    #[tokio::test(start_paused = true)]
    async fn going_away_closes_open_sockets_and_new_ones() {
        let sockets = Sockets::default();
        let open = tokio::spawn({
            let sockets = sockets.clone();
            async move { run(vec![Event::Echo(1)], &sockets).await }
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(sockets.open_count(), 1);
        sockets.going_away();
        assert_eq!(open.await.unwrap(), (vec![1], Some(GOING_AWAY)));
        sockets.closed().await;
        let (_, closed) = run(vec![Event::Echo(2)], &sockets).await;
        assert_eq!(closed, Some(GOING_AWAY), "opened after the signal");
        assert_eq!(sockets.open_count(), 0);
    }

    #[test]
    fn frame_sizes_are_read_from_the_headers_before_the_payload() {
        // A masked text frame of 5 bytes, then one declaring 2^34 bytes.
        let mut sizes = FrameSizes::default();
        let small = [0x81, 0x85, 1, 2, 3, 4, b'h', b'e', b'l', b'l', b'o'];
        assert!(!sizes.feed(&small));
        let mut huge = vec![0x82, 0xff];
        huge.extend((1u64 << 34).to_be_bytes());
        huge.extend([1, 2, 3, 4]);
        // Split anywhere: one byte at a time, the verdict comes with the header's last byte.
        for (i, byte) in huge.iter().enumerate() {
            assert_eq!(sizes.feed(&[*byte]), i == huge.len() - 1, "byte {i}");
        }
        // Just over the limit in a 16-bit or 64-bit length, and at the limit.
        let over = (MAX_MESSAGE_BYTES + 1) as u64;
        let mut header = vec![0x82, 0xff];
        header.extend(over.to_be_bytes());
        header.extend([0, 0, 0, 0]);
        assert!(FrameSizes::default().feed(&header));
        let mut at = vec![0x82, 0xff];
        at.extend((MAX_MESSAGE_BYTES as u64).to_be_bytes());
        at.extend([0, 0, 0, 0]);
        let mut sizes = FrameSizes::default();
        assert!(!sizes.feed(&at));
        // Its payload passes, then the next header is read.
        assert!(!sizes.feed(&vec![0; MAX_MESSAGE_BYTES]));
        assert!(!sizes.feed(&small));
        assert!(sizes.feed(&header));
    }
}
