//! The Greetings API on raw hyper 1: a hand-written router in [`handle`], and the HTTP/1
//! accept loop in [`serve_with`] that the axum server serves through as well.
//!
//! Layout:
//! - [`handle`]: the whole API as one async function from request to response.
//! - [`serve`] / [`run`]: serve that function on a listener until a shutdown future fires.
//! - [`serve_with`]: the accept loop for any hyper service (per-connection tasks, head-read
//!   timeout, parser limits, graceful drain), shared with `greet-axum`.
//! - [`head_info`], [`response`]: the glue between `http` 1.x types and `greet-core`.
//! - [`NAME`]: what the binary is called and what its `server` header says.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::future::Future;
use std::io;
use std::net::TcpListener;
use std::time::Duration;

use futures_util::future::Either::{Left, Right};
use greet_core::limits::{Target, HEAD_READ_TIMEOUT, MAX_HEAD_BYTES};
use greet_core::{check_head, paths, Endpoint, GreetError, HeadInfo, Reply};
use greet_server::{Api, ServerConfig};
use http_body_util::Full;
use hyper::body::{Body, Bytes, Incoming};
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE, SERVER};
use hyper::server::conn::http1;
use hyper::service::{service_fn, HttpService};
use hyper::{Method, Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;

/// The binary's name, sent as every answer's `server` header.
pub const NAME: &str = "greet-hyper";

/// hyper's own parser limit on header fields, the same as actix-web's fixed one, so that
/// heads past [`greet_core::limits::MAX_HEADERS`] but under this get the shared plain-text
/// 431 and heads past this get the parser's bare 431 on every server alike.
const PARSER_MAX_HEADERS: usize = 96;
/// hyper's read-buffer limit, as actix-web's (128 KiB): a head larger than this is a bare 431.
const PARSER_MAX_BUF: usize = 128 * 1024;
const _: () = assert!(PARSER_MAX_BUF > MAX_HEAD_BYTES);

/// The API: routes a request to the greeter or the stores and answers, never panicking on
/// input.
pub async fn handle<B>(api: &Api, req: Request<B>) -> Response<Full<Bytes>> {
    if let Err(err) = check_head(&head_info(&req)) {
        return respond(err.into());
    }
    let get_or_head = matches!(*req.method(), Method::GET | Method::HEAD);
    let query = req.uri().query();
    // One future type across the routes, built before the request is let go: the request
    // pins hyper's read buffer, which a delay or a store round trip would hold, and a helper
    // that took the request by value would carry its size in every request's future.
    let reply = match req.uri().path() {
        paths::GREETINGS if get_or_head => Left(api.greeter.respond(Endpoint::Greetings, query)),
        paths::GREETINGS_BLOCKING if get_or_head => {
            Left(api.greeter.respond(Endpoint::GreetingsBlocking, query))
        }
        paths::DB if get_or_head => Right(api.stores.db()),
        paths::QUERIES if get_or_head => Right(api.stores.queries(query)),
        paths::BUSINESS if get_or_head => Right(api.stores.business(query)),
        paths::HEALTH if get_or_head => return respond(Reply::health()),
        paths::GREETINGS
        | paths::GREETINGS_BLOCKING
        | paths::HEALTH
        | paths::DB
        | paths::QUERIES
        | paths::BUSINESS => return respond(GreetError::MethodNotAllowed.into()),
        _ => return respond(GreetError::NotFound.into()),
    };
    drop(req);
    respond(reply.await)
}

/// What [`check_head`] needs, read off an `http` 1.x request.
pub fn head_info<B>(req: &Request<B>) -> HeadInfo {
    let uri = req.uri();
    let target = Target {
        scheme: uri.scheme_str(),
        authority: uri.authority().map(|a| a.as_str()),
        path_and_query: uri.path_and_query().map(|pq| pq.as_str()),
    };
    let fields = req
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_bytes()));
    HeadInfo::new(req.version() == Version::HTTP_11, target, fields)
}

fn respond(reply: Reply) -> Response<Full<Bytes>> {
    response(NAME, reply)
}

/// A [`Reply`] as an `http` 1.x response from `server`: its content type, `nosniff`, the
/// `server` header, and `Allow` on a 405. hyper adds `content-length` from the body's exact
/// size and `date`, and drops the body for HEAD.
pub fn response(server: &'static str, reply: Reply) -> Response<Full<Bytes>> {
    let body = match reply.body {
        std::borrow::Cow::Borrowed(s) => Bytes::from_static(s.as_bytes()),
        std::borrow::Cow::Owned(s) => Bytes::from(s),
    };
    let mut res = Response::new(Full::new(body));
    *res.status_mut() =
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = res.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(reply.content_type));
    headers.insert(SERVER, HeaderValue::from_static(server));
    headers.insert(
        greet_core::NOSNIFF_HEADER,
        HeaderValue::from_static(greet_core::NOSNIFF_VALUE),
    );
    if let Some(allow) = reply.allow {
        headers.insert(ALLOW, HeaderValue::from_static(allow));
    }
    res
}

/// Serves the API on `listener` until `shutdown` resolves, then drains (see [`serve_with`]).
pub async fn serve(
    listener: TcpListener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let api = config.api()?;
    let service = service_fn(move |req| {
        let api = api.clone();
        async move { Ok::<_, Infallible>(handle(&api, req).await) }
    });
    serve_with(listener, &config, service, shutdown).await
}

/// Builds the runtime `config` asks for and serves on it until `shutdown`: what the binary
/// runs, and what tests run on a thread of their own.
pub fn run(
    listener: TcpListener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    runtime(&config)?.block_on(serve(listener, config, shutdown))
}

/// A multi-threaded Tokio runtime with `config.workers` workers.
pub fn runtime(config: &ServerConfig) -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.workers.get())
        .enable_all()
        .build()
}

/// The HTTP/1 accept loop: one task per connection, a head not complete within
/// [`HEAD_READ_TIMEOUT`] cut, parser limits set as actix-web's. When `shutdown` resolves it
/// stops accepting, lets every in-flight request finish (idle keep-alive connections close at
/// once) for up to `config.shutdown_timeout()`, and returns.
pub async fn serve_with<S, B>(
    listener: TcpListener,
    config: &ServerConfig,
    service: S,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()>
where
    S: HttpService<Incoming, ResBody = B> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_READ_TIMEOUT)
        .max_headers(PARSER_MAX_HEADERS)
        .max_buf_size(PARSER_MAX_BUF);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);

    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(err) => {
                    backoff_after(&err).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let conn = graceful.watch(builder.serve_connection(TokioIo::new(stream), service.clone()));
        tokio::spawn(async move {
            // Client resets and cut slow heads end here; none of them concern the server.
            let _ = conn.await;
        });
    }

    drop(listener);
    if tokio::time::timeout(config.shutdown_timeout(), graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            timeout_secs = config.shutdown_timeout_secs,
            "shutdown timeout: dropping connections still in flight"
        );
    }
    Ok(())
}

/// After a failed `accept`: nothing for an error about one connection; a pause when the
/// process is out of file descriptors or memory, so a flood cannot spin a core.
async fn backoff_after(err: &io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if !matches!(
        err.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        tracing::warn!(%err, "accept failed; pausing");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
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
            .body(())
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
