//! Compression as the contract has it (`greet_core::compress`): an answer worth compressing
//! is compressed with the coding the request weighs highest among those every server offers,
//! says so in `Content-Encoding`, carries `Vary: Accept-Encoding` either way, and decodes to
//! the answer sent as it is; small answers and servers run with `--compression off` send
//! everything as it is.

use std::io::Read;

use greet_core::compress::{CODINGS, MIN_BYTES};

use super::*;

/// A `GET` of `target` asking for `accept_encoding`.
fn get_encoded(target: &str, accept_encoding: &str) -> Vec<u8> {
    request(
        "GET",
        target,
        &format!("Accept-Encoding: {accept_encoding}\r\n"),
    )
}

/// `body` decoded from `coding` (`None`: as it is).
pub(super) fn decoded(coding: Option<&str>, body: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    match coding {
        None => out.extend_from_slice(body),
        Some("gzip") => {
            flate2::read::GzDecoder::new(body).read_to_end(&mut out)?;
        }
        // HTTP's deflate is the zlib format (RFC 9110 §8.4.1.2).
        Some("deflate") => {
            flate2::read::ZlibDecoder::new(body).read_to_end(&mut out)?;
        }
        Some("br") => {
            brotli_decompressor::Decompressor::new(body, 4096).read_to_end(&mut out)?;
        }
        Some(other) => bail!("content-encoding {other:?}, not one the server offers"),
    }
    Ok(out)
}

/// Whether `res` says it varies with `Accept-Encoding`.
fn varies(res: &Response) -> bool {
    res.message.headers().any(|(name, value)| {
        name.eq_ignore_ascii_case("vary")
            && value
                .split(|&b| b == b',')
                .any(|v| v.trim_ascii().eq_ignore_ascii_case(b"accept-encoding"))
    })
}

/// `/fortunes` (1.2 KiB of HTML, the same every time) asked with each `Accept-Encoding`:
/// compressed with the coding of highest weight, or sent as it is when none of those offered
/// is acceptable (weights of zero, unknown codings, `identity;q=0` alone), always with
/// `Vary`, always the page once decoded. A HEAD says what its GET does. `/json` (27 bytes)
/// and a 404 are sent as they are and say no `Vary`; a JSON array of 200 rows (JSON's
/// content type) is compressed like the page.
pub async fn compression_follows_accept_encoding(addr: SocketAddr) -> Outcome {
    const _: () = assert!(records::FORTUNES_PAGE.len() >= MIN_BYTES as usize);
    let page = records::FORTUNES_PAGE.as_bytes();
    let rows: &[(&str, Option<&str>)] = &[
        ("gzip", Some("gzip")),
        ("br", Some("br")),
        ("deflate", Some("deflate")),
        ("GZIP", Some("gzip")),
        ("gzip;q=0.5, br", Some("br")),
        ("br;q=0.2, gzip;q=0.8", Some("gzip")),
        ("deflate;q=0.1, br;q=0.3, gzip;q=0.2", Some("br")),
        ("gzip, identity;q=0", Some("gzip")),
        ("x-unknown, deflate", Some("deflate")),
        ("identity", None),
        ("", None),
        ("br;q=0, gzip;q=0, deflate;q=0", None),
        ("identity;q=0", None),
        ("compress, x-unknown", None),
    ];
    for &(accept, want) in rows {
        let what = format!("GET /fortunes with Accept-Encoding {accept:?}");
        let res = fetch(addr, &get_encoded(paths::FORTUNES, accept), false).await?;
        ensure!(res.status() == 200, "{what}: status {}", res.status());
        let coding = res.header("content-encoding");
        ensure!(
            coding == want,
            "{what}: content-encoding {coding:?}, want {want:?}"
        );
        ensure!(varies(&res), "{what}: no Vary: Accept-Encoding");
        let body = decoded(coding, res.body()).map_err(|e| anyhow!("{what}: {e}"))?;
        ensure!(
            body == page,
            "{what}: decodes to {:?}",
            elide(&String::from_utf8_lossy(&body), 60)
        );
        if coding.is_some() {
            ensure!(
                res.body().len() < page.len(),
                "{what}: {} bytes compressed, {} as it is",
                res.body().len(),
                page.len()
            );
        }
    }
    let head = request("HEAD", paths::FORTUNES, "Accept-Encoding: gzip\r\n");
    let res = fetch(addr, &head, true).await?;
    ensure!(
        res.header("content-encoding") == Some("gzip") && varies(&res),
        "HEAD /fortunes with Accept-Encoding gzip: content-encoding {:?}, want the GET's gzip and Vary",
        res.header("content-encoding")
    );
    for target in [paths::JSON, "/no-such-path"] {
        let what = format!("GET {target} with Accept-Encoding gzip, br");
        let res = fetch(addr, &get_encoded(target, "gzip, br"), false).await?;
        ensure!(
            res.header("content-encoding").is_none() && !varies(&res),
            "{what} ({} bytes): content-encoding {:?}, vary {:?}; want neither under {MIN_BYTES} bytes",
            res.body().len(),
            res.header("content-encoding"),
            res.header("vary")
        );
        expect_framed(&res, res.header("content-type").unwrap_or_default(), &what)?;
    }
    for coding in CODINGS {
        let what = format!("GET /queries?queries=200 with Accept-Encoding {coding}");
        let res = fetch(addr, &get_encoded("/queries?queries=200", coding), false).await?;
        ensure!(
            res.status() == 200 && res.header("content-encoding") == Some(coding),
            "{what}: status {}, content-encoding {:?}",
            res.status(),
            res.header("content-encoding")
        );
        let body = decoded(Some(coding), res.body()).map_err(|e| anyhow!("{what}: {e}"))?;
        let worlds: Vec<World> =
            serde_json::from_slice(&body).map_err(|e| anyhow!("{what}: decoded: {e}"))?;
        ensure!(worlds.len() == 200, "{what}: {} rows", worlds.len());
    }
    Ok(())
}

/// A server run with `--compression off` sends `/fortunes` as it is, without `Vary`,
/// whatever the request asks.
pub async fn compression_off_sends_as_is(addr: SocketAddr) -> Outcome {
    for accept in ["gzip", "br", "gzip, br, deflate", "identity;q=0"] {
        let what = format!("GET /fortunes with Accept-Encoding {accept:?}, compression off");
        let res = fetch(addr, &get_encoded(paths::FORTUNES, accept), false).await?;
        ensure!(
            res.header("content-encoding").is_none() && !varies(&res),
            "{what}: content-encoding {:?}, vary {:?}",
            res.header("content-encoding"),
            res.header("vary")
        );
        expect_framed(&res, HTML_CONTENT_TYPE, &what)?;
        ensure!(
            res.body() == records::FORTUNES_PAGE.as_bytes(),
            "{what}: not the page"
        );
    }
    Ok(())
}
