//! Frame-sized buffers stay in the process between frames.

/// Keeps freed frame-sized buffers (reassembled frames, serialized
/// messages, decoded images, libzmq's receive buffers) in the heap for the
/// next frame instead of handing them back to the kernel and faulting fresh
/// zeroed pages in for every message: glibc serves blocks over 128 KiB with
/// mmap and trims the heap's top, and the page faults were about a tenth of
/// the AUV bridge's CPU at 240 JPEGs/s (BENCHMARKS.md). Blocks up to 8 MiB
/// (a 1080p bgr8 frame) now come from the heap, which keeps up to its peak
/// plus 64 MiB free. Call it first thing in a bridge's `main`.
pub fn keep_frame_buffers() {
    // SAFETY: mallopt only tunes glibc's allocator and takes its own locks.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 8 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}
