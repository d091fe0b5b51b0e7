//! One contract on every protocol: the same requests over HTTP/1.1, h2c (HTTP/2 with prior
//! knowledge on the cleartext port), HTTP/1.1 over TLS and HTTP/2 over TLS get the same
//! statuses, the same contract headers and the same bodies (a greeting's random word aside).
//!
//! The client is hyper's, over tokio-rustls for TLS, and checks the protocol it got: a server
//! that answers an h2 client with HTTP/1.1 (or ALPN that settles on another protocol) fails
//! here rather than counting as an answer. The raw HTTP/1 cases of [`crate::cases`] stay
//! HTTP/1-only: what they send (no `Host`, broken heads) has no HTTP/2 spelling.
//!
//! Where HTTP/2 itself differs, the comparison leaves it out: HTTP/2 has no `Connection`
//! header (and hyper's client refuses a response with one), `:authority` stands for `Host`,
//! and a response's length may come from its frames alone.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{anyhow, bail};
use greet_core::{paths, WORDS};
use greet_probe::tls::{client_config, server_name, Trust};
use greet_probe::Protocol;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::{Request, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// How long one exchange may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The HTTP version `protocol` speaks.
fn version(protocol: Protocol) -> Version {
    if protocol.http2() {
        Version::HTTP_2
    } else {
        Version::HTTP_11
    }
}

/// A response as the comparison needs it.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The protocol it came over.
    pub version: Version,
    /// Its status.
    pub status: u16,
    /// Its headers.
    pub headers: hyper::HeaderMap,
    /// Its body.
    pub body: Bytes,
}

impl Answer {
    /// Header `name`'s value as text, or `-`.
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
    }
}

/// `method target` to the server at `addr` over `protocol`, on a connection of its own;
/// `trust` is what a TLS client accepts. Fails on anything but an answer over `protocol`.
pub async fn fetch(
    addr: SocketAddr,
    protocol: Protocol,
    trust: &Trust,
    method: &str,
    target: &str,
) -> anyhow::Result<Answer> {
    tokio::time::timeout(TIMEOUT, exchange(addr, protocol, trust, method, target))
        .await
        .map_err(|_| anyhow!("{protocol} {method} {target}: no answer within {TIMEOUT:?}"))?
        .map_err(|why| anyhow!("{protocol} {method} {target}: {why:#}"))
}

async fn exchange(
    addr: SocketAddr,
    protocol: Protocol,
    trust: &Trust,
    method: &str,
    target: &str,
) -> anyhow::Result<Answer> {
    Connection::open(addr, protocol, trust)
        .await?
        .send(method, target)
        .await
}

/// A client connection over one protocol, for more than one exchange.
#[derive(Debug)]
pub struct Connection {
    addr: SocketAddr,
    protocol: Protocol,
    sender: Sender,
    /// Ends when the connection does.
    closed: tokio::task::JoinHandle<()>,
}

#[derive(Debug)]
enum Sender {
    Http1(hyper::client::conn::http1::SendRequest<Empty<Bytes>>),
    Http2(hyper::client::conn::http2::SendRequest<Empty<Bytes>>),
}

