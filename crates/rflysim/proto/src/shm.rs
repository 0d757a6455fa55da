//! Shared-memory frames (RflySim's SDK: VisionCaptureApi.py's img_mem_thrd): region `RflySim3DImg_<SeqID>` holds
//! `u8 flag | f64 time_stamp (unaligned) | payload`. The writer sets flag 2
//! after a new frame; a reader sets 3 while it reads and 4 when done.
//!
//! RflySim's SDK marks a frame done *before* copying it and keeps views into
//! the live buffer, so its frames tear. This reader claims the slot with a
//! compare-and-swap (2 → 3: a frame written meanwhile is not lost), copies,
//! then releases it with another (3 → 4) and checks that the time stamp did
//! not move; a frame that changed under it is counted, never handed out, and
//! left flagged new so that the next poll reads it whole. This crate's
//! writer (the emulator) flags 1 while it writes, so a reader never takes a
//! half-written frame for the previous one. A slot left at 3 by a reader that
//! died is taken back after `STALE_READING` by either side.
//!
//! The logic runs on any [`SharedRegion`]: a plain byte slice in tests, a
//! mapped region in the nodes.

use std::sync::atomic::{fence, AtomicU8, Ordering};
use std::time::Duration;

use crate::lidar;
use crate::sensor::{SensorClass, SensorKind};
use crate::telemetry::{self, LaserDistance};

pub const HEADER_LEN: usize = 9;
/// This crate's writer, while it writes (RflySim3D's own writer may not).
pub const FLAG_WRITING: u8 = 1;
pub const FLAG_NEW: u8 = 2;
pub const FLAG_READING: u8 = 3;
pub const FLAG_DONE: u8 = 4;
/// A slot held at "reading" for this long belongs to a reader that died.
pub const STALE_READING: Duration = Duration::from_secs(1);

