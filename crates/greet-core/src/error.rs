//! Every answer that is not a 200, with its status and plain-text reason.

use std::fmt;

/// An error the API answers with. Statuses are plain `u16` (see the crate docs for why);
/// reasons are short, fixed, plain-text sentences that never carry internals or echo input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GreetError {
    /// A `%` in the name not followed by two hex digits.
    BadPercentEncoding,
    /// The decoded name is not UTF-8.
    NotUtf8,
    /// The name is longer than [`crate::name::MAX_NAME_CHARS`] characters.
    NameTooLong,
    /// The name contains a control character.
    ControlCharacter,
    /// HTTP/1.1 request without a `Host` header.
    MissingHost,
    /// More than one `Host` header.
    RepeatedHost,
    /// The request target has bytes outside ASCII.
    NonAsciiTarget,
    /// No such route.
    NotFound,
    /// The route exists but not for this method (GET and HEAD only).
    MethodNotAllowed,
    /// `/greetings` with a method other than GET, HEAD and POST.
    GreetingsMethodNotAllowed,
    /// `POST /greetings` with a body that is not JSON by its `content-type`.
    UnsupportedMediaType,
    /// `POST /greetings` with a body over [`crate::post::MAX_BODY_BYTES`].
    BodyTooLarge,
    /// `POST /greetings` with a body that is not JSON.
    BadJson,
    /// `POST /greetings` with a JSON body that is not an object with a string `name`.
    NoName,
    /// `/upload` with a method other than POST.
    UploadMethodNotAllowed,
    /// `POST /upload` with a body over the server's `--max-upload`.
    UploadTooLarge,
    /// `POST /upload` that sent nothing for [`crate::upload::STALL_TIMEOUT`].
    UploadStalled,
    /// `POST /upload` whose body broke off (a connection error, or fewer bytes than declared).
    UploadCut,
    /// `/ws` with a method other than GET.
    WsMethodNotAllowed,
    /// `GET /ws` that is not a WebSocket handshake ([`crate::ws::check_handshake`]).
    BadHandshake,
    /// The request target is longer than [`crate::limits::MAX_TARGET_BYTES`].
    UriTooLong,
    /// The request head is over [`crate::limits::MAX_HEAD_BYTES`] or
    /// [`crate::limits::MAX_HEADERS`].
    HeadTooLarge,
    /// The blocking pool could not run the request (no thread could be started).
    Unavailable,
    /// The database did not answer within the store timeout, or refused the query.
    DatabaseUnavailable,
    /// The cache did not answer within the store timeout, or refused the command.
    CacheUnavailable,
}

impl GreetError {
    /// The HTTP status code.
    pub const fn status(self) -> u16 {
        match self {
            Self::BadPercentEncoding
            | Self::NotUtf8
            | Self::NameTooLong
            | Self::ControlCharacter
            | Self::MissingHost
            | Self::RepeatedHost
            | Self::NonAsciiTarget
            | Self::BadJson
            | Self::NoName
            | Self::UploadCut
            | Self::BadHandshake => 400,
            Self::NotFound => 404,
            Self::MethodNotAllowed
            | Self::GreetingsMethodNotAllowed
            | Self::UploadMethodNotAllowed
            | Self::WsMethodNotAllowed => 405,
            Self::UploadStalled => 408,
            Self::BodyTooLarge | Self::UploadTooLarge => 413,
            Self::UnsupportedMediaType => 415,
            Self::UriTooLong => 414,
            Self::HeadTooLarge => 431,
            Self::Unavailable | Self::DatabaseUnavailable | Self::CacheUnavailable => 503,
        }
    }

    /// The plain-text body.
    pub const fn reason(self) -> &'static str {
        match self {
            Self::BadPercentEncoding => "bad request: name is not valid percent-encoding\n",
            Self::NotUtf8 => "bad request: name is not valid UTF-8\n",
            Self::NameTooLong => concat!(
                "bad request: name is longer than ",
                crate::name::max_name_chars!(),
                " characters\n"
            ),
            Self::ControlCharacter => "bad request: name contains a control character\n",
            Self::MissingHost => "bad request: HTTP/1.1 request without Host header\n",
            Self::RepeatedHost => "bad request: more than one Host header\n",
            Self::NonAsciiTarget => "bad request: request target is not ASCII\n",
            Self::NotFound => "not found\n",
            Self::MethodNotAllowed
            | Self::GreetingsMethodNotAllowed
            | Self::UploadMethodNotAllowed
            | Self::WsMethodNotAllowed => "method not allowed\n",
            Self::UnsupportedMediaType => {
                "unsupported media type: POST /greetings takes application/json\n"
            }
            Self::BodyTooLarge => concat!(
                "payload too large: the body is over ",
                crate::post::max_body_bytes!(),
                " bytes\n"
            ),
            Self::UploadTooLarge => {
                "payload too large: the upload is over the server's --max-upload\n"
            }
            Self::UploadStalled => concat!(
                "request timeout: the upload sent nothing for ",
                crate::upload::stall_secs!(),
                " seconds\n"
            ),
            Self::UploadCut => "bad request: the upload broke off\n",
            Self::BadHandshake => concat!(
                "bad request: not a WebSocket handshake (GET over HTTP/1.1 with Upgrade: ",
                "websocket, Connection: Upgrade, Sec-WebSocket-Version: 13 and one ",
                "Sec-WebSocket-Key)\n"
            ),
            Self::BadJson => "bad request: the body is not JSON\n",
            Self::NoName => "bad request: the body is not an object with a string \"name\"\n",
            Self::UriTooLong => "request target too long\n",
            Self::HeadTooLarge => "request header fields too large\n",
            Self::Unavailable => "service unavailable\n",
            Self::DatabaseUnavailable => "service unavailable: the database did not answer\n",
            Self::CacheUnavailable => "service unavailable: the cache did not answer\n",
        }
    }

    /// The `Allow` header a 405 carries.
    pub const fn allow(self) -> Option<&'static str> {
        match self {
            Self::MethodNotAllowed => Some(crate::ALLOWED_METHODS),
            Self::GreetingsMethodNotAllowed => Some(crate::GREETINGS_METHODS),
            Self::UploadMethodNotAllowed => Some(crate::UPLOAD_METHODS),
            Self::WsMethodNotAllowed => Some(crate::WS_METHODS),
            _ => None,
        }
    }
}

impl fmt::Display for GreetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status(), self.reason().trim_end())
    }
}

impl std::error::Error for GreetError {}
