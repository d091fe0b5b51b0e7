//! The routes that read a body or serve a file, and the compression in front of them all:
//! what the hyper and axum servers both answer with.

use std::error::Error as StdError;

use greet_core::{compress, paths, post, upload, GreetError, Reply};
use greet_server::{statics, Api};
use http_body_util::{BodyExt, Empty, Full, LengthLimitError, Limited};
use hyper::body::{Body, Bytes};
use hyper::header::{HeaderValue, CONTENT_TYPE, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, SERVER};
use hyper::{Method, Request, Response, StatusCode};
use tower::ServiceExt;
use tower_http::compression::predicate::{Predicate, SizeAbove};
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeFile;

use crate::{response, ApiBody};
use http_body_util::Either::{Left, Right};

/// `POST /greetings`: the head admitted ([`post::admit`]: the content type, then a declared
/// length, before a byte is read), the body read within the limit with http-body-util's
/// `Limited` (what hyper's users read a body with, and what `axum::body::to_bytes` is), then
/// the shared rules.
pub async fn post_greetings<B>(api: &Api, req: Request<B>) -> Reply
where
    B: Body,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let (parts, body) = req.into_parts();
    let content_type = parts.headers.get(CONTENT_TYPE).map(HeaderValue::as_bytes);
    let body = match post::admit(content_type, body.size_hint().lower()) {
        Err(err) => Err(err),
        Ok(()) => match Limited::new(body, post::MAX_BODY_BYTES).collect().await {
            Ok(collected) => Ok(collected.to_bytes()),
            Err(err) if err.is::<LengthLimitError>() => Err(GreetError::BodyTooLarge),
            Err(_) => Err(GreetError::BadJson),
        },
    };
    let reply = api
        .greeter
        .greetings_post(body.as_ref().map(|b| &b[..]).map_err(|e| *e));
    drop((parts, body));
    reply.await
}

/// `POST /upload`: a declared length refused over `--max-upload` before hyper reads a byte
/// (or sends `100 Continue`), then the body as http-body-util's data stream, which is how
/// hyper's users stream one, under the shared rules ([`greet_core::upload`]). axum's
/// `axum::body::Body::into_data_stream` is the same stream.
pub async fn upload<B>(api: &Api, req: Request<B>) -> Reply
where
    B: Body<Data = Bytes>,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let body = req.into_body();
    match upload::admit(api.max_upload, body.size_hint().exact()) {
        Ok(()) => upload::receive(api.max_upload, body.into_data_stream()).await,
        Err(err) => err.into(),
    }
}

/// `GET /static/<path>`: the file [`greet_server::Statics::resolve`] allows (else the shared
/// 404), served by tower-http's `ServeFile`, what axum's and hyper's users serve files with:
/// content type by extension, `Last-Modified` and a 304 on `If-Modified-Since`, 206 on a
/// `Range`, HEAD. `ServeFile` has no entity tags, so this adds the `ETag` actix-files would
/// (length and modification time) and answers a matching `If-None-Match` with 304 first.
/// Answered as from `server`.
pub async fn static_file<B>(server: &'static str, api: &Api, req: Request<B>) -> Response<ApiBody> {
    // A GET's body, if it has one, is not read: let it go before the first await.
    let mut req = req.map(|_| Empty::<Bytes>::new());
    // A HEAD is served as its GET, so that compression sees the file; the body is dropped
    // after it (by the raw-hyper server's service, or by axum's router).
    if req.method() == Method::HEAD {
        *req.method_mut() = Method::GET;
    }
    // A tag that does not match decides (RFC 9110 §13.1.3): `ServeFile` would still answer
    // 304 to the date.
    if req.headers().contains_key(IF_NONE_MATCH) {
        req.headers_mut().remove(IF_MODIFIED_SINCE);
    }
    let not_found = || response(server, GreetError::NotFound.into()).map(Left);
    let path = req
        .uri()
        .path()
        .strip_prefix(paths::STATIC)
        .unwrap_or_default();
    let Some(file) = api.statics.resolve(path) else {
        return not_found();
    };
    let etag = statics::etag(&file.metadata).and_then(|tag| HeaderValue::try_from(tag).ok());
    let unchanged = match (&etag, req.headers().get(IF_NONE_MATCH)) {
        (Some(etag), Some(asked)) => asked
            .to_str()
            .is_ok_and(|asked| statics::none_match(asked, etag.to_str().unwrap_or_default())),
        _ => false,
    };
    let mut res = if unchanged {
        let mut res = Response::new(Left(Full::new(Bytes::new())));
        *res.status_mut() = StatusCode::NOT_MODIFIED;
        res
    } else {
        match ServeFile::new(&file.path).oneshot(req).await {
            Ok(res) => res.map(Right),
            Err(never) => match never {},
        }
    };
    let headers = res.headers_mut();
    if let Some(etag) = etag {
        headers.insert(ETAG, etag);
    }
    headers.insert(SERVER, HeaderValue::from_static(server));
    headers.insert(
        greet_core::NOSNIFF_HEADER,
        HeaderValue::from_static(greet_core::NOSNIFF_VALUE),
    );
    res
}

/// tower-http's `CompressionLayer`, what hyper's and axum's users put in front of a service
/// (hyper has no compression of its own), compressing the answers
/// [`greet_core::compress`] says to when `enabled` (`--compression`). Its own negotiation
/// and levels (gzip 6, brotli 4); `Vary` on every answer worth compressing.
pub fn compression(enabled: bool) -> CompressionLayer<impl Predicate> {
    let worth = move |_, _, headers: &hyper::HeaderMap, _: &hyper::http::Extensions| {
        let content_type = headers.get(CONTENT_TYPE).map(HeaderValue::as_bytes);
        enabled && compress::worth(content_type, None)
    };
    CompressionLayer::new().compress_when(SizeAbove::new(compress::MIN_BYTES).and(worth))
}
