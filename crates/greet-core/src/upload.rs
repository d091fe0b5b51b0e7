//! `POST /upload`: a body of any type and length, streamed and never held whole, answered
//! with its length and CRC-32 as `{"bytes":N,"crc32":"8 hex digits"}`. The rules, the same on
//! every server:
//!
//! 1. a declared length over the server's `--max-upload` is 413 before a byte is read (on
//!    hyper and axum a client that sent `Expect: 100-continue` is told before it sends the
//!    body; actix-http says `100 Continue` before the route runs);
//! 2. an undeclared (chunked) one is 413 as soon as it crosses the limit;
//! 3. a body that sends nothing for [`STALL_TIMEOUT`] is 408, one that breaks off is 400.
//!
//! [`receive`] applies them to the body as each server's framework streams it (hyper's
//! `Incoming` as a data stream, actix-web's `Payload`): memory stays at one chunk whatever
//! the size. CRC-32 (crc32fast, the checksum gzip uses) costs a tenth of a byte's read at
//! most, so the figure measures the server's body path, not a hash.

use std::time::Duration;

use futures_util::{Stream, StreamExt};
use serde::Serialize;

use crate::{GreetError, Reply};

/// `--max-upload`'s default: 64 MiB, over the 20 MB HttpArena's upload test sends.
pub const DEFAULT_MAX_UPLOAD: u64 = 64 << 20;

/// [`STALL_TIMEOUT`] in seconds, for the message that quotes it.
macro_rules! stall_secs {
    () => {
        5
    };
}
pub(crate) use stall_secs;

/// How long an upload may send nothing before it is cut with a 408: as long as a request
/// head may take ([`crate::limits::HEAD_READ_TIMEOUT`]).
pub const STALL_TIMEOUT: Duration = Duration::from_secs(stall_secs!());
const _: () = assert!(STALL_TIMEOUT.as_nanos() == crate::limits::HEAD_READ_TIMEOUT.as_nanos());

/// What `POST /upload` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Received {
    /// The body's length in bytes.
    pub bytes: u64,
    /// Its CRC-32 (IEEE, as gzip's), as 8 lowercase hex digits.
    pub crc32: String,
}

impl Received {
    /// What `body` would be answered with.
    pub fn of(body: &[u8]) -> Self {
        Self {
            bytes: body.len() as u64,
            crc32: format!("{:08x}", crc32fast::hash(body)),
        }
    }
}

/// Rule 1: a declared length (`content-length`, if the request has one) within `max`.
pub fn admit(max: u64, declared: Option<u64>) -> Result<(), GreetError> {
    match declared {
        Some(len) if len > max => Err(GreetError::UploadTooLarge),
        _ => Ok(()),
    }
}

/// The upload's answer: `chunks` read as they come (rules 2 and 3), each let go once
/// counted. Call [`admit`] first, before the framework reads the body.
pub async fn receive<S, B, E>(max: u64, chunks: S) -> Reply
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    match read(max, chunks).await {
        // Serializing a number and a string cannot fail.
        Ok(received) => Reply::json(serde_json::to_string(&received).unwrap_or_default()),
        Err(err) => err.into(),
    }
}

async fn read<S, B, E>(max: u64, chunks: S) -> Result<Received, GreetError>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    let mut chunks = std::pin::pin!(chunks);
    let (mut bytes, mut crc) = (0u64, crc32fast::Hasher::new());
    loop {
        let chunk = match tokio::time::timeout(STALL_TIMEOUT, chunks.next()).await {
            Err(_) => return Err(GreetError::UploadStalled),
            Ok(None) => break,
            Ok(Some(Err(_))) => return Err(GreetError::UploadCut),
            Ok(Some(Ok(chunk))) => chunk,
        };
        let chunk = chunk.as_ref();
        bytes += chunk.len() as u64;
        if bytes > max {
            return Err(GreetError::UploadTooLarge);
        }
        crc.update(chunk);
    }
    Ok(Received {
        bytes,
        crc32: format!("{:08x}", crc.finalize()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::stream;

    fn chunks(parts: &'static [&'static [u8]]) -> impl Stream<Item = Result<&'static [u8], ()>> {
        stream::iter(parts.iter().copied().map(Ok))
    }

    #[tokio::test]
    async fn counts_and_checksums_across_chunks() {
        let got = read(100, chunks(&[b"hello ", b"", b"world"])).await;
        assert_eq!(got, Ok(Received::of(b"hello world")));
        // The check value of CRC-32/ISO-HDLC.
        assert_eq!(Received::of(b"123456789").crc32, "cbf43926");
        assert_eq!(read(0, chunks(&[])).await, Ok(Received::of(b"")));
    }

    #[tokio::test]
    async fn over_the_limit_is_413_as_it_crosses() {
        assert_eq!(
            read(11, chunks(&[b"hello ", b"world"]))
                .await
                .unwrap()
                .bytes,
            11
        );
        let over = read(10, chunks(&[b"hello ", b"world"])).await;
        assert_eq!(over, Err(GreetError::UploadTooLarge));
        assert_eq!(admit(10, Some(11)), Err(GreetError::UploadTooLarge));
        assert_eq!(admit(10, Some(10)), Ok(()));
        assert_eq!(admit(10, None), Ok(()));
    }

    #[tokio::test(start_paused = true)]
    async fn a_stall_is_408_and_a_break_400() {
        let stalled = stream::iter([Ok::<_, ()>(&b"a"[..])]).chain(stream::pending());
        assert_eq!(read(10, stalled).await, Err(GreetError::UploadStalled));
        let broken = stream::iter([Ok(&b"a"[..]), Err(())]);
        assert_eq!(read(10, broken).await, Err(GreetError::UploadCut));
    }
}
