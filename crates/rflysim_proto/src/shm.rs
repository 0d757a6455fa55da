//! Shared-memory frames (spec §4): region `RflySim3DImg_<SeqID>` holds
//! `u8 flag | f64 time_stamp (unaligned) | payload`. The writer sets flag 2
//! after a new frame; a reader sets 3 while it reads and 4 when done.
//!
//! RflySim's SDK marks a frame done *before* copying it and keeps views into
//! the live buffer, so its frames tear. This reader claims the slot, copies,
//! then checks that neither the flag nor the time stamp moved; a frame that
//! changed under it is counted and never handed out.
//!
//! The logic runs on any [`SharedRegion`]: a plain byte slice in tests, a
//! mapped region in the nodes.

use std::sync::atomic::{fence, AtomicU8, Ordering};

use crate::lidar;
use crate::sensor::{SensorClass, SensorKind};
use crate::telemetry::{self, LaserDistance};

pub const HEADER_LEN: usize = 9;
pub const FLAG_NEW: u8 = 2;
pub const FLAG_READING: u8 = 3;
pub const FLAG_DONE: u8 = 4;

/// The bytes after the header of a sensor's region: what RflySim's SDK maps
/// for each TypeID (spec §4). The region is sized for the largest frame, so a
/// LiDAR or depth cloud holds fewer points than it has room for; the bytes
/// after them are stale, not an error.
pub fn payload_capacity(kind: &SensorKind, width: u16, height: u16) -> usize {
    let pixels = usize::from(width) * usize::from(height);
    match kind.class {
        SensorClass::Camera(e) => pixels * e.bytes_per_pixel(),
        SensorClass::Lidar => lidar::SDK_HEADER_LEN + lidar::SDK_INT16_POINT_LEN * pixels,
        // The SDK reads no region for TypeID 7; this bridge and its emulator
        // use the SDK's int16 x, y, z layout there.
        SensorClass::DepthCloud => lidar::SDK_HEADER_LEN + lidar::SDK_INT16_XYZ_POINT_LEN * pixels,
        SensorClass::LaserDistance => LaserDistance::LEN,
        SensorClass::Detections => telemetry::MAX_DETECTIONS_PAYLOAD,
    }
}

/// The whole region: header and payload capacity.
pub fn region_len(kind: &SensorKind, width: u16, height: u16) -> usize {
    HEADER_LEN + payload_capacity(kind, width, height)
}

/// What the frame logic needs of a shared-memory region.
pub trait SharedRegion {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn load_flag(&self) -> u8;
    fn store_flag(&mut self, flag: u8);
    fn load_time_stamp(&self) -> f64;
    fn store_time_stamp(&mut self, t: f64);
    /// Copies `dst.len()` bytes from `offset` (within bounds, checked by the caller).
    fn copy_out(&self, offset: usize, dst: &mut [u8]);
    fn copy_in(&mut self, offset: usize, src: &[u8]);
    /// Replaces `out` with `n` bytes from `offset`.
    fn copy_out_to_vec(&self, offset: usize, n: usize, out: &mut Vec<u8>) {
        out.clear();
        out.resize(n, 0);
        self.copy_out(offset, out);
    }
}

impl SharedRegion for [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
    fn load_flag(&self) -> u8 {
        self[0]
    }
    fn store_flag(&mut self, flag: u8) {
        self[0] = flag;
    }
    fn load_time_stamp(&self) -> f64 {
        f64::from_le_bytes(self[1..9].try_into().expect("8 bytes"))
    }
    fn store_time_stamp(&mut self, t: f64) {
        self[1..9].copy_from_slice(&t.to_le_bytes());
    }
    fn copy_out(&self, offset: usize, dst: &mut [u8]) {
        dst.copy_from_slice(&self[offset..offset + dst.len()]);
    }
    fn copy_in(&mut self, offset: usize, src: &[u8]) {
        self[offset..offset + src.len()].copy_from_slice(src);
    }
}

/// A region mapped into this process and shared with another one.
#[derive(Debug)]
pub struct RawRegion {
    base: *mut u8,
    len: usize,
}

// SAFETY: the region is plain shared bytes; every access goes through
// atomics (flag) or bounded volatile-free copies whose races the frame
// protocol detects.
unsafe impl Send for RawRegion {}

impl RawRegion {
    /// # Safety
    /// `base` must point to `len` bytes that stay mapped while this value lives.
    pub unsafe fn new(base: *mut u8, len: usize) -> Self {
        Self { base, len }
    }
}

