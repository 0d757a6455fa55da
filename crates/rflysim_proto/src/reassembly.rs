//! Reassembly of RflySim's UDP sensor frames from datagrams (spec §3).
//!
//! What it guarantees, whatever arrives:
//! - packets of two different frames are never joined: a frame is keyed by
//!   its header kind, frame id (32-byte header) and time stamp;
//! - a frame with a lost packet is dropped alone, when it goes stale or when
//!   too many frames are in flight, and counted;
//! - memory is bounded: at most `max_partial_frames` frames of at most
//!   `max_frame_bytes` each and `max_buffered_bytes` in all, whatever
//!   `pkg_num` / `pkg_len` claim (a sensor's bound comes from its configured
//!   size, so one lying datagram cannot make it allocate 64 MiB);
//! - a simulator restart (frame ids and time going back) needs no recovery:
//!   new frames have new keys; the event is counted;
//! - each datagram is copied once, into its place in the frame's buffer.

use std::collections::VecDeque;
use std::time::Duration;

use crate::header::{DatagramHeader, HeaderError, HeaderKind};

#[derive(Debug, Clone)]
pub struct ReassemblerConfig {
    /// The largest frame accepted; larger claims are dropped before any allocation.
    pub max_frame_bytes: usize,
    pub max_packets_per_frame: u32,
    /// Frames being filled at once; reordering across more frames than this loses the oldest.
    pub max_partial_frames: usize,
    /// Bytes held by all partial frames together; a new frame that needs more
    /// room drops the oldest ones.
    pub max_buffered_bytes: usize,
    /// A partial frame with no new packet for this long is dropped.
    pub stale_after: Duration,
    /// How many finished (or abandoned) frames are remembered to recognise late packets.
    pub remembered_frames: usize,
    /// A time stamp going back by more than this (seconds) counts as a simulator restart.
    pub restart_time_jump: f64,
}

impl ReassemblerConfig {
    /// For a stream whose frames are at most `max_frame_bytes`: room for two
    /// of them in flight (a frame and its successor overtaking it).
    pub fn for_frames_of(max_frame_bytes: usize) -> Self {
        Self {
            max_frame_bytes,
            max_buffered_bytes: max_frame_bytes.saturating_mul(2).max(1 << 20),
            ..Self::default()
        }
    }
}

impl Default for ReassemblerConfig {
    fn default() -> Self {
        Self {
            max_frame_bytes: 64 << 20,
            max_packets_per_frame: 4096,
            max_partial_frames: 4,
            max_buffered_bytes: 128 << 20,
            stale_after: Duration::from_millis(500),
            remembered_frames: 256,
            restart_time_jump: 1.0,
        }
    }
}

/// One reassembled frame: the payload of all its packets in `pkg_id` order.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub header_kind: HeaderKind,
    pub frame_id: Option<i32>,
    pub time_stamp: f64,
    pub packets: u32,
    pub payload: Vec<u8>,
    /// Arrival of the first and the last of its datagrams (the caller's clock).
    pub first_arrival: Duration,
    pub last_arrival: Duration,
}

/// Why datagrams or frames were dropped, and what went through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReassemblyStats {
    pub datagrams: u64,
    pub frames: u64,
    pub payload_bytes: u64,
    /// Not a sensor datagram: too short or an unknown checksum.
    pub garbage: u64,
    /// `pkg_len`, `pkg_id` or `pkg_num` impossible, or lengths that disagree.
    pub bad_length: u64,
    /// A frame claiming more than the configured maximum.
    pub oversize: u64,
    /// Packets of one frame disagreeing (count, chunk size, content of a repeat).
    pub inconsistent: u64,
    pub duplicates: u64,
    /// Packets of frames already finished or abandoned.
    pub late: u64,
    /// Frames dropped with packets missing because newer frames needed the room.
    pub incomplete: u64,
    /// Frames dropped with packets missing because no packet came for `stale_after`.
    pub timed_out: u64,
    pub restarts: u64,
    /// Packets with the 24-byte header that share the time stamp of a
    /// frame already finished or abandoned but are not its packets: another
    /// frame with the same stamp, which that header cannot tell apart.
    pub repeated_stamp: u64,
    /// Frames never seen at all: gaps in the 32-byte header's frame ids
    /// (a frame whose every datagram was lost leaves no other trace).
    pub frames_missing: u64,
}

impl ReassemblyStats {
    /// Frames that were started but never delivered.
    pub fn frames_lost(&self) -> u64 {
        self.incomplete + self.timed_out
    }

