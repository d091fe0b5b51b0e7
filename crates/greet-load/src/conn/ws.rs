//! A WebSocket user's exchange ([`Wire::websocket`]): on the connection's first use, the
//! handshake (after TCP and TLS, timed as any connection's); then per request one message
//! out and its echo back, valid when it is the message as sent. tokio-tungstenite is the
//! client, the one the servers' own tests and axum use.

use std::net::SocketAddr;
use std::time::Instant;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::WebSocketStream;

use super::{Connection, Io, Miss, Wire};
use crate::count::{ErrorKind, Opened};
use crate::message::RequestBody;

/// An open socket.
pub(super) type Socket = WebSocketStream<Io>;

/// What every request of a WebSocket load sends: the URL its handshake asks for, and the
/// message.
#[derive(Debug)]
pub(super) struct Echo {
    url: String,
    message: Message,
}

/// The message for `body`: its text as a text message, `size:N` as a binary one; without a
/// body, a short text.
pub(super) fn echo(
    addr: SocketAddr,
    target: &str,
    body: Option<&RequestBody>,
    wire: &Wire,
) -> Echo {
    let scheme = if wire.protocol.tls() { "wss" } else { "ws" };
    let message = match body {
        Some(RequestBody::Text(text)) => Message::text(text.as_str()),
        Some(body) => Message::Binary(body.bytes()),
        None => Message::Binary(Bytes::from_static(b"greet-load echo")),
    };
    Echo {
        url: format!("{scheme}://{addr}{target}"),
        message,
    }
}

impl Connection {
    /// One message and its echo, the socket opened first when there is none.
    pub(super) async fn exchange_ws(
        &mut self,
        echo: &Echo,
        sent: Instant,
        connect: &mut Option<Opened>,
    ) -> Result<(), Miss> {
        let reused = self.ws.is_some();
        if !reused {
            let (io, opened) = self.wire.open(self.addr, sent).await?;
            *connect = Some(opened);
            let socket = match tokio_tungstenite::client_async(echo.url.as_str(), io).await {
                Ok((socket, _)) => socket,
                Err(tungstenite::Error::Http(res)) => {
                    // Refused: the answer is kept for the light check's message (tungstenite
                    // reads the head alone, so its body is there only when it said so).
                    self.status = res.status().as_u16();
                    self.buf = res.into_body().unwrap_or_default();
                    return Err(Miss::Failed(ErrorKind::Status));
                }
                Err(_) => return Err(Miss::Failed(ErrorKind::Protocol)),
            };
            self.ws = Some(socket);
        }
        let Some(socket) = self.ws.as_mut() else {
            return Err(Miss::Failed(ErrorKind::Connect));
        };
        // The server closes an idle socket: nothing of an echo came, so it may go again.
        let gone = if reused {
            Miss::Stale
        } else {
            Miss::Failed(ErrorKind::Io)
        };
        if socket.send(echo.message.clone()).await.is_err() {
            return Err(gone);
        }
        loop {
            return match socket.next().await {
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                Some(Ok(Message::Close(_))) | None => Err(gone),
                Some(Ok(answer)) => {
                    self.status = 101;
                    self.echoed = answer.len();
                    if answer == echo.message {
                        Ok(())
                    } else {
                        Err(Miss::Failed(ErrorKind::Body))
                    }
                }
                Some(Err(_)) => Err(gone),
            };
        }
    }

    /// Closes the socket as a client should, with a close frame, without waiting long.
    pub(super) async fn close_ws(&mut self) {
        if let Some(mut socket) = self.ws.take() {
            let closing = socket.close(None);
            let _ = tokio::time::timeout(std::time::Duration::from_millis(100), closing).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use greet_conformance::spawn::{quick, spawn};
    use greet_probe::Protocol;

    use crate::conn::{check_request, Unanswered};
    use crate::expect::{Check, Expect};
    use crate::run::run;
    use crate::work::{Load, Work};
    use crate::Wire;

    fn load(addr: std::net::SocketAddr, target: &str, body: &str, work: Work) -> Load {
        Load {
            addr,
            target: target.to_owned(),
            headers: Vec::new(),
            body: Some(body.parse().expect("a body")),
            check: Check::for_target("/ws", &Expect::Any),
            timeout: Duration::from_secs(5),
            wire: Wire::default().websocket(true),
            work,
        }
    }

    /// One socket per request on fresh connections, each echo whole; a text message comes
    /// back as text.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn fresh_sockets_echo_each_message() {
        let server = spawn(greet_hyper::run, quick()).expect("greet-hyper starts");
        let work = Work::Fresh {
            concurrency: 4,
            requests: 20,
        };
        let load = load(server.addr(), "/ws", "text:Olá, sockets!", work);
        let f = run(&load, Arc::default()).await.tally().figures();
        assert_eq!(
            (f.requests, f.success_rate, f.connects),
            (20, 100.0, 20),
            "{f:?}"
        );
        assert_eq!(f.bytes_per_answer, Some("Olá, sockets!".len() as f64));
    }

    /// A target that is no WebSocket is refused at the handshake, and the light check says
    /// what came back.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_refused_handshake_fails_the_check() {
        let server = spawn(greet_hyper::run, quick()).expect("greet-hyper starts");
        let wire = Wire::new(Protocol::Http1, &greet_probe::tls::Trust::Any)
            .expect("a wire")
            .websocket(true);
        let body = "size:10".parse().expect("a body");
        let check = Check::for_target("/ws", &Expect::Any);
        let target = ("/health", &[][..], Some(&body));
        let refused = check_request(server.addr(), &wire, target, &check, Duration::from_secs(5));
        let why = refused.await.expect_err("not a socket").why;
        assert!(
            matches!(&why, Unanswered::Refused { status: 200, .. }),
            "{why:?}"
        );
        let target = ("/ws", &[][..], Some(&body));
        let echoed = check_request(server.addr(), &wire, target, &check, Duration::from_secs(5));
        assert_eq!(echoed.await, Ok(()));
    }
}
