//! Sockets: large receive buffers (the kernel grants at most `rmem_max`; the
//! size granted is logged), address reuse, and multicast membership.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use socket2::{Domain, Protocol, Socket, Type};

/// A non-blocking UDP socket bound to `bind:port`, asking for `rcvbuf` bytes
/// of receive buffer; returns it with the size actually granted.
pub fn udp_receiver(
    bind: Ipv4Addr,
    port: u16,
    rcvbuf: usize,
    multicast: Option<Ipv4Addr>,
) -> io::Result<(std::net::UdpSocket, usize)> {
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    s.set_reuse_address(true)?;
    let _ = s.set_recv_buffer_size(rcvbuf);
    // Linux reports twice the size it books for itself.
    let granted = s.recv_buffer_size().unwrap_or(0) / 2;
    s.bind(&SocketAddr::from(SocketAddrV4::new(bind, port)).into())?;
    if let Some(group) = multicast {
        s.join_multicast_v4(&group, &Ipv4Addr::UNSPECIFIED)?;
    }
    s.set_nonblocking(true)?;
    Ok((s.into(), granted))
}

/// A socket for sending requests.
pub fn udp_sender() -> io::Result<std::net::UdpSocket> {
    let s = std::net::UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))?;
    s.set_nonblocking(true)?;
    Ok(s)
}