impl Connection {
    /// Connects to `addr` and sets `protocol` up (TLS and ALPN, HTTP/2's handshake); `trust`
    /// is what a TLS client accepts.
    pub async fn open(
        addr: SocketAddr,
        protocol: Protocol,
        trust: &Trust,
    ) -> anyhow::Result<Connection> {
        let tcp = TcpStream::connect(addr)
            .await
            .map_err(|e| anyhow!("connect: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let (sender, closed) = if protocol.tls() {
            let config = client_config(trust, &[protocol.alpn()])?;
            let stream = TlsConnector::from(config)
                .connect(server_name(addr), tcp)
                .await
                .map_err(|e| anyhow!("TLS handshake: {e}"))?;
            let alpn = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
            if alpn.as_deref() != Some(protocol.alpn()) {
                bail!(
                    "ALPN settled on {:?}, not {:?}",
                    alpn.map(|p| String::from_utf8_lossy(&p).into_owned()),
                    String::from_utf8_lossy(protocol.alpn())
                );
            }
            handshake(TokioIo::new(stream), protocol.http2()).await?
        } else {
            handshake(TokioIo::new(tcp), protocol.http2()).await?
        };
        Ok(Connection {
            addr,
            protocol,
            sender,
            closed,
        })
    }

    /// `targets` as concurrent streams of this HTTP/2 connection, all sent before any answer
    /// is read: pipelining, as HTTP/2 spells it. The answers, in the order of `targets`.
    pub async fn send_together(&self, targets: &[String]) -> anyhow::Result<Vec<Answer>> {
        let Sender::Http2(sender) = &self.sender else {
            bail!("{} has no streams", self.protocol);
        };
        let sends = targets.iter().map(|target| {
            let mut sender = sender.clone();
            let request = self.request("GET", target);
            async move {
                let response = sender
                    .send_request(request?)
                    .await
                    .map_err(|e| anyhow!("GET {target}: {e}"))?;
                self.answer(response).await
            }
        });
        futures_util::future::try_join_all(sends).await
    }

    /// `method target` on this connection; fails on anything but an answer over its protocol.
    pub async fn send(&mut self, method: &str, target: &str) -> anyhow::Result<Answer> {
        let request = self.request(method, target)?;
        let response = match &mut self.sender {
            Sender::Http1(sender) => sender.send_request(request).await,
            Sender::Http2(sender) => sender.send_request(request).await,
        }
        .map_err(|e| anyhow!("request: {e}"))?;
        self.answer(response).await
    }

    fn request(&self, method: &str, target: &str) -> anyhow::Result<Request<Empty<Bytes>>> {
        let scheme = if self.protocol.tls() { "https" } else { "http" };
        let builder = Request::builder().method(method);
        // HTTP/2 names scheme and authority in pseudo-headers; HTTP/1.1 sends `Host`.
        let builder = if self.protocol.http2() {
            builder.uri(format!("{scheme}://{}{target}", self.addr))
        } else {
            builder.uri(target).header("host", self.addr.to_string())
        };
        builder
            .body(Empty::<Bytes>::new())
            .map_err(|e| anyhow!("bad request: {e}"))
    }

    /// The answer `response` makes, read to its end; an answer over another protocol fails.
    async fn answer(
        &self,
        response: hyper::Response<hyper::body::Incoming>,
    ) -> anyhow::Result<Answer> {
        let (parts, body) = response.into_parts();
        let body = body
            .collect()
            .await
            .map_err(|e| anyhow!("body: {e}"))?
            .to_bytes();
        if parts.version != version(self.protocol) {
            bail!("answered over {:?}", parts.version);
        }
        Ok(Answer {
            version: parts.version,
            status: parts.status.as_u16(),
            headers: parts.headers,
            body,
        })
    }

    /// Waits up to `limit` for the server to close the connection, the client keeping it
    /// open meanwhile; `false` if it is still open.
    pub async fn closed_within(&mut self, limit: Duration) -> bool {
        tokio::time::timeout(limit, &mut self.closed).await.is_ok()
    }
}

async fn handshake<I>(io: I, http2: bool) -> anyhow::Result<(Sender, tokio::task::JoinHandle<()>)>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    if http2 {
        let (sender, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
            .await
            .map_err(|e| anyhow!("HTTP/2 handshake: {e}"))?;
        let closed = tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok((Sender::Http2(sender), closed))
    } else {
        let (sender, conn) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(|e| anyhow!("HTTP/1.1 handshake: {e}"))?;
        let closed = tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok((Sender::Http1(sender), closed))
    }
}

/// HTTP/2's pipelining: 16 requests as streams of one connection, sent together (a store read
/// first, quick ones after), each answered as it would be alone.
pub async fn streams_answer_together(
    addr: SocketAddr,
    protocol: Protocol,
    trust: &Trust,
) -> anyhow::Result<()> {
    let targets = crate::cases::pipelined_targets();
    let connection = Connection::open(addr, protocol, trust).await?;
    let answers = tokio::time::timeout(TIMEOUT, connection.send_together(&targets))
        .await
        .map_err(|_| anyhow!("{protocol}: 16 streams not answered within {TIMEOUT:?}"))??;
    for (target, answer) in targets.iter().zip(&answers) {
        let alone = fetch(addr, protocol, trust, "GET", target).await?;
        if essence(answer) != essence(&alone) {
            bail!(
                "{protocol} {target} as one of 16 streams: {:?}, alone: {:?}",
                essence(answer),
                essence(&alone)
            );
        }
    }
    Ok(())
}

/// The idle limit for a client that opens an h2c connection (preface and SETTINGS) and then
/// reads nothing, so never answers the PING of a graceful GOAWAY: the server must still
/// close it, within twice [`greet_core::limits::IDLE_TIMEOUT`] (the limit, then as long
/// again for a graceful close). Takes 12 s.
pub async fn silent_h2c_connection_is_closed(addr: SocketAddr) -> anyhow::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let bound = greet_core::limits::IDLE_TIMEOUT * 2 + Duration::from_secs(2);
    let mut tcp = TcpStream::connect(addr)
        .await
        .map_err(|e| anyhow!("connect: {e}"))?;
    let hello = [
        &b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"[..],
        &[0, 0, 0, 4, 0, 0, 0, 0, 0],
    ]
    .concat();
    tcp.write_all(&hello)
        .await
        .map_err(|e| anyhow!("preface: {e}"))?;
    tokio::time::sleep(bound).await;
    let mut frames = Vec::new();
    let read = tokio::time::timeout(Duration::from_millis(500), tcp.read_to_end(&mut frames));
    match read.await {
        Ok(_) => Ok(()),
        Err(_) => Err(anyhow!(
            "a silent h2c client still connected after {bound:?} ({} bytes from the server)",
            frames.len()
        )),
    }
}

