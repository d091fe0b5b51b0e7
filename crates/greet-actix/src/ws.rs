//! `/ws` on actix-web: the shared handshake rule, then actix-ws, the WebSocket crate
//! actix-web's own docs now point to (actix-web-actors, the actor-based one, is deprecated).
//! The echo is the shared one ([`greet_core::ws::echo`]) on the worker's own thread.

use actix_web::http::{header, Version};
use actix_web::{web, HttpRequest, HttpResponse};
use actix_ws::{AggregatedMessage, AggregatedMessageStream, CloseReason, ProtocolError, Session};
use greet_core::ws::{self, Close, Event, Socket, MAX_MESSAGE_BYTES};
use greet_core::GreetError;
use greet_server::Api;

use crate::{respond, NAME};

/// `/ws`: 405 but for GET, 400 but for a handshake (the shared rule, before actix-ws answers
/// in its own words), then `101 Switching Protocols` and the echo on a task of its own.
pub(crate) async fn ws(api: web::Data<Api>, req: HttpRequest, body: web::Payload) -> HttpResponse {
    let fields = req
        .headers()
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()));
    let http11 = req.version() == Version::HTTP_11;
    if let Err(err) = ws::check_handshake(req.method().as_str(), http11, fields) {
        return respond(err.into());
    }
    let Ok((mut res, session, stream)) = actix_ws::handle(&req, body) else {
        return respond(GreetError::BadHandshake.into());
    };
    // Frames and whole messages alike: actix-ws limits each on its own.
    let stream = stream
        .max_frame_size(MAX_MESSAGE_BYTES)
        .aggregate_continuations()
        .max_continuation_size(MAX_MESSAGE_BYTES);
    let open = api.sockets.open();
    actix_web::rt::spawn(ws::echo(ActixWs { session, stream }, open));
    res.headers_mut()
        .insert(header::SERVER, header::HeaderValue::from_static(NAME));
    res
}

/// actix-ws's two halves as the shared echo drives them. actix-ws answers neither pings nor
/// a client's close: this does.
struct ActixWs {
    session: Session,
    stream: AggregatedMessageStream,
}

impl Socket for ActixWs {
    type Message = AggregatedMessage;

    async fn next(&mut self) -> Event<AggregatedMessage> {
        match self.stream.recv().await {
            None => Event::Ended,
            Some(Ok(AggregatedMessage::Ping(payload))) => {
                Event::Echo(AggregatedMessage::Pong(payload))
            }
            Some(Ok(AggregatedMessage::Close(reason))) => {
                let _ = self.session.clone().close(reason).await;
                Event::Ended
            }
            Some(Ok(AggregatedMessage::Pong(_))) => Event::Nothing,
            Some(Ok(message)) => Event::Echo(message),
            Some(Err(ProtocolError::Overflow)) => Event::TooBig,
            // The aggregator's own overflow carries no variant of its own, only these words.
            Some(Err(ProtocolError::Io(err)))
                if err.to_string() == "Exceeded maximum continuation size" =>
            {
                Event::TooBig
            }
            Some(Err(ProtocolError::Io(_))) => Event::Ended,
            Some(Err(_)) => Event::Broken,
        }
    }

    async fn send(&mut self, message: AggregatedMessage) -> Result<(), ()> {
        let sent = match message {
            AggregatedMessage::Text(text) => self.session.text(text).await,
            AggregatedMessage::Binary(bytes) => self.session.binary(bytes).await,
            AggregatedMessage::Pong(payload) => self.session.pong(&payload).await,
            AggregatedMessage::Ping(_) | AggregatedMessage::Close(_) => Ok(()),
        };
        sent.map_err(drop)
    }

    async fn close(mut self, close: Close) {
        let reason = CloseReason {
            code: close.code.into(),
            description: Some(close.reason.to_owned()),
        };
        if self.session.clone().close(Some(reason)).await.is_ok() {
            while let Some(Ok(_)) = self.stream.recv().await {}
        }
    }
}
