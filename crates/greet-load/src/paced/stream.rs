//! A connection of the event loop: a nonblocking TCP stream, or TLS over one with rustls's
//! sans-I/O client between the engine's reads and writes and the socket's. An engine reads
//! and writes plaintext either way, as on a nonblocking socket: `WouldBlock` when the socket
//! has nothing more, or cannot take more.
//!
//! Over TLS a write hands the plaintext to rustls (which holds it until the handshake is
//! done) and sends what records it can; what the socket could not take waits for the next
//! writable edge, where the engine calls [`Stream::flush`]. A read feeds the socket's bytes
//! to rustls and sends whatever the handshake asks for in return, so the handshake goes on
//! inside the engine's reads, with no state of its own in the engine.

use std::io::{self, ErrorKind as IoKind, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use greet_probe::tls::server_name;
use mio::net::TcpStream;
use mio::{Interest, Registry, Token};
use rustls::{ClientConfig, ClientConnection, HandshakeKind};

use crate::count::Opened;

/// One connection, cleartext or TLS.
pub(super) struct Stream {
    tcp: TcpStream,
    tls: Option<Box<Tls>>,
}

/// TLS's side of a [`Stream`].
struct Tls {
    conn: ClientConnection,
    /// The protocol ALPN must agree on.
    alpn: &'static [u8],
    /// When the TCP connect was done, then how long the handshake took after it.
    began: Instant,
    handshake: Option<Duration>,
}

impl Stream {
    /// Begins a connect to `addr` (done when the socket is writable), registered with
    /// `registry` as `token`; over TLS when `tls` is given, agreeing on its ALPN protocol.
    pub(super) fn connect(
        addr: SocketAddr,
        tls: Option<(&Arc<ClientConfig>, &'static [u8])>,
        registry: &Registry,
        token: Token,
    ) -> io::Result<Self> {
        let tls = match tls {
            Some((config, alpn)) => {
                let conn = ClientConnection::new(Arc::clone(config), server_name(addr))
                    .map_err(io::Error::other)?;
                Some(Box::new(Tls {
                    conn,
                    alpn,
                    began: Instant::now(),
                    handshake: None,
                }))
            }
            None => None,
        };
        let mut tcp = TcpStream::connect(addr)?;
        let _ = tcp.set_nodelay(true);
        registry.register(&mut tcp, token, Interest::READABLE | Interest::WRITABLE)?;
        Ok(Self { tcp, tls })
    }

    /// Whether the connect is done: `Ok(false)` while it goes on, an error when it failed.
    /// Over TLS the handshake is timed from the first `Ok(true)`.
    pub(super) fn connected(&mut self) -> io::Result<bool> {
        match (self.tcp.take_error(), self.tcp.peer_addr()) {
            (Ok(None), Ok(_)) => {
                if let Some(tls) = self.tls.as_mut() {
                    tls.began = Instant::now();
                }
                Ok(true)
            }
            (Ok(None), Err(e)) if e.kind() == IoKind::NotConnected => Ok(false),
            (Ok(Some(e)) | Err(e), _) | (Ok(None), Err(e)) => Err(e),
        }
    }

    /// Over TLS, once the handshake is done: how long it took, and whether it resumed a
    /// session, into the `opened` of the request that opened the connection.
    pub(super) fn handshaken(&self, opened: &mut Opened) {
        if let Some(tls) = self.tls.as_ref().filter(|_| opened.tls.is_none()) {
            opened.tls = tls.handshake;
            opened.resumed = tls.conn.handshake_kind() == Some(HandshakeKind::Resumed);
        }
    }

    /// Whether an error now is the handshake's: the connection never opened.
    pub(super) fn handshaking(&self) -> bool {
        self.tls.as_ref().is_some_and(|tls| tls.handshake.is_none())
    }

    /// Leaves the poll.
    pub(super) fn deregister(&mut self, registry: &Registry) {
        let _ = registry.deregister(&mut self.tcp);
    }
}

/// Writes the records `conn` holds to `tcp`, as far as it takes them.
fn send(conn: &mut ClientConnection, tcp: &mut TcpStream) -> io::Result<()> {
    while conn.wants_write() {
        match conn.write_tls(tcp) {
            Ok(0) => return Err(IoKind::WriteZero.into()),
            Ok(_) => {}
            Err(e) if e.kind() == IoKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == IoKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(tls) = self.tls.as_mut() else {
            return self.tcp.write(buf);
        };
        let mut n = tls.conn.writer().write(buf)?;
        send(&mut tls.conn, &mut self.tcp)?;
        if n == 0 && !buf.is_empty() {
            // rustls's buffer was full; what it held may just have gone out.
            n = tls.conn.writer().write(buf)?;
            send(&mut tls.conn, &mut self.tcp)?;
            if n == 0 {
                // The socket refused records: its writable edge will come.
                return Err(IoKind::WouldBlock.into());
            }
        }
        Ok(n)
    }

    /// Writes the TLS records rustls holds, as far as the socket takes them.
    fn flush(&mut self) -> io::Result<()> {
        match self.tls.as_mut() {
            Some(tls) => send(&mut tls.conn, &mut self.tcp),
            None => Ok(()),
        }
    }
}

impl Read for Stream {
    /// Plaintext, `Ok(0)` once the peer closed (over TLS with or without its close_notify:
    /// a close is how a close-delimited body ends, as on cleartext).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Self { tcp, tls } = self;
        let Some(tls) = tls.as_mut() else {
            return tcp.read(buf);
        };
        loop {
            match tls.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == IoKind::WouldBlock => {}
                Err(e) if e.kind() == IoKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            match tls.conn.read_tls(tcp) {
                Ok(_) => {}
                Err(e) if e.kind() == IoKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            tls.conn
                .process_new_packets()
                .map_err(|e| io::Error::new(IoKind::InvalidData, e))?;
            if tls.handshake.is_none() && !tls.conn.is_handshaking() {
                if tls.conn.alpn_protocol() != Some(tls.alpn) {
                    return Err(io::Error::new(IoKind::InvalidData, "ALPN disagreed"));
                }
                tls.handshake = Some(tls.began.elapsed());
            }
            // The handshake's next flight, and what was written before it was done.
            send(&mut tls.conn, tcp)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use greet_conformance::spawn::{quick, spawn, Spawned};
    use greet_probe::tls::Trust;
    use greet_probe::Protocol;
    use greet_server::ServerConfig;

    use super::super::event::on_loop;
    use super::super::{http1, http2, PacedTally};
    use crate::conn::Wire;
    use crate::schedule::Schedule;

    fn hyper_over_tls() -> Spawned {
        let config = ServerConfig {
            tls_self_signed: true,
            ..quick()
        };
        spawn(greet_hyper::run, config).expect("greet-hyper starts")
    }

    /// 1000 requests a second for one second on `(slots, streams)` over `protocol`, trusting
    /// `trust`, on the engine the protocol takes.
    async fn paced_over(
        server: &Spawned,
        protocol: Protocol,
        trust: &Trust,
        (slots, streams): (usize, usize),
    ) -> PacedTally {
        let schedule =
            Schedule::constant(1000.0, Duration::from_secs(1), slots).with_streams(streams);
        let wire = Wire::new(protocol, trust).unwrap();
        let engine = if protocol.http2() {
            http2::paced
        } else {
            http1::paced
        };
        on_loop(engine, (server.addr(), wire), schedule, 5000).await
    }

    fn trusting(server: &Spawned) -> Trust {
        Trust::Certificate(server.certificate().expect("over TLS").clone())
    }

    /// HTTPS on the loop: every answer valid, on connections kept open, each opened by one
    /// full handshake, timed.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn https_answers_on_kept_alive_connections() {
        let server = hyper_over_tls();
        let tally = paced_over(&server, Protocol::Https, &trusting(&server), (4, 1)).await;
        let f = tally.corrected.figures();
        assert_eq!((f.requests, f.success_rate), (1000, 100.0), "{f:?}");
        assert!(f.connects <= 4, "kept alive: {f:?}");
        let handshakes = f.handshake_ms.expect("handshakes timed");
        assert_eq!(handshakes.count, f.connects, "{handshakes:?}");
        assert!(handshakes.p50 > 0.0, "{handshakes:?}");
    }

    /// h2 on the loop: streams share connections agreed on by ALPN.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn h2_streams_share_tls_connections() {
        let server = hyper_over_tls();
        let tally = paced_over(&server, Protocol::H2, &trusting(&server), (8, 4)).await;
        let f = tally.corrected.figures();
        assert_eq!((f.requests, f.success_rate), (1000, 100.0), "{f:?}");
        assert!(f.connects <= 2, "4 slots to a connection: {f:?}");
        assert_eq!(f.handshake_ms.map(|h| h.count), Some(f.connects));
    }

    /// A certificate the client does not trust: every request fails to connect, over either
    /// engine.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_untrusted_certificate_fails_to_connect() {
        let server = hyper_over_tls();
        let other = trusting(&hyper_over_tls());
        for (protocol, slots) in [(Protocol::Https, (2, 1)), (Protocol::H2, (4, 2))] {
            let tally = paced_over(&server, protocol, &other, slots).await;
            let errors: Vec<_> = tally.corrected.figures().errors.into_iter().collect();
            assert_eq!(errors, [("connect".to_owned(), 1000)], "{protocol}");
        }
    }
}
