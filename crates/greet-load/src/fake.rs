//! Servers for the engine's own tests, on loopback ports, each doing one thing a real server
//! does now and then (closing a kept-alive connection, answering chunked, not answering).

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A keep-alive server answering `ok` to every request, chunked when `chunked`; with `close`,
/// closing each connection right after its first answer, with no `Connection: close`: a
/// server closing an idle connection.
pub(crate) async fn answering(chunked: bool, close: bool) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    let mut chunk = [0u8; 1024];
                    match stream.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..end + 4);
                        let answer: &[u8] = if chunked {
                            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\no\r\n1\r\nk\r\n0\r\n\r\n"
                        } else {
                            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
                        };
                        if stream.write_all(answer).await.is_err() || close {
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}

/// A server that accepts connections and reads requests, and never answers.
pub(crate) async fn silent() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut chunk = [0u8; 1024];
                while let Ok(n) = stream.read(&mut chunk).await {
                    if n == 0 {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// A loopback port nothing listens on.
pub(crate) fn refusing() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// An h2c server answering `status` and `ok` to every request `delay` after it came, taking
/// at most `limit` streams at once; with `goaway_after`, each connection goes away
/// (gracefully, as a server closing an idle one) after that many.
pub(crate) async fn h2(
    status: u16,
    delay: std::time::Duration,
    limit: u32,
    goaway_after: Option<usize>,
) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let handshake = h2::server::Builder::new()
                    .max_concurrent_streams(limit)
                    .handshake(stream);
                let Ok(mut conn) = handshake.await else {
                    return;
                };
                let mut served = 0;
                while let Some(Ok((_, mut respond))) = conn.accept().await {
                    tokio::spawn(async move {
                        tokio::time::sleep(delay).await;
                        let answer = http::Response::builder().status(status).body(()).unwrap();
                        if let Ok(mut body) = respond.send_response(answer, false) {
                            let _ = body.send_data(bytes::Bytes::from_static(b"ok"), true);
                        }
                    });
                    served += 1;
                    if Some(served) == goaway_after {
                        conn.graceful_shutdown();
                    }
                }
            });
        }
    });
    addr
}
