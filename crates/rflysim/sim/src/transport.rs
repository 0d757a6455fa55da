//! The emulator's outputs: UDP datagrams and RflySim3D's shared-memory regions.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};

use shared_memory::{Shmem, ShmemConf, ShmemError};
use socket2::{Domain, Protocol, Socket, Type};

use rflysim_proto::shm::{RawRegion, ShmWriter};

/// A UDP socket for sending, with a large send buffer.
pub fn udp_sender(multicast_ttl: Option<u32>) -> io::Result<UdpSocket> {
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    let _ = s.set_send_buffer_size(8 << 20);
    if let Some(ttl) = multicast_ttl {
        s.set_multicast_ttl_v4(ttl)?;
        s.set_multicast_loop_v4(true)?;
    }
    s.bind(&SocketAddr::from(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0)).into())?;
    Ok(s.into())
}

/// Multicast from `sock` leaves by the interface towards `target` (a PC's
/// simulator network, not its default route's), one hop, looped back to
/// this host's own receivers.
pub fn multicast_out_towards(sock: &UdpSocket, target: Ipv4Addr) {
    let local = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))
        .and_then(|probe| {
            probe.connect((target, 9))?;
            probe.local_addr()
        })
        .ok()
        .and_then(|a| match a {
            SocketAddr::V4(a) if !a.ip().is_unspecified() && !a.ip().is_loopback() => Some(*a.ip()),
            _ => None,
        });
    let s = socket2::SockRef::from(sock);
    let _ = s.set_multicast_ttl_v4(1);
    let _ = s.set_multicast_loop_v4(true);
    if let Some(local) = local {
        let _ = s.set_multicast_if_v4(&local);
    }
}

/// A UDP socket bound to `port` on all interfaces, reusable by several processes.
pub fn udp_listener(port: u16) -> io::Result<UdpSocket> {
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    s.set_reuse_address(true)?;
    s.bind(&SocketAddr::from(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port)).into())?;
    Ok(s.into())
}

/// Sends a datagram, retrying briefly when the kernel's buffer is full:
/// flat-out runs must slow down, not drop on the sending side.
pub fn send_all(sock: &UdpSocket, to: SocketAddrV4, d: &[u8]) -> io::Result<()> {
    for _ in 0..1000 {
        match sock.send_to(d, to) {
            Ok(_) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) || e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
            // Nobody listening yet (ICMP port unreachable on loopback): not an error for a sender.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(io::ErrorKind::WouldBlock, "send buffer stayed full"))
}

/// One `RflySim3DImg_<SeqID>` region, created (or taken over) by the emulator.
pub struct ShmRegion {
    shmem: Shmem,
    writer: ShmWriter,
    created: std::time::Instant,
}

impl std::fmt::Debug for ShmRegion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShmRegion")
            .field("os_id", &self.shmem.get_os_id())
            .field("len", &self.shmem.len())
            .finish()
    }
}

// SAFETY: the mapping is only used through `ShmWriter`'s flag protocol.
unsafe impl Send for ShmRegion {}

impl ShmRegion {
    /// Creates `/dev/shm/<name>` of `len` bytes; a region left over by a
    /// previous run is reused when large enough, replaced otherwise.
    pub fn create(name: &str, len: usize) -> io::Result<ShmRegion> {
        let other = |e: ShmemError| io::Error::other(format!("shared memory {name}: {e}"));
        let shmem = match ShmemConf::new().os_id(name).size(len).create() {
            Ok(s) => s,
            Err(ShmemError::MappingIdExists) => {
                let stale = ShmemConf::new().os_id(name).open().map_err(other)?;
                if stale.len() >= len {
                    let mut s = stale;
                    s.set_owner(true);
                    s
                } else {
                    drop(stale);
                    let _ = std::fs::remove_file(format!("/dev/shm/{name}"));
                    ShmemConf::new().os_id(name).size(len).create().map_err(other)?
                }
            }
            Err(e) => return Err(other(e)),
        };
        // SAFETY: zeroing our own fresh mapping of `len` bytes.
        unsafe { std::ptr::write_bytes(shmem.as_ptr(), 0, shmem.len()) };
        Ok(ShmRegion {
            shmem,
            writer: ShmWriter::new(),
            created: std::time::Instant::now(),
        })
    }

    pub fn len(&self) -> usize {
        self.shmem.len()
    }

    pub fn is_empty(&self) -> bool {
        self.shmem.len() == 0
    }

    /// Writes a frame unless a live reader holds the slot; `false` when skipped.
    pub fn write(&mut self, time_stamp: f64, payload: &[u8]) -> bool {
        // SAFETY: the mapping lives as long as `self`.
        let mut region = unsafe { RawRegion::new(self.shmem.as_ptr(), self.shmem.len()) };
        self.writer
            .write(&mut region, time_stamp, payload, self.created.elapsed())
    }
}
