//! Reassembly of RflySim's UDP sensor frames from datagrams (RflySim's SDK: VisionCaptureApi.py's UDP receivers).
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
//! - each datagram is copied once, into its place in the frame's buffer; a
//!   caller that receives through a [`Slot`] has the socket put a packet
//!   that arrives in order there itself.

use std::collections::VecDeque;
use std::time::Duration;

use crate::header::{DatagramHeader, HeaderError, HeaderKind};

mod config;
mod partial;
mod slot;
mod stats;

pub use config::ReassemblerConfig;
use partial::{packet_sample, with_headroom, write_at, FrameKey, Partial, Remembered};
pub use slot::{Slot, MAX_DATAGRAM};
pub use stats::ReassemblyStats;

/// One reassembled frame: the payload of all its packets in `pkg_id` order.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub header_kind: HeaderKind,
    pub frame_id: Option<i32>,
    pub time_stamp: f64,
    pub packets: u32,
    /// `headroom` zero bytes (the config's), then the payload, with
    /// capacity for the config's `tailroom` after it.
    pub payload: Vec<u8>,
    pub headroom: usize,
    /// Arrival of the first and the last of its datagrams (the caller's clock).
    pub first_arrival: Duration,
    pub last_arrival: Duration,
}

enum Verdict {
    /// Kept, at this index of the partial frames (making room may move it).
    Keep(usize),
    Drop,
}

#[derive(Debug)]
pub struct Reassembler {
    config: ReassemblerConfig,
    /// Where a datagram no frame's buffer expects is received (see [`Slot`]).
    scratch: Vec<u8>,
    /// A delivered frame's buffer, given back for the next frame: a 4K frame
    /// in fresh memory cost the kernel a page fault per 4 KiB received.
    spare: Option<Vec<u8>>,
    /// The frame that took the last packet: a [`Slot`] expects the next one there.
    last_key: Option<FrameKey>,
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
            scratch: Vec::new(),
            spare: None,
            last_key: None,
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