    /// Each reason with its count, under the names diagnostics report them by.
    pub fn drop_counts(&self) -> [(&'static str, u64); 11] {
        [
            ("garbage", self.garbage),
            ("bad_length", self.bad_length),
            ("oversize", self.oversize),
            ("inconsistent", self.inconsistent),
            ("duplicate", self.duplicates),
            ("late", self.late),
            ("incomplete", self.incomplete),
            ("timed_out", self.timed_out),
            ("missing", self.frames_missing),
            ("restart", self.restarts),
            ("repeated_stamp", self.repeated_stamp),
        ]
    }

    /// Everything that was dropped because the input was bad or incomplete
    /// (duplicates, late packets and restarts are not faults of the input).
    pub fn input_dropped(&self) -> u64 {
        self.frames_lost()
            + self.frames_missing
            + self.garbage
            + self.bad_length
            + self.inconsistent
            + self.oversize
            + self.repeated_stamp
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FrameKey {
    kind: HeaderKind,
    frame_id: i32,
    stamp_bits: u64,
}

/// A frame finished or abandoned: its key, and (24-byte header) a sample of
/// each packet it had, to tell a late duplicate from another frame that
/// carries the same time stamp.
#[derive(Debug)]
struct Remembered {
    key: FrameKey,
    samples: Vec<u64>,
}

/// A cheap fingerprint of a packet: its length and its first and last bytes.
fn packet_sample(body: &[u8]) -> u64 {
    let edge = body.len().min(64);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ body.len() as u64;
    for &b in body[..edge].iter().chain(&body[body.len() - edge..]) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    // 0 means "no packet" in `samples`.
    h | 1
}

#[derive(Debug)]
struct Partial {
    key: FrameKey,
    /// `packet_sample` of each packet received (24-byte header only).
    samples: Vec<u64>,
    time_stamp: f64,
    pkg_num: u32,
    /// Payload size of every packet but the last, once a non-last packet arrived.
    chunk: Option<usize>,
    buf: Vec<u8>,
    /// The last packet, when it came before the chunk size was known.
    early_last: Option<Vec<u8>>,
    last_len: Option<usize>,
    received: Vec<u64>,
    count: u32,
    /// `pkg_len` read as the datagram's length held for every packet so far.
    datagram_lengths: bool,
    /// The `pkg_len` of packets where it was not the datagram's length.
    declared_len: Option<i32>,
    first_arrival: Duration,
    last_arrival: Duration,
    /// Order of creation: the oldest frame goes first when room is needed,
    /// even when a coarse clock gave several frames the same arrival time.
    started: u64,
}

impl Partial {
    fn has(&self, id: u32) -> bool {
        self.received[(id / 64) as usize] & (1 << (id % 64)) != 0
    }
    fn mark(&mut self, id: u32) {
        self.received[(id / 64) as usize] |= 1 << (id % 64);
        self.count += 1;
    }
    fn complete(&self) -> bool {
        self.count == self.pkg_num
    }
    fn stored(&self, id: u32) -> Option<&[u8]> {
        let last = id + 1 == self.pkg_num;
        match (last, self.chunk) {
            (true, _) if self.early_last.is_some() => self.early_last.as_deref(),
            (true, Some(c)) => self
                .last_len
                .map(|l| &self.buf[(id as usize) * c..(id as usize) * c + l]),
            (false, Some(c)) => Some(&self.buf[(id as usize) * c..(id as usize + 1) * c]),
            _ => None,
        }
    }
}

enum Verdict {
    /// Kept, at this index of the partial frames (making room may move it).
    Keep(usize),
    Drop,
}

#[derive(Debug)]
pub struct Reassembler {
    config: ReassemblerConfig,
    partials: Vec<Partial>,
    finished: VecDeque<Remembered>,
    newest_stamp: Option<f64>,
    /// Highest frame id started (32-byte headers), for `frames_missing`.
    newest_frame_id: Option<i32>,
    started: u64,
    stats: ReassemblyStats,
}

impl Reassembler {
    pub fn new(config: ReassemblerConfig) -> Self {
        Self {
            config,
            partials: Vec::new(),
            finished: VecDeque::new(),
            newest_stamp: None,
            newest_frame_id: None,
            started: 0,
            stats: Default::default(),
        }
    }

    pub fn stats(&self) -> &ReassemblyStats {
        &self.stats
    }

    pub fn config(&self) -> &ReassemblerConfig {
        &self.config
    }

    /// Frames currently being filled.
    pub fn partial_frames(&self) -> usize {
        self.partials.len()
    }

    /// Bytes held by partial frames.
    pub fn buffered_bytes(&self) -> usize {
        self.partials
            .iter()
            .map(|p| p.buf.capacity() + p.early_last.as_ref().map_or(0, Vec::capacity))
            .sum()
    }

    /// Takes one datagram that arrived at `now` (any monotonic clock); returns
    /// the frame it completes, if any.
    pub fn push(&mut self, datagram: &[u8], now: Duration) -> Option<Frame> {
        self.stats.datagrams += 1;
        self.evict_stale(now);
        let header = match DatagramHeader::parse(datagram) {
            Ok(h) => h,
            Err(HeaderError::TooShort | HeaderError::UnknownChecksum(_)) => {
                self.stats.garbage += 1;
                return None;
            }
        };
        let body = &datagram[header.kind.header_len()..];
        if header.pkg_num <= 0
            || header.pkg_id < 0
            || header.pkg_id >= header.pkg_num
            || header.pkg_len < header.kind.header_len() as i32
            || !header.time_stamp.is_finite()
        {
            self.stats.bad_length += 1;
            return None;
        }
        let pkg_num = header.pkg_num as u32;
        if pkg_num > self.config.max_packets_per_frame
            || (pkg_num as usize - 1).saturating_mul(body.len()) > self.config.max_frame_bytes
            || (header.pkg_len as usize).saturating_sub(header.kind.header_len()) > self.config.max_frame_bytes
        {
            self.stats.oversize += 1;
            return None;
        }
        let key = FrameKey {
            kind: header.kind,
            frame_id: header.frame_id.unwrap_or(0),
            stamp_bits: header.time_stamp.to_bits(),
        };
        if let Some(r) = self.finished.iter().find(|r| r.key == key) {
            let seen = r.samples.get(header.pkg_id as usize).copied();
            if header.kind == HeaderKind::Image24 && seen != Some(packet_sample(body)) {
                self.stats.repeated_stamp += 1;
            } else {
                self.stats.late += 1;
            }
            return None;
        }
        self.note_stamp(header.time_stamp, header.frame_id);

        let idx = match self.partials.iter().position(|p| p.key == key) {
            Some(i) => i,
            None => {
                self.note_new_frame(header.frame_id);
                if pkg_num == 1 {
                    return self.single_packet_frame(key, &header, body, datagram.len(), now);
                }
                self.start_partial(key, &header, now)
            }
        };
        let idx = match self.add_packet(idx, &header, body, datagram.len(), now) {
            Verdict::Keep(idx) => idx,
            Verdict::Drop => return None,
        };
        if self.partials[idx].complete() {
            let p = self.partials.swap_remove(idx);
            return self.finish(p);
        }
        None
    }

    /// Drops partial frames that got no packet for `stale_after`.
    pub fn evict_stale(&mut self, now: Duration) {
        let stale_after = self.config.stale_after;
        let mut i = 0;
        while i < self.partials.len() {
            if now.saturating_sub(self.partials[i].last_arrival) >= stale_after {
                let p = self.partials.swap_remove(i);
                self.stats.timed_out += 1;
                self.remember(p.key, p.samples);
            } else {
                i += 1;
            }
        }
    }

    /// A restart: time going back by more than `restart_time_jump`, or (32-byte
    /// header) time going back at all while the frame id falls back to 0 or 1
    /// from well above — a late packet of an old frame does neither.
    fn note_stamp(&mut self, stamp: f64, frame_id: Option<i32>) {
        let ids_restarted =
            matches!((frame_id, self.newest_frame_id), (Some(id), Some(newest)) if id <= 1 && newest > 8);
        match self.newest_stamp {
            Some(newest) if stamp < newest - self.config.restart_time_jump || (stamp < newest && ids_restarted) => {
                self.stats.restarts += 1;
                // Frames of the previous run will not be completed any more.
                self.stats.incomplete += self.partials.len() as u64;
                self.partials.clear();
                self.finished.clear();
                self.newest_frame_id = None;
                self.newest_stamp = Some(stamp);
            }
            Some(newest) if stamp <= newest => {}
            _ => self.newest_stamp = Some(stamp),
        }
    }

    /// Counts frame ids skipped over, and takes back a count when a
    /// reordered frame shows up after all.
    fn note_new_frame(&mut self, frame_id: Option<i32>) {
        let Some(id) = frame_id else { return };
        match self.newest_frame_id {
            Some(newest) if id > newest => {
                let gap = i64::from(id) - i64::from(newest) - 1;
                // A huge jump is a restart or garbage, not that many lost frames.
                if gap < 1000 {
                    self.stats.frames_missing += gap as u64;
                }
                self.newest_frame_id = Some(id);
            }
            Some(newest) if id < newest && i64::from(newest) - i64::from(id) < 1000 => {
                self.stats.frames_missing = self.stats.frames_missing.saturating_sub(1);
            }
            Some(_) => {}
            None => self.newest_frame_id = Some(id),
        }
    }

    fn remember(&mut self, key: FrameKey, samples: Vec<u64>) {
        if self.finished.len() >= self.config.remembered_frames.max(1) {
            self.finished.pop_front();
        }
        self.finished.push_back(Remembered { key, samples });
    }

    /// Drops the oldest partial frames other than `keep` until `bytes` more
    /// fit in `max_buffered_bytes`; `keep`'s index then, or `None` when it
    /// cannot fit even alone.
    fn make_room(&mut self, keep: FrameKey, bytes: usize) -> Option<usize> {
        loop {
            if self.buffered_bytes().saturating_add(bytes) <= self.config.max_buffered_bytes {
                return self.partials.iter().position(|p| p.key == keep);
            }
            let oldest = (0..self.partials.len())
                .filter(|&i| self.partials[i].key != keep)
                .min_by_key(|&i| self.partials[i].started)?;
            let p = self.partials.swap_remove(oldest);
            self.stats.incomplete += 1;
            self.remember(p.key, p.samples);
        }
    }

    fn start_partial(&mut self, key: FrameKey, header: &DatagramHeader, now: Duration) -> usize {
        if self.partials.len() >= self.config.max_partial_frames.max(1) {
            let oldest = (0..self.partials.len())
                .min_by_key(|&i| self.partials[i].started)
                .expect("at least one partial frame");
            let p = self.partials.swap_remove(oldest);
            self.stats.incomplete += 1;
            self.remember(p.key, p.samples);
        }
        let pkg_num = header.pkg_num as u32;
        self.started += 1;
        self.partials.push(Partial {
            key,
            time_stamp: header.time_stamp,
            pkg_num,
            chunk: None,
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
            started: self.started,
        });
        self.partials.len() - 1
    }

    fn single_packet_frame(
        &mut self,
        key: FrameKey,
        header: &DatagramHeader,
        body: &[u8],
        datagram_len: usize,
        now: Duration,
    ) -> Option<Frame> {
        let declared = header.pkg_len as usize;
        let ok = declared == datagram_len || declared == body.len();
        if !ok {
            self.stats.bad_length += 1;
            return None;
        }
        let samples = if key.kind == HeaderKind::Image24 {
            vec![packet_sample(body)]
        } else {
            Vec::new()
        };
        self.remember(key, samples);
        self.deliver(Frame {
            header_kind: header.kind,
            frame_id: header.frame_id,
            time_stamp: header.time_stamp,
            packets: 1,
            payload: body.to_vec(),
            first_arrival: now,
            last_arrival: now,
        })
    }

    fn drop_partial(&mut self, idx: usize) -> Verdict {
        let p = self.partials.swap_remove(idx);
        self.remember(p.key, p.samples);
        Verdict::Drop
    }

    fn add_packet(
        &mut self,
        idx: usize,
        header: &DatagramHeader,
        body: &[u8],
        datagram_len: usize,
        now: Duration,
    ) -> Verdict {
        let max_frame = self.config.max_frame_bytes;
        let id = header.pkg_id as u32;
        // The first packet that is not the last sizes the frame's buffer:
        // room for it is made first, from the oldest other frames.
        let sizes_buffer = {
            let p = &self.partials[idx];
            p.chunk.is_none() && id + 1 != p.pkg_num && !body.is_empty()
        };
        let idx = if sizes_buffer {
            let key = self.partials[idx].key;
            let bytes = (self.partials[idx].pkg_num as usize).saturating_mul(body.len());
            match self.make_room(key, bytes) {
                Some(i) => i,
                None => {
                    self.stats.oversize += 1;
                    return self.drop_partial(idx);
                }
            }
        } else {
            idx
        };
        let p = &mut self.partials[idx];
        if header.pkg_num as u32 != p.pkg_num {
            self.stats.inconsistent += 1;
            return self.drop_partial(idx);
        }
        if p.has(id) {
            if p.stored(id) == Some(body) {
                self.stats.duplicates += 1;
                return Verdict::Drop;
            }
            // Same key, other bytes: two frames share a time stamp. Never join them.
            self.stats.inconsistent += 1;
            return self.drop_partial(idx);
        }
        if header.pkg_len as usize != datagram_len {
            p.datagram_lengths = false;
            match p.declared_len {
                Some(d) if d != header.pkg_len => {
                    self.stats.bad_length += 1;
                    return self.drop_partial(idx);
                }
                _ => p.declared_len = Some(header.pkg_len),
            }
        }
        let last = id + 1 == p.pkg_num;
        if last {
            match p.chunk {
                Some(c) if body.len() > c => {
                    self.stats.inconsistent += 1;
                    return self.drop_partial(idx);
                }
                Some(_) => {
                    p.buf.extend_from_slice(body);
                    p.last_len = Some(body.len());
                }
                None => p.early_last = Some(body.to_vec()),
            }
        } else {
            let chunk = match p.chunk {
                Some(c) if c != body.len() => {
                    self.stats.inconsistent += 1;
                    return self.drop_partial(idx);
                }
                Some(c) => c,
                None => {
                    if body.is_empty() || (p.pkg_num as usize - 1) * body.len() > max_frame {
                        self.stats.oversize += 1;
                        return self.drop_partial(idx);
                    }
                    let c = body.len();
                    p.chunk = Some(c);
                    let full = (p.pkg_num as usize - 1) * c;
                    let mut buf = Vec::with_capacity(full + c);
                    buf.resize(full, 0);
                    if let Some(early) = p.early_last.take() {
                        if early.len() > c || full + early.len() > max_frame {
                            self.stats.inconsistent += 1;
                            return self.drop_partial(idx);
                        }
                        buf.extend_from_slice(&early);
                        p.last_len = Some(early.len());
                    }
                    p.buf = buf;
                    c
                }
            };
            let at = id as usize * chunk;
            p.buf[at..at + chunk].copy_from_slice(body);
        }
        p.mark(id);
        if let Some(sample) = p.samples.get_mut(id as usize) {
            *sample = packet_sample(body);
        }
        p.last_arrival = now;
        Verdict::Keep(idx)
    }

    fn finish(&mut self, p: Partial) -> Option<Frame> {
        self.remember(p.key, p.samples);
        // Complete with pkg_num > 1 means a non-last packet set the chunk
        // size and every packet, the last included, is in `buf`.
        let payload = p.buf;
        if !p.datagram_lengths {
            // Seed 000 reads pkg_len as the frame's length: hold it to that.
            let declared = i64::from(p.declared_len.unwrap_or(-1));
            let total = payload.len() as i64;
            let hdr = p.key.kind.header_len() as i64;
            if ![total, total + hdr, total + hdr * i64::from(p.pkg_num)].contains(&declared) {
                self.stats.bad_length += 1;
                return None;
            }
        }
        self.deliver(Frame {
            header_kind: p.key.kind,
            frame_id: (p.key.kind == HeaderKind::Frame32).then_some(p.key.frame_id),
            time_stamp: p.time_stamp,
            packets: p.pkg_num,
            payload,
            first_arrival: p.first_arrival,
            last_arrival: p.last_arrival,
        })
    }

    fn deliver(&mut self, frame: Frame) -> Option<Frame> {
        self.stats.frames += 1;
        self.stats.payload_bytes += frame.payload.len() as u64;
        Some(frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::{split_frame, DatagramHeader, HeaderKind};

    const MS: Duration = Duration::from_millis(1);

    fn frame_bytes(seed: u8, len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    fn packets(kind: HeaderKind, id: i32, t: f64, payload: &[u8], chunk: usize) -> Vec<Vec<u8>> {
        split_frame(kind, id, t, payload, chunk)
    }

    fn push_all(r: &mut Reassembler, dgrams: &[Vec<u8>]) -> Vec<Frame> {
        dgrams.iter().filter_map(|d| r.push(d, MS)).collect()
    }

    #[test]
    fn in_order_frames_of_both_header_kinds() {
        for kind in [HeaderKind::Image24, HeaderKind::Frame32] {
            let mut r = Reassembler::new(Default::default());
            let payload = frame_bytes(1, 250);
            let out = push_all(&mut r, &packets(kind, 5, 1.0, &payload, 100));
            assert_eq!(out.len(), 1);
            assert_eq!(out[0].payload, payload);
            assert_eq!(out[0].packets, 3);
            assert_eq!(out[0].header_kind, kind);
            assert_eq!(out[0].frame_id, (kind == HeaderKind::Frame32).then_some(5));
            assert_eq!(r.stats().frames, 1);
            assert_eq!(r.partial_frames(), 0);
        }
    }

    #[test]
    fn header_kind_is_decided_per_datagram() {
        let mut r = Reassembler::new(Default::default());
        let a = frame_bytes(1, 300);
        let b = frame_bytes(2, 300);
        let pa = packets(HeaderKind::Image24, 0, 1.0, &a, 100);
        let pb = packets(HeaderKind::Frame32, 1, 1.0, &b, 100);
        let mixed = vec![
            pa[0].clone(),
            pb[0].clone(),
            pa[1].clone(),
            pb[1].clone(),
            pb[2].clone(),
            pa[2].clone(),
        ];
        let out = push_all(&mut r, &mixed);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].payload, b);
        assert_eq!(out[1].payload, a);
    }

    #[test]
    fn out_of_order_and_duplicates() {
        let mut r = Reassembler::new(Default::default());
        let payload = frame_bytes(3, 1000);
        let p = packets(HeaderKind::Frame32, 1, 0.5, &payload, 128);
        let n = p.len();
        let mut order: Vec<Vec<u8>> = p.iter().rev().cloned().collect();
        order.insert(3, p[n - 2].clone()); // duplicate
        let out = push_all(&mut r, &order);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].payload, payload);
        // A duplicate after completion is late, not a new frame.
        assert!(r.push(&p[0], MS).is_none());
        assert_eq!(r.stats().duplicates, 1);
        assert_eq!(r.stats().late, 1);
    }

    #[test]
    fn a_lost_packet_drops_that_frame_only_and_is_never_stitched() {
        for kind in [HeaderKind::Image24, HeaderKind::Frame32] {
            let mut r = Reassembler::new(Default::default());
            let frames: Vec<Vec<u8>> = (0..3).map(|i| frame_bytes(i, 500)).collect();
            let mut out = Vec::new();
            for (i, f) in frames.iter().enumerate() {
                let mut p = packets(kind, i as i32, i as f64 * 0.1, f, 200);
                if i == 1 {
                    p.remove(1);
                }
                out.extend(push_all(&mut r, &p));
            }
            assert_eq!(
                out.iter().map(|f| f.payload.clone()).collect::<Vec<_>>(),
                vec![frames[0].clone(), frames[2].clone()]
            );
            assert_eq!(r.partial_frames(), 1);
            r.evict_stale(MS + r.config().stale_after);
            assert_eq!(r.stats().timed_out, 1);
            assert_eq!(r.stats().frames_lost(), 1);
            assert_eq!(r.partial_frames(), 0);
        }
    }

    #[test]
    fn too_many_frames_in_flight_evicts_the_oldest() {
        let cfg = ReassemblerConfig {
            max_partial_frames: 2,
            ..Default::default()
        };
        let mut r = Reassembler::new(cfg);
        for i in 0..3 {
            let p = packets(HeaderKind::Frame32, i, f64::from(i), &frame_bytes(0, 300), 100);
            assert!(r.push(&p[0], MS * i as u32).is_none());
        }
        assert_eq!(r.partial_frames(), 2);
        assert_eq!(r.stats().incomplete, 1);
    }

    #[test]
    fn lying_sizes_allocate_nothing() {
        let mut r = Reassembler::new(Default::default());
        let mut h = DatagramHeader {
            kind: HeaderKind::Frame32,
            pkg_len: 32 + 60_000,
            pkg_id: 0,
            pkg_num: i32::MAX,
            frame_id: Some(1),
            time_stamp: 0.0,
        };
        let mut d = h.encode();
        d.extend_from_slice(&[0; 60_000]);
        assert!(r.push(&d, MS).is_none());
        h.pkg_num = 2000; // 2000 × 60 000 > 64 MiB
        let mut d2 = h.encode();
        d2.extend_from_slice(&[0; 60_000]);
        assert!(r.push(&d2, MS).is_none());
        h.pkg_num = 1;
        h.pkg_len = i32::MAX;
        assert!(r.push(&h.encode(), MS).is_none());
        assert_eq!(r.stats().oversize, 3);
        assert_eq!(r.buffered_bytes(), 0);
        for (id, num) in [(-1, 2), (2, 2), (0, 0)] {
            h.pkg_id = id;
            h.pkg_num = num;
            h.pkg_len = 32;
            assert!(r.push(&h.encode(), MS).is_none());
        }
        assert_eq!(r.stats().bad_length, 3);
    }

    #[test]
    fn frames_lost_whole_are_counted_from_frame_id_gaps() {
        let mut r = Reassembler::new(Default::default());
        let f = frame_bytes(1, 50);
        for id in [0, 1, 4, 3, 5] {
            assert!(r
                .push(&packets(HeaderKind::Frame32, id, f64::from(id), &f, 100)[0], MS)
                .is_some());
        }
        // 2 never came; 3 came late (after 4) and is not missing.
        assert_eq!(r.stats().frames_missing, 1);
    }

    #[test]
    fn garbage_is_counted() {
        let mut r = Reassembler::new(Default::default());
        for d in [&b""[..], b"abc", &[0xFF; 100]] {
            assert!(r.push(d, MS).is_none());
        }
        assert_eq!(r.stats().garbage, 3);
    }

    #[test]
    fn simulator_restart_recovers_at_once() {
        let mut r = Reassembler::new(Default::default());
        let f = frame_bytes(9, 300);
        for i in 0..5 {
            assert_eq!(
                push_all(&mut r, &packets(HeaderKind::Frame32, i, 10.0 + f64::from(i), &f, 100)).len(),
                1
            );
        }
        // Half a frame of the old run, then the restart: ids and time from zero.
        r.push(&packets(HeaderKind::Frame32, 5, 15.0, &f, 100)[0], MS);
        for i in 0..5 {
            let out = push_all(&mut r, &packets(HeaderKind::Frame32, i, f64::from(i) * 0.01, &f, 100));
            assert_eq!(out.len(), 1, "frame {i} after the restart");
        }
        assert_eq!(r.stats().restarts, 1);
        assert_eq!(r.stats().incomplete, 1);
    }

    #[test]
    fn an_early_restart_is_seen_from_the_frame_ids() {
        let mut r = Reassembler::new(Default::default());
        let f = frame_bytes(2, 300);
        for i in 0..20 {
            push_all(
                &mut r,
                &packets(HeaderKind::Frame32, i, 0.3 + f64::from(i) * 0.03, &f, 100),
            );
        }
        // Sim time back from 0.87 s to 0: less than the time threshold, but ids start over.
        for i in 0..3 {
            assert_eq!(
                push_all(&mut r, &packets(HeaderKind::Frame32, i, f64::from(i) * 0.03, &f, 100)).len(),
                1
            );
        }
        assert_eq!(r.stats().restarts, 1);
        // A late straggler (frame 5 of the new run) is no restart.
        push_all(&mut r, &packets(HeaderKind::Frame32, 7, 0.21, &f, 100));
        push_all(&mut r, &packets(HeaderKind::Frame32, 5, 0.15, &f, 100));
        assert_eq!(r.stats().restarts, 1);
    }

    #[test]
    fn same_stamp_other_bytes_is_two_frames_not_one() {
        let mut r = Reassembler::new(Default::default());
        let a = packets(HeaderKind::Image24, 0, 2.0, &frame_bytes(1, 300), 100);
        let b = packets(HeaderKind::Image24, 0, 2.0, &frame_bytes(2, 300), 100);
        let out = push_all(
            &mut r,
            &[a[0].clone(), a[1].clone(), b[0].clone(), b[1].clone(), b[2].clone()],
        );
        assert!(out.is_empty());
        assert_eq!(r.stats().inconsistent, 1);
    }

    #[test]
    fn pkg_len_as_frame_length_is_accepted_and_truncation_is_not() {
        let payload = frame_bytes(4, 250);
        // Seed 000 reading: pkg_len = the frame's payload length in every packet.
        let mut seed_style = packets(HeaderKind::Frame32, 1, 1.0, &payload, 100);
        for d in &mut seed_style {
            d[4..8].copy_from_slice(&250i32.to_le_bytes());
        }
        let mut r = Reassembler::new(Default::default());
        assert_eq!(push_all(&mut r, &seed_style)[0].payload, payload);

        let mut truncated = packets(HeaderKind::Frame32, 2, 2.0, &payload, 100);
        truncated[2].truncate(60);
        assert!(push_all(&mut r, &truncated).is_empty());
        let mut single = packets(HeaderKind::Image24, 0, 3.0, &payload, 1000);
        single[0].truncate(100);
        assert!(push_all(&mut r, &single).is_empty());
        assert_eq!(r.stats().bad_length, 2);
    }

    #[test]
    fn a_chunk_size_change_inside_a_frame_is_refused() {
        let mut r = Reassembler::new(Default::default());
        let a = packets(HeaderKind::Frame32, 1, 1.0, &frame_bytes(1, 300), 100);
        let b = packets(HeaderKind::Frame32, 1, 1.0, &frame_bytes(1, 300), 150);
        assert!(r.push(&a[0], MS).is_none());
        assert!(r.push(&b[1], MS).is_none()); // pkg_num 2 vs 3
        assert_eq!(r.stats().inconsistent, 1);
        assert_eq!(r.partial_frames(), 0);
    }

    #[test]
    fn last_packet_first() {
        let mut r = Reassembler::new(Default::default());
        let payload = frame_bytes(5, 230);
        let p = packets(HeaderKind::Image24, 0, 1.0, &payload, 100);
        let out = push_all(&mut r, &[p[2].clone(), p[0].clone(), p[1].clone()]);
        assert_eq!(out[0].payload, payload);
    }

    fn lying_datagram(frame_id: i32, pkg_num: i32, body_len: usize) -> Vec<u8> {
        let mut d = DatagramHeader {
            kind: HeaderKind::Frame32,
            pkg_len: (32 + body_len) as i32,
            pkg_id: 0,
            pkg_num,
            frame_id: Some(frame_id),
            time_stamp: 1.0,
        }
        .encode();
        d.extend(std::iter::repeat_n(7u8, body_len));
        d
    }

    #[test]
    fn one_lying_datagram_allocates_nothing_beyond_the_sensors_bound() {
        // A 60 KB datagram claiming 1,100 packets: 66 MB, for a 1 MB sensor.
        let mut r = Reassembler::new(ReassemblerConfig::for_frames_of(1 << 20));
        assert!(r.push(&lying_datagram(1, 1100, 60_000), MS).is_none());
        assert_eq!((r.stats().oversize, r.buffered_bytes()), (1, 0));
    }

    #[test]
    fn partial_frames_stay_within_the_total_budget_and_the_newest_completes() {
        let cfg = ReassemblerConfig::for_frames_of(1 << 20);
        let budget = cfg.max_buffered_bytes;
        let mut r = Reassembler::new(cfg);
        // Frames of 15 × 60 KB = 900 KB, each missing its other packets.
        for id in 0..6 {
            r.push(&lying_datagram(id, 15, 60_000), MS);
            assert!(r.buffered_bytes() <= budget, "{} > {budget}", r.buffered_bytes());
        }
        assert!(r.stats().incomplete >= 4);
        let payload = frame_bytes(3, 900_000);
        let out = push_all(&mut r, &packets(HeaderKind::Frame32, 100, 2.0, &payload, 60_000));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].payload, payload);
        assert!(r.buffered_bytes() <= budget);
    }

