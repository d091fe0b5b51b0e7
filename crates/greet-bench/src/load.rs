//! The load generator: `requests` GETs, `concurrency` at a time, each on a fresh connection
//! with the clock started before connect (the original tool's `--disable-keepalive`
//! semantics), every response validated.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use greet_core::WORDS;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
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

/// Runs `level`; `done` is bumped after each request (for progress bars). Returns every
/// request's outcome and the time from the first connect to the last response.
pub async fn run(level: &Level, done: Arc<AtomicUsize>) -> (Vec<Outcome>, Duration) {
    let next = Arc::new(AtomicUsize::new(0));
    let host = level.addr.to_string();
    let start = Instant::now();
    let workers: Vec<_> = (0..level.concurrency.min(level.requests))
        .map(|_| {
            let (next, done, host) = (Arc::clone(&next), Arc::clone(&done), host.clone());
            let level = level.clone();
            tokio::spawn(async move {
                let mut outcomes = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < level.requests {
                    outcomes.push(one(&level, &host).await);
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

/// One request on a fresh connection.
async fn one(level: &Level, host: &str) -> Outcome {
    let start = Instant::now();
    let mut connect = None;
    let attempt = async {
        let stream = TcpStream::connect(level.addr)
            .await
            .map_err(|_| ErrorKind::Connect)?;
        connect = Some(start.elapsed());
        let _ = stream.set_nodelay(true);
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|_| ErrorKind::Io)?;
        let request = Request::get(level.path.as_str())
            .header(hyper::header::HOST, host)
            .body(Empty::<Bytes>::new())
            .map_err(|_| ErrorKind::Io)?;
        let exchange = async move {
            let response = sender
                .send_request(request)
                .await
                .map_err(|_| ErrorKind::Io)?;
            let status = response.status();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|_| ErrorKind::Io)?;
            // Dropping the sender lets the connection task finish: the client closes.
            drop(sender);
            Ok::<_, ErrorKind>((status, body.to_bytes()))
        };
        let (result, _) = tokio::join!(exchange, conn);
        let (status, body) = result?;
        if status != StatusCode::OK {
            return Err(ErrorKind::Status);
        }
        if !is_greeting(&body) {
            return Err(ErrorKind::Body);
        }
        Ok(())
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
