//! What a load's requests carry besides their target: header fields ([`Header`]) and a body
//! ([`RequestBody`]), each read from and written as a flag's value. Below the connection and
//! the check, which both read them.

/// The body a load's requests send (each one the same): text as given (a JSON document), or
/// `size` bytes of a repeating pattern (an upload), with a declared length or in chunks.
/// Written as a flag's value, `text:…`, `size:N` or `chunked:N/K` (sizes in bytes or with a
/// binary unit, `20M/64k`), so that an agent makes the same body from a short command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestBody {
    /// These bytes.
    Text(String),
    /// This many bytes of `0..=250` repeated (no run a transport would shorten).
    Size(u64),
    /// The bytes of [`RequestBody::Size`], sent without a declared length: over HTTP/1.1
    /// chunked (`Transfer-Encoding: chunked`), over HTTP/2 in DATA frames, `chunk` bytes at
    /// a time.
    Chunked {
        /// The body's length.
        size: u64,
        /// Each chunk's length (the last may be shorter).
        chunk: u64,
    },
}

impl RequestBody {
    /// The bytes sent.
    pub fn bytes(&self) -> bytes::Bytes {
        match self {
            Self::Text(text) => bytes::Bytes::from(text.clone().into_bytes()),
            Self::Size(n) | Self::Chunked { size: n, .. } => {
                (0..*n).map(|i| (i % 251) as u8).collect()
            }
        }
    }

    /// The length of each chunk, when it is sent in chunks.
    pub fn chunk(&self) -> Option<usize> {
        match self {
            Self::Chunked { chunk, .. } => Some(usize::try_from(*chunk).unwrap_or(usize::MAX)),
            _ => None,
        }
    }
}

impl std::str::FromStr for RequestBody {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.split_once(':') {
            Some(("text", body)) => Ok(Self::Text(body.to_owned())),
            Some(("size", n)) => Ok(Self::Size(greet_cli::parse_bytes(n)?)),
            Some(("chunked", sizes)) => {
                let (size, chunk) = sizes
                    .split_once('/')
                    .ok_or_else(|| format!("{sizes:?} is not SIZE/CHUNK, e.g. 20M/64k"))?;
                let (size, chunk) = (
                    greet_cli::parse_bytes(size)?,
                    greet_cli::parse_bytes(chunk)?,
                );
                if chunk == 0 {
                    return Err("a chunk of 0 bytes would end the body".to_owned());
                }
                Ok(Self::Chunked { size, chunk })
            }
            _ => Err(format!(
                "{text:?} is no body: text:…, size:N or chunked:N/K"
            )),
        }
    }
}

impl std::fmt::Display for RequestBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Text(text) => write!(f, "text:{text}"),
            Self::Size(n) => write!(f, "size:{n}"),
            Self::Chunked { size, chunk } => write!(f, "chunked:{size}/{chunk}"),
        }
    }
}

/// A header field a load's requests carry: a lowercase name (HTTP/2 has no other) and a
/// value of visible ASCII, spaces and tabs, read from and written as `name: value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    name: String,
    value: String,
}

impl Header {
    /// The name, lowercase.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The value, as given (outer spaces trimmed).
    pub fn value(&self) -> &str {
        &self.value
    }
}

/// Header fields a load may not set: the connection's own, and `Host` (each request names
/// its server).
const RESERVED: [&str; 8] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "proxy-connection",
];

impl std::str::FromStr for Header {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let Some((name, value)) = text.split_once(':') else {
            return Err(format!("{text:?} is not a header field (NAME: VALUE)"));
        };
        // RFC 9110's token characters.
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(token) {
            return Err(format!("{name:?} is not a header name"));
        }
        let name = name.to_ascii_lowercase();
        if RESERVED.contains(&name.as_str()) {
            return Err(format!("{name} is the connection's own and cannot be set"));
        }
        let value = value.trim_matches([' ', '\t']);
        if !value
            .chars()
            .all(|c| c == ' ' || c == '\t' || c.is_ascii_graphic())
        {
            return Err(format!("the value of {name} is not visible ASCII"));
        }
        Ok(Self {
            name,
            value: value.to_owned(),
        })
    }
}

impl std::fmt::Display for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.name, self.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_read_and_write_back() {
        for body in [
            RequestBody::Text(r#"{"name":"Ana: x"}"#.into()),
            RequestBody::Size(300),
            RequestBody::Chunked {
                size: 20 << 20,
                chunk: 1000,
            },
        ] {
            assert_eq!(body.to_string().parse::<RequestBody>(), Ok(body));
        }
        let chunked = "chunked:2M/64k".parse::<RequestBody>();
        let want = RequestBody::Chunked {
            size: 2 << 20,
            chunk: 64 << 10,
        };
        assert_eq!(chunked, Ok(want));
        assert_eq!(
            "size:1k".parse::<RequestBody>(),
            Ok(RequestBody::Size(1024))
        );
        let bytes = RequestBody::Size(300).bytes();
        assert_eq!((bytes.len(), bytes[250], bytes[251]), (300, 250, 0));
        for bad in [
            "",
            "json:{}",
            "size:x",
            "size:-1",
            "chunked:10",
            "chunked:10/0",
        ] {
            assert!(bad.parse::<RequestBody>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn header_fields_read_and_write_back() {
        let header: Header = "Accept-Encoding:  gzip, br ".parse().unwrap();
        assert_eq!(
            (header.name(), header.value()),
            ("accept-encoding", "gzip, br")
        );
        assert_eq!(header.to_string().parse::<Header>(), Ok(header));
        assert!("x-empty:".parse::<Header>().is_ok());
        for bad in [
            "no colon",
            ": v",
            "bad name: v",
            "host: x",
            "Content-Length: 3",
            "x: a\r\nb",
            "x: é",
        ] {
            assert!(bad.parse::<Header>().is_err(), "{bad:?}");
        }
    }
}