impl SharedRegion for RawRegion {
    fn len(&self) -> usize {
        self.len
    }
    fn load_flag(&self) -> u8 {
        // SAFETY: offset 0 is inside the region (len ≥ HEADER_LEN is checked by users).
        unsafe { AtomicU8::from_ptr(self.base) }.load(Ordering::Acquire)
    }
    fn store_flag(&mut self, flag: u8) {
        // SAFETY: as above.
        unsafe { AtomicU8::from_ptr(self.base) }.store(flag, Ordering::Release)
    }
    fn load_time_stamp(&self) -> f64 {
        let mut b = [0u8; 8];
        self.copy_out(1, &mut b);
        f64::from_le_bytes(b)
    }
    fn store_time_stamp(&mut self, t: f64) {
        self.copy_in(1, &t.to_le_bytes());
    }
    fn copy_out(&self, offset: usize, dst: &mut [u8]) {
        assert!(offset + dst.len() <= self.len);
        fence(Ordering::Acquire);
        // SAFETY: bounds checked above; a concurrent writer can only make the
        // bytes stale, which the re-check of flag and time stamp catches.
        unsafe { std::ptr::copy_nonoverlapping(self.base.add(offset), dst.as_mut_ptr(), dst.len()) }
    }
    fn copy_in(&mut self, offset: usize, src: &[u8]) {
        assert!(offset + src.len() <= self.len);
        // SAFETY: bounds checked above.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.base.add(offset), src.len()) }
        fence(Ordering::Release);
    }
    /// One pass: no zero-filling of a frame that is overwritten at once.
    fn copy_out_to_vec(&self, offset: usize, n: usize, out: &mut Vec<u8>) {
        assert!(offset + n <= self.len);
        out.clear();
        out.reserve(n);
        fence(Ordering::Acquire);
        // SAFETY: `out` has room for n bytes; the copy initialises all of them
        // before the length is set.
        unsafe {
            std::ptr::copy_nonoverlapping(self.base.add(offset), out.as_mut_ptr(), n);
            out.set_len(n);
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShmStats {
    pub frames: u64,
    /// Frames that changed while being copied: dropped.
    pub torn: u64,
    /// Flag said "new" but the time stamp was the last frame's.
    pub repeated: u64,
    /// The region is smaller than its header.
    pub too_small: u64,
}

/// Reads frames from one region, one copy each.
#[derive(Debug, Default)]
pub struct ShmReader {
    last_time_stamp: Option<f64>,
    stats: ShmStats,
}

impl ShmReader {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn stats(&self) -> &ShmStats {
        &self.stats
    }

    /// If a new frame is there, copies `payload_len` bytes of it (at most the
    /// region holds) into `out` and returns its time stamp.
    pub fn poll<R: SharedRegion + ?Sized>(
        &mut self,
        region: &mut R,
        payload_len: usize,
        out: &mut Vec<u8>,
    ) -> Option<f64> {
        if region.len() < HEADER_LEN {
            self.stats.too_small += 1;
            return None;
        }
        if region.load_flag() != FLAG_NEW {
            return None;
        }
        let t = region.load_time_stamp();
        region.store_flag(FLAG_READING);
        let n = payload_len.min(region.len() - HEADER_LEN);
        region.copy_out_to_vec(HEADER_LEN, n, out);
        let unchanged = region.load_flag() == FLAG_READING && region.load_time_stamp().to_bits() == t.to_bits();
        if !unchanged {
            // The writer wrote during the copy; its frame is flagged new again
            // (or about to be) and is read on the next poll.
            self.stats.torn += 1;
            return None;
        }
        region.store_flag(FLAG_DONE);
        if self.last_time_stamp.map(f64::to_bits) == Some(t.to_bits()) {
            self.stats.repeated += 1;
            return None;
        }
        self.last_time_stamp = Some(t);
        self.stats.frames += 1;
        Some(t)
    }
}

/// The writer's side (the emulator): skips the frame while a reader holds the
/// slot; else writes payload, then time stamp, then the flag.
pub fn write_frame<R: SharedRegion + ?Sized>(region: &mut R, time_stamp: f64, payload: &[u8]) -> bool {
    if region.len() < HEADER_LEN + payload.len() || region.load_flag() == FLAG_READING {
        return false;
    }
    region.copy_in(HEADER_LEN, payload);
    region.store_time_stamp(time_stamp);
    region.store_flag(FLAG_NEW);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_layout() {
        let mut r = vec![0u8; 9 + 4];
        assert!(write_frame(&mut r[..], 1.5, &[1, 2, 3, 4]));
        assert_eq!(r, [2, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 1, 2, 3, 4]);
        let mut reader = ShmReader::new();
        let mut out = Vec::new();
        assert_eq!(reader.poll(&mut r[..], 4, &mut out), Some(1.5));
        assert_eq!(out, [1, 2, 3, 4]);
        assert_eq!(r[0], FLAG_DONE);
        assert_eq!(reader.poll(&mut r[..], 4, &mut out), None);
        let kind = |id| SensorKind::from_type_id(id).unwrap();
        // The sizes RflySim's SDK maps (spec §4).
        assert_eq!(region_len(kind(1), 640, 480), 921_609);
        assert_eq!(region_len(kind(2), 640, 480), 9 + 640 * 480 * 2);
        assert_eq!(region_len(kind(40), 640, 480), 9 + 640 * 480);
        assert_eq!(region_len(kind(20), 100, 16), 9 + 28 + 100 * 16 * 4 * 2);
        assert_eq!(region_len(kind(5), 640, 480), 9 + 56);
        assert_eq!(region_len(kind(7), 10, 10), 9 + 28 + 100 * 6);
    }

    #[test]
    fn a_reader_holding_the_slot_makes_the_writer_skip() {
        let mut r = [0u8; 20];
        r[0] = FLAG_READING;
        assert!(!write_frame(&mut r[..], 1.0, &[9; 11]));
        assert!(!write_frame(&mut vec![0u8; 10][..], 1.0, &[9; 11]));
    }

    /// A region whose writer strikes in the middle of the reader's copy.
    struct RacyRegion {
        bytes: std::cell::RefCell<Vec<u8>>,
        strike: std::cell::Cell<bool>,
    }

    impl SharedRegion for RacyRegion {
        fn len(&self) -> usize {
            self.bytes.borrow().len()
        }
        fn load_flag(&self) -> u8 {
            self.bytes.borrow()[0]
        }
        fn store_flag(&mut self, f: u8) {
            self.bytes.borrow_mut()[0] = f;
        }
        fn load_time_stamp(&self) -> f64 {
            self.bytes.borrow()[..].load_time_stamp()
        }
        fn store_time_stamp(&mut self, t: f64) {
            self.bytes.borrow_mut()[..].store_time_stamp(t)
        }
        fn copy_out(&self, offset: usize, dst: &mut [u8]) {
            let half = dst.len() / 2;
            self.bytes.borrow()[..].copy_out(offset, &mut dst[..half]);
            if self.strike.replace(false) {
                // A writer that ignores flag 3: new payload, time stamp, flag.
                let mut bytes = self.bytes.borrow_mut();
                bytes[HEADER_LEN..].fill(0xBB);
                bytes[..].store_time_stamp(2.0);
                bytes[0] = FLAG_NEW;
            }
            self.bytes.borrow()[..].copy_out(offset + half, &mut dst[half..]);
        }
        fn copy_in(&mut self, offset: usize, src: &[u8]) {
            self.bytes.borrow_mut()[..].copy_in(offset, src)
        }
    }

    #[test]
    fn a_frame_written_during_the_copy_is_never_handed_out_torn() {
        let mut r = RacyRegion {
            bytes: std::cell::RefCell::new(vec![0u8; HEADER_LEN + 100]),
            strike: std::cell::Cell::new(true),
        };
        assert!(write_frame(&mut r, 1.0, &[0xAA; 100]));
        let mut reader = ShmReader::new();
        let mut out = Vec::new();
        assert_eq!(reader.poll(&mut r, 100, &mut out), None);
        assert_eq!(reader.stats().torn, 1);
        // The next poll gets the new frame, whole.
        assert_eq!(reader.poll(&mut r, 100, &mut out), Some(2.0));
        assert!(out.iter().all(|&b| b == 0xBB));
    }

    #[test]
    fn same_time_stamp_twice_is_one_frame() {
        let mut r = [0u8; 12];
        let mut reader = ShmReader::new();
        let mut out = Vec::new();
        write_frame(&mut r[..], 3.0, &[1, 2, 3]);
        assert!(reader.poll(&mut r[..], 3, &mut out).is_some());
        write_frame(&mut r[..], 3.0, &[1, 2, 3]);
        assert!(reader.poll(&mut r[..], 3, &mut out).is_none());
        assert_eq!(reader.stats().repeated, 1);
        let mut tiny = [FLAG_NEW; 4];
        assert!(reader.poll(&mut tiny[..], 3, &mut out).is_none());
        assert_eq!(reader.stats().too_small, 1);
    }
}