/// The idle limit on `protocol`: `GET target` on a connection of its own, which must be
/// answered (a request in flight is never idle, however long it takes), then the time from
/// the answer until the server closes the connection, which must be within a second or two
/// of [`greet_core::limits::IDLE_TIMEOUT`].
pub async fn idle_connection_is_closed(
    addr: SocketAddr,
    protocol: Protocol,
    trust: &Trust,
    target: &str,
) -> anyhow::Result<Duration> {
    let limit = greet_core::limits::IDLE_TIMEOUT;
    let mut conn = Connection::open(addr, protocol, trust).await?;
    let answer = tokio::time::timeout(TIMEOUT, conn.send("GET", target))
        .await
        .map_err(|_| anyhow!("{protocol} GET {target}: no answer within {TIMEOUT:?}"))?
        .map_err(|why| anyhow!("{protocol} GET {target}: {why:#}"))?;
    if answer.status != 200 {
        bail!("{protocol} GET {target}: {}", answer.status);
    }
    let answered = std::time::Instant::now();
    if !conn.closed_within(limit + Duration::from_secs(2)).await {
        bail!(
            "{protocol}: still open {:?} after the answer",
            answered.elapsed()
        );
    }
    let idle = answered.elapsed();
    if idle < limit - Duration::from_millis(500) {
        bail!("{protocol}: closed {idle:?} after the answer, before the idle limit");
    }
    Ok(idle)
}

/// The requests every protocol must answer alike, one per rule they exercise: a greeting, a
/// HEAD, bad input (a bad escape, a long name), a POST with no JSON (415), a method not
/// allowed, an empty upload and a GET of `/upload` (405), a static file, a GET of `/ws` that
/// is no handshake (400) and a POST (405), health, an unknown path, and the store-bound
/// routes.
pub fn requests() -> Vec<(&'static str, String)> {
    let long = "a".repeat(greet_core::name::MAX_NAME_CHARS + 1);
    vec![
        ("GET", format!("{}?name=Ana", paths::GREETINGS)),
        ("HEAD", format!("{}?name=Ana", paths::GREETINGS)),
        ("GET", format!("{}?name=Ana", paths::GREETINGS_BLOCKING)),
        ("GET", format!("{}?name=%ZZ", paths::GREETINGS)),
        ("GET", format!("{}?name={long}", paths::GREETINGS)),
        ("POST", paths::GREETINGS.to_owned()),
        ("PUT", paths::GREETINGS.to_owned()),
        ("POST", paths::UPLOAD.to_owned()),
        ("GET", paths::UPLOAD.to_owned()),
        ("GET", format!("{}css/style.css", paths::STATIC)),
        ("GET", paths::WS.to_owned()),
        ("POST", paths::WS.to_owned()),
        ("GET", paths::HEALTH.to_owned()),
        ("GET", "/nowhere".to_owned()),
        ("GET", paths::DB.to_owned()),
        ("GET", format!("{}?queries=3", paths::QUERIES)),
        ("GET", format!("{}?name=user-00001", paths::BUSINESS)),
        ("GET", paths::JSON.to_owned()),
        ("GET", paths::PLAINTEXT.to_owned()),
        ("GET", paths::FORTUNES.to_owned()),
        ("GET", format!("{}?queries=3", paths::UPDATES)),
        ("GET", format!("{}?count=3", paths::CACHED_QUERIES)),
    ]
}

