//! The Greetings API on actix-web 4.
//!
//! - [`configure`]: the routes, for `App::configure`, shared by [`serve`] and by tests that
//!   use `actix_web::test::init_service` without a socket.
//! - [`app`]: the whole `App` (routes, the shared head check, the 404 fallback, and
//!   compression: [`compress`]).
//! - [`serve`] / [`run`] (`server.rs`): serve it on a listener until a shutdown future fires.
//! - `ws.rs`: `/ws`, actix-ws after the shared handshake rule, and the shared echo over it.
//! - [`watch_idle`] (`server.rs`): the idle limit of HTTP/2 connections, which actix-web lacks.
//!
//! actix-web pulls in `http` 0.2, so its glue reads requests through its own types; the rules
//! themselves all come from `greet-core`.

use std::future::Future;
use std::task::{Context, Poll};

use actix_http::encoding::Encoder;
use actix_web::body::{BodySize, EitherBody, MessageBody};
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::header::{AcceptEncoding, ContentEncoding, Encoding};
use actix_web::http::{header, StatusCode, Version};
use actix_web::middleware::{from_fn, Condition, Next};
use actix_web::{web, App, Error, HttpMessage, HttpResponse};
use greet_core::limits::Target;
use greet_core::{check_head, compress, paths, post, upload, GreetError, HeadInfo, Reply};
use greet_server::idle::InFlight;
use greet_server::Api;

mod server;
mod ws;

pub use server::{run, serve, watch_idle};

/// The binary's name, sent as every answer's `server` header.
pub const NAME: &str = "greet-actix";

/// Registers the routes (GET and HEAD, and POST on `/greetings`; any other method is the
/// shared 405) and the greeter and stores they use.
pub fn configure(api: Api) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.app_data(web::Data::new(api))
            .service(
                get_or_head(paths::GREETINGS, web::to(greetings))
                    .app_data(web::PayloadConfig::new(post::MAX_BODY_BYTES))
                    .route(web::post().to(post_greetings))
                    .default_service(web::to(greetings_method_not_allowed)),
            )
            .service(
                web::resource(paths::UPLOAD)
                    .route(web::post().to(upload))
                    .default_service(web::to(upload_method_not_allowed)),
            )
            .service(web::resource(paths::WS).default_service(web::to(ws::ws)))
            .service(get_or_head(
                &format!("{}{{path:.*}}", paths::STATIC),
                web::to(static_file),
            ))
            .service(get_or_head(
                paths::GREETINGS_BLOCKING,
                web::to(greetings_blocking),
            ))
            .service(get_or_head(paths::HEALTH, web::to(health)))
            .service(get_or_head(paths::DB, web::to(db)))
            .service(get_or_head(paths::QUERIES, web::to(queries)))
            .service(get_or_head(paths::BUSINESS, web::to(business)))
            .service(get_or_head(paths::JSON, web::to(json)))
            .service(get_or_head(paths::PLAINTEXT, web::to(plaintext)))
            .service(get_or_head(paths::FORTUNES, web::to(fortunes)))
            .service(get_or_head(paths::UPDATES, web::to(updates)))
            .service(get_or_head(paths::CACHED_QUERIES, web::to(cached_queries)));
    }
}