    /// Gives a delivered frame's buffer back, to receive a later frame into:
    /// one is kept, the larger.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        if self.spare.as_ref().is_none_or(|s| s.capacity() < buf.capacity()) {
            self.spare = Some(buf);
        }
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
        self.push_counted(datagram, now)
    }

    /// `push`, the datagram already counted and stale frames evicted.
    fn push_counted(&mut self, datagram: &[u8], now: Duration) -> Option<Frame> {
        let header = match DatagramHeader::parse(datagram) {
            Ok(h) => h,
            Err(HeaderError::TooShort | HeaderError::UnknownChecksum(_)) => {
                self.stats.garbage += 1;
                return None;
            }
        };
        let body = &datagram[header.kind.header_len()..];
        self.push_parsed(&header, Some(body), body.len(), datagram.len(), now)
    }

    /// The rest of `push` once the header is read. `body` is `None` when
    /// its `body_len` bytes are already in their place in their frame's
    /// buffer (a [`Slot`] predicted it).
    fn push_parsed(
        &mut self,
        header: &DatagramHeader,
        body: Option<&[u8]>,
        body_len: usize,
        datagram_len: usize,
        now: Duration,
    ) -> Option<Frame> {
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
            || (pkg_num as usize - 1).saturating_mul(body_len) > self.config.max_frame_bytes
            || (header.pkg_len as usize).saturating_sub(header.kind.header_len()) > self.config.max_frame_bytes
        {
            self.stats.oversize += 1;
            return None;
        }
        let key = FrameKey::of(header);
        if let Some(r) = self.finished.iter().find(|r| r.key == key) {
            let seen = r.samples.get(header.pkg_id as usize).copied();
            if header.kind == HeaderKind::Image24 && seen != body.map(packet_sample) {
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
                    // A slot predicts packets of frames being filled only.
                    let body = body?;
                    return self.single_packet_frame(key, header, body, datagram_len, now);
                }
                self.start_partial(key, header, now)
            }
        };
        let idx = match self.add_packet(idx, header, body, body_len, datagram_len, now) {
            Verdict::Keep(idx) => idx,
            Verdict::Drop => return None,
        };
        self.last_key = Some(key);
        if self.partials[idx].complete() {
            let p = self.partials.swap_remove(idx);
            return self.finish(p);
        }
        None
    }

    /// When [`evict_stale`](Self::evict_stale) will next have a frame to
    /// drop, if no packet comes: `None` while no frame is being filled, so
    /// that a silent stream needs no timer.
    pub fn next_stale_at(&self) -> Option<Duration> {
        self.partials
            .iter()
            .map(|p| p.last_arrival + self.config.stale_after)
            .min()
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
    fn is_restart(&self, stamp: f64, frame_id: Option<i32>) -> bool {
        let ids_restarted =
            matches!((frame_id, self.newest_frame_id), (Some(id), Some(newest)) if id <= 1 && newest > 8);
        matches!(self.newest_stamp,
            Some(newest) if stamp < newest - self.config.restart_time_jump || (stamp < newest && ids_restarted))
    }

    fn note_stamp(&mut self, stamp: f64, frame_id: Option<i32>) {
        match self.newest_stamp {
            _ if self.is_restart(stamp, frame_id) => {
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
        self.started += 1;
        let p = Partial::new(key, header, self.config.headroom, now, self.started);
        self.partials.push(p);
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
            payload: with_headroom(self.config.headroom, body, self.config.tailroom),
            headroom: self.config.headroom,
            first_arrival: now,
            last_arrival: now,
        })
    }

    fn drop_partial(&mut self, idx: usize) -> Verdict {
        let p = self.partials.swap_remove(idx);
        self.remember(p.key, p.samples);
        Verdict::Drop
    }

    /// Puts a packet in partial frame `idx`: `body`, or (`None`) its
    /// `body_len` bytes already at their place in the frame's buffer.
    fn add_packet(
        &mut self,
        idx: usize,
        header: &DatagramHeader,
        body: Option<&[u8]>,
        body_len: usize,
        datagram_len: usize,
        now: Duration,
    ) -> Verdict {
        let max_frame = self.config.max_frame_bytes;
        let tailroom = self.config.tailroom;
        let id = header.pkg_id as u32;
        // The first packet that is not the last sizes the frame's buffer:
        // room for it is made first, from the oldest other frames.
        let sizes_buffer = {
            let p = &self.partials[idx];
            p.chunk.is_none() && id + 1 != p.pkg_num && body_len != 0
        };
        let idx = if sizes_buffer {
            let key = self.partials[idx].key;
            let bytes = (self.partials[idx].pkg_num as usize).saturating_mul(body_len);
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
            if body.is_some() && p.stored(id) == body {
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
            match (p.chunk, body) {
                (Some(c), _) if body_len > c => {
                    self.stats.inconsistent += 1;
                    return self.drop_partial(idx);
                }
                (Some(c), body) => {
                    if let Some(body) = body {
                        write_at(&mut p.buf, p.headroom + id as usize * c, body);
                    }
                    p.last_len = Some(body_len);
                }
                (None, Some(body)) => p.early_last = Some(body.to_vec()),
                // A slot is predicted only where the chunk size is known.
                (None, None) => {
                    self.stats.inconsistent += 1;
                    return self.drop_partial(idx);
                }
            }
        } else {
            let chunk = match p.chunk {
                Some(c) if c != body_len => {
                    self.stats.inconsistent += 1;
                    return self.drop_partial(idx);
                }
                Some(c) => c,
                None if body.is_none() => {
                    self.stats.inconsistent += 1;
                    return self.drop_partial(idx);
                }
                None => {
                    if body_len == 0 || (p.pkg_num as usize - 1) * body_len > max_frame {
                        self.stats.oversize += 1;
                        return self.drop_partial(idx);
                    }
                    let c = body_len;
                    p.chunk = Some(c);
                    let full = (p.pkg_num as usize - 1) * c;
                    let needed = p.headroom + full + c + tailroom;
                    let mut buf = match self.spare.take() {
                        Some(spare) if spare.capacity() >= needed => spare,
                        _ => Vec::with_capacity(needed),
                    };
                    buf.clear();
                    buf.resize(p.headroom, 0);
                    if let Some(early) = p.early_last.take() {
                        if early.len() > c || full + early.len() > max_frame {
                            self.stats.inconsistent += 1;
                            return self.drop_partial(idx);
                        }
                        write_at(&mut buf, p.headroom + full, &early);
                        p.last_len = Some(early.len());
                    }
                    p.buf = buf;
                    c
                }
            };
            if let Some(body) = body {
                write_at(&mut p.buf, p.headroom + id as usize * chunk, body);
            }
        }
        p.mark(id);
        if p.key.kind == HeaderKind::Image24 {
            let sample = p.stored(id).map_or(0, packet_sample);
            p.samples[id as usize] = sample;
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
            // RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html) reads pkg_len as the frame's length: hold it to that.
            let declared = i64::from(p.declared_len.unwrap_or(-1));
            let total = (payload.len() - p.headroom) as i64;
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
            headroom: p.headroom,
            first_arrival: p.first_arrival,
            last_arrival: p.last_arrival,
        })
    }

    fn deliver(&mut self, frame: Frame) -> Option<Frame> {
        self.stats.frames += 1;
        self.stats.payload_bytes += (frame.payload.len() - frame.headroom) as u64;
        Some(frame)
    }
}

#[cfg(test)]
mod tests;
