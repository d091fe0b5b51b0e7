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
/// declared, a chunked body one byte over, and a chunked body that never ends (answered as
/// the limit is crossed, then not read on past 1 MiB more). A body of exactly
/// `max` is taken.
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

    unended_upload_is_not_read(addr, max).await?;
    expect_greeting_at(addr, "/greetings?name=after", "after").await
}

/// How far past the limit an upload may go before its 413: what the server may have taken
/// in one read.
const PAST_THE_LIMIT: usize = 1 << 20;

/// A chunked upload without end, sent only to `max` + [`PAST_THE_LIMIT`]: a server that
/// reads on would wait for the rest; the answer is a 413. Then the connection is closed:
/// what the client goes on sending fails (within what the sockets' buffers take) rather
/// than being read, as actix-web read it for as long as a client sent before.
async fn unended_upload_is_not_read(addr: SocketAddr, max: usize) -> Outcome {
    let what = "POST /upload chunked without end";
    let io = |e: std::io::Error| anyhow!("{what}: {e}");
    let mut stream = TcpStream::connect(addr).await.map_err(io)?;
    stream
        .write_all(&upload_head("Transfer-Encoding: chunked\r\n"))
        .await
        .map_err(io)?;
    let chunk = chunked(&[b'x'; 16_384], 16_384);
    let chunk = &chunk[..chunk.len() - 5]; // without the last chunk
                                           // The server may answer and close before all of it is written, or stop reading: the
                                           // answer is what counts.
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        let mut sent = 0;
        while sent < max + PAST_THE_LIMIT && stream.write_all(chunk).await.is_ok() {
            sent += 16_384;
        }
    })
    .await;
    let (mut buf, mut message) = (Vec::new(), http1::Response::new());
    let read = tokio::time::timeout(
        Duration::from_secs(10),
        http1::read(&mut stream, &mut buf, &mut message, Options::default()),
    )
    .await
    .map_err(|_| anyhow!("{what}: no answer once the limit + 1 MiB was sent"))?;
    read.map_err(|e| anyhow!("{what}: {e}"))?;
    ensure!(
        message.status() == 413,
        "{what}: status {}, want 413",
        message.status()
    );
    // Sockets' buffers on Linux take a few MiB; a server that reads on takes any amount.
    const MORE: usize = 64 << 20;
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        let mut more = 0;
        while more < MORE {
            if stream.write_all(chunk).await.is_err() {
                return true;
            }
            more += 16_384;
        }
        false
    })
    .await;
    match closed {
        Ok(true) => Ok(()),
        Ok(false) => bail!("{what}: after the 413 the server read {MORE} bytes more"),
        Err(_) => bail!("{what}: after the 413 the connection stayed open, unread, for 5 s"),
    }
}

/// The same over HTTP/2 (h2c): DATA frames without end, sent only to `max` +
/// 1 MiB, are answered 413, and the stream is then reset (RFC 9113 §8.1 lets a
/// server answer early and ask the client to stop so), so nothing more of it can be sent.
pub async fn upload_refuses_over_http2(addr: SocketAddr, max: usize) -> Outcome {
    use hyper::body::Bytes;
    let what = "POST /upload over HTTP/2 without end";
    let h2 = |e: h2::Error| anyhow!("{what}: {e}");
    let tcp = TcpStream::connect(addr).await?;
    let (client, connection) = h2::client::handshake(tcp).await.map_err(h2)?;
    let connection = tokio::spawn(connection);
    let mut client = client.ready().await.map_err(h2)?;
    let request = hyper::Request::post(format!("http://{addr}{}", paths::UPLOAD)).body(())?;
    let (response, mut body) = client.send_request(request, false).map_err(h2)?;
    let sending = tokio::spawn(async move {
        let chunk = Bytes::from_static(&[b'x'; 16_384]);
        let mut sent = 0;
        while sent < max + PAST_THE_LIMIT {
            body.reserve_capacity(chunk.len());
            let Some(Ok(n)) = std::future::poll_fn(|cx| body.poll_capacity(cx)).await else {
                break;
            };
            if body.send_data(chunk.slice(..n), false).is_err() {
                break;
            }
            sent += n;
        }
        body
    });
    let response = tokio::time::timeout(Duration::from_secs(10), response)
        .await
        .map_err(|_| anyhow!("{what}: no answer once the limit + 1 MiB was sent"))?
        .map_err(h2)?;
    ensure!(
        response.status() == 413,
        "{what}: status {}, want 413",
        response.status()
    );
    let mut body = tokio::time::timeout(Duration::from_secs(5), sending)
        .await
        .map_err(|_| anyhow!("{what}: after the 413 the stream was neither reset nor read"))??;
    let reset = tokio::time::timeout(
        Duration::from_secs(2),
        std::future::poll_fn(|cx| body.poll_reset(cx)),
    )
    .await;
    connection.abort();
    ensure!(
        matches!(reset, Ok(Ok(_))),
        "{what}: the stream was not reset after the 413 ({reset:?})"
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
