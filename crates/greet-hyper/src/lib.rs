//! The Greetings API on raw hyper 1: a hand-written router in [`handle`], served through the
//! serving layer it shares with the axum server ([`greet_hyper_serve`]: the accept loop, TLS
//! and h2c, the body readers and the file server).
//!
//! Layout:
//! - [`handle`]: the whole API as one async function from request to response.
//! - [`service`]: [`handle`] as served: behind the compression layer, HEAD bodies dropped
//!   after it.
//! - [`serve`] / [`run`]: serve that service on a listener until a shutdown future fires.
//! - [`ws`]: `GET /ws` on hyper's upgrade and tokio-tungstenite.
//! - [`NAME`]: what the binary is called and what its `server` header says.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::future::Future;
use std::io;

use futures_util::future::Either as OneOf;
use futures_util::TryFutureExt;
use greet_core::{check_head, paths, Endpoint, GreetError, Reply};
use greet_hyper_serve::{
    head_info, post_greetings, response, runtime, serve_with, static_file, upload, ApiBody,
};
use greet_server::{Api, Listener, ServerConfig};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::BodyExt;
use http_body_util::Either::{self, Left, Right};
use http_body_util::Empty;
use hyper::body::{Body, Bytes, Incoming};
use hyper::header::{HeaderValue, CONTENT_ENCODING, CONTENT_LENGTH};
use hyper::service::Service;
use hyper::{Method, Request, Response};
use hyper_util::service::TowerToHyperService;
use tower::Layer;
use tower_http::compression::CompressionBody;

pub mod ws;

/// The binary's name, sent as every answer's `server` header.
pub const NAME: &str = "greet-hyper";

/// What [`serve`] serves: [`handle`] behind the compression layer, each answer's body and
/// headers made by this crate's own service wrapper.
pub fn service(
    api: Api,
    compression: bool,
) -> impl Service<
    Request<Incoming>,
    Response = Response<ServedBody>,
    Error = Infallible,
    Future = impl Send,
> + Clone {
    let routes = greet_hyper_serve::compression(compression).layer(tower::service_fn(move |req| {
        let api = api.clone();
        async move { Ok::<_, Infallible>(handle(&api, req).await) }
    }));
    TowerToHyperService::new(Answered(routes))
}

/// What a served answer's body is: [`handle`]'s as it is, a compressed one boxed, or none
/// (a HEAD's).
///
/// hyper keeps room for one response body in every connection from its first byte to its
/// last, however idle, so the body's type is memory each connection holds: tower-http's
/// compressed body holds its encoders' state inline, 5.8 KiB, which 2700 connections held 2700
/// times (15 MiB of the 2700-connection peak). A compressed answer is boxed instead, an
/// allocation for an answer that compression costs far more than, and the others are kept
/// as `handle` made them.
pub type ServedBody = Either<ApiBody, Either<UnsyncBoxBody<Bytes, BoxError>, Empty<Bytes>>>;

type BoxError = Box<dyn StdError + Send + Sync>;

/// The compression layer's answer as served: its body dropped for a HEAD (hyper sends a
/// HEAD's body on HTTP/2, where a client takes it for a protocol error; axum drops it itself),
/// boxed where compressed, else unwrapped back to [`handle`]'s. A wrapper whose future is the
/// layer's mapped: no second clone of the routes and no `oneshot` around them per request
/// (which moved every request's future once more: about 1,400 instructions a request).
#[derive(Debug, Clone)]
struct Answered<S>(S);

/// What an answer becomes.
type Serve = fn(Response<CompressionBody<ApiBody>>) -> Response<ServedBody>;

impl<S> tower::Service<Request<Incoming>> for Answered<S>
where
    S: tower::Service<Request<Incoming>, Response = Response<CompressionBody<ApiBody>>>,
{
    type Response = Response<ServedBody>;
    type Error = S::Error;
    type Future = futures_util::future::MapOk<S::Future, Serve>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: Request<Incoming>) -> Self::Future {
        let serve: Serve = if req.method() == Method::HEAD {
            without_body
        } else {
            with_body
        };
        self.0.call(req).map_ok(serve)
    }
}

/// A GET's answer: compressed bodies boxed, the rest as [`handle`] made them.
fn with_body(res: Response<CompressionBody<ApiBody>>) -> Response<ServedBody> {
    let (parts, body) = res.into_parts();
    let body = if parts.headers.contains_key(CONTENT_ENCODING) {
        Right(Left(body.map_err(BoxError::from).boxed_unsync()))
    } else {
        Left(body.into_inner())
    };
    Response::from_parts(parts, body)
}

/// A HEAD answer: the GET's headers, its length included where it is known, and no body.
fn without_body(res: Response<CompressionBody<ApiBody>>) -> Response<ServedBody> {
    let (mut parts, body) = res.into_parts();
    // A file server's HEAD answer says its length already, with an empty body.
    if let (None, Some(length)) = (parts.headers.get(CONTENT_LENGTH), body.size_hint().exact()) {
        parts
            .headers
            .insert(CONTENT_LENGTH, HeaderValue::from(length));
    }
    Response::from_parts(parts, Right(Right(Empty::new())))
}