/// The headers of the contract, compared across protocols.
const CONTRACT_HEADERS: [&str; 5] = [
    "content-type",
    "content-length",
    "server",
    greet_core::NOSNIFF_HEADER,
    "allow",
];

/// What of `answer` must be the same on every protocol: status, contract headers, and the
/// body with what is random in it replaced by its shape (a greeting's word and length, a
/// row's numbers, a visit count).
pub fn essence(answer: &Answer) -> String {
    let headers: Vec<String> = CONTRACT_HEADERS
        .iter()
        .map(|&name| {
            let value = answer.header(name);
            // A greeting's length follows its random word: what must hold is that it is the
            // body's (or, answering HEAD, there).
            let value = match value.parse::<usize>() {
                Ok(n) if name == "content-length" && n == answer.body.len() => "the body's",
                Ok(_) if name == "content-length" && answer.body.is_empty() => "given",
                _ => value,
            };
            format!("{name}: {value}")
        })
        .collect();
    let body = String::from_utf8_lossy(&answer.body);
    let body = match body.split_once(' ') {
        // `<word> Ana!`: the word is random, and must be one of the list.
        Some((word, rest)) if WORDS.contains(&word) => format!("<word> {rest}"),
        _ => digits_as_n(&body),
    };
    format!("{} | {} | {body}", answer.status, headers.join(" | "))
}

/// `text` with each run of digits as `N`: a row's id and number, a visit count.
fn digits_as_n(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// Checks that `protocols` each answer every one of [`requests`] as HTTP/1.1 in cleartext does
/// at `cleartext`; `tls` is the same server's TLS port, if any, with what its client trusts.
pub async fn answers_alike(
    cleartext: SocketAddr,
    tls: Option<(SocketAddr, Trust)>,
) -> anyhow::Result<()> {
    for (method, target) in requests() {
        let reference = fetch(cleartext, Protocol::Http1, &Trust::Any, method, &target).await?;
        let expected = essence(&reference);
        for protocol in Protocol::ALL.into_iter().skip(1) {
            let (addr, trust) = match (&tls, protocol.tls()) {
                (_, false) => (cleartext, Trust::Any),
                (Some((addr, trust)), true) => (*addr, trust.clone()),
                (None, true) => continue,
            };
            let answer = fetch(addr, protocol, &trust, method, &target).await?;
            let got = essence(&answer);
            if got != expected {
                bail!(
                    "{protocol} {method} {}: {got:?}, HTTP/1.1 gave {expected:?}",
                    crate::cases::elide(&target, 40)
                );
            }
        }
    }
    Ok(())
}

/// Checks a TLS port, which has no cleartext reference (the raw HTTP/1.1 cases of the contract
/// need one): every one of [`requests`] is answered alike over HTTP/2 and over HTTP/1.1, and
/// the greeting is one.
pub async fn tls_answers_alike(addr: SocketAddr, trust: &Trust) -> anyhow::Result<()> {
    for (i, (method, target)) in requests().into_iter().enumerate() {
        let reference = fetch(addr, Protocol::Https, trust, method, &target).await?;
        if i == 0 {
            let body = String::from_utf8_lossy(&reference.body);
            let greets = body
                .split_once(' ')
                .is_some_and(|(word, rest)| WORDS.contains(&word) && rest == "Ana!");
            if reference.status != 200 || !greets {
                bail!(
                    "https {method} {target}: {} {body:?}, not a greeting",
                    reference.status
                );
            }
        }
        let expected = essence(&reference);
        let got = essence(&fetch(addr, Protocol::H2, trust, method, &target).await?);
        if got != expected {
            bail!(
                "h2 {method} {}: {got:?}, https gave {expected:?}",
                crate::cases::elide(&target, 40)
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn essence_keeps_the_contract_and_drops_the_random() {
        assert_eq!(
            digits_as_n(r#"{"id":4211,"randomNumber":77}"#),
            r#"{"id":N,"randomNumber":N}"#
        );
        let names: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["http1", "h2c", "https", "h2"]);
        assert!(Protocol::H2.tls() && Protocol::H2.http2() && !Protocol::Https.http2());
    }
}