    #[test]
    fn a_second_frame_with_the_same_stamp_is_never_joined_and_is_counted() {
        // 24-byte header: no frame id. A loses its last packet; B, with A's
        // time stamp, comes whole. Nothing of the two is joined.
        let mut r = Reassembler::new(Default::default());
        let a = frame_bytes(1, 300);
        let b = frame_bytes(2, 300);
        let pa = packets(HeaderKind::Image24, 0, 5.0, &a, 100);
        let pb = packets(HeaderKind::Image24, 0, 5.0, &b, 100);
        let out = push_all(
            &mut r,
            &[
                pa[0].clone(),
                pa[1].clone(),
                pb[0].clone(),
                pb[1].clone(),
                pb[2].clone(),
            ],
        );
        assert!(out.is_empty(), "a frame made of A's and B's packets");
        assert_eq!(r.stats().inconsistent, 1);
        assert_eq!(r.stats().repeated_stamp, 2);
        assert_eq!(
            r.stats().late,
            0,
            "B's packets are not late duplicates: they are counted as a fault"
        );
        // A late duplicate of a finished frame stays a duplicate, not a fault.
        let c = frame_bytes(3, 300);
        let pc = packets(HeaderKind::Image24, 0, 6.0, &c, 100);
        assert_eq!(push_all(&mut r, &pc).len(), 1);
        assert!(r.push(&pc[1], MS).is_none());
        assert_eq!((r.stats().late, r.stats().repeated_stamp), (1, 2));
    }
}
