//! When an answer is compressed: the rule every server applies with its ecosystem's encoder
//! (tower-http's `CompressionLayer` on axum and hyper, actix-http's `Encoder` on actix-web).
//!
//! An answer is compressed when the server's `--compression` is on, the request's
//! `Accept-Encoding` names a coding the server has ([`CODINGS`]) with a weight above zero,
//! and the answer is [`worth`] it: at least [`MIN_BYTES`] long and of a type that compresses.
//! The highest weight wins; between equal weights each encoder has its own order. Such an
//! answer carries `Vary: Accept-Encoding` whether or not this request asked, since another
//! one may. Codings the server lacks, and `*`, are ignored; when none is left the answer
//! goes out as it is (RFC 9110 §12.5.3 lets a server disregard the field rather than
//! answer 406), even with `identity;q=0`.
//!
//! The levels are each encoder's own default: actix-http's gzip 1 and brotli 3,
//! tower-http's gzip 6 and brotli 4. They are what each crate's users get, and a comparison
//! shows them as bytes per answer beside the CPU.

/// Answers shorter than this go out as they are: under a packet, compressing saves nothing
/// on the wire and costs a coder's set-up (a gzip header alone is 18 bytes). nginx's
/// `gzip_min_length` is 20, Express's threshold 1 KiB, Spring Boot's 2 KiB.
pub const MIN_BYTES: u16 = 1024;

/// The codings every server offers, as `Content-Encoding` names them.
pub const CODINGS: [&str; 3] = ["br", "gzip", "deflate"];

/// Whether an answer of `content_type` (a `content-type` header's value, if any) and `len`
/// bytes (if known) is worth compressing: long enough, and not a type that is compressed
/// already (images but SVG, audio, video, archives) or streamed (server-sent events).
pub fn worth(content_type: Option<&[u8]>, len: Option<u64>) -> bool {
    len.is_none_or(|len| len >= u64::from(MIN_BYTES)) && content_type.is_none_or(compresses)
}

/// Whether a body of `content_type` shrinks when compressed.
fn compresses(content_type: &[u8]) -> bool {
    let Some((kind, subtype)) = crate::media_type(content_type) else {
        return true;
    };
    let is = |name: &[u8]| subtype.eq_ignore_ascii_case(name);
    if kind.eq_ignore_ascii_case(b"image") {
        is(b"svg+xml")
    } else if [&b"audio"[..], b"video", b"font"]
        .iter()
        .any(|k| kind.eq_ignore_ascii_case(k))
    {
        false
    } else if kind.eq_ignore_ascii_case(b"text") {
        !is(b"event-stream")
    } else if kind.eq_ignore_ascii_case(b"application") {
        ![
            &b"zip"[..],
            b"gzip",
            b"x-gzip",
            b"zstd",
            b"octet-stream",
            b"pdf",
            b"wasm",
        ]
        .into_iter()
        .any(is)
    } else {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_json_over_the_threshold_compress() {
        let big = Some(u64::from(MIN_BYTES));
        for ct in [
            &b"text/plain; charset=utf-8"[..],
            b"application/json",
            b"text/html; charset=utf-8",
            b"TEXT/CSS",
            b"application/javascript",
            b"image/svg+xml",
        ] {
            assert!(worth(Some(ct), big), "{}", String::from_utf8_lossy(ct));
            assert!(!worth(Some(ct), Some(u64::from(MIN_BYTES) - 1)));
        }
        assert!(worth(None, None), "unknown type and length: compress");
    }

    #[test]
    fn compressed_and_streamed_types_do_not() {
        for ct in [
            &b"image/png"[..],
            b"IMAGE/JPEG",
            b"video/mp4",
            b"font/woff2",
            b"application/zip",
            b"application/octet-stream",
            b"text/event-stream",
        ] {
            assert!(
                !worth(Some(ct), Some(1 << 20)),
                "{}",
                String::from_utf8_lossy(ct)
            );
        }
    }
}
