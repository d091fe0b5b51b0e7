//! Listening with an explicit backlog, and what a server serves on.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};

use socket2::{Domain, Protocol, Socket, Type};

use crate::Tls;

/// What a server serves on: a bound socket, and the TLS its connections are accepted with, if
/// any. Cleartext connections speak HTTP/1.1 or HTTP/2 with prior knowledge (h2c), told apart
/// by their first bytes; TLS connections speak what ALPN chose.
#[derive(Debug)]
pub struct Listener {
    /// The bound, non-blocking socket.
    pub tcp: TcpListener,
    /// TLS for every connection, or none for cleartext.
    pub tls: Option<Tls>,
}

impl From<TcpListener> for Listener {
    /// Cleartext on `tcp`.
    fn from(tcp: TcpListener) -> Self {
        Self { tcp, tls: None }
    }
}

/// Binds `addr` and listens with `backlog`, returning a non-blocking std listener that any
/// runtime can adopt.
///
/// `tokio::net::TcpListener::bind` listens with a backlog of 128: a burst of 2700 connects
/// overflows it and the kernel retries the dropped handshakes a second later, which shows as
/// a fake one-second tail. Every server here binds through this function instead.
pub fn bind(addr: SocketAddr, backlog: u32) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // Lets a restarted server take its port back while old connections sit in TIME_WAIT;
    // on Linux it does not let two listeners share a port.
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(i32::try_from(backlog).unwrap_or(i32::MAX))?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// The address a local client reaches a server on that listens on `addr`: the loopback
/// address when it listens on every address.
pub fn local_target(addr: SocketAddr) -> SocketAddr {
    let ip = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, addr.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_bind_on_the_same_port_fails() {
        let first = bind("127.0.0.1:0".parse().unwrap(), 16).unwrap();
        let err = bind(first.local_addr().unwrap(), 16).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
    }

    #[test]
    fn local_target_maps_unspecified_to_loopback() {
        let any: SocketAddr = "0.0.0.0:81".parse().unwrap();
        assert_eq!(local_target(any), "127.0.0.1:81".parse().unwrap());
        let v6: SocketAddr = "[::]:81".parse().unwrap();
        assert_eq!(local_target(v6), "[::1]:81".parse().unwrap());
        let one: SocketAddr = "10.0.0.2:81".parse().unwrap();
        assert_eq!(local_target(one), one);
    }
}