/// The API as an actix-web `App`, compressing answers when `compression` is on.
pub fn app(
    api: Api,
    compression: bool,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
> {
    App::new()
        .configure(configure(api))
        .default_service(web::to(not_found))
        .wrap(from_fn(check_request_head))
        .wrap(Condition::new(compression, from_fn(compress)))
}

/// The codings actix-http's encoder has here, and identity.
const OFFERED: [Encoding; 4] = [
    Encoding::identity(),
    Encoding::brotli(),
    Encoding::gzip(),
    Encoding::deflate(),
];

/// Compression by actix-http's `Encoder` (its levels: gzip 1, brotli 3), negotiated by
/// actix-web's `AcceptEncoding`, under the shared rule of when ([`greet_core::compress`]).
/// This is actix-web's `Compress` middleware with the rule's threshold, which `Compress`
/// lacks (actix-web#3031), its `Vary` on answers it leaves as they are, and no 406 of its
/// own when nothing offered is acceptable.
async fn compress(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<Encoder<impl MessageBody>>, Error> {
    let asked = req
        .get_header::<AcceptEncoding>()
        .and_then(|accept| accept.negotiate(OFFERED.iter()));
    let coding = match asked {
        Some(Encoding::Known(coding)) => coding,
        _ => ContentEncoding::Identity,
    };
    let res = next.call(req).await?;
    Ok(res.map_body(|head, body| {
        let len = match body.size() {
            BodySize::Sized(len) => Some(len),
            BodySize::None | BodySize::Stream => None,
        };
        let content_type = head.headers.get(header::CONTENT_TYPE).map(|v| v.as_bytes());
        let coding = if !compress::worth(content_type, len) {
            ContentEncoding::Identity
        } else if coding == ContentEncoding::Identity {
            // The encoder says `Vary` only when it encodes.
            head.headers.append(
                header::VARY,
                header::HeaderValue::from_static("accept-encoding"),
            );
            coding
        } else {
            coding
        };
        Encoder::response(coding, head, body)
    }))
}

fn get_or_head(path: &str, route: actix_web::Route) -> actix_web::Resource {
    // actix's GET guard does not match HEAD; its dispatcher drops the body of a HEAD answer.
    web::resource(path)
        .route(
            route
                .guard(actix_web::guard::Any(actix_web::guard::Get()).or(actix_web::guard::Head())),
        )
        .default_service(web::to(method_not_allowed))
}

async fn greetings(api: web::Data<Api>, req: actix_web::HttpRequest) -> HttpResponse {
    answer(req, |q| api.greeter.greetings(q)).await
}

/// `POST /greetings`: the body through actix-web's `Bytes` extractor under a
/// `PayloadConfig` limit (a declared length over it refused unread), then the shared rules
/// ([`greet_core::post`]; actix-web's `Json` extractor answers in its own words).
async fn post_greetings(
    api: web::Data<Api>,
    req: actix_web::HttpRequest,
    body: Result<web::Bytes, Error>,
) -> HttpResponse {
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.as_bytes());
    // The extractor has refused a declared length over the limit already.
    let body = post::admit(content_type, 0).and_then(|()| {
        body.map_err(|err| match err.as_error::<PayloadError>() {
            Some(PayloadError::Overflow) => GreetError::BodyTooLarge,
            _ => GreetError::BadJson,
        })
    });
    let reply = api
        .greeter
        .greetings_post(body.as_ref().map(|b| &b[..]).map_err(|e| *e));
    drop((req, body));
    respond(reply.await)
}

/// `POST /upload`: a declared length refused over `--max-upload` before a byte is read, then
/// actix-web's `Payload` stream, which is how its users stream a body (its extractors that
/// buffer one, `Bytes` and `PayloadConfig`, would hold it whole), under the shared rules
/// ([`greet_core::upload`]). actix-http answers `Expect: 100-continue` before the route runs.
///
/// A refused body is not read on: the answer holds the payload ([`Unread`]), so actix-http
/// closes the connection once it is written (HTTP/1.1) or resets the stream (HTTP/2).
async fn upload(
    api: web::Data<Api>,
    req: actix_web::HttpRequest,
    mut body: web::Payload,
) -> HttpResponse {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse().ok());
    drop(req);
    let reply = match upload::admit(api.max_upload, declared) {
        Ok(()) => upload::receive(api.max_upload, &mut body).await,
        Err(err) => err.into(),
    };
    respond(reply)
        .map_body(|_, answer| Unread {
            answer,
            _request: body,
        })
        .map_into_boxed_body()
}

/// An answer that holds its request's body until it has been written. actix-http reads a
/// chunked body its handler has let go of to its end, however long the client sends, so that
/// the connection can be kept; a body still held when the answer is done, unread, it leaves
/// unread and closes the connection instead (with no lingering read: see [`serve`]).
struct Unread<B> {
    answer: B,
    _request: web::Payload,
}

impl<B: MessageBody + Unpin> MessageBody for Unread<B> {
    type Error = B::Error;

    fn size(&self) -> BodySize {
        self.answer.size()
    }

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<web::Bytes, Self::Error>>> {
        std::pin::Pin::new(&mut self.get_mut().answer).poll_next(cx)
    }
}