/// The API: routes a request to the greeter or the stores and answers, never panicking on
/// input. A HEAD is answered as its GET, body included: [`service`] drops it.
pub async fn handle<B>(api: &Api, req: Request<B>) -> Response<ApiBody>
where
    B: Body<Data = Bytes>,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    if let Err(err) = check_head(&head_info(&req)) {
        return respond(err.into());
    }
    let get_or_head = matches!(*req.method(), Method::GET | Method::HEAD);
    let query = req.uri().query();
    // One future type across the routes, built before the request is let go: the request
    // pins hyper's read buffer, which a delay or a store round trip would hold, and a helper
    // that took the request by value would carry its size in every request's future.
    let reply = match req.uri().path() {
        paths::GREETINGS if get_or_head => {
            OneOf::Left(api.greeter.respond(Endpoint::Greetings, query))
        }
        paths::GREETINGS_BLOCKING if get_or_head => {
            OneOf::Left(api.greeter.respond(Endpoint::GreetingsBlocking, query))
        }
        paths::DB if get_or_head => OneOf::Right(api.stores.db()),
        paths::QUERIES if get_or_head => OneOf::Right(api.stores.queries(query)),
        paths::BUSINESS if get_or_head => OneOf::Right(api.stores.business(query)),
        paths::FORTUNES if get_or_head => OneOf::Right(api.stores.fortunes()),
        paths::UPDATES if get_or_head => OneOf::Right(api.stores.updates(query)),
        paths::CACHED_QUERIES if get_or_head => OneOf::Right(api.stores.cached_queries(query)),
        paths::HEALTH if get_or_head => return respond(Reply::health()),
        paths::JSON if get_or_head => return respond(Reply::hello_json()),
        paths::PLAINTEXT if get_or_head => return respond(Reply::plaintext()),
        // Boxed: the body's read would otherwise grow every request's future.
        paths::GREETINGS if req.method() == Method::POST => {
            return respond(Box::pin(post_greetings(api, req)).await)
        }
        paths::GREETINGS => return respond(GreetError::GreetingsMethodNotAllowed.into()),
        paths::UPLOAD if req.method() == Method::POST => {
            return respond(Box::pin(upload(api, req)).await)
        }
        paths::UPLOAD => return respond(GreetError::UploadMethodNotAllowed.into()),
        paths::WS => return ws::ws(NAME, api, req).map(Left),
        path if path.starts_with(paths::STATIC) && get_or_head => {
            return Box::pin(static_file(NAME, api, req)).await
        }
        path if path.starts_with(paths::STATIC) => {
            return respond(GreetError::MethodNotAllowed.into())
        }
        path if paths::ALL.contains(&path) => return respond(GreetError::MethodNotAllowed.into()),
        _ => return respond(GreetError::NotFound.into()),
    };
    drop(req);
    respond(reply.await)
}

fn respond(reply: Reply) -> Response<ApiBody> {
    response(NAME, reply).map(Left)
}

/// Serves the API on `listener` until `shutdown` resolves, then drains (see [`serve_with`]).
pub async fn serve(
    listener: Listener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let api = config.api()?;
    let sockets = api.sockets.clone();
    let service = service(api, config.compression);
    serve_with(listener, &config, service, sockets, shutdown).await
}

/// Builds the runtime `config` asks for and serves on it until `shutdown`: what the binary
/// runs, and what tests run on a thread of their own.
pub fn run(
    listener: Listener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    runtime(&config)?.block_on(serve(listener, config, shutdown))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every request's future is as large as the largest route's, since `handle` awaits them
    /// all inline: a store-bound route's kilobytes would be carried by every sleeping
    /// `/greetings` request (about 7 KiB more each, 19 MiB at 2700 in flight), so those come
    /// boxed, and the request is let go before the await. About 0.7 KiB in a debug build.
    #[test]
    fn a_request_future_stays_small() {
        let api = ServerConfig::default().api().expect("api");
        let req = Request::get("/greetings?name=Ana")
            .body(http_body_util::Empty::<Bytes>::new())
            .expect("request");
        let size = std::mem::size_of_val(&handle(&api, req));
        let business = api.stores.business(None);
        eprintln!(
            "handle's future: {size} bytes; /business's: {} bytes",
            std::mem::size_of_val(&*business)
        );
        assert!(size <= 1024, "{size} bytes");
    }

    /// Each connection holds room for its request's future from its first byte to its last
    /// (hyper boxes one per connection), so the future as served, the compression layer's,
    /// the HEAD wrapper's and hyper-util's around `handle`'s, is memory every idle
    /// keep-alive connection keeps: 2700 of them hold it 2700 times. Printed with
    /// `--nocapture`.
    #[test]
    fn a_served_request_future_stays_small() {
        fn future<S: hyper::service::Service<R>, R>(_: &S) -> usize {
            std::mem::size_of::<S::Future>()
        }
        let api = ServerConfig::default().api().expect("api");
        let served = future::<_, Request<Incoming>>(&service(api, true));
        // And room for one answer's body: see `ServedBody`.
        let body = std::mem::size_of::<ServedBody>();
        let compressed = std::mem::size_of::<CompressionBody<ApiBody>>();
        eprintln!(
            "a served request's future: {served} bytes; its body: {body} bytes (compressed \
             inline, it would be {compressed})"
        );
        assert!(served <= 1536, "{served} bytes");
        assert!(body <= 512, "{body} bytes");
    }
}
