//! Listening with an explicit backlog, what a server serves on, and how many connections
//! wait in a listener's accept queue.

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

/// A listening socket's accept queue, as the kernel counts it: connections whose handshake
/// completed and that no `accept` has taken yet. To their clients they are connected, and
/// closing the listener resets them; a server whose accept loop is its framework's waits for
/// this to empty before it stops accepting (see [`crate::shutdown::then_queue_taken`]).
///
/// Read from `/proc/self/net/tcp` and `tcp6` (for a listener, the `rx_queue` column is the
/// queue's length), found by the socket's inode: Linux only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcceptQueue {
    inode: u64,
}

impl AcceptQueue {
    /// The queue of `listener`; `None` where `/proc` does not show it.
    pub fn of(listener: &TcpListener) -> Option<Self> {
        use std::os::fd::AsRawFd;
        let link = std::fs::read_link(format!("/proc/self/fd/{}", listener.as_raw_fd())).ok()?;
        let inode = link
            .to_str()?
            .strip_prefix("socket:[")?
            .strip_suffix(']')?
            .parse()
            .ok()?;
        Some(Self { inode })
    }

    /// Connections waiting in it now; `None` when the socket is no longer listed.
    pub fn waiting(&self) -> Option<usize> {
        ["/proc/self/net/tcp", "/proc/self/net/tcp6"]
            .iter()
            .filter_map(|table| std::fs::read_to_string(table).ok())
            .find_map(|table| rx_queue(&table, self.inode))
    }
}

/// The `rx_queue` of the socket with `inode` in a `/proc/net/tcp` table: its fifth column is
/// `tx_queue:rx_queue` in hex, its tenth the inode.
fn rx_queue(table: &str, inode: u64) -> Option<usize> {
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(9)?.parse::<u64>().ok()? != inode {
            return None;
        }
        let (_tx, rx) = fields.get(4)?.split_once(':')?;
        usize::from_str_radix(rx, 16).ok()
    })
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
    fn the_accept_queue_counts_connections_not_yet_taken() {
        let listener = bind("127.0.0.1:0".parse().unwrap(), 16).unwrap();
        let queue = AcceptQueue::of(&listener).expect("/proc shows the listener");
        assert_eq!(queue.waiting(), Some(0));
        let addr = listener.local_addr().unwrap();
        let clients: Vec<_> = (0..3)
            .map(|_| std::net::TcpStream::connect(addr).unwrap())
            .collect();
        assert_eq!(queue.waiting(), Some(3));
        let (_taken, _) = listener.accept().unwrap();
        assert_eq!(queue.waiting(), Some(2));
        drop((clients, listener));
        assert_eq!(queue.waiting(), None);
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
