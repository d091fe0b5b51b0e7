//! The Greetings API on axum: routing and extractors are axum's, served through the hyper
//! serving layer it shares with `greet-hyper` ([`greet_hyper_serve::serve_with`]), because
//! `axum::serve` has no head-read timeout, no parser or HTTP/2 limits to set, and no TLS.
//!
//! - [`app`]: the `Router`, callable without a socket (`tower::ServiceExt::oneshot`), with
//!   tower-http's compression layer on it ([`greet_hyper_serve::compression`]);
//!   [`service`]: it behind the shared head check, as served.
//! - `GET /ws`: axum's `WebSocketUpgrade` after the shared handshake rule, and the shared
//!   echo over its `WebSocket`.
//! - [`serve`] / [`run`]: serve it on a listener until a shutdown future fires.

use std::future::Future;
use std::io;

use axum::body::Body;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequestParts, RawQuery, Request, State};
use axum::http::header::SERVER;
use axum::http::HeaderValue;
use axum::response::Response;
use axum::routing::{any, get, post, MethodRouter};
use axum::Router;
use greet_core::ws::{self, Close, Event, Socket};
use greet_core::{paths, GreetError, Reply};
use greet_hyper_serve::HeadChecked;
use greet_server::{Api, Listener, ServerConfig};
use hyper_util::service::TowerToHyperService;

/// The binary's name, sent as every answer's `server` header.
pub const NAME: &str = "greet-axum";

/// The API as an axum `Router`, compressing answers when `compression` is on.
pub fn app(api: Api, compression: bool) -> Router {
    Router::new()
        .route(
            paths::GREETINGS,
            get(greetings)
                .post(post_greetings)
                .fallback(greetings_method_not_allowed),
        )
        .route(
            paths::UPLOAD,
            post(upload).fallback(upload_method_not_allowed),
        )
        .route(paths::WS, any(ws))
        .route(
            &format!("{}{{*path}}", paths::STATIC),
            get_or_head(static_file),
        )
        .route(paths::GREETINGS_BLOCKING, get_or_head(greetings_blocking))
        .route(paths::HEALTH, get_or_head(health))
        .route(paths::DB, get_or_head(db))
        .route(paths::QUERIES, get_or_head(queries))
        .route(paths::BUSINESS, get_or_head(business))
        .route(paths::JSON, get_or_head(json))
        .route(paths::PLAINTEXT, get_or_head(plaintext))
        .route(paths::FORTUNES, get_or_head(fortunes))
        .route(paths::UPDATES, get_or_head(updates))
        .route(paths::CACHED_QUERIES, get_or_head(cached_queries))
        .fallback(not_found)
        .layer(greet_hyper_serve::compression(compression))
        .with_state(api)
}

/// What [`serve`] serves: [`app`] behind the shared head check
/// ([`greet_hyper_serve::HeadChecked`], a plain wrapper rather than a boxing
/// `middleware::from_fn`: the check is this workspace's contract, not axum's).
pub fn service(api: Api, compression: bool) -> HeadChecked<Router, Response> {
    HeadChecked::new(app(api, compression), respond)
}

/// `get` answers HEAD too (axum drops the body); every other method gets the shared 405.
fn get_or_head<H, T>(handler: H) -> MethodRouter<Api>
where
    H: axum::handler::Handler<T, Api>,
    T: 'static,
{
    get(handler).fallback(method_not_allowed)
}

async fn greetings(State(api): State<Api>, RawQuery(query): RawQuery) -> Response {
    respond(api.greeter.greetings(query.as_deref()).await)
}

/// `POST /greetings`, read as [`greet_hyper_serve::post_greetings`] reads it: axum's
/// own `axum::body::to_bytes` is the same `Limited` read. axum's `Json` extractor would
/// answer a missing field with 422 and a wrong content type in its own words; its `Bytes`
/// extractor, under `DefaultBodyLimit`, would wait for the whole of a declared length before
/// refusing it.
async fn post_greetings(State(api): State<Api>, req: Request) -> Response {
    respond(greet_hyper_serve::post_greetings(&api, req).await)
}

/// `POST /upload`, streamed as [`greet_hyper_serve::upload`] streams it: the request's
/// body as a data stream, which is what axum's users read an upload with (`Body` is not
/// limited by `DefaultBodyLimit` until an extractor buffers it).
async fn upload(State(api): State<Api>, req: Request) -> Response {
    respond(greet_hyper_serve::upload(&api, req).await)
}

