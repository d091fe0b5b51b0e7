//! Criterion benches for the workspace (`cargo bench -p greet-benches`):
//!
//! - `benches/core.rs`: the shared core's own work per request (query → name, greeting);
//! - `benches/handler.rs`: each framework's request path without a socket, at delay 0;
//! - `benches/roundtrip.rs`: each server in-process on an ephemeral port, one request per
//!   iteration, over one keep-alive connection and over a fresh connection each time.
//!
//! This library holds what the benches share: a minimal blocking HTTP/1.1 client, reading
//! answers with the workspace's one reader (`greet_probe::http1`).

use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};

use greet_probe::http1::{self, Options, Response};

/// `GET /greetings` on a kept-alive connection.
pub const KEEP_ALIVE_REQUEST: &[u8] = b"GET /greetings HTTP/1.1\r\nHost: bench\r\n\r\n";
/// `GET /greetings` asking the server to close after answering.
pub const CLOSE_REQUEST: &[u8] =
    b"GET /greetings HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n";

/// A blocking client connection that reads one response per request.
#[derive(Debug)]
pub struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
    response: Response,
}

impl Client {
    /// Connects to `addr`.
    pub fn connect(addr: SocketAddr) -> io::Result<Self> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            buf: Vec::with_capacity(1024),
            response: Response::new(),
        })
    }

    /// Sends `request` and reads its response; returns the status.
    pub fn request(&mut self, request: &[u8]) -> io::Result<u16> {
        self.stream.write_all(request)?;
        http1::read_blocking(
            &mut self.stream,
            &mut self.buf,
            &mut self.response,
            Options::default(),
        )
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        Ok(self.response.status())
    }
}
