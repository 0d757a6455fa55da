//! Sockets of the bridges: large receive buffers (the kernel grants at most
//! `rmem_max`; the size granted is logged), a clear error for a port already
//! taken, multicast membership, and who may send to them.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};

use socket2::{Domain, Protocol, Socket, Type};

use crate::sim_host::SimHost;

/// A non-blocking UDP socket bound to `bind:port`, asking for `rcvbuf` bytes
/// of receive buffer; returns it with the size actually granted. A unicast
/// port another program holds is an error that says so, not a port
/// silently shared with it.
pub fn udp_receiver(bind: Ipv4Addr, port: u16, rcvbuf: usize) -> io::Result<(std::net::UdpSocket, usize)> {
    let (s, granted) = bound_socket(bind, port, rcvbuf, false)?;
    Ok((s.into(), granted))
}

fn bound_socket(bind: Ipv4Addr, port: u16, rcvbuf: usize, reuse: bool) -> io::Result<(Socket, usize)> {
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    if reuse {
        s.set_reuse_address(true)?;
    }
    let _ = s.set_recv_buffer_size(rcvbuf);
    // Linux reports twice the size it books for itself.
    let granted = s.recv_buffer_size().unwrap_or(0) / 2;
    s.bind(&SocketAddr::from(SocketAddrV4::new(bind, port)).into())
        .map_err(|e| match e.kind() {
            io::ErrorKind::AddrInUse => io::Error::new(
                e.kind(),
                format!("UDP port {port} is already in use on this host (another bridge, or a simulator SDK script?)"),
            ),
            _ => e,
        })?;
    s.set_nonblocking(true)?;
    Ok((s, granted))
}

/// A multicast group and the local interfaces to take it on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MulticastJoin {
    pub group: Ipv4Addr,
    /// Local addresses of the interfaces; `0.0.0.0` is the interface the
    /// kernel picks (the default route's).
    pub interfaces: Vec<Ipv4Addr>,
}

impl MulticastJoin {
    /// `group` on the interface towards each host or network `senders`
    /// allows (the simulator's first), or on every interface when it
    /// allows any. A join without an interface takes the default route's,
    /// which on a PC with a second network towards the simulator (Wi-Fi
    /// plus a wired simulator LAN) hears none of the simulator's multicast.
    pub fn towards(group: Ipv4Addr, senders: &SenderFilter) -> Self {
        let interfaces = if senders.allows_any() {
            every_multicast_interface()
        } else {
            let mut v = Vec::new();
            for peer in senders.remote_peers() {
                let local = local_ip_towards(peer);
                let local = if local.is_loopback() {
                    Ipv4Addr::UNSPECIFIED
                } else {
                    local
                };
                if !v.contains(&local) {
                    v.push(local);
                }
            }
            v
        };
        Self {
            group,
            interfaces: if interfaces.is_empty() {
                vec![Ipv4Addr::UNSPECIFIED]
            } else {
                interfaces
            },
        }
    }
}

