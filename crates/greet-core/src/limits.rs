//! Request-head limits, one definition for every server.
//!
//! Each framework's own parser is configured (or known) to accept heads larger than these,
//! so the limits below are what a client meets on all three servers, answered by
//! [`check_head`] with the same status and reason. Heads beyond a framework's own parser
//! limit get the same status from that parser, without the plain-text reason.

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
/// A client that has not sent a complete request head within this time is disconnected.
pub const HEAD_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// What [`check_head`] needs to know of a parsed request head.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeadInfo {
    /// The request is HTTP/1.1 (where `Host` is mandatory).
    pub http11: bool,
    /// A `Host` header is present.
    pub has_host: bool,
    /// Length of the request target, in bytes.
    pub target_len: usize,
    /// Number of header fields.
    pub header_count: usize,
    /// Sum of every header's name and value length, in bytes.
    pub header_bytes: usize,
}

impl HeadInfo {
    /// A head's figures from what every framework's request type can tell: the version, the
    /// presence of `Host`, the target's parts, and each header field's name and value
    /// lengths.
    pub fn new(
        http11: bool,
        has_host: bool,
        target: Target<'_>,
        fields: impl IntoIterator<Item = (usize, usize)>,
    ) -> Self {
        let (mut header_count, mut header_bytes) = (0, 0);
        for (name, value) in fields {
            header_count += 1;
            header_bytes += name + value;
        }
        Self {
            http11,
            has_host,
            target_len: target.len(),
            header_count,
            header_bytes,
        }
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
}

/// The checks every server runs on every request before routing it, in this order:
/// target length (414), head size and header count (431), `Host` on HTTP/1.1 (400).
pub fn check_head(head: &HeadInfo) -> Result<(), GreetError> {
    if head.target_len > MAX_TARGET_BYTES {
        return Err(GreetError::UriTooLong);
    }
    if head.header_count > MAX_HEADERS || head.target_len + head.header_bytes > MAX_HEAD_BYTES {
        return Err(GreetError::HeadTooLarge);
    }
    if head.http11 && !head.has_host {
        return Err(GreetError::MissingHost);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok_head() -> HeadInfo {
        HeadInfo {
            http11: true,
            has_host: true,
            target_len: 20,
            header_count: 3,
            header_bytes: 60,
        }
    }

    #[test]
    fn accepts_an_ordinary_head() {
        assert_eq!(check_head(&ok_head()), Ok(()));
        let http10 = HeadInfo {
            http11: false,
            has_host: false,
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
        let origin = Target {
            path_and_query: Some("/x"),
            ..Target::default()
        };
        let head = HeadInfo::new(true, true, origin, [(4, 9), (6, 3)]);
        assert_eq!(
            (head.target_len, head.header_count, head.header_bytes),
            (2, 2, 22)
        );
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
        let no_host = HeadInfo {
            has_host: false,
            ..ok_head()
        };
        assert_eq!(check_head(&no_host), Err(GreetError::MissingHost));
    }
}
