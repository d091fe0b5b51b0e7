//! WebSockets as the hyper and axum servers both see them: the shared handshake rule on an
//! `http` 1.x request ([`check`]), which axum's handler asks before its extractor and raw
//! hyper's before its upgrade, and what a tungstenite read error means to the shared echo
//! ([`event_of`]; axum's socket is tungstenite's, its errors these, boxed).

use greet_core::ws::{self, Event};
use greet_core::GreetError;
use hyper::{Request, Version};
use tokio_tungstenite::tungstenite::Error;

/// The shared handshake rule ([`ws::check_handshake`]) on an `http` 1.x request.
pub fn check<B>(req: &Request<B>) -> Result<(), GreetError> {
    let fields = req
        .headers()
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()));
    ws::check_handshake(
        req.method().as_str(),
        req.version() == Version::HTTP_11,
        fields,
    )
}

/// What a tungstenite read error means to the echo: a message over the limit, a broken
/// frame, or the connection gone. axum's socket errors are these, boxed.
pub fn event_of<M>(err: &(dyn std::error::Error + 'static)) -> Event<M> {
    match err.downcast_ref::<Error>() {
        Some(Error::Capacity(_)) => Event::TooBig,
        Some(Error::Protocol(_) | Error::Utf8(_)) => Event::Broken,
        _ => Event::Ended,
    }
}
