//! Request-head limits and framing rules, one definition for every server.
//!
//! Each framework's own parser is configured (or known) to accept heads larger than these,
//! so the limits below are what a client meets on all three servers, answered by
//! [`check_head`] with the same status and reason. Heads beyond a framework's own parser
//! limit get the same status from that parser, without the plain-text reason.
//!
//! Two rules of actix-web's parser, stricter than hyper's and both RFC 9112's, apply to all
//! three: exactly one `Host` (on HTTP/1.1; at most one on 1.0) and an ASCII request target.
//! hyper's other leniencies (identical repeated `Content-Length`s merged, `Content-Length`
//! dropped beside `Transfer-Encoding`) happen inside its parser, out of an application's
//! sight: the README's bad-input table lists them.

use std::time::Duration;

use crate::GreetError;

/// Longest request target (path and query as sent), in bytes: longer is 414.
pub const MAX_TARGET_BYTES: usize = 8 * 1024;
/// Largest request head, counted as the target plus every header's name and value, in
/// bytes: larger is 431.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// Most header fields in one request: more is 431. Below actix-web's fixed parser limit
/// (96), so all three servers answer the same way.
pub const MAX_HEADERS: usize = 64;
/// A client that has not sent a complete request head within this time is disconnected; a
/// TLS handshake not done within it is cut too.
pub const HEAD_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// A connection with no request in flight for this long is closed, HTTP/1 or HTTP/2: on
/// HTTP/1 it is the head-read timeout, which hyper starts as soon as it waits for the next
/// head (actix-web's keep-alive is set to it); on HTTP/2 each server counts its requests in
/// flight (`greet_server::idle`), since neither hyper nor actix-web has an idle limit there.
pub const IDLE_TIMEOUT: Duration = HEAD_READ_TIMEOUT;

/// HTTP/2: most streams a client may have open on one connection (hyper's default; actix-web
/// 4 cannot set it and advertises none).
pub const H2_MAX_CONCURRENT_STREAMS: u32 = 200;
/// HTTP/2: the largest header list a request may send, as SETTINGS_MAX_HEADER_LIST_SIZE
/// counts it: the HTTP/1 head limit (actix-web 4 cannot set it: h2's default, 16 MiB).
pub const H2_MAX_HEADER_LIST_BYTES: u32 = MAX_HEAD_BYTES as u32;
/// HTTP/2: the largest frame a client may send, the protocol's smallest choice (16 KiB; the
/// same on actix-web, where it is h2's default).
pub const H2_MAX_FRAME_BYTES: u32 = 16 * 1024;

/// What [`check_head`] needs to know of a parsed request head.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeadInfo {
    /// The request is HTTP/1.1 (where `Host` is mandatory).
    pub http11: bool,
    /// `Host` header fields.
    pub host_fields: usize,
    /// Length of the request target, in bytes.
    pub target_len: usize,
    /// The request target is all ASCII.
    pub target_ascii: bool,
    /// Number of header fields.
    pub header_count: usize,
    /// Sum of every header's name and value length, in bytes.
    pub header_bytes: usize,
}

impl HeadInfo {
    /// A head's figures from what every framework's request type can tell: the version, the
    /// target's parts, and each header field's (lower-case) name and value.
    pub fn new<'a>(
        http11: bool,
        target: Target<'_>,
        fields: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) -> Self {
        let mut head = Self {
            http11,
            target_len: target.len(),
            target_ascii: target.is_ascii(),
            ..Self::default()
        };
        for (name, value) in fields {
            head.header_count += 1;
            head.header_bytes += name.len() + value.len();
            if name == "host" {
                head.host_fields += 1;
            }
        }
        head
    }
}

/// A request target as a parsed URI gives it back.
#[derive(Debug, Clone, Copy, Default)]
pub struct Target<'a> {
    /// `http`, for an absolute-form target.
    pub scheme: Option<&'a str>,
    /// `host:port`, for an absolute-form target.
    pub authority: Option<&'a str>,
    /// Path and query.
    pub path_and_query: Option<&'a str>,
}

