//! `/ws` on actix-web: the shared handshake rule, then actix-ws, the WebSocket crate
//! actix-web's own docs now point to (actix-web-actors, the actor-based one, is deprecated).
//! The echo is the shared one ([`greet_core::ws::echo`]) on the worker's own thread. Frames
//! are weighed by their headers as they come ([`weighed`]), where actix-http would wait for
//! the whole of one before it refused it.

use actix_http::BoxedPayloadStream;
use actix_web::error::PayloadError;
use actix_web::http::{header, Version};
use actix_web::{dev, web, FromRequest, HttpRequest, HttpResponse};
use actix_ws::{AggregatedMessage, AggregatedMessageStream, CloseReason, ProtocolError, Session};
use futures_util::StreamExt;
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
    let Ok(body) = weighed(&req, body).await else {
        return respond(GreetError::BadHandshake.into());
    };
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

/// `body` with each frame weighed by its header as it comes ([`ws::FrameSizes`]): actix-http
/// waits for a whole frame before it weighs it, so a frame declaring 16 GiB would be read on
/// rather than refused. Past the limit the stream ends with `PayloadError::Overflow`, which
/// [`ActixWs`] reads as [`Event::TooBig`].
async fn weighed(req: &HttpRequest, body: web::Payload) -> Result<web::Payload, actix_web::Error> {
    let mut sizes = ws::FrameSizes::default();
    let body = body.map(move |chunk| match chunk {
        Ok(bytes) if sizes.feed(&bytes) => Err(PayloadError::Overflow),
        chunk => chunk,
    });
    let stream: BoxedPayloadStream = Box::pin(body);
    web::Payload::from_request(req, &mut dev::Payload::from(stream)).await
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
            Some(Err(ProtocolError::Io(err))) if weighed_too_big(&err) => Event::TooBig,
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

/// Whether actix-ws's error is [`weighed`]'s overflow, which it passes on wrapped.
fn weighed_too_big(err: &std::io::Error) -> bool {
    let inner = err.get_ref().and_then(|e| e.downcast_ref::<PayloadError>());
    matches!(inner, Some(PayloadError::Overflow))
}