/// `GET /static/<path>`, served as [`greet_hyper_serve::static_file`] serves it: tower-http's
/// `ServeFile`, the file server axum's users reach for (its `ServeDir` as a nested service
/// would follow a symbolic link out of the directory).
async fn static_file(State(api): State<Api>, req: Request) -> Response {
    greet_hyper_serve::static_file(NAME, &api, req)
        .await
        .map(Body::new)
}

/// `/ws`: the shared handshake rule first ([`greet_hyper_serve::ws::check`]), then axum's
/// `WebSocketUpgrade`, what axum's users open a socket with, limited as the rule says; its
/// rejections, in axum's own words, are refused by the rule before it. The echo is the
/// shared one over [`Axum`].
async fn ws(State(api): State<Api>, req: Request) -> Response {
    if let Err(err) = greet_hyper_serve::ws::check(&req) {
        return respond(err.into());
    }
    let (mut parts, _body) = req.into_parts();
    let Ok(upgrade) = WebSocketUpgrade::from_request_parts(&mut parts, &api).await else {
        return respond(GreetError::BadHandshake.into());
    };
    let session = api.sockets.open();
    let mut res = upgrade
        .max_message_size(ws::MAX_MESSAGE_BYTES)
        .max_frame_size(ws::MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket| ws::echo(Axum(socket), session));
    res.headers_mut()
        .insert(SERVER, HeaderValue::from_static(NAME));
    res
}

/// axum's socket as the shared echo drives it: tungstenite underneath answers pings and a
/// client's close, with the next read.
struct Axum(WebSocket);

impl Socket for Axum {
    type Message = Message;

    async fn next(&mut self) -> Event<Message> {
        loop {
            return match self.0.recv().await {
                None => Event::Ended,
                Some(Ok(message @ (Message::Text(_) | Message::Binary(_)))) => Event::Echo(message),
                Some(Ok(Message::Close(_))) => continue,
                Some(Ok(_)) => Event::Nothing,
                Some(Err(err)) => greet_hyper_serve::ws::event_of(&*err.into_inner()),
            };
        }
    }

    async fn send(&mut self, message: Message) -> Result<(), ()> {
        self.0.send(message).await.map_err(drop)
    }

    async fn close(mut self, close: Close) {
        let frame = CloseFrame {
            code: close.code,
            reason: close.reason.into(),
        };
        if self.0.send(Message::Close(Some(frame))).await.is_ok() {
            while let Some(Ok(_)) = self.0.recv().await {}
        }
    }
}

async fn upload_method_not_allowed() -> Response {
    respond(GreetError::UploadMethodNotAllowed.into())
}

async fn greetings_blocking(State(api): State<Api>, RawQuery(query): RawQuery) -> Response {
    respond(api.greeter.greetings_blocking(query.as_deref()).await)
}

async fn db(State(api): State<Api>) -> Response {
    respond(api.stores.db().await)
}

async fn queries(State(api): State<Api>, RawQuery(query): RawQuery) -> Response {
    respond(api.stores.queries(query.as_deref()).await)
}

async fn business(State(api): State<Api>, RawQuery(query): RawQuery) -> Response {
    respond(api.stores.business(query.as_deref()).await)
}

async fn fortunes(State(api): State<Api>) -> Response {
    respond(api.stores.fortunes().await)
}

async fn updates(State(api): State<Api>, RawQuery(query): RawQuery) -> Response {
    respond(api.stores.updates(query.as_deref()).await)
}

async fn cached_queries(State(api): State<Api>, RawQuery(query): RawQuery) -> Response {
    respond(api.stores.cached_queries(query.as_deref()).await)
}

async fn json() -> Response {
    respond(Reply::hello_json())
}

async fn plaintext() -> Response {
    respond(Reply::plaintext())
}

async fn health() -> Response {
    respond(Reply::health())
}

async fn method_not_allowed() -> Response {
    respond(GreetError::MethodNotAllowed.into())
}

async fn greetings_method_not_allowed() -> Response {
    respond(GreetError::GreetingsMethodNotAllowed.into())
}

async fn not_found() -> Response {
    respond(GreetError::NotFound.into())
}

fn respond(reply: Reply) -> Response {
    greet_hyper_serve::response(NAME, reply).map(Body::new)
}

/// Serves [`app`] on `listener` until `shutdown` resolves, then drains.
pub async fn serve(
    listener: Listener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let api = config.api()?;
    let sockets = api.sockets.clone();
    let service = TowerToHyperService::new(service(api, config.compression));
    greet_hyper_serve::serve_with(listener, &config, service, sockets, shutdown).await
}

/// Builds the runtime `config` asks for and serves on it until `shutdown`.
pub fn run(
    listener: Listener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    greet_hyper_serve::runtime(&config)?.block_on(serve(listener, config, shutdown))
}
