//! The drivers: the sans-IO [`Parser`] fed from a socket until a response is whole, on an
//! async reader ([`read`]) or a blocking one ([`read_blocking`]), and a one-shot blocking GET
//! ([`get_blocking`]). Apart from the parser and the response (`mod.rs`), which never touch
//! I/O.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

use super::{Error, Options, Parser, Response};

/// Feeds `buf` to the parser and drops what it consumed; whether the response is complete.
fn step(parser: &mut Parser, buf: &mut Vec<u8>, res: &mut Response) -> Result<bool, Error> {
    if buf.is_empty() {
        return Ok(false);
    }
    let progress = parser.feed(buf, res)?;
    buf.drain(..progress.consumed);
    Ok(progress.done)
}

/// What a read that ended with `err` means: a reset after part of the answer arrived is the
/// end of the connection (a server that answered, then closed with request bytes unread),
/// anything else a failure.
fn ended(err: io::Error, got_any: bool) -> Result<usize, Error> {
    if got_any && err.kind() == io::ErrorKind::ConnectionReset {
        Ok(0)
    } else {
        Err(Error::Io(err))
    }
}

/// Reads one response from `io` into `res`. `buf` holds bytes already read from `io` (it may
/// start non-empty) and keeps, afterwards, any bytes that followed the response.
pub async fn read<R: AsyncRead + Unpin>(
    io: &mut R,
    buf: &mut Vec<u8>,
    res: &mut Response,
    options: Options,
) -> Result<(), Error> {
    res.clear();
    let mut parser = Parser::new(options);
    let mut got_any = !buf.is_empty();
    loop {
        if step(&mut parser, buf, res)? {
            return Ok(());
        }
        buf.reserve(4096);
        let n = match io.read_buf(buf).await {
            Ok(n) => n,
            Err(err) => ended(err, got_any)?,
        };
        if n == 0 {
            return parser.finish(res);
        }
        got_any = true;
    }
}

/// [`read`], on a blocking reader.
pub fn read_blocking<R: Read>(
    io: &mut R,
    buf: &mut Vec<u8>,
    res: &mut Response,
    options: Options,
) -> Result<(), Error> {
    res.clear();
    let mut parser = Parser::new(options);
    let mut got_any = !buf.is_empty();
    let mut chunk = [0u8; 8192];
    loop {
        if step(&mut parser, buf, res)? {
            return Ok(());
        }
        let n = match io.read(&mut chunk) {
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => ended(err, got_any)?,
        };
        if n == 0 {
            return parser.finish(res);
        }
        got_any = true;
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// `GET target` on a fresh blocking connection (`Connection: close`), with `timeout` for the
/// connect and for each read and write; over TLS with `tls` (which should offer `http/1.1`).
pub fn get_blocking(
    addr: SocketAddr,
    target: &str,
    timeout: Duration,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> Result<Response, Error> {
    let stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let _ = stream.set_nodelay(true);
    let request = format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let mut res = Response::new();
    match tls {
        None => exchange_blocking(stream, &request, &mut res)?,
        Some(config) => {
            let connection = rustls::ClientConnection::new(config, crate::tls::server_name(addr))
                .map_err(io::Error::other)?;
            exchange_blocking(
                rustls::StreamOwned::new(connection, stream),
                &request,
                &mut res,
            )?;
        }
    }
    Ok(res)
}

fn exchange_blocking(
    mut io: impl Read + Write,
    request: &str,
    res: &mut Response,
) -> Result<(), Error> {
    io.write_all(request.as_bytes())?;
    io.flush()?;
    read_blocking(&mut io, &mut Vec::new(), res, Options::default())
}
