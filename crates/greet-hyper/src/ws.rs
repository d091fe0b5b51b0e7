//! `GET /ws` on hyper: the shared handshake check ([`greet_hyper_serve::ws::check`]), hyper's
//! own upgrade, and tokio-tungstenite on the upgraded connection, which is what hyper's users
//! run WebSockets with (hyper has none of its own; axum's extractor is tokio-tungstenite too).
//! The echo is the shared one ([`greet_core::ws::echo`]); [`Tungstenite`] is how it reads and
//! writes.

use futures_util::{SinkExt, StreamExt};
use greet_core::ws::{self, Close, Event, Socket, MAX_MESSAGE_BYTES};
use greet_core::GreetError;
use greet_server::Api;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{
    HeaderValue, CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SERVER, UPGRADE,
};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use greet_hyper_serve::response;
use greet_hyper_serve::ws::{check, event_of};

/// `/ws`: the handshake checked ([`check`]: 405 but for GET, 400 but for a handshake), then
/// `101 Switching Protocols`, and the echo on a task of its own once hyper hands the connection over.
pub fn ws<B>(server: &'static str, api: &Api, req: Request<B>) -> Response<Full<Bytes>> {
    let accept = match check(&req) {
        Ok(()) => req
            .headers()
            .get(SEC_WEBSOCKET_KEY)
            .map(|key| derive_accept_key(key.as_bytes())),
        Err(err) => return response(server, err.into()),
    };
    let Some(Ok(accept)) = accept.map(HeaderValue::try_from) else {
        return response(server, GreetError::BadHandshake.into());
    };
    let session = api.sockets.open();
    let upgrade = hyper::upgrade::on(req);
    tokio::spawn(async move {
        if let Ok(upgraded) = upgrade.await {
            let io = TokioIo::new(upgraded);
            let socket = WebSocketStream::from_raw_socket(io, Role::Server, Some(config())).await;
            ws::echo(Tungstenite(socket), session).await;
        }
    });
    let mut res = Response::new(Full::default());
    *res.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = res.headers_mut();
    headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(SEC_WEBSOCKET_ACCEPT, accept);
    headers.insert(SERVER, HeaderValue::from_static(server));
    res
}

/// tokio-tungstenite's limits set to the shared one: a frame, and a message of fragments.
fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES))
}

/// A tokio-tungstenite socket as the shared echo drives it. tungstenite answers pings and
/// a client's close itself, and sends the answer with the next read.
#[derive(Debug)]
pub struct Tungstenite<S>(pub WebSocketStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Socket for Tungstenite<S> {
    type Message = Message;

    async fn next(&mut self) -> Event<Message> {
        loop {
            return match self.0.next().await {
                None => Event::Ended,
                Some(Ok(message @ (Message::Text(_) | Message::Binary(_)))) => Event::Echo(message),
                // The answer goes with the next read, which then ends.
                Some(Ok(Message::Close(_))) => continue,
                Some(Ok(_)) => Event::Nothing,
                Some(Err(err)) => event_of(&err),
            };
        }
    }

    async fn send(&mut self, message: Message) -> Result<(), ()> {
        self.0.send(message).await.map_err(drop)
    }

    async fn close(mut self, close: Close) {
        let frame = CloseFrame {
            code: close.code.into(),
            reason: close.reason.into(),
        };
        if self.0.close(Some(frame)).await.is_ok() {
            while let Some(Ok(_)) = self.0.next().await {}
        }
    }
}
