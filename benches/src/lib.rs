//! Criterion benches for the workspace (`cargo bench -p greet-benches`):
//!
//! - `benches/core.rs`: the shared core's own work per request (query → name, greeting);
//! - `benches/handler.rs`: each framework's request path without a socket, at delay 0;
//! - `benches/roundtrip.rs`: each server in-process on an ephemeral port, one request per
//!   iteration, over one keep-alive connection and over a fresh connection each time.
//!
//! This library holds what the benches share: a minimal blocking HTTP/1.1 client.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};

/// `GET /greetings` on a kept-alive connection.
pub const KEEP_ALIVE_REQUEST: &[u8] = b"GET /greetings HTTP/1.1\r\nHost: bench\r\n\r\n";
/// `GET /greetings` asking the server to close after answering.
pub const CLOSE_REQUEST: &[u8] =
    b"GET /greetings HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n";

/// A blocking client connection that reads one response per request.
pub struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    /// Connects to `addr`.
    pub fn connect(addr: SocketAddr) -> io::Result<Self> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            buf: Vec::with_capacity(1024),
        })
    }

    /// Sends `request` and reads its response; returns the status.
    pub fn request(&mut self, request: &[u8]) -> io::Result<u16> {
        self.stream.write_all(request)?;
        self.buf.clear();
        let mut chunk = [0u8; 1024];
        loop {
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
            let mut headers = [httparse::EMPTY_HEADER; 16];
            let mut response = httparse::Response::new(&mut headers);
            if let httparse::Status::Complete(head) = response
                .parse(&self.buf)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
            {
                let length = response
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                    .and_then(|h| std::str::from_utf8(h.value).ok()?.parse::<usize>().ok())
                    .unwrap_or(0);
                let status = response.code.unwrap_or(0);
                while self.buf.len() < head + length {
                    let n = self.stream.read(&mut chunk)?;
                    if n == 0 {
                        return Err(io::ErrorKind::UnexpectedEof.into());
                    }
                    self.buf.extend_from_slice(&chunk[..n]);
                }
                return Ok(status);
            }
        }
    }
}
