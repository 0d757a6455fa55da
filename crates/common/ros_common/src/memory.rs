//! Frame-sized buffers stay in the process between frames.

/// Keeps freed frame-sized buffers (reassembled frames, serialized
/// messages, decoded images, libzmq's receive buffers) in the heap for the
/// next frame instead of handing them back to the kernel and faulting fresh
/// zeroed pages in for every message: glibc serves blocks over 128 KiB with
/// mmap and trims the heap's top, and the page faults were about a tenth of
/// the AUV bridge's CPU at 240 JPEGs/s (BENCHMARKS.md). Blocks up to 8 MiB
/// (a 1080p bgr8 frame) now come from the heap, which keeps up to its peak
/// plus 64 MiB free, in at most two arenas (unless `MALLOC_ARENA_MAX` is
/// set). Call it first thing in a bridge's `main`.
pub fn keep_frame_buffers() {
    // SAFETY: mallopt only tunes glibc's allocator and takes its own locks.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 8 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
        // Each thread that allocates gets an arena of its own, up to 8 per
        // core, and each arena keeps its own freed frames: with a receiving
        // thread per UDP sensor, a swarm bridge of 8 vehicles held 188 MB
        // instead of 139. Two arenas hold what one did before. A user's own
        // MALLOC_ARENA_MAX (glibc reads it at start) is left as it is.
        if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

/// The process's memory as `/diagnostics` shows it. Since the heap keeps
/// freed frame buffers (above), resident memory stays at its high-water
/// mark and says little about what is live; what the heap hands out is what
/// a leak raises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryUsage {
    /// Resident set (VmRSS), bytes.
    pub resident: u64,
    /// Bytes the allocator has handed out and not had back.
    pub heap_in_use: u64,
    /// Bytes the allocator holds from the kernel, in use or kept free.
    pub heap_held: u64,
}

/// Now. `None` where the allocator or `/proc` cannot tell (not glibc on Linux).
pub fn usage() -> Option<MemoryUsage> {
    let resident = resident_bytes()?;
    let (heap_in_use, heap_held) = heap_bytes()?;
    Some(MemoryUsage {
        resident,
        heap_in_use,
        heap_held,
    })
}

fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn heap_bytes() -> Option<(u64, u64)> {
    // SAFETY: mallinfo2 takes the arenas' locks and only reads their counters.
    let m = unsafe { libc::mallinfo2() };
    // Blocks above the mmap threshold are mapped one by one (hblkhd).
    let in_use = m.uordblks as u64 + m.hblkhd as u64;
    let held = m.arena as u64 + m.hblkhd as u64;
    Some((in_use, held))
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn heap_bytes() -> Option<(u64, u64)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_block_shows_in_the_heap_in_use_and_leaves_it_when_freed() {
        keep_frame_buffers();
        let before = usage().expect("glibc on Linux");
        let block = vec![1u8; 64 << 20];
        let during = usage().unwrap();
        drop(std::hint::black_box(block));
        let after = usage().unwrap();
        // Other test threads allocate too: the 64 MiB block dominates.
        assert!(
            during.heap_in_use >= before.heap_in_use + (48 << 20),
            "{before:?} → {during:?}"
        );
        assert!(
            after.heap_in_use + (48 << 20) <= during.heap_in_use,
            "{during:?} → {after:?}"
        );
        assert!(during.heap_held >= during.heap_in_use);
        assert!(during.resident > 0);
    }
}
