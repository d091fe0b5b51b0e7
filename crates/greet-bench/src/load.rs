//! The load generator: `requests` GETs, `concurrency` at a time, each on a fresh connection
//! with the clock started before connect (the original tool's `--disable-keepalive`
//! semantics), every response validated. The client closes each connection after reading
//! its response, as that tool does.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use greet_core::WORDS;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::stats::{ErrorKind, Outcome};

/// One level of load.
#[derive(Debug, Clone)]
pub struct Level {
    /// The server.
    pub addr: SocketAddr,
    /// Path and query to GET, e.g. `/greetings`.
    pub path: String,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Requests in all.
    pub requests: usize,
    /// Per-request limit, connect included.
    pub timeout: Duration,
}

/// A response larger than this is not a greeting.
const MAX_RESPONSE: usize = 16 * 1024;

/// Runs `level`; `done` is bumped after each request (for progress bars). Returns every
/// request's outcome and the time from the first connect to the last response.
pub async fn run(level: &Level, done: Arc<AtomicUsize>) -> (Vec<Outcome>, Duration) {
    let next = Arc::new(AtomicUsize::new(0));
    // Built once: every request is the same bytes.
    let request: Arc<[u8]> = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: greet-bench\r\n\r\n",
        level.path, level.addr
    )
    .into_bytes()
    .into();
    let start = Instant::now();
    let workers: Vec<_> = (0..level.concurrency.min(level.requests))
        .map(|_| {
            let (next, done, request) =
                (Arc::clone(&next), Arc::clone(&done), Arc::clone(&request));
            let level = level.clone();
            tokio::spawn(async move {
                let mut outcomes = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < level.requests {
                    outcomes.push(one(&level, &request).await);
                    done.fetch_add(1, Ordering::Relaxed);
                }
                outcomes
            })
        })
        .collect();
    let mut outcomes = Vec::with_capacity(level.requests);
    for worker in workers {
        // A worker only ends by returning: its requests never panic.
        if let Ok(mut part) = worker.await {
            outcomes.append(&mut part);
        }
    }
    (outcomes, start.elapsed())
}

/// One request on a fresh connection: the request is written whole in one `write`, the
/// response parsed with `httparse` (hyper's own parser). hyper's client connection machinery
/// (dispatch channel, connection task) cost about 20 µs more per request on the load
/// generator's core, which at 2700 concurrent delayed the last request by ~50 ms.
async fn one(level: &Level, request: &[u8]) -> Outcome {
    let start = Instant::now();
    let mut connect = None;
    let attempt = async {
        let mut stream = TcpStream::connect(level.addr)
            .await
            .map_err(|_| ErrorKind::Connect)?;
        connect = Some(start.elapsed());
        stream.write_all(request).await.map_err(|_| ErrorKind::Io)?;
        read_response(&mut stream).await
    };
    match tokio::time::timeout(level.timeout, attempt).await {
        Ok(Ok(())) => Outcome::Ok {
            latency: start.elapsed(),
            connect: connect.unwrap_or_default(),
        },
        Ok(Err(kind)) => Outcome::Failed { kind, connect },
        Err(_) => Outcome::Failed {
            kind: ErrorKind::Timeout,
            connect,
        },
    }
}

/// Reads one response and validates it: 200 and a greeting body.
async fn read_response(stream: &mut TcpStream) -> Result<(), ErrorKind> {
    let mut buf = Vec::with_capacity(512);
    let (head_len, length) = loop {
        if stream.read_buf(&mut buf).await.map_err(|_| ErrorKind::Io)? == 0 {
            return Err(ErrorKind::Io);
        }
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(&buf) {
            Ok(httparse::Status::Complete(head_len)) => {
                if response.code != Some(200) {
                    return Err(ErrorKind::Status);
                }
                let length = response
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                    .and_then(|h| {
                        std::str::from_utf8(h.value)
                            .ok()?
                            .trim()
                            .parse::<usize>()
                            .ok()
                    });
                break (head_len, length);
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_RESPONSE => {}
            _ => return Err(ErrorKind::Io),
        }
    };
    match length {
        Some(length) => {
            while buf.len() < head_len + length {
                if stream.read_buf(&mut buf).await.map_err(|_| ErrorKind::Io)? == 0 {
                    return Err(ErrorKind::Io);
                }
            }
            buf.truncate(head_len + length);
        }
        // No length: the body runs to the end of the connection.
        None => {
            while buf.len() < MAX_RESPONSE {
                if stream.read_buf(&mut buf).await.map_err(|_| ErrorKind::Io)? == 0 {
                    break;
                }
            }
        }
    }
    if is_greeting(&buf[head_len..]) {
        Ok(())
    } else {
        Err(ErrorKind::Body)
    }
}

/// `^(Hello|Hi|Olá|Oi|Hallo) World!$`.
pub fn is_greeting(body: &[u8]) -> bool {
    std::str::from_utf8(body)
        .ok()
        .and_then(|text| text.strip_suffix(" World!"))
        .is_some_and(|word| WORDS.contains(&word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_bodies() {
        for word in WORDS {
            assert!(is_greeting(format!("{word} World!").as_bytes()));
        }
        for bad in [
            "Hello Ana!",
            "Hey World!",
            "Hello World!\n",
            "",
            "Hello World",
        ] {
            assert!(!is_greeting(bad.as_bytes()), "{bad}");
        }
        assert!(!is_greeting(b"\xff World!"));
    }
}
