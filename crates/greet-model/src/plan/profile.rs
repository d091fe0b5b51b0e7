//! The requests HttpArena's profiles make ([`Profile`]): what each request is, and what it goes
//! over. The workloads scenario measures each; the cost scenario counts what each costs.

use greet_core::paths;
use greet_load::{Header, RequestBody};
use serde::{Deserialize, Serialize};

use super::Protocol;

/// One workload: what each request is, and what it goes over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// `GET /greetings?name=Ana` on keep-alive connections: the route itself, zero delay.
    Baseline,
    /// The same on connections closed after every 10 requests (HttpArena's short-lived).
    ShortLived,
    /// `POST /greetings` with `{"name":"Ana"}`: a JSON body read, a JSON answer.
    PostJson,
    /// `GET /fortunes` asking `accept-encoding: gzip, br`: each crate's compression.
    Compressed,
    /// `POST /upload` of a body of `--upload-size` (20 MB, HttpArena's), streamed.
    Upload,
    /// `GET /static/index.html`: each crate's file server.
    Static,
    /// `GET /json` over HTTPS (HTTP/1.1 over TLS, sessions resumed as clients do).
    JsonTls,
    /// A WebSocket per user, each request one 64-byte text message echoed.
    Websocket,
}

impl Profile {
    /// Every profile, in the order tables show them.
    pub const ALL: [Profile; 8] = [
        Self::Baseline,
        Self::ShortLived,
        Self::PostJson,
        Self::Compressed,
        Self::Upload,
        Self::Static,
        Self::JsonTls,
        Self::Websocket,
    ];

    /// Its name, as flags, tables and results.json give it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Baseline => "baseline",
            Self::ShortLived => "short-lived",
            Self::PostJson => "post-json",
            Self::Compressed => "compressed",
            Self::Upload => "upload",
            Self::Static => "static",
            Self::JsonTls => "json-tls",
            Self::Websocket => "websocket",
        }
    }

    /// The path and query each request asks for.
    pub fn path(self) -> &'static str {
        match self {
            Self::Baseline | Self::ShortLived => "/greetings?name=Ana",
            Self::PostJson => paths::GREETINGS,
            Self::Compressed => paths::FORTUNES,
            Self::Upload => paths::UPLOAD,
            Self::Static => "/static/index.html",
            Self::JsonTls => paths::JSON,
            Self::Websocket => paths::WS,
        }
    }

    /// The header fields each request carries.
    pub fn headers(self) -> Vec<Header> {
        let field = match self {
            Self::PostJson => "content-type: application/json",
            Self::Compressed => "accept-encoding: gzip, br",
            _ => return Vec::new(),
        };
        vec![field.parse().expect("a valid header field")]
    }

    /// The body each request sends (a WebSocket's: the message), for an upload of
    /// `upload_bytes`.
    pub fn body(self, upload_bytes: u64) -> Option<RequestBody> {
        match self {
            Self::PostJson => Some(RequestBody::Text(r#"{"name":"Ana"}"#.to_owned())),
            Self::Upload => Some(RequestBody::Size(upload_bytes)),
            Self::Websocket => Some(RequestBody::Text(
                r#"{"type":"echo","seq":1,"payload":"sixty-four bytes of JSON txt"}"#.to_owned(),
            )),
            _ => None,
        }
    }

    /// The protocol it goes over.
    pub fn protocol(self) -> Protocol {
        match self {
            Self::JsonTls => Protocol::Https,
            _ => Protocol::Http1,
        }
    }

    /// Whether each connection is a WebSocket, each request a message echoed on it.
    pub fn websocket(self) -> bool {
        self == Self::Websocket
    }

    /// Requests on a connection before the user opens another; none: one for the load.
    pub fn requests_per_connection(self) -> Option<usize> {
        (self == Self::ShortLived).then_some(10)
    }
}

impl std::str::FromStr for Profile {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
                format!("{text:?} is no profile: {}", names.join(", "))
            })
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every profile's request is one the load engine can make and the contract answers:
    /// its header fields parse, its path is a route, and its WebSocket message is the size
    /// it says.
    #[test]
    fn profiles_make_valid_requests() {
        for profile in Profile::ALL {
            let path = profile.path().split('?').next().unwrap_or_default();
            let routed = paths::ALL.contains(&path) || path.starts_with(paths::STATIC);
            assert!(routed, "{profile}: {path}");
            let _ = profile.headers();
            assert_eq!(profile.to_string().parse(), Ok(profile));
        }
        assert!("websockets".parse::<Profile>().is_err());
        let message = Profile::Websocket.body(0).expect("a message").bytes();
        assert_eq!(message.len(), 64);
        assert_eq!(
            Profile::Upload.body(7).map(|b| b.bytes().len()),
            Some(7),
            "the upload's size"
        );
    }
}
