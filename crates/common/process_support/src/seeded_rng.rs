//! xorshift64*: deterministic for a seed and dependency-free, shared by the
//! emulators' fault injectors (`--seed` reproduces a run) and the wire
//! crates' fuzz runs. Not for anything that must be unpredictable.

#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for any seed (0 included): the seed is mixed first.
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A generator starting at exactly `state` (not 0).
    pub fn from_state(state: u64) -> Self {
        Rng(state)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// In 0..n (0 for n = 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_reproduces_its_run_and_values_stay_in_range() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        assert_eq!(
            (0..100).map(|_| a.next_u64()).collect::<Vec<_>>(),
            (0..100).map(|_| b.next_u64()).collect::<Vec<_>>()
        );
        assert_ne!(Rng::new(0).next_u64(), 0);
        let mut r = Rng::from_state(0x9E37_79B9_7F4A_7C15);
        for _ in 0..1000 {
            assert!((0.0..1.0).contains(&r.unit()));
            assert!(r.below(10) < 10);
        }
        assert_eq!(r.below(0), 0);
        assert_eq!(r.bytes(5).len(), 5);
    }
}