impl Target<'_> {
    /// Its length as sent: `scheme://authority` (absolute form) plus path and query.
    pub fn len(&self) -> usize {
        let path_and_query = self.path_and_query.map_or(0, str::len);
        match self.authority {
            Some(authority) => {
                authority.len() + self.scheme.map_or(0, |s| s.len() + 3) + path_and_query
            }
            None => path_and_query,
        }
    }

    /// No target at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every part is ASCII, as RFC 3986 requires (anything else must be percent-encoded).
    pub fn is_ascii(&self) -> bool {
        [self.scheme, self.authority, self.path_and_query]
            .iter()
            .flatten()
            .all(|part| part.is_ascii())
    }
}

/// The checks every server runs on every request before routing it, in this order:
/// target length (414), head size and header count (431), a non-ASCII target, `Host` missing
/// on HTTP/1.1 or repeated (400).
pub fn check_head(head: &HeadInfo) -> Result<(), GreetError> {
    if head.target_len > MAX_TARGET_BYTES {
        return Err(GreetError::UriTooLong);
    }
    if head.header_count > MAX_HEADERS || head.target_len + head.header_bytes > MAX_HEAD_BYTES {
        return Err(GreetError::HeadTooLarge);
    }
    if !head.target_ascii {
        return Err(GreetError::NonAsciiTarget);
    }
    if head.http11 && head.host_fields == 0 {
        return Err(GreetError::MissingHost);
    }
    if head.host_fields > 1 {
        return Err(GreetError::RepeatedHost);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok_head() -> HeadInfo {
        HeadInfo {
            http11: true,
            host_fields: 1,
            target_len: 20,
            target_ascii: true,
            header_count: 3,
            header_bytes: 60,
        }
    }

    #[test]
    fn accepts_an_ordinary_head() {
        assert_eq!(check_head(&ok_head()), Ok(()));
        let http10 = HeadInfo {
            http11: false,
            host_fields: 0,
            ..ok_head()
        };
        assert_eq!(check_head(&http10), Ok(()));
    }

    #[test]
    fn figures_from_parts() {
        let target = Target {
            scheme: Some("http"),
            authority: Some("h:1"),
            path_and_query: Some("/greetings?name=a"),
        };
        assert_eq!(target.len(), "http://h:1/greetings?name=a".len());
        assert!(target.is_ascii());
        let origin = Target {
            path_and_query: Some("/x"),
            ..Target::default()
        };
        let fields: [(&str, &[u8]); 3] = [("host", b"localhost"), ("host", b"x"), ("x-a", b"b")];
        let head = HeadInfo::new(true, origin, fields);
        assert_eq!(
            (head.target_len, head.header_count, head.header_bytes),
            (2, 3, 22)
        );
        assert_eq!(head.host_fields, 2);
        assert!(head.target_ascii);
        let utf8 = Target {
            path_and_query: Some("/greetings?name=João"),
            ..Target::default()
        };
        assert!(!utf8.is_ascii());
    }

    #[test]
    fn each_limit_at_its_edge() {
        let at = |target_len, header_count, header_bytes| HeadInfo {
            target_len,
            header_count,
            header_bytes,
            ..ok_head()
        };
        assert_eq!(check_head(&at(MAX_TARGET_BYTES, 3, 60)), Ok(()));
        assert_eq!(
            check_head(&at(MAX_TARGET_BYTES + 1, 3, 60)),
            Err(GreetError::UriTooLong)
        );
        assert_eq!(check_head(&at(20, MAX_HEADERS, 60)), Ok(()));
        assert_eq!(
            check_head(&at(20, MAX_HEADERS + 1, 60)),
            Err(GreetError::HeadTooLarge)
        );
        assert_eq!(check_head(&at(20, 3, MAX_HEAD_BYTES - 20)), Ok(()));
        assert_eq!(
            check_head(&at(20, 3, MAX_HEAD_BYTES - 19)),
            Err(GreetError::HeadTooLarge)
        );
    }

    #[test]
    fn framing_rules() {
        let with = |f: fn(&mut HeadInfo)| {
            let mut head = ok_head();
            f(&mut head);
            check_head(&head)
        };
        assert_eq!(with(|h| h.host_fields = 0), Err(GreetError::MissingHost));
        assert_eq!(with(|h| h.host_fields = 2), Err(GreetError::RepeatedHost));
        assert_eq!(
            with(|h| h.target_ascii = false),
            Err(GreetError::NonAsciiTarget)
        );
        assert_eq!(
            with(|h| {
                h.http11 = false;
                h.host_fields = 2;
            }),
            Err(GreetError::RepeatedHost)
        );
    }
}