/// `GET /static/<path>`: the file [`greet_server::Statics::resolve`] allows (else the shared
/// 404), served by actix-files' `NamedFile`, actix-web's file server: content type by
/// extension, `ETag` and `Last-Modified` with their 304s, 206 on a `Range`. (Its `Files`
/// service would follow a symbolic link out of the directory.)
async fn static_file(api: web::Data<Api>, req: actix_web::HttpRequest) -> HttpResponse {
    let path = req
        .uri()
        .path()
        .strip_prefix(paths::STATIC)
        .unwrap_or_default();
    let Some(file) = api.statics.resolve(path) else {
        return respond(GreetError::NotFound.into());
    };
    match actix_files::NamedFile::open_async(&file.path).await {
        Ok(file) => {
            let mut res = file.into_response(&req);
            let headers = res.headers_mut();
            headers.insert(header::SERVER, header::HeaderValue::from_static(NAME));
            headers.insert(
                header::HeaderName::from_static(greet_core::NOSNIFF_HEADER),
                header::HeaderValue::from_static(greet_core::NOSNIFF_VALUE),
            );
            res
        }
        Err(_) => respond(GreetError::NotFound.into()),
    }
}

async fn upload_method_not_allowed() -> HttpResponse {
    respond(GreetError::UploadMethodNotAllowed.into())
}

async fn greetings_blocking(api: web::Data<Api>, req: actix_web::HttpRequest) -> HttpResponse {
    answer(req, |q| api.greeter.greetings_blocking(q)).await
}

async fn db(api: web::Data<Api>) -> HttpResponse {
    respond(api.stores.db().await)
}

async fn queries(api: web::Data<Api>, req: actix_web::HttpRequest) -> HttpResponse {
    answer(req, |q| api.stores.queries(q)).await
}

async fn business(api: web::Data<Api>, req: actix_web::HttpRequest) -> HttpResponse {
    answer(req, |q| api.stores.business(q)).await
}

async fn fortunes(api: web::Data<Api>) -> HttpResponse {
    respond(api.stores.fortunes().await)
}

async fn updates(api: web::Data<Api>, req: actix_web::HttpRequest) -> HttpResponse {
    answer(req, |q| api.stores.updates(q)).await
}

async fn cached_queries(api: web::Data<Api>, req: actix_web::HttpRequest) -> HttpResponse {
    answer(req, |q| api.stores.cached_queries(q)).await
}

async fn json() -> HttpResponse {
    respond(Reply::hello_json())
}

async fn plaintext() -> HttpResponse {
    respond(Reply::plaintext())
}

/// The reply `start` makes from the request's query, awaited after the request is let go, so
/// a delay or a store round trip does not hold the request's buffers.
async fn answer<F: Future<Output = Reply>>(
    req: actix_web::HttpRequest,
    start: impl FnOnce(Option<&str>) -> F,
) -> HttpResponse {
    let reply = start(req.uri().query());
    drop(req);
    respond(reply.await)
}

async fn health() -> HttpResponse {
    respond(Reply::health())
}

async fn method_not_allowed() -> HttpResponse {
    respond(GreetError::MethodNotAllowed.into())
}

async fn greetings_method_not_allowed() -> HttpResponse {
    respond(GreetError::GreetingsMethodNotAllowed.into())
}

async fn not_found() -> HttpResponse {
    respond(GreetError::NotFound.into())
}

/// The shared head check, in front of every route; on HTTP/2, the request also counts as
/// in flight on its connection until answered (see [`watch_idle`]).
async fn check_request_head(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, Error> {
    let _busy = req.conn_data::<InFlight>().map(InFlight::begin);
    match check_head(&head_info(&req)) {
        Ok(()) => next
            .call(req)
            .await
            .map(ServiceResponse::map_into_left_body),
        Err(err) => Ok(req.into_response(respond(err.into())).map_into_right_body()),
    }
}

/// What [`check_head`] needs, read off an actix-web request.
pub fn head_info(req: &ServiceRequest) -> HeadInfo {
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

/// A [`Reply`] as an actix-web response: its content type, `nosniff`, the `server` header,
/// and `Allow` on a 405. actix-web adds `content-length` and `date`.
pub fn respond(reply: Reply) -> HttpResponse {
    use header::{HeaderName, HeaderValue};
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut res = HttpResponse::build(status);
    // Static names and values: a `&str` would be copied into a fresh buffer each answer
    // (three allocations a request, the workspace's, not actix-web's).
    res.insert_header((
        header::CONTENT_TYPE,
        HeaderValue::from_static(reply.content_type),
    ))
    .insert_header((header::SERVER, HeaderValue::from_static(NAME)))
    .insert_header((
        HeaderName::from_static(greet_core::NOSNIFF_HEADER),
        HeaderValue::from_static(greet_core::NOSNIFF_VALUE),
    ));
    if let Some(allow) = reply.allow {
        res.insert_header((header::ALLOW, HeaderValue::from_static(allow)));
    }
    res.body(reply.body)
}
