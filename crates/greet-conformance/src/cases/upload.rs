//! `POST /upload` as the contract has it (`greet_core::upload`): any body counted and
//! checksummed as it streams, the limit held as it is crossed, a stalled upload cut.

use greet_core::upload::{Received, STALL_TIMEOUT};
use greet_probe::http1::Options;
use rand::RngExt;

use super::*;

/// `POST /upload` with `extra` header lines and no body yet.
fn upload_head(extra: &str) -> Vec<u8> {
    request("POST", paths::UPLOAD, extra)
}

/// `body` in chunks of `size` bytes, chunked framing and the last chunk included.
fn chunked(body: &[u8], size: usize) -> Vec<u8> {
    let mut raw = Vec::with_capacity(body.len() + body.len() / size * 10 + 16);
    for chunk in body.chunks(size) {
        raw.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        raw.extend_from_slice(chunk);
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(b"0\r\n\r\n");
    raw
}

fn random_bytes(len: usize) -> Vec<u8> {
    let mut body = vec![0u8; len];
    rand::rng().fill(&mut body[..]);
    body
}

/// A 200 whose JSON is what `body` should be answered with.
fn expect_received(res: &Response, body: &[u8], what: &str) -> Outcome {
    ensure!(
        res.status() == 200,
        "{what}: status {}, body {:?}",
        res.status(),
        elide(&res.text(), 60)
    );
    expect_framed(res, JSON_CONTENT_TYPE, what)?;
    let got: Received =
        serde_json::from_slice(res.body()).map_err(|e| anyhow!("{what}: {e}: {:?}", res.text()))?;
    ensure!(
        got == Received::of(body),
        "{what}: {got:?}, want {:?}",
        Received::of(body)
    );
    Ok(())
}

/// `POST /upload` answers each body's length and CRC-32: empty, a few bytes, 1 MiB declared,
/// 3 MiB chunked in odd sizes, and a body sent only once the server has said
/// `100 Continue` to a request that expected it. Needs a `--max-upload` of 4 MiB or more.
pub async fn upload_counts_and_checksums(addr: SocketAddr) -> Outcome {
    let (small, mib, three) = (
        b"hello, upload".to_vec(),
        random_bytes(1 << 20),
        random_bytes(3 << 20),
    );
    for (what, body) in [
        ("an empty body", &b""[..]),
        ("13 bytes", &small),
        ("1 MiB", &mib),
    ] {
        let what = format!("POST /upload with {what}");
        let mut raw = upload_head(&format!(
            "Content-Type: application/octet-stream\r\nContent-Length: {}\r\n",
            body.len()
        ));
        raw.extend_from_slice(body);
        expect_received(&fetch(addr, &raw, false).await?, body, &what)?;
    }
    let mut raw = upload_head("Transfer-Encoding: chunked\r\n");
    raw.extend(chunked(&three, 100_003));
    expect_received(
        &fetch(addr, &raw, false).await?,
        &three,
        "POST /upload chunked, 3 MiB",
    )?;

    let what = "POST /upload with Expect: 100-continue";
    let io = |e: std::io::Error| anyhow!("{what}: {e}");
    let mut stream = TcpStream::connect(addr).await.map_err(io)?;
    let head = upload_head(&format!(
        "Expect: 100-continue\r\nContent-Length: {}\r\n",
        small.len()
    ));
    stream.write_all(&head).await.map_err(io)?;
    let mut interim = Vec::new();
    while !interim.ends_with(b"\r\n\r\n") {
        let byte = tokio::time::timeout(Duration::from_secs(2), stream.read_u8()).await;
        let byte = byte.map_err(|_| anyhow!("{what}: no 100 Continue within 2 s"))?;
        interim.push(byte.map_err(io)?);
    }
    ensure!(
        interim.starts_with(b"HTTP/1.1 100"),
        "{what}: answered {:?} before the body",
        elide(&String::from_utf8_lossy(&interim), 40)
    );
    stream.write_all(&small).await.map_err(io)?;
    let (mut after, mut message) = (Vec::new(), http1::Response::new());
    http1::read(&mut stream, &mut after, &mut message, Options::default())
        .await
        .map_err(|e| anyhow!("{what}: {e}"))?;
    let res = Response {
        message,
        head: false,
        after: Vec::new(),
    };
    expect_received(&res, &small, what)
}

/// Over the server's `--max-upload` of `max` bytes, 413 with a plain-text reason, and the
/// server fine afterwards: a declared length over it (answered before a byte of the body is
/// sent, whether or not the request expected `100 Continue`: actix-web says it first), 100 GB
/// declared, a chunked body one byte over, and a chunked body that never ends (answered
/// before it is all sent; hyper and axum then close the connection, actix-web reads and
/// drops what follows; before 4 × `max` and 32 MiB, more than two sockets' buffers hold).
/// A body of exactly `max` is taken.
pub async fn upload_refuses_over_the_limit(addr: SocketAddr, max: usize) -> Outcome {
    let exact = random_bytes(max);
    let mut raw = upload_head(&format!("Content-Length: {max}\r\n"));
    raw.extend_from_slice(&exact);
    expect_received(
        &fetch(addr, &raw, false).await?,
        &exact,
        "POST /upload of exactly --max-upload",
    )?;

    for (what, extra) in [
        (
            "one byte over, declared",
            format!("Content-Length: {}\r\n", max + 1),
        ),
        (
            "100 GB declared",
            "Content-Length: 100000000000\r\n".to_owned(),
        ),
        (
            "over, declared, expecting 100-continue",
            format!("Expect: 100-continue\r\nContent-Length: {}\r\n", max + 1),
        ),
    ] {
        let what = format!("POST /upload {what}, no byte of it sent");
        let res = exchange_within(addr, &upload_head(&extra), false, Duration::from_secs(3))
            .await
            .map_err(|e| anyhow!("{what}: {e}"))?;
        expect_status(&res, 413, &what)?;
    }

    let mut raw = upload_head("Transfer-Encoding: chunked\r\n");
    raw.extend(chunked(&vec![b'x'; max + 1], 65_536));
    expect_error_at(addr, &raw, 413, "POST /upload chunked, one byte over").await?;

    endless_upload_is_refused(addr, max).await?;
    expect_greeting_at(addr, "/greetings?name=after", "after").await
}

/// A chunked upload that never ends, written until the answer comes: the answer is a 413
/// that came before `max` and what two sockets' buffers hold had been sent.
async fn endless_upload_is_refused(addr: SocketAddr, max: usize) -> Outcome {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    let what = "POST /upload chunked without end";
    let io = |e: std::io::Error| anyhow!("{what}: {e}");
    let stream = TcpStream::connect(addr).await.map_err(io)?;
    let (mut reader, mut writer) = stream.into_split();
    let (sent, answered) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let writing = {
        let (sent, answered) = (Arc::clone(&sent), Arc::clone(&answered));
        tokio::spawn(async move {
            writer
                .write_all(&upload_head("Transfer-Encoding: chunked\r\n"))
                .await?;
            let chunk = chunked(&[b'x'; 16_384], 16_384);
            let chunk = &chunk[..chunk.len() - 5]; // without the last chunk
                                                   // Until the answer comes, or 1 GiB (a server that reads it all never answers).
            while !answered.load(Ordering::Relaxed) && sent.load(Ordering::Relaxed) < 1 << 30 {
                writer.write_all(chunk).await?;
                sent.fetch_add(16_384, Ordering::Relaxed);
            }
            Ok::<_, std::io::Error>(())
        })
    };
    let (mut buf, mut message) = (Vec::new(), http1::Response::new());
    let read = tokio::time::timeout(
        Duration::from_secs(10),
        http1::read(&mut reader, &mut buf, &mut message, Options::default()),
    )
    .await;
    let sent_then = sent.load(Ordering::Relaxed);
    answered.store(true, Ordering::Relaxed);
    writing.abort();
    read.map_err(|_| anyhow!("{what}: no answer within 10 s ({sent_then} bytes sent)"))?
        .map_err(|e| anyhow!("{what}: {e}"))?;
    ensure!(
        message.status() == 413,
        "{what}: status {}, want 413",
        message.status()
    );
    // Past the limit, what the two sockets' buffers take in (up to 6 MiB each on Linux's
    // defaults), and slack for a busy machine.
    let bound = max + (32 << 20);
    ensure!(
        sent_then < bound,
        "{what}: answered once {sent_then} bytes were sent, want as the limit ({max}) is crossed"
    );
    Ok(())
}

/// An upload that stops sending is cut with a 408 after the stall timeout (5 s), with a
/// plain-text reason.
pub async fn upload_stall_is_cut(addr: SocketAddr) -> Outcome {
    let what = "POST /upload that stalls";
    let mut raw = upload_head("Content-Length: 1000\r\n");
    raw.extend_from_slice(b"only a few bytes");
    let start = Instant::now();
    let res = exchange_within(addr, &raw, false, STALL_TIMEOUT * 2)
        .await
        .map_err(|e| anyhow!("{what}: {e}"))?;
    let elapsed = start.elapsed();
    ensure!(
        elapsed >= STALL_TIMEOUT - Duration::from_millis(200),
        "{what}: cut after {elapsed:?}, before the {STALL_TIMEOUT:?} timeout"
    );
    expect_status(&res, 408, what)
}
