//! The Greetings API's domain, shared by every server in this workspace.
//!
//! Everything that must be identical on the axum, actix-web and hyper servers lives here, so
//! the three server crates differ only in framework glue (routing, extractors, response
//! conversion, the accept loop). Nothing in this crate depends on a web framework or on the
//! `http` crate: statuses are plain `u16` and headers plain `&str`, because actix-web 4 and
//! hyper 1 use different major versions of `http`.
//!
//! Layout:
//! - [`greeting`]: the five words, [`Greeter`] (async delay and blocking delay) and the
//!   endpoint logic that turns a query into a [`Reply`].
//! - [`name`]: the query → name rules (form-urlencoded decoding, defaults, limits).
//! - [`compress`]: which answers are compressed, and with what.
//! - [`post`]: `POST /greetings`' body rules (JSON, its content type, its size limit).
//! - [`upload`]: `POST /upload`'s rules (streamed, counted, checksummed, limited).
//! - [`ws`]: `GET /ws`'s rules (the handshake, the echo, its limits and closes) and the
//!   echo loop every server runs over its framework's socket.
//! - [`error`]: [`GreetError`], every non-200 answer with its status and plain-text reason.
//! - [`limits`]: request-head limits (target length, head size, header count, read timeout)
//!   and the one check every server runs before routing.
//! - [`pool`]: the bounded thread pool behind `/greetings/blocking`.
//! - [`records`]: what the store-bound endpoints and TechEmpower's tests answer (the JSON
//!   bodies, the seed rows, the fortunes page, TechEmpower's `?queries=N` rule) and what a
//!   valid answer is, with no database client.
//!
//! What makes a server a process (flags, binding, logging, signals) is `greet-server`'s, so
//! that what only needs the rules (the fuzz target, the benches of the core) builds no CLI.

pub mod compress;
pub mod error;
pub mod greeting;
pub mod limits;
pub mod name;
pub mod pool;
pub mod post;
pub mod records;
pub mod upload;
pub mod ws;

pub use error::GreetError;
pub use greeting::{Endpoint, Greeter, Reply, DEFAULT_BLOCKING_THREADS, DEFAULT_DELAY, WORDS};
pub use limits::{check_head, HeadInfo};

/// `content-type` of every response but JSON and the fortunes page.
pub const CONTENT_TYPE: &str = "text/plain; charset=utf-8";
/// `content-type` of `/json`, `/db`, `/queries`, `/updates`, `/cached-queries` and
/// `/business` when they answer 200.
pub const JSON_CONTENT_TYPE: &str = "application/json";
/// `content-type` of `/fortunes` when it answers 200.
pub const HTML_CONTENT_TYPE: &str = "text/html; charset=utf-8";
/// Name of the header that stops browsers from sniffing a greeting into HTML.
pub const NOSNIFF_HEADER: &str = "x-content-type-options";
/// Value of [`NOSNIFF_HEADER`].
pub const NOSNIFF_VALUE: &str = "nosniff";
/// The methods every route but `/greetings` accepts, as sent in `Allow` with a 405.
pub const ALLOWED_METHODS: &str = "GET, HEAD";
/// The methods `/greetings` accepts, as sent in `Allow` with a 405.
pub const GREETINGS_METHODS: &str = "GET, HEAD, POST";
/// The methods `/upload` accepts, as sent in `Allow` with a 405.
pub const UPLOAD_METHODS: &str = "POST";
/// The methods `/ws` accepts, as sent in `Allow` with a 405.
pub const WS_METHODS: &str = "GET";

/// The type and subtype of a `content-type` header's value (`text/html; charset=utf-8` →
/// `text`, `html`), parameters and spaces left out, case as sent; `None` without a `/`.
pub fn media_type(content_type: &[u8]) -> Option<(&[u8], &[u8])> {
    let essence = content_type
        .split(|&b| b == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii();
    let slash = essence.iter().position(|&b| b == b'/')?;
    Some((&essence[..slash], &essence[slash + 1..]))
}

/// Paths of the API, shared by the servers' routers and by the tests.
pub mod paths {
    /// Greeting after an async delay.
    pub const GREETINGS: &str = "/greetings";
    /// Greeting after a delay that holds a thread of the bounded blocking pool.
    pub const GREETINGS_BLOCKING: &str = "/greetings/blocking";
    /// Readiness: `ok`, no delay.
    pub const HEALTH: &str = "/health";
    /// One random `world` row as JSON (TechEmpower's single query).
    pub const DB: &str = "/db";
    /// `?queries=N` random `world` rows as a JSON array (TechEmpower's multiple queries).
    pub const QUERIES: &str = "/queries";
    /// The business call: a database read and a cache update, as JSON.
    pub const BUSINESS: &str = "/business";
    /// `{"message":"Hello, World!"}` (TechEmpower's JSON test).
    pub const JSON: &str = "/json";
    /// `Hello, World!` (TechEmpower's plaintext test, pipelined).
    pub const PLAINTEXT: &str = "/plaintext";
    /// The `fortune` rows and one more, sorted, as an HTML page (TechEmpower's fortunes).
    pub const FORTUNES: &str = "/fortunes";
    /// `?queries=N` random `world` rows given new numbers (TechEmpower's updates).
    pub const UPDATES: &str = "/updates";
    /// `?count=N` random `world` rows from an in-process copy (TechEmpower's cached queries).
    pub const CACHED_QUERIES: &str = "/cached-queries";

    /// A body of any length streamed, answered with its length and CRC-32 (`POST` only).
    pub const UPLOAD: &str = "/upload";

    /// A WebSocket that echoes (`GET` only, a handshake).
    pub const WS: &str = "/ws";

    /// Files of the static directory, under this prefix (`GET` and `HEAD`).
    pub const STATIC: &str = "/static/";

    /// Every route, in the order the docs list them.
    pub const ALL: [&str; 13] = [
        GREETINGS,
        GREETINGS_BLOCKING,
        HEALTH,
        DB,
        QUERIES,
        BUSINESS,
        JSON,
        PLAINTEXT,
        FORTUNES,
        UPDATES,
        CACHED_QUERIES,
        UPLOAD,
        WS,
    ];
}
