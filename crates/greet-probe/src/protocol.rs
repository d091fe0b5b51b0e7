//! The protocols a client speaks to a server ([`Protocol`]), and where a server's URL points
//! ([`resolve`]): one definition for the contract suite, the load generator and the harness.

use std::fmt;
use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

/// A protocol a client speaks to a server. Serialized as its name (`http1`, `h2c`, `https`,
/// `h2`), as command lines and results files spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// HTTP/1.1 in cleartext.
    #[default]
    Http1,
    /// HTTP/2 in cleartext, with prior knowledge.
    H2c,
    /// HTTP/1.1 over TLS (ALPN `http/1.1`).
    Https,
    /// HTTP/2 over TLS (ALPN `h2`).
    H2,
}

impl Protocol {
    /// All four, cleartext first.
    pub const ALL: [Protocol; 4] = [Self::Http1, Self::H2c, Self::Https, Self::H2];

    /// `http1`, `h2c`, `https`, `h2`: its name on command lines and in results.
    pub fn name(self) -> &'static str {
        match self {
            Self::Http1 => "http1",
            Self::H2c => "h2c",
            Self::Https => "https",
            Self::H2 => "h2",
        }
    }

    /// Over TLS.
    pub fn tls(self) -> bool {
        matches!(self, Self::Https | Self::H2)
    }

    /// HTTP/2 rather than HTTP/1.1.
    pub fn http2(self) -> bool {
        matches!(self, Self::H2c | Self::H2)
    }

    /// The ALPN id it asks for over TLS.
    pub fn alpn(self) -> &'static [u8] {
        if self.http2() {
            b"h2"
        } else {
            b"http/1.1"
        }
    }

    /// The URL scheme it goes with: `https` over TLS, else `http`.
    pub fn scheme(self) -> &'static str {
        if self.tls() {
            "https"
        } else {
            "http"
        }
    }

    /// The protocol a URL means when none is named: h2 for `https://`, else HTTP/1.1.
    pub fn of_url(url: &str) -> Self {
        if url.starts_with("https://") {
            Self::H2
        } else {
            Self::Http1
        }
    }
}

/// A protocol name that is none of the four.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProtocol(pub String);

impl fmt::Display for UnknownProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown protocol {:?}: http1, h2c, https or h2", self.0)
    }
}

impl std::error::Error for UnknownProtocol {}

impl std::str::FromStr for Protocol {
    type Err = UnknownProtocol;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| UnknownProtocol(name.to_owned()))
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a URL names no server [`resolve`] can reach.
#[derive(Debug)]
pub enum ResolveError {
    /// Neither `http://` nor `https://`.
    Scheme(String),
    /// The host's name did not resolve.
    Lookup {
        /// `host:port`.
        authority: String,
        /// What the resolver said.
        source: std::io::Error,
    },
    /// It resolved to no address.
    NoAddress(String),
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scheme(url) => write!(f, "{url:?} is not an http:// or https:// URL"),
            Self::Lookup { authority, source } => write!(f, "{authority}: {source}"),
            Self::NoAddress(authority) => write!(f, "{authority}: no address"),
        }
    }
}

impl std::error::Error for ResolveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Lookup { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The socket address of `http://host:port[/...]` or `https://host:port[/...]` (ports 80 and
/// 443 when none is given).
pub async fn resolve(url: &str) -> Result<SocketAddr, ResolveError> {
    let (rest, port) = match url.strip_prefix("http://") {
        Some(rest) => (rest, 80),
        None => url
            .strip_prefix("https://")
            .map(|rest| (rest, 443))
            .ok_or_else(|| ResolveError::Scheme(url.to_owned()))?,
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let authority = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        authority.to_owned()
    } else {
        format!("{authority}:{port}")
    };
    let mut addrs = tokio::net::lookup_host(authority.clone())
        .await
        .map_err(|source| ResolveError::Lookup {
            authority: authority.clone(),
            source,
        })?;
    addrs.next().ok_or(ResolveError::NoAddress(authority))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn resolves_urls() {
        let at = |url: &'static str| async move { resolve(url).await.map_err(|e| e.to_string()) };
        assert_eq!(
            at("http://127.0.0.1:8081").await,
            Ok("127.0.0.1:8081".parse().unwrap())
        );
        assert_eq!(
            at("http://127.0.0.1:9/x").await,
            Ok("127.0.0.1:9".parse().unwrap())
        );
        assert_eq!(
            at("https://127.0.0.1:8443").await,
            Ok("127.0.0.1:8443".parse().unwrap())
        );
        assert_eq!(
            at("https://127.0.0.1").await,
            Ok("127.0.0.1:443".parse().unwrap())
        );
        let err = at("ftp://x").await.unwrap_err();
        assert!(err.contains("not an http:// or https:// URL"), "{err}");
    }

    #[test]
    fn names_round_trip_through_text_and_json() {
        for p in Protocol::ALL {
            assert_eq!(p.name().parse::<Protocol>(), Ok(p));
            assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{p}\""));
        }
        let err = "http3".parse::<Protocol>().unwrap_err().to_string();
        assert_eq!(err, "unknown protocol \"http3\": http1, h2c, https or h2");
        assert_eq!(Protocol::of_url("https://h"), Protocol::H2);
        assert_eq!(Protocol::of_url("http://h"), Protocol::Http1);
    }
}
