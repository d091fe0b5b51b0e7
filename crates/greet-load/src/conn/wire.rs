//! How the load reaches a server ([`Wire`]): the protocol, TLS's client configuration
//! (ALPN, session resumption), and a new connection opened on it (TCP, then the handshake),
//! as the byte stream every exchange goes over ([`Io`]). Apart from the exchanges
//! (`mod.rs`, `pipelined.rs`, `ws.rs`), which only write and read on what this opens.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use greet_probe::tls::{client_config, server_name, Trust};
use greet_probe::Protocol;
use rustls::{ClientConfig, HandshakeKind};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::count::{ErrorKind, Opened};

/// How the load reaches a server: the protocol, and over TLS the client's configuration (the
/// certificate it trusts, ALPN offering the protocol alone, and no session resumption unless
/// asked for ([`Wire::resuming`]), so that every fresh connection makes a full handshake, as
/// a new client per request does).
#[derive(Clone)]
pub struct Wire {
    /// The protocol every request goes over.
    pub protocol: Protocol,
    tls: Option<Arc<ClientConfig>>,
    resume: bool,
    websocket: bool,
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Wire({})", self.protocol)
    }
}

impl Default for Wire {
    fn default() -> Self {
        Self {
            protocol: Protocol::Http1,
            tls: None,
            resume: false,
            websocket: false,
        }
    }
}

impl Wire {
    /// `protocol`, trusting `trust` when it is over TLS.
    pub fn new(protocol: Protocol, trust: &Trust) -> Result<Self, rustls::Error> {
        let tls = if protocol.tls() {
            let config = client_config(trust, &[protocol.alpn()])?;
            let mut config = (*config).clone();
            config.resumption = rustls::client::Resumption::disabled();
            Some(Arc::new(config))
        } else {
            None
        };
        Ok(Self {
            protocol,
            tls,
            resume: false,
            websocket: false,
        })
    }

    /// With `websocket`, each connection is a WebSocket (over HTTP/1.1, in cleartext or
    /// TLS) opened on the load's target, and each request one message echoed on it: the
    /// load's body, a text message for `text:…` and a binary one for `size:N`.
    pub fn websocket(mut self, websocket: bool) -> Self {
        self.websocket = websocket;
        self
    }

    /// Whether its connections are WebSockets ([`Wire::websocket`]).
    pub fn is_websocket(&self) -> bool {
        self.websocket
    }

    /// Over TLS with `resume`, each handshake after the first resumes a session an earlier
    /// one left (TLS 1.3's tickets, kept in memory for the whole load), as a browser or an
    /// HTTP client library does; without it, every handshake is full, as a new client's.
    pub fn resuming(mut self, resume: bool) -> Self {
        if let Some(config) = self.tls.as_mut().filter(|_| resume) {
            let mut resuming = (**config).clone();
            resuming.resumption = rustls::client::Resumption::default();
            *config = Arc::new(resuming);
            self.resume = true;
        }
        self
    }

    /// Whether its handshakes resume sessions ([`Wire::resuming`]).
    pub fn resumes(&self) -> bool {
        self.resume
    }

    /// Over TLS, the client's configuration and the protocol ALPN must agree on.
    pub(crate) fn tls(&self) -> Option<(&Arc<ClientConfig>, &'static [u8])> {
        self.tls
            .as_ref()
            .map(|config| (config, self.protocol.alpn()))
    }

    /// A new connection to `addr`: TCP, then the TLS handshake, which must agree on the
    /// protocol asked for; how long each took, the connect timed from `sent`.
    pub(super) async fn open(
        &self,
        addr: SocketAddr,
        sent: Instant,
    ) -> Result<(Io, Opened), ErrorKind> {
        let tcp = TcpStream::connect(addr)
            .await
            .map_err(|_| ErrorKind::Connect)?;
        let connected = Instant::now();
        let mut opened = Opened::tcp(connected - sent);
        let _ = tcp.set_nodelay(true);
        let Some(tls) = &self.tls else {
            return Ok((Io::Tcp(tcp), opened));
        };
        let stream = TlsConnector::from(Arc::clone(tls))
            .connect(server_name(addr), tcp)
            .await
            .map_err(|_| ErrorKind::Connect)?;
        opened.tls = Some(connected.elapsed());
        opened.resumed = stream.get_ref().1.handshake_kind() == Some(HandshakeKind::Resumed);
        if stream.get_ref().1.alpn_protocol() != Some(self.protocol.alpn()) {
            return Err(ErrorKind::Protocol);
        }
        Ok((Io::Tls(Box::new(stream)), opened))
    }
}

/// A connection's byte stream, in cleartext or over TLS.
pub(super) enum Io {
    Tcp(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for Io {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Io::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Io::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Io::Tcp(s) => Pin::new(s).poll_flush(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Io::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
