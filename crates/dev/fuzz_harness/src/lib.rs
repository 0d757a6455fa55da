//! What the wire crates' bounded in-process fuzz runs share (each crate
//! keeps its own seeds and mutations, which follow its protocol):
//!
//! - [`CountingAlloc`], to install as the test binary's global allocator: it
//!   records the largest single allocation made by a thread inside
//!   [`measured`] — only there, because the test harness's own threads
//!   allocate too (the output of other tests), whatever lock a test holds;
//! - [`Rng`] (`seeded_rng`'s), deterministic;
//! - [`iterations`], from an environment variable for longer runs;
//! - [`one_at_a_time`]: the high-water mark is process-wide, so targets
//!   are measured one after the other.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

static LARGEST: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static MEASURING: Cell<bool> = const { Cell::new(false) };
}

fn note(size: usize) {
    if MEASURING.with(Cell::get) {
        LARGEST.fetch_max(size, Ordering::Relaxed);
    }
}

/// The system allocator, counting (see the crate's documentation).
#[derive(Debug)]
pub struct CountingAlloc;

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` with this thread's allocations counted.
pub fn measured<T>(f: impl FnOnce() -> T) -> T {
    MEASURING.with(|m| m.set(true));
    let out = f();
    MEASURING.with(|m| m.set(false));
    out
}

/// Forgets the largest allocation seen so far.
pub fn reset_largest() {
    LARGEST.store(0, Ordering::Relaxed);
}

/// The largest single allocation made inside [`measured`] since the reset.
pub fn largest() -> usize {
    LARGEST.load(Ordering::Relaxed)
}

pub use process_support::seeded_rng::Rng;

/// Iterations per target: `var` from the environment, else 20 000.
pub fn iterations(var: &str) -> usize {
    std::env::var(var).ok().and_then(|v| v.parse().ok()).unwrap_or(20_000)
}

/// Held for a whole fuzz test, so that no other target runs while one is measured.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// How [`mutate_bytes`] mutates: what it writes over part of the input, how
/// many mutations at most, how long a random replacement may be.
#[derive(Debug, Clone, Copy)]
pub struct Mutations<'a> {
    pub overwrite: Overwrite<'a>,
    pub max_rounds: usize,
    pub max_garbage: usize,
}

/// What a protocol's fuzz run writes over its inputs.
#[derive(Debug, Clone, Copy)]
pub enum Overwrite<'a> {
    /// Binary wire: an extreme value written over four bytes.
    Extremes(&'a [[u8; 4]]),
    /// Text wire: a run of up to 7 bytes replaced by one of these tokens.
    Tokens(&'a [&'a [u8]]),
}

/// JSON fragments that change a value's type, overflow a number's type or
/// break the syntax: what the JSON wires' runs write over their inputs.
pub const JSON_TOKENS: [&[u8]; 17] = [
    b"null",
    b"true",
    b"\"x\"",
    b"[]",
    b"{}",
    b"NaN",
    b"-Infinity",
    b"1e999",
    b"3.5e38",
    b"-2147483649",
    b"4294967296",
    b"-0",
    b"\"",
    b"{",
    b"}",
    b",",
    b"\\u",
];

/// `seed` after one to `max_rounds` mutations: a flipped bit, truncation,
/// random bytes appended, an [`Overwrite`], a splice with one of `others`, or
/// replacement by random bytes.
pub fn mutate_bytes(rng: &mut Rng, seed: &[u8], others: &[Vec<u8>], m: &Mutations<'_>) -> Vec<u8> {
    let mut d = seed.to_vec();
    for _ in 0..1 + rng.below(m.max_rounds) {
        match rng.below(7) {
            0 if !d.is_empty() => {
                let i = rng.below(d.len());
                d[i] ^= 1 << rng.below(8);
            }
            1 => d.truncate(rng.below(d.len() + 1)),
            2 => {
                let n = rng.below(64);
                d.extend((0..n).map(|_| rng.next_u64() as u8));
            }
            3 => match m.overwrite {
                Overwrite::Extremes(extremes) if d.len() >= 4 && !extremes.is_empty() => {
                    let i = rng.below(d.len() - 3);
                    d[i..i + 4].copy_from_slice(&extremes[rng.below(extremes.len())]);
                }
                Overwrite::Tokens(tokens) if !d.is_empty() && !tokens.is_empty() => {
                    let i = rng.below(d.len());
                    let end = (i + rng.below(8)).min(d.len());
                    d.splice(i..end, tokens[rng.below(tokens.len())].iter().copied());
                }
                _ => {}
            },
            4 if !others.is_empty() => {
                let o = &others[rng.below(others.len())];
                let cut = rng.below(d.len() + 1);
                d.truncate(cut);
                d.extend_from_slice(&o[rng.below(o.len() + 1)..]);
            }
            5 => d = (0..rng.below(m.max_garbage)).map(|_| rng.next_u64() as u8).collect(),
            _ => {}
        }
    }
    d
}

/// A whole fuzz run of one stateless decoder: `target` on `iterations(var)`
/// mutations of `seeds`, each followed by a known-good seed that `recover`
/// checks (its index and bytes); then asserts that no single allocation was
/// above `per_byte` × the largest input, plus a constant.
pub fn run_recovering(
    name: &str,
    var: &str,
    seeds: &[Vec<u8>],
    mutations: &Mutations<'_>,
    per_byte: usize,
    mut target: impl FnMut(&[u8]),
    mut recover: impl FnMut(usize, &[u8]),
) {
    let mut rng = Rng::from_state(0x9E37_79B9_7F4A_7C15 ^ name.len() as u64);
    let mut largest_input = seeds.iter().map(Vec::len).max().unwrap_or(0);
    reset_largest();
    for _ in 0..iterations(var) {
        let seed = &seeds[rng.below(seeds.len())];
        let input = mutate_bytes(&mut rng, seed, seeds, mutations);
        largest_input = largest_input.max(input.len());
        measured(|| target(&input));
        let good = rng.below(seeds.len());
        recover(good, &seeds[good]);
    }
    let bound = per_byte * largest_input + 4096;
    assert!(
        largest() <= bound,
        "{name}: an allocation of {} bytes (bound {bound}, largest input {largest_input})",
        largest()
    );
}
