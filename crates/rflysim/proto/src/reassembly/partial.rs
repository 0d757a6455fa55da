//! A frame being filled (its buffer, which packets it has, what they
//! claimed) and what is remembered of frames already finished or abandoned.

use std::time::Duration;

use crate::header::{DatagramHeader, HeaderKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FrameKey {
    pub(super) kind: HeaderKind,
    pub(super) frame_id: i32,
    pub(super) stamp_bits: u64,
}

impl FrameKey {
    /// The frame `header`'s packet belongs to.
    pub(super) fn of(header: &DatagramHeader) -> Self {
        Self {
            kind: header.kind,
            frame_id: header.frame_id.unwrap_or(0),
            stamp_bits: header.time_stamp.to_bits(),
        }
    }
}

/// A frame finished or abandoned: its key, and (24-byte header) a sample of
/// each packet it had, to tell a late duplicate from another frame that
/// carries the same time stamp.
#[derive(Debug)]
pub(super) struct Remembered {
    pub(super) key: FrameKey,
    pub(super) samples: Vec<u64>,
}

/// A cheap fingerprint of a packet: its length and its first and last bytes.
pub(super) fn packet_sample(body: &[u8]) -> u64 {
    let edge = body.len().min(64);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ body.len() as u64;
    for &b in body[..edge].iter().chain(&body[body.len() - edge..]) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    // 0 means "no packet" in `samples`.
    h | 1
}

#[derive(Debug)]
pub(super) struct Partial {
    pub(super) key: FrameKey,
    /// `packet_sample` of each packet received (24-byte header only).
    pub(super) samples: Vec<u64>,
    pub(super) time_stamp: f64,
    pub(super) pkg_num: u32,
    /// Payload size of every packet but the last, once a non-last packet arrived.
    pub(super) chunk: Option<usize>,
    /// Bytes in front of the payload in `buf` (the config's `headroom`).
    pub(super) headroom: usize,
    pub(super) buf: Vec<u8>,
    /// The last packet, when it came before the chunk size was known.
    pub(super) early_last: Option<Vec<u8>>,
    pub(super) last_len: Option<usize>,
    pub(super) received: Vec<u64>,
    pub(super) count: u32,
    /// `pkg_len` read as the datagram's length held for every packet so far.
    pub(super) datagram_lengths: bool,
    /// The `pkg_len` of packets where it was not the datagram's length.
    pub(super) declared_len: Option<i32>,
    pub(super) first_arrival: Duration,
    pub(super) last_arrival: Duration,
    /// Order of creation: the oldest frame goes first when room is needed,
    /// even when a coarse clock gave several frames the same arrival time.
    pub(super) started: u64,
}

impl Partial {
    pub(super) fn new(key: FrameKey, header: &DatagramHeader, headroom: usize, now: Duration, started: u64) -> Self {
        let pkg_num = header.pkg_num as u32;
        Self {
            key,
            time_stamp: header.time_stamp,
            pkg_num,
            chunk: None,
            headroom,
            buf: Vec::new(),
            early_last: None,
            last_len: None,
            received: vec![0; pkg_num.div_ceil(64) as usize],
            samples: if key.kind == HeaderKind::Image24 {
                vec![0; pkg_num as usize]
            } else {
                Vec::new()
            },
            count: 0,
            datagram_lengths: true,
            declared_len: None,
            first_arrival: now,
            last_arrival: now,
            started,
        }
    }
    pub(super) fn has(&self, id: u32) -> bool {
        self.received[(id / 64) as usize] & (1 << (id % 64)) != 0
    }
    pub(super) fn mark(&mut self, id: u32) {
        self.received[(id / 64) as usize] |= 1 << (id % 64);
        self.count += 1;
    }
    pub(super) fn complete(&self) -> bool {
        self.count == self.pkg_num
    }
    pub(super) fn stored(&self, id: u32) -> Option<&[u8]> {
        let last = id + 1 == self.pkg_num;
        match (last, self.chunk) {
            (true, _) if self.early_last.is_some() => self.early_last.as_deref(),
            (true, Some(c)) => self.last_len.map(|l| {
                let at = self.headroom + id as usize * c;
                &self.buf[at..at + l]
            }),
            (false, Some(c)) => {
                let at = self.headroom + id as usize * c;
                Some(&self.buf[at..at + c])
            }
            _ => None,
        }
    }
}

/// Puts a packet's `body` at `at` in its frame's buffer. Packets mostly
/// arrive in order: each then extends the buffer, and no byte of a 6 MB
/// frame is zeroed before it is written (zeroing was an eighth of a 1080p
/// camera's CPU). A packet that arrives early leaves zeroes in the gap,
/// which the missing packets overwrite: a frame completes only with all of
/// them.
pub(super) fn write_at(buf: &mut Vec<u8>, at: usize, body: &[u8]) {
    if at == buf.len() {
        buf.extend_from_slice(body);
        return;
    }
    let end = at + body.len();
    if buf.len() < end {
        buf.resize(end, 0);
    }
    buf[at..end].copy_from_slice(body);
}

/// `headroom` zero bytes, then `body`, in one allocation with room for
/// `tailroom` more.
pub(super) fn with_headroom(headroom: usize, body: &[u8], tailroom: usize) -> Vec<u8> {
    let mut payload = Vec::with_capacity(headroom + body.len() + tailroom);
    payload.resize(headroom, 0);
    payload.extend_from_slice(body);
    payload
}
