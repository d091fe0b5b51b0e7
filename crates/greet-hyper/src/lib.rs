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
use http_body_util::Either::{self, Left, Right};
use http_body_util::Empty;
use hyper::body::{Body, Bytes, Incoming};
use hyper::header::{HeaderValue, CONTENT_LENGTH};
use hyper::service::Service;
use hyper::{Method, Request, Response};
use hyper_util::service::TowerToHyperService;
use tower::Layer;
use tower::ServiceExt;

pub mod ws;

/// The binary's name, sent as every answer's `server` header.
pub const NAME: &str = "greet-hyper";

/// What [`serve`] serves: [`handle`] behind [`compression`], and a HEAD's body dropped once
/// compressed, so that it says what the GET would.
pub fn service(
    api: Api,
    compression: bool,
) -> impl Service<
    Request<Incoming>,
    Response = Response<
        impl Body<Data = Bytes, Error = impl Into<Box<dyn StdError + Send + Sync>>>,
    >,
    Error = Infallible,
    Future = impl Send,
> + Clone {
    let routes = greet_hyper_serve::compression(compression).layer(tower::service_fn(move |req| {
        let api = api.clone();
        async move { Ok::<_, Infallible>(handle(&api, req).await) }
    }));
    TowerToHyperService::new(tower::service_fn(move |req: Request<Incoming>| {
        let head = req.method() == Method::HEAD;
        routes.clone().oneshot(req).map_ok(move |res| {
            if head {
                without_body(res)
            } else {
                res.map(Left)
            }
        })
    }))
}

/// A HEAD answer: the GET's headers, its length included where it is known, and no body.
/// hyper drops the body of a HEAD answer on HTTP/1 but sends it on HTTP/2, where a client
/// takes it for a protocol error (axum drops it itself).
fn without_body<B: Body>(res: Response<B>) -> Response<Either<B, Empty<Bytes>>> {
    let (mut parts, body) = res.into_parts();
    // A file server's HEAD answer says its length already, with an empty body.
    if let (None, Some(length)) = (parts.headers.get(CONTENT_LENGTH), body.size_hint().exact()) {
        parts
            .headers
            .insert(CONTENT_LENGTH, HeaderValue::from(length));
    }
    Response::from_parts(parts, Right(Empty::new()))
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
}