/// Describes joined interfaces for the log.
pub fn describe_interfaces(interfaces: &[Ipv4Addr]) -> String {
    interfaces
        .iter()
        .map(|i| {
            if i.is_unspecified() {
                "the default route's interface".to_string()
            } else {
                i.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A socket on `port` (address reuse on: several receivers of one group on
/// a host is what multicast is for) joined to `join.group` on each of its
/// interfaces; returns it, the buffer granted and the interfaces joined
/// (an error only when none could be).
pub fn multicast_receiver(
    port: u16,
    rcvbuf: usize,
    join: &MulticastJoin,
) -> io::Result<(std::net::UdpSocket, usize, Vec<Ipv4Addr>)> {
    let (s, granted) = bound_socket(Ipv4Addr::UNSPECIFIED, port, rcvbuf, true)?;
    let mut joined = Vec::new();
    let mut last_error = None;
    for interface in &join.interfaces {
        match s.join_multicast_v4(&join.group, interface) {
            Ok(()) => joined.push(*interface),
            Err(e) => last_error = Some(e),
        }
    }
    match (joined.is_empty(), last_error) {
        (true, Some(e)) => Err(e),
        _ => Ok((s.into(), granted, joined)),
    }
}

/// A receiver on `port` for `what` that, given a `group`, also takes that
/// multicast group on the interfaces towards whoever `senders` allows (or
/// unicast alone, with a warning, when no interface can join); the log says
/// where it joined.
pub fn udp_receiver_with_group(
    port: u16,
    rcvbuf: usize,
    group: Option<Ipv4Addr>,
    senders: &SenderFilter,
    logger: &str,
    what: &str,
) -> io::Result<(std::net::UdpSocket, usize)> {
    let Some(group) = group else {
        return udp_receiver(Ipv4Addr::UNSPECIFIED, port, rcvbuf);
    };
    let join = MulticastJoin::towards(group, senders);
    match multicast_receiver(port, rcvbuf, &join) {
        Ok((sock, granted, joined)) => {
            r2r::log_info!(
                logger,
                "{what}: UDP {port} and multicast {group} joined on {}",
                describe_interfaces(&joined)
            );
            Ok((sock, granted))
        }
        Err(e) => {
            r2r::log_warn!(
                logger,
                "{what}: multicast {group} not joined ({e}); unicast on UDP {port} only"
            );
            udp_receiver(Ipv4Addr::UNSPECIFIED, port, rcvbuf)
        }
    }
}

/// The address this host has towards `peer` (where a simulator there must
/// send to), by the routing table; loopback when there is no route.
pub fn local_ip_towards(peer: Ipv4Addr) -> Ipv4Addr {
    let probe = std::net::UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).and_then(|s| {
        s.connect((peer, 9))?;
        s.local_addr()
    });
    match probe {
        Ok(SocketAddr::V4(a)) if !a.ip().is_unspecified() => *a.ip(),
        _ => Ipv4Addr::LOCALHOST,
    }
}

/// Whether `ip` is this machine: loopback, or the address of one of its
/// interfaces.
pub fn is_this_host(ip: Ipv4Addr) -> bool {
    ip.is_loopback() || interface_addresses(false).contains(&ip)
}

/// The IPv4 addresses of this host's interfaces that take multicast.
fn every_multicast_interface() -> Vec<Ipv4Addr> {
    interface_addresses(true)
}

/// The IPv4 addresses of this host's interfaces (with `multicast`, only of
/// those that take multicast).
fn interface_addresses(multicast: bool) -> Vec<Ipv4Addr> {
    let mut out = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list that stays valid
    // until freeifaddrs; each node's address is read only when present
    // and of family AF_INET, i.e. a sockaddr_in.
    unsafe {
        if libc::getifaddrs(&mut list) != 0 {
            return out;
        }
        let mut node = list;
        while !node.is_null() {
            let addr = (*node).ifa_addr;
            let takes_multicast = (*node).ifa_flags & libc::IFF_MULTICAST as libc::c_uint != 0;
            if !addr.is_null() && i32::from((*addr).sa_family) == libc::AF_INET && (takes_multicast || !multicast) {
                let sin = &*addr.cast::<libc::sockaddr_in>();
                let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                if !out.contains(&ip) {
                    out.push(ip);
                }
            }
            node = (*node).ifa_next;
        }
        libc::freeifaddrs(list);
    }
    out
}

/// What to tell the user when frames of `frame_bytes` meet a socket whose
/// kernel granted `granted` bytes of receive buffer of the `requested`: a
/// frame larger than the buffer is lost whenever it arrives faster than it
/// is read, i.e. as a simulator sends it, in one burst. `None` when it fits.
pub fn receive_buffer_advice(frame_bytes: usize, granted: usize, requested: usize) -> Option<String> {
    if frame_bytes <= granted {
        return None;
    }
    let mib = |b: usize| b as f64 / f64::from(1u32 << 20);
    let needed = (frame_bytes + (1 << 20)).next_multiple_of(1 << 20);
    let also = if requested < needed {
        format!(" and rcvbuf_bytes:={needed}")
    } else {
        String::new()
    };
    Some(format!(
        "frames of up to {:.1} MiB do not fit the {:.1} MiB UDP receive buffer the kernel granted: \
         `sudo sysctl -w net.core.rmem_max={needed}`{also}, then restart the bridge",
        mib(frame_bytes),
        mib(granted)
    ))
}

/// A socket for sending requests.
pub fn udp_sender() -> io::Result<std::net::UdpSocket> {
    let s = std::net::UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))?;
    s.set_nonblocking(true)?;
    Ok(s)
}

/// Which hosts a bridge takes datagrams from: the simulator's host and this
/// machine's loopback, and whatever `allowed_senders` adds. Anything else on
/// the network could otherwise inject frames, IMU samples or clock anchors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderFilter {
    /// The simulator's host, at the address its name has now.
    sim_host: Option<SimHost>,
    /// (network, prefix length)
    allowed: Vec<(Ipv4Addr, u8)>,
}

impl SenderFilter {
    /// `extra`: addresses (`192.168.1.7`), networks (`192.168.1.0/24`), or
    /// `any` (`0.0.0.0/0`).
    pub fn new(sim_host: impl Into<SimHost>, extra: &[String]) -> Result<Self, String> {
        let mut allowed = vec![(Ipv4Addr::new(127, 0, 0, 0), 8)];
        for e in extra {
            allowed.push(parse_network(e)?);
        }
        Ok(Self {
            sim_host: Some(sim_host.into()),
            allowed,
        })
    }

    /// Everyone (tests of the filter's users, and an explicit `any`).
    pub fn any() -> Self {
        Self {
            sim_host: None,
            allowed: vec![(Ipv4Addr::UNSPECIFIED, 0)],
        }
    }

    pub fn allows(&self, from: &SocketAddr) -> bool {
        let ip = match from.ip() {
            IpAddr::V4(ip) => ip,
            IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
                Some(ip) => ip,
                None => return false,
            },
        };
        if self.sim_host.as_ref().is_some_and(|h| h.ip() == ip) {
            return true;
        }
        self.allowed.iter().any(|&(net, len)| {
            let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        })
    }

    /// Whether every host may send (`any`).
    pub fn allows_any(&self) -> bool {
        self.allowed.iter().any(|&(_, len)| len == 0)
    }

    /// The hosts and networks allowed besides this machine's loopback, the
    /// simulator's first: where a network's address stands for its hosts.
    pub fn remote_peers(&self) -> Vec<Ipv4Addr> {
        let sim_host = self.sim_host.iter().map(SimHost::ip);
        sim_host
            .chain(self.allowed.iter().map(|&(net, _)| net))
            .filter(|net| !net.is_loopback() && !net.is_unspecified())
            .collect()
    }

    /// For log lines: what is allowed.
    pub fn describe(&self) -> String {
        let sim_host = self.sim_host.iter().map(SimHost::describe);
        sim_host
            .chain(
                self.allowed
                    .iter()
                    .map(|(n, l)| if *l == 32 { n.to_string() } else { format!("{n}/{l}") }),
            )
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn parse_network(s: &str) -> Result<(Ipv4Addr, u8), String> {
    if s == "any" {
        return Ok((Ipv4Addr::UNSPECIFIED, 0));
    }
    let (addr, len) = match s.split_once('/') {
        Some((a, l)) => (a, l.parse::<u8>().ok().filter(|l| *l <= 32)),
        None => (s, Some(32)),
    };
    match (addr.parse::<Ipv4Addr>(), len) {
        (Ok(a), Some(l)) => Ok((a, l)),
        _ => Err(format!("{s:?} is not an IPv4 address, a network a.b.c.d/n, or `any`")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_host_is_loopback_and_its_own_addresses_only() {
        use super::{interface_addresses, is_this_host, local_ip_towards};
        use std::net::Ipv4Addr;
        assert!(is_this_host(Ipv4Addr::LOCALHOST) && is_this_host(Ipv4Addr::new(127, 0, 1, 1)));
        for own in interface_addresses(false) {
            assert!(is_this_host(own), "{own}");
        }
        // TEST-NET-3: documentation only, never an interface's.
        assert!(!is_this_host(Ipv4Addr::new(203, 0, 113, 7)));
        assert!(is_this_host(local_ip_towards(Ipv4Addr::new(203, 0, 113, 7))));
    }

    #[test]
    fn a_frame_larger_than_the_receive_buffer_says_what_fixes_it() {
        use super::receive_buffer_advice;
        assert_eq!(receive_buffer_advice(6 << 20, 32 << 20, 32 << 20), None);
        let uhd = 3840 * 2160 * 3;
        let said = receive_buffer_advice(uhd, 4 << 20, 32 << 20).unwrap();
        assert!(said.contains("23.7 MiB") && said.contains("4.0 MiB"), "{said}");
        assert!(
            said.contains("net.core.rmem_max=26214400`,") && !said.contains("rcvbuf_bytes"),
            "{said}"
        );
        let more = receive_buffer_advice(uhd, 4 << 20, 4 << 20).unwrap();
        assert!(more.contains("rcvbuf_bytes:=26214400"), "{more}");
    }

    #[test]
    fn recurring_receive_errors_are_paused_not_spun_on() {
        let mut e = ErrorPause::default();
        assert_eq!(
            (e.failed(), e.failed(), e.failed()),
            (None, None, None),
            "a few at once"
        );
        let pauses: Vec<_> = (0..12).map(|_| e.failed().unwrap()).collect();
        assert_eq!(pauses[0], std::time::Duration::from_millis(1));
        assert!(pauses.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(*pauses.last().unwrap(), ErrorPause::MAX);
        e.succeeded();
        assert_eq!(e.failed(), None, "a success starts again");
    }

    use super::*;

    /// Each datagram as it was, in order, the last one shorter.
    #[test]
    fn datagrams_leave_whole_and_in_order() {
        let rx = std::net::UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(2))).unwrap();
        let tx = udp_sender().unwrap();
        let bytes: Vec<u8> = (0..3500u32).map(|i| (i % 251) as u8).collect();
        send_datagrams(&tx, &bytes, 1000, rx.local_addr().unwrap()).unwrap();
        let mut buf = [0u8; 2000];
        for chunk in bytes.chunks(1000) {
            let n = rx.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], chunk);
        }
        send_datagrams(&tx, &[], 1000, rx.local_addr().unwrap()).unwrap();
    }

    fn from(ip: &str) -> SocketAddr {
        SocketAddr::new(ip.parse().unwrap(), 1234)
    }

    #[test]
    fn simulator_and_loopback_by_default() {
        let f = SenderFilter::new(Ipv4Addr::new(192, 168, 1, 10), &[]).unwrap();
        assert!(f.allows(&from("192.168.1.10")));
        assert!(f.allows(&from("127.0.0.1")) && f.allows(&from("127.8.9.1")));
        assert!(!f.allows(&from("192.168.1.11")) && !f.allows(&from("10.0.0.1")));
        assert!(f.allows(&from("::ffff:192.168.1.10")) && !f.allows(&from("::1")));
    }

    #[test]
    fn the_simulator_s_address_is_the_one_its_name_has_now() {
        let host = SimHost::resolve("localhost").unwrap();
        let f = SenderFilter::new(host.clone(), &[]).unwrap();
        assert_eq!(f.describe(), "localhost (127.0.0.1), 127.0.0.0/8");
        assert!(f.remote_peers().is_empty() && !f.allows(&from("10.0.0.9")));
        host.moved_to(Ipv4Addr::new(10, 0, 0, 9));
        assert!(f.allows(&from("10.0.0.9")) && !f.allows(&from("10.0.0.8")));
        assert_eq!(f.remote_peers(), [Ipv4Addr::new(10, 0, 0, 9)]);
        assert_eq!(f.describe(), "localhost (10.0.0.9), 127.0.0.0/8");
    }

    #[test]
    fn widened_by_addresses_networks_or_any() {
        let f = SenderFilter::new(Ipv4Addr::LOCALHOST, &["10.1.2.3".into(), "192.168.0.0/16".into()]).unwrap();
        assert!(f.allows(&from("10.1.2.3")) && !f.allows(&from("10.1.2.4")));
        assert!(f.allows(&from("192.168.77.1")) && !f.allows(&from("192.169.0.1")));
        assert!(SenderFilter::new(Ipv4Addr::LOCALHOST, &["any".into()])
            .unwrap()
            .allows(&from("8.8.8.8")));
        assert!(SenderFilter::any().allows(&from("1.2.3.4")));
        for bad in ["10.0.0.0/33", "host", "1.2.3", "1.2.3.4/x"] {
            assert!(SenderFilter::new(Ipv4Addr::LOCALHOST, &[bad.into()]).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_unicast_port_in_use_is_a_clear_error() {
        let (held, _) = udp_receiver(Ipv4Addr::LOCALHOST, 0, 1 << 16).unwrap();
        let port = held.local_addr().unwrap().port();
        let e = udp_receiver(Ipv4Addr::LOCALHOST, port, 1 << 16).unwrap_err();
        assert!(e.to_string().contains("already in use"), "{e}");
    }

    fn blocking_receiver(filter: SenderFilter) -> (BlockingUdp, SocketAddr, std::sync::Arc<crate::stats::StreamStats>) {
        let (sock, _) = udp_receiver(Ipv4Addr::LOCALHOST, 0, 1 << 16).unwrap();
        let to = sock.local_addr().unwrap();
        let stats = std::sync::Arc::new(crate::stats::StreamStats::default());
        (
            BlockingUdp::new(sock, SenderGate::new(filter, stats.clone(), "test")).unwrap(),
            to,
            stats,
        )
    }

    /// A datagram is appended after what the buffer holds, whole when the
    /// spare capacity takes it.
    #[test]
    fn recv_appended_keeps_what_the_buffer_held() {
        let (mut udp, to, _) = blocking_receiver(SenderFilter::any());
        let sender = std::net::UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let datagram: Vec<u8> = (0..40_000u32).map(|i| (i * 7) as u8).collect();
        sender.send_to(&datagram, to).unwrap();
        let mut buf = Vec::with_capacity(65_536 + 3);
        buf.extend_from_slice(b"abc");
        let at = buf.as_ptr();
        assert_eq!(udp.recv_appended(&mut buf), Received::Datagram(datagram.len()));
        assert_eq!((&buf[..3], &buf[3..]), (&b"abc"[..], &datagram[..]));
        assert_eq!(buf.as_ptr(), at, "received where it was, not moved");
    }

    /// A foreign sender's datagram is counted and leaves the buffer as it
    /// was; the wait goes on (here until its timeout), and the next allowed
    /// datagram comes through.
    #[test]
    fn a_foreign_datagram_is_counted_and_skipped() {
        // Loopback is always allowed by `new`: a filter that allows nobody.
        let (mut udp, to, stats) = blocking_receiver(SenderFilter {
            sim_host: None,
            allowed: vec![],
        });
        let sender = std::net::UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        sender.send_to(b"foreign", to).unwrap();
        udp.set_timeout(Some(std::time::Duration::from_millis(100))).unwrap();
        let mut buf = b"kept".to_vec();
        buf.reserve(64);
        assert_eq!(udp.recv_appended(&mut buf), Received::TimedOut);
        assert_eq!(buf, b"kept");
        assert_eq!(stats.drops().get(FOREIGN_SENDER), Some(&1));
        // The next allowed datagram comes through whole, after what was kept.
        udp.gate.filter = SenderFilter::any();
        sender.send_to(b"good", to).unwrap();
        assert_eq!(udp.recv_appended(&mut buf), Received::Datagram(4));
        assert_eq!(buf, b"keptgood");
        assert_eq!(stats.drops().get(FOREIGN_SENDER), Some(&1));
    }

    /// The timeout ends a wait with nothing; closing ends it at once, from
    /// another thread, and every call after.
    #[test]
    fn a_wait_ends_at_its_timeout_or_when_closed() {
        let (mut udp, _, _) = blocking_receiver(SenderFilter::any());
        let mut buf = Vec::with_capacity(1024);
        udp.set_timeout(Some(std::time::Duration::from_millis(50))).unwrap();
        let t = std::time::Instant::now();
        assert_eq!(udp.recv_appended(&mut buf), Received::TimedOut);
        assert!(t.elapsed() >= std::time::Duration::from_millis(40), "{:?}", t.elapsed());
        udp.set_timeout(None).unwrap();
        let closer = udp.closer();
        let t = std::time::Instant::now();
        let waiter = std::thread::spawn(move || {
            let got = udp.recv_appended(&mut buf);
            (got, udp.recv_appended(&mut buf))
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        closer.close();
        assert_eq!(waiter.join().unwrap(), (Received::Closed, Received::Closed));
        assert!(t.elapsed() < std::time::Duration::from_secs(2), "{:?}", t.elapsed());
    }
}

/// Sends `datagrams`, `len` bytes each one after the other, to `to` with as
/// few system calls as the kernel takes (`sendmmsg`): one for a bulk
/// message's datagrams rather than one each, and a receiver on this host
/// woken at the end of the call, not in the middle of every send. The
/// first error stops it.
pub fn send_datagrams(sock: &std::net::UdpSocket, datagrams: &[u8], len: usize, to: SocketAddr) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let addr = socket2::SockAddr::from(to);
    let mut iovecs: Vec<libc::iovec> = datagrams
        .chunks(len.max(1))
        .map(|d| libc::iovec {
            iov_base: d.as_ptr().cast_mut().cast(),
            iov_len: d.len(),
        })
        .collect();
    let mut headers: Vec<libc::mmsghdr> = iovecs
        .iter_mut()
        .map(|v| {
            // SAFETY: an all-zero mmsghdr is valid; its fields are set below.
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_name = addr.as_ptr().cast_mut().cast();
            h.msg_hdr.msg_namelen = addr.len();
            h.msg_hdr.msg_iov = v;
            h.msg_hdr.msg_iovlen = 1;
            h
        })
        .collect();
    let mut sent = 0;
    while sent < headers.len() {
        let rest = &mut headers[sent..];
        let n = u32::try_from(rest.len()).unwrap_or(u32::MAX);
        // SAFETY: the headers, their iovecs, the address and the datagrams outlive the call.
        let r = unsafe { libc::sendmmsg(sock.as_raw_fd(), rest.as_mut_ptr(), n, 0) };
        match r {
            r if r > 0 => sent += r as usize,
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

/// What every bridge counts a datagram from a host outside its
/// [`SenderFilter`] as, in `/diagnostics`.
pub const FOREIGN_SENDER: &str = "foreign_sender";

/// Who may send to one port: a datagram from anybody else is counted in
/// `stats` and logged at a limited rate. Given to [`FilteredUdp`] or
/// [`BlockingUdp`] with the socket it guards.
#[derive(Debug)]
pub struct SenderGate {
    /// Of the socket it guards, for log lines (set when it is given one).
    port: u16,
    filter: SenderFilter,
    stats: std::sync::Arc<crate::stats::StreamStats>,
    logger: String,
    warn: crate::stats::RateLimitedLog,
}

impl SenderGate {
    pub fn new(filter: SenderFilter, stats: std::sync::Arc<crate::stats::StreamStats>, logger: &str) -> Self {
        Self {
            port: 0,
            filter,
            stats,
            logger: logger.to_string(),
            warn: crate::stats::RateLimitedLog::new(std::time::Duration::from_secs(5)),
        }
    }

    fn guarding(mut self, sock: &std::net::UdpSocket) -> io::Result<Self> {
        self.port = sock.local_addr()?.port();
        Ok(self)
    }

    /// Whether `from` may send here; a refusal is counted and logged.
    fn admits(&mut self, from: SocketAddr) -> bool {
        if self.filter.allows(&from) {
            return true;
        }
        self.stats.drop_frame(FOREIGN_SENDER);
        let stream = format_args!("UDP {}", self.port);
        let why = format_args!(
            "only {} may send here (parameter allowed_senders widens it)",
            self.filter.describe()
        );
        self.warn
            .warn_dropped(&self.logger, stream, format_args!("datagram from {}", from.ip()), why);
        false
    }
}

/// Consecutive receive errors: the first few are read past at once (an
/// ICMP error queued on a socket is one, and EINTR), then each waits a
/// pause that grows to [`ErrorPause::MAX`], so that a socket that fails
/// for good does not hold a core in a retry loop.
#[derive(Debug, Default)]
pub struct ErrorPause {
    consecutive: u32,
}

impl ErrorPause {
    pub const MAX: std::time::Duration = std::time::Duration::from_millis(100);
    const AT_ONCE: u32 = 3;

    /// One more error: how long to wait before the next receive.
    pub fn failed(&mut self) -> Option<std::time::Duration> {
        self.consecutive = self.consecutive.saturating_add(1);
        let over = self.consecutive.checked_sub(Self::AT_ONCE + 1)?;
        Some(std::time::Duration::from_millis(1u64 << over.min(7)).min(Self::MAX))
    }

    pub fn succeeded(&mut self) {
        self.consecutive = 0;
    }
}

/// A bound UDP socket that hands out only the datagrams of allowed senders;
/// the others are counted in `stats` and logged at a limited rate.
#[derive(Debug)]
pub struct FilteredUdp {
    sock: tokio::net::UdpSocket,
    gate: SenderGate,
}

impl FilteredUdp {
    /// Needs a tokio runtime (the socket registers with its reactor).
    pub fn new(sock: std::net::UdpSocket, gate: SenderGate) -> io::Result<Self> {
        let gate = gate.guarding(&sock)?;
        Ok(Self {
            sock: tokio::net::UdpSocket::from_std(sock)?,
            gate,
        })
    }

    /// The next datagram of an allowed sender, its length in `buf`.
    /// Cancel-safe: a datagram is either returned or counted.
    pub async fn recv(&mut self, buf: &mut [u8]) -> usize {
        let mut errors = ErrorPause::default();
        loop {
            match self.sock.recv_from(buf).await {
                Ok((n, from)) => {
                    errors.succeeded();
                    if self.gate.admits(from) {
                        return n;
                    }
                }
                Err(_) => {
                    if let Some(pause) = errors.failed() {
                        tokio::time::sleep(pause).await;
                    }
                }
            }
        }
    }
}

/// What [`BlockingUdp::recv_appended`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// A datagram of an allowed sender, this many bytes.
    Datagram(usize),
    /// The timeout passed with none.
    TimedOut,
    /// [`UdpCloser::close`] was called.
    Closed,
}

/// A UDP socket read by a thread of its own, blocked in `recv`: a
/// datagram wakes that thread and nothing else. Received through tokio's
/// reactor instead, a 1080p frame's 104 datagrams cost the bridge 12 %
/// more CPU per frame (BENCHMARKS.md). Only allowed senders'
/// datagrams are handed out, as by [`FilteredUdp`].
#[derive(Debug)]
pub struct BlockingUdp {
    sock: std::sync::Arc<Socket>,
    closed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    timeout: Option<std::time::Duration>,
    gate: SenderGate,
}

/// Ends a [`BlockingUdp`]'s wait from another thread.
#[derive(Debug, Clone)]
pub struct UdpCloser {
    sock: std::sync::Arc<Socket>,
    closed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl UdpCloser {
    /// Its `recv_appended` returns [`Received::Closed`], now or at its next call.
    pub fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        // Shutting the read side of a UDP socket wakes a thread blocked in
        // `recv` on Linux (it returns 0; the call itself says ENOTCONN for an
        // unconnected socket, which is expected).
        let _ = self.sock.shutdown(std::net::Shutdown::Read);
    }
}

impl BlockingUdp {
    /// Takes a socket of [`udp_receiver`] (made blocking here).
    pub fn new(sock: std::net::UdpSocket, gate: SenderGate) -> io::Result<Self> {
        let gate = gate.guarding(&sock)?;
        sock.set_nonblocking(false)?;
        Ok(Self {
            sock: std::sync::Arc::new(Socket::from(sock)),
            closed: std::sync::Arc::default(),
            timeout: None,
            gate,
        })
    }

    /// A handle that ends the wait.
    pub fn closer(&self) -> UdpCloser {
        UdpCloser {
            sock: self.sock.clone(),
            closed: self.closed.clone(),
        }
    }

    /// How long `recv_appended` waits for a datagram (`None`: until one
    /// comes or it is closed). A system call only when it changes.
    pub fn set_timeout(&mut self, timeout: Option<std::time::Duration>) -> io::Result<()> {
        // SO_RCVTIMEO of zero means "no timeout": the shortest wait is a microsecond.
        let timeout = timeout.map(|t| t.max(std::time::Duration::from_micros(1)));
        if timeout != self.timeout {
            self.sock.set_read_timeout(timeout)?;
            self.timeout = timeout;
        }
        Ok(())
    }

    /// The next datagram of an allowed sender appended to `buf` (into its
    /// spare capacity: a longer datagram is cut short there); what `buf`
    /// held stays. For a buffer the datagram is to stay in, as a frame's.
    pub fn recv_appended(&mut self, buf: &mut Vec<u8>) -> Received {
        loop {
            match self.recv_appended_from(buf) {
                (Received::Datagram(n), Some(from)) if self.gate.admits(from) => return Received::Datagram(n),
                (Received::Datagram(n), _) => buf.truncate(buf.len() - n),
                (other, _) => return other,
            }
        }
    }

    /// The next datagram of any sender, appended to `buf` as by
    /// [`Self::recv_appended`], and who sent it: for a bridge that tells
    /// senders apart itself (the gate is not asked).
    pub fn recv_appended_from(&mut self, buf: &mut Vec<u8>) -> (Received, Option<SocketAddr>) {
        let kept = buf.len();
        let mut errors = ErrorPause::default();
        loop {
            if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
                return (Received::Closed, None);
            }
            match self.sock.recv_from(buf.spare_capacity_mut()) {
                Ok((n, from)) => {
                    errors.succeeded();
                    if n == 0 && self.closed.load(std::sync::atomic::Ordering::SeqCst) {
                        return (Received::Closed, None);
                    }
                    // SAFETY: the kernel initialised the first `n` bytes of the spare capacity.
                    unsafe { buf.set_len(kept + n) };
                    return (Received::Datagram(n), from.as_socket());
                }
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                    return (Received::TimedOut, None)
                }
                // EINTR, or an ICMP error queued on the socket: read on.
                Err(_) => {
                    if let Some(pause) = errors.failed() {
                        std::thread::sleep(pause);
                    }
                }
            }
        }
    }
}
