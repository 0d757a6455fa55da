//! rskafka opens its broker connections with Nagle's algorithm on and offers
//! no option to turn it off. A record longer than one segment (a camera image
//! of ~100 KB is two on loopback) then leaves its last segment waiting for the
//! broker's delayed ACK: ~40 ms on Linux, on every image. This turns Nagle off
//! on this process's TCP sockets connected to a broker's port, as librdkafka's
//! `socket.nagle.disable` does.

use std::os::fd::RawFd;

/// Sets `TCP_NODELAY` on every connected TCP socket of this process whose
/// peer port is one of `ports`; returns how many it set. Cheap enough for
/// each new connection (one directory read and a few calls per descriptor).
pub fn disable_nagle_to(ports: &[u16]) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return 0;
    };
    dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<RawFd>().ok())
        .filter(|&fd| peer_port(fd).is_some_and(|port| ports.contains(&port)) && set_nodelay(fd))
        .count()
}

/// The peer port of `fd` if it is a connected IPv4 or IPv6 stream socket.
fn peer_port(fd: RawFd) -> Option<u16> {
    let mut kind: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: plain queries of a descriptor number; a descriptor that is not
    // a socket, or was closed since it was listed, only returns an error.
    let is_stream = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&raw mut kind).cast(),
            &raw mut len,
        )
    } == 0
        && kind == libc::SOCK_STREAM;
    if !is_stream {
        return None;
    }
    // SAFETY: as above; `addr` is large enough for any address family.
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: as above.
    if unsafe { libc::getpeername(fd, (&raw mut addr).cast(), &raw mut len) } != 0 {
        return None;
    }
    match libc::c_int::from(addr.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let v4 = unsafe { &*(&raw const addr).cast::<libc::sockaddr_in>() };
            Some(u16::from_be(v4.sin_port))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let v6 = unsafe { &*(&raw const addr).cast::<libc::sockaddr_in6>() };
            Some(u16::from_be(v6.sin6_port))
        }
        _ => None,
    }
}

fn set_nodelay(fd: RawFd) -> bool {
    let on: libc::c_int = 1;
    // SAFETY: sets an option on a socket descriptor; errors are returned.
    unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            (&raw const on).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        ) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn sets_nodelay_only_towards_the_ports_asked_for() {
        let broker = TcpListener::bind("127.0.0.1:0").unwrap();
        let other = TcpListener::bind("127.0.0.1:0").unwrap();
        let to_broker = TcpStream::connect(broker.local_addr().unwrap()).unwrap();
        let to_other = TcpStream::connect(other.local_addr().unwrap()).unwrap();
        assert!(!to_broker.nodelay().unwrap() && !to_other.nodelay().unwrap());
        assert!(disable_nagle_to(&[broker.local_addr().unwrap().port()]) >= 1);
        assert!(to_broker.nodelay().unwrap());
        assert!(!to_other.nodelay().unwrap());
    }
}