/// The bytes after the header of a sensor's region: what RflySim's SDK maps
/// for each TypeID (RflySim's SDK: VisionCaptureApi.py's img_mem_thrd). The region is sized for the largest frame, so a
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
    /// Sets the flag to `new` if it is `current`; whether it did.
    fn swap_flag(&mut self, current: u8, new: u8) -> bool;
    fn load_time_stamp(&self) -> f64;
    fn store_time_stamp(&mut self, t: f64);
    /// Copies `dst.len()` bytes from `offset` (within bounds, checked by the caller).
    fn copy_out(&self, offset: usize, dst: &mut [u8]);
    fn copy_in(&mut self, offset: usize, src: &[u8]);
    /// Replaces `out` with `headroom` zero bytes, then `n` bytes from `offset`.
    fn copy_out_to_vec(&self, offset: usize, n: usize, headroom: usize, out: &mut Vec<u8>) {
        out.clear();
        out.resize(headroom + n, 0);
        self.copy_out(offset, &mut out[headroom..]);
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
    fn swap_flag(&mut self, current: u8, new: u8) -> bool {
        let done = self[0] == current;
        if done {
            self[0] = new;
        }
        done
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
    fn swap_flag(&mut self, current: u8, new: u8) -> bool {
        // SAFETY: as above.
        unsafe { AtomicU8::from_ptr(self.base) }
            .compare_exchange(current, new, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
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
    fn copy_out_to_vec(&self, offset: usize, n: usize, headroom: usize, out: &mut Vec<u8>) {
        assert!(offset + n <= self.len);
        out.clear();
        out.resize(headroom, 0);
        out.reserve(n);
        fence(Ordering::Acquire);
        // SAFETY: `out` has room for n bytes after its `headroom`; the copy
        // initialises all of them before the length is set.
        unsafe {
            std::ptr::copy_nonoverlapping(self.base.add(offset), out.as_mut_ptr().add(headroom), n);
            out.set_len(headroom + n);
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
    /// Slots left "reading" by a reader that died, taken back.
    pub reclaimed: u64,
}

/// Reads frames from one region, one copy each.
#[derive(Debug, Default)]
pub struct ShmReader {
    last_time_stamp: Option<f64>,
    /// Since when the slot has been "reading" without this reader holding it.
    foreign_reading_since: Option<Duration>,
    stats: ShmStats,
    /// Zero bytes in front of every frame copied out (see [`ShmReader::with_headroom`]).
    headroom: usize,
}

impl ShmReader {
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps `headroom` bytes in front of every frame copied out, for the
    /// consumer to fill (the header of the message the frame becomes).
    pub fn with_headroom(self, headroom: usize) -> Self {
        Self { headroom, ..self }
    }

    pub fn stats(&self) -> &ShmStats {
        &self.stats
    }

    /// If a new frame is there, copies `payload_len` bytes of it (at most the
    /// region holds) into `out` and returns its time stamp. `now`: any
    /// monotonic clock, to recognise a slot abandoned by a dead reader.
    pub fn poll<R: SharedRegion + ?Sized>(
        &mut self,
        region: &mut R,
        payload_len: usize,
        out: &mut Vec<u8>,
        now: Duration,
    ) -> Option<f64> {
        if region.len() < HEADER_LEN {
            self.stats.too_small += 1;
            return None;
        }
        if region.load_flag() == FLAG_READING {
            // Not ours: another reader, or one that died holding the slot.
            let since = *self.foreign_reading_since.get_or_insert(now);
            if now.saturating_sub(since) >= STALE_READING && region.swap_flag(FLAG_READING, FLAG_NEW) {
                self.stats.reclaimed += 1;
                self.foreign_reading_since = None;
            }
            return None;
        }
        self.foreign_reading_since = None;
        let t = region.load_time_stamp();
        if !region.swap_flag(FLAG_NEW, FLAG_READING) {
            return None;
        }
        let n = payload_len.min(region.len() - HEADER_LEN);
        region.copy_out_to_vec(HEADER_LEN, n, self.headroom, out);
        let released = region.swap_flag(FLAG_READING, FLAG_DONE);
        if !released || region.load_time_stamp().to_bits() != t.to_bits() {
            // The writer wrote during the copy. Its frame is flagged new (or
            // about to be); ours must not be left at "reading" over it.
            if released {
                region.swap_flag(FLAG_DONE, FLAG_NEW);
            }
            self.stats.torn += 1;
            return None;
        }
        if self.last_time_stamp.map(f64::to_bits) == Some(t.to_bits()) {
            self.stats.repeated += 1;
            return None;
        }
        self.last_time_stamp = Some(t);
        self.stats.frames += 1;
        Some(t)
    }
}

/// The writer's side (the emulator): flags the slot "writing" while it
/// writes, skips a frame while a live reader holds the slot, and takes the
/// slot back from a reader that died.
#[derive(Debug, Default)]
pub struct ShmWriter {
    reading_since: Option<Duration>,
}

impl ShmWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes payload, then time stamp, then the flag; `false` when the frame
    /// was skipped (a reader holds the slot, or the region is too small).
    pub fn write<R: SharedRegion + ?Sized>(
        &mut self,
        region: &mut R,
        time_stamp: f64,
        payload: &[u8],
        now: Duration,
    ) -> bool {
        if region.len() < HEADER_LEN + payload.len() {
            return false;
        }
        let flag = region.load_flag();
        if flag == FLAG_READING {
            let since = *self.reading_since.get_or_insert(now);
            if now.saturating_sub(since) < STALE_READING {
                return false;
            }
        }
        // A reader may claim the slot between the load and this swap: then skip.
        if !region.swap_flag(flag, FLAG_WRITING) {
            return false;
        }
        self.reading_since = None;
        region.copy_in(HEADER_LEN, payload);
        region.store_time_stamp(time_stamp);
        region.store_flag(FLAG_NEW);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: Duration = Duration::ZERO;

    #[test]
    fn golden_layout() {
        let mut r = vec![0u8; 9 + 4];
        assert!(ShmWriter::new().write(&mut r[..], 1.5, &[1, 2, 3, 4], T0));
        assert_eq!(r, [2, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 1, 2, 3, 4]);
        let mut reader = ShmReader::new();
        let mut out = Vec::new();
        assert_eq!(reader.poll(&mut r[..], 4, &mut out, T0), Some(1.5));
        assert_eq!(out, [1, 2, 3, 4]);
        assert_eq!(r[0], FLAG_DONE);
        assert_eq!(reader.poll(&mut r[..], 4, &mut out, T0), None);
        let mut roomy = ShmReader::new().with_headroom(3);
        assert!(ShmWriter::new().write(&mut r[..], 2.5, &[5, 6, 7, 8], T0));
        assert_eq!(roomy.poll(&mut r[..], 4, &mut out, T0), Some(2.5));
        assert_eq!(out, [0, 0, 0, 5, 6, 7, 8]);
        let kind = |id| SensorKind::from_type_id(id).unwrap();
        // The sizes RflySim's SDK maps (RflySim's SDK: VisionCaptureApi.py's img_mem_thrd).
        assert_eq!(region_len(kind(1), 640, 480), 921_609);
        assert_eq!(region_len(kind(2), 640, 480), 9 + 640 * 480 * 2);
        assert_eq!(region_len(kind(40), 640, 480), 9 + 640 * 480);
        assert_eq!(region_len(kind(20), 100, 16), 9 + 28 + 100 * 16 * 4 * 2);
        assert_eq!(region_len(kind(5), 640, 480), 9 + 56);
        assert_eq!(region_len(kind(7), 10, 10), 9 + 28 + 100 * 6);
    }

    #[test]
    fn a_live_reader_makes_the_writer_skip_a_dead_one_does_not_stall_it() {
        let mut r = [0u8; 20];
        r[0] = FLAG_READING;
        let mut w = ShmWriter::new();
        assert!(!w.write(&mut r[..], 1.0, &[9; 11], T0));
        assert!(!w.write(&mut r[..], 1.0, &[9; 11], STALE_READING / 2));
        assert!(!w.write(&mut vec![0u8; 10][..], 1.0, &[9; 11], T0));
        // Still "reading" a second later: that reader died; the writer goes on.
        assert!(w.write(&mut r[..], 2.0, &[9; 11], STALE_READING));
        assert_eq!(r[0], FLAG_NEW);
    }

    #[test]
    fn a_slot_left_reading_by_a_dead_reader_is_taken_back_by_the_next_reader() {
        let mut r = [0u8; HEADER_LEN + 8];
        assert!(ShmWriter::new().write(&mut r[..], 3.0, &[5; 8], T0));
        r[0] = FLAG_READING; // a bridge killed in the middle of its copy
        let mut reader = ShmReader::new();
        let mut out = Vec::new();
        let at = |ms| Duration::from_millis(ms);
        assert_eq!(reader.poll(&mut r[..], 8, &mut out, at(10)), None);
        assert_eq!(reader.poll(&mut r[..], 8, &mut out, at(500)), None);
        assert_eq!(reader.poll(&mut r[..], 8, &mut out, at(1010)), None);
        assert_eq!(reader.stats().reclaimed, 1);
        assert_eq!(reader.poll(&mut r[..], 8, &mut out, at(1011)), Some(3.0));
        assert_eq!(out, [5; 8]);
    }

    #[test]
    fn a_frame_being_written_is_never_read() {
        let mut r = [0u8; HEADER_LEN + 4];
        assert!(ShmWriter::new().write(&mut r[..], 1.0, &[1; 4], T0));
        r[0] = FLAG_WRITING;
        let mut out = Vec::new();
        assert_eq!(ShmReader::new().poll(&mut r[..], 4, &mut out, T0), None);
        assert_eq!(r[0], FLAG_WRITING);
    }

    /// A region whose writer strikes in the middle of the reader's work.
    struct RacyRegion {
        bytes: std::cell::RefCell<Vec<u8>>,
        /// Strike at the first copy (a writer ignoring flags, as RflySim3D
        /// may) or right after the first time-stamp read (a writer that
        /// honours them, between the reader's look and its claim).
        strike_in_copy: std::cell::Cell<bool>,
        strike_after_stamp: std::cell::Cell<bool>,
    }

    impl RacyRegion {
        fn new(strike_in_copy: bool) -> Self {
            Self {
                bytes: std::cell::RefCell::new(vec![0u8; HEADER_LEN + 100]),
                strike_in_copy: std::cell::Cell::new(strike_in_copy),
                strike_after_stamp: std::cell::Cell::new(!strike_in_copy),
            }
        }
        fn strike(&self) {
            let mut bytes = self.bytes.borrow_mut();
            bytes[HEADER_LEN..].fill(0xBB);
            bytes[..].store_time_stamp(2.0);
            bytes[0] = FLAG_NEW;
        }
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
        fn swap_flag(&mut self, current: u8, new: u8) -> bool {
            self.bytes.borrow_mut()[..].swap_flag(current, new)
        }
        fn load_time_stamp(&self) -> f64 {
            let t = self.bytes.borrow()[..].load_time_stamp();
            if self.strike_after_stamp.replace(false) {
                self.strike();
            }
            t
        }
        fn store_time_stamp(&mut self, t: f64) {
            self.bytes.borrow_mut()[..].store_time_stamp(t)
        }
        fn copy_out(&self, offset: usize, dst: &mut [u8]) {
            let half = dst.len() / 2;
            self.bytes.borrow()[..].copy_out(offset, &mut dst[..half]);
            if self.strike_in_copy.replace(false) {
                self.strike();
            }
            self.bytes.borrow()[..].copy_out(offset + half, &mut dst[half..]);
        }
        fn copy_in(&mut self, offset: usize, src: &[u8]) {
            self.bytes.borrow_mut()[..].copy_in(offset, src)
        }
    }

    #[test]
    fn a_mapped_region_is_copied_out_after_the_headroom() {
        let mut bytes = vec![0u8; HEADER_LEN + 4];
        assert!(ShmWriter::new().write(&mut bytes[..], 1.0, &[1, 2, 3, 4], T0));
        // SAFETY: `bytes` outlives `region`, and nothing else touches it meanwhile.
        let mut region = unsafe { RawRegion::new(bytes.as_mut_ptr(), bytes.len()) };
        let mut out = vec![9; 50];
        let mut reader = ShmReader::new().with_headroom(2);
        assert_eq!(reader.poll(&mut region, 4, &mut out, T0), Some(1.0));
        assert_eq!(out, [0, 0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_frame_written_during_the_copy_is_never_handed_out_torn_nor_lost() {
        for strike_in_copy in [true, false] {
            let mut r = RacyRegion::new(strike_in_copy);
            // The first frame is written before the strike is armed to fire.
            r.strike_after_stamp.set(false);
            assert!(ShmWriter::new().write(&mut r, 1.0, &[0xAA; 100], T0));
            r.strike_after_stamp.set(!strike_in_copy);
            let mut reader = ShmReader::new();
            let mut out = Vec::new();
            assert_eq!(
                reader.poll(&mut r, 100, &mut out, T0),
                None,
                "strike in copy: {strike_in_copy}"
            );
            assert_eq!(reader.stats().torn, 1);
            // The next poll gets the new frame, whole.
            assert_eq!(reader.poll(&mut r, 100, &mut out, T0), Some(2.0));
            assert!(out.iter().all(|&b| b == 0xBB));
        }
    }

    #[test]
    fn same_time_stamp_twice_is_one_frame() {
        let mut r = [0u8; 12];
        let mut reader = ShmReader::new();
        let mut w = ShmWriter::new();
        let mut out = Vec::new();
        w.write(&mut r[..], 3.0, &[1, 2, 3], T0);
        assert!(reader.poll(&mut r[..], 3, &mut out, T0).is_some());
        w.write(&mut r[..], 3.0, &[1, 2, 3], T0);
        assert!(reader.poll(&mut r[..], 3, &mut out, T0).is_none());
        assert_eq!(reader.stats().repeated, 1);
        let mut tiny = [FLAG_NEW; 4];
        assert!(reader.poll(&mut tiny[..], 3, &mut out, T0).is_none());
        assert_eq!(reader.stats().too_small, 1);
    }
}
