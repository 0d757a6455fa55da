//! Faults on demand, per datagram: loss, reordering, duplication, corruption,
//! truncation and garbage, each with a rate, all from one seeded generator so
//! that a run can be reproduced.

use process_support::seeded_rng::Rng;

/// Rates are probabilities per datagram, 0..=1.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FaultConfig {
    pub loss: f64,
    pub reorder: f64,
    pub duplicate: f64,
    /// A bit flipped in the datagram's header (what a receiver can notice).
    pub corrupt: f64,
    /// A bit flipped in the payload (RflySim has no payload checksum: no
    /// receiver can notice; for testing what reaches the user).
    pub corrupt_payload: f64,
    pub truncate: f64,
    /// A random datagram sent before this one.
    pub garbage: f64,
    pub seed: u64,
}

impl FaultConfig {
    pub fn any(&self) -> bool {
        self.loss + self.reorder + self.duplicate + self.corrupt + self.corrupt_payload + self.truncate + self.garbage
            > 0.0
    }
}

/// What the injector did, to check against the receiver's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultCounts {
    pub lost: u64,
    pub reordered: u64,
    pub duplicated: u64,
    pub corrupted: u64,
    pub truncated: u64,
    pub garbage: u64,
}

impl std::ops::AddAssign for FaultCounts {
    /// Adds another injector's counts (every stream has its own injector).
    fn add_assign(&mut self, o: FaultCounts) {
        self.lost += o.lost;
        self.reordered += o.reordered;
        self.duplicated += o.duplicated;
        self.corrupted += o.corrupted;
        self.truncated += o.truncated;
        self.garbage += o.garbage;
    }
}

#[derive(Debug)]
pub struct FaultInjector {
    config: FaultConfig,
    rng: Rng,
    held: Option<Vec<u8>>,
    pub counts: FaultCounts,
}

impl FaultInjector {
    pub fn new(config: FaultConfig, stream: u64) -> Self {
        Self {
            config,
            rng: Rng::new(config.seed ^ stream.wrapping_mul(0xA24B_AED4_963E_E407)),
            held: None,
            counts: Default::default(),
        }
    }

    /// Applies the faults to one datagram; returns what to send, in order.
    pub fn apply(&mut self, datagram: Vec<u8>) -> Vec<Vec<u8>> {
        let c = self.config;
        let mut out = Vec::with_capacity(2);
        if !c.any() {
            out.push(datagram);
            return out;
        }
        if self.rng.unit() < c.garbage {
            self.counts.garbage += 1;
            let n = 1 + self.rng.below(256);
            out.push(self.rng.bytes(n));
        }
        if self.rng.unit() < c.loss {
            self.counts.lost += 1;
            out.extend(self.held.take());
            return out;
        }
        let mut d = datagram;
        const HEADER: usize = 32;
        if self.rng.unit() < c.corrupt && !d.is_empty() {
            self.counts.corrupted += 1;
            let i = self.rng.below(d.len().min(HEADER));
            d[i] ^= 1 << self.rng.below(8);
        }
        if self.rng.unit() < c.corrupt_payload && d.len() > HEADER {
            self.counts.corrupted += 1;
            let i = HEADER + self.rng.below(d.len() - HEADER);
            d[i] ^= 1 << self.rng.below(8);
        }
        if self.rng.unit() < c.truncate && d.len() > 1 {
            self.counts.truncated += 1;
            let n = 1 + self.rng.below(d.len() - 1);
            d.truncate(n);
        }
        let dup = self.rng.unit() < c.duplicate;
        if dup {
            self.counts.duplicated += 1;
        }
        if self.held.is_none() && self.rng.unit() < c.reorder {
            // Hold this one back; it goes out after the next datagram.
            self.counts.reordered += 1;
            self.held = Some(d);
            return out;
        }
        if dup {
            out.push(d.clone());
        }
        out.push(d);
        out.extend(self.held.take());
        out
    }

    /// What is still held back (sent at the end of a frame so no frame waits forever).
    pub fn flush(&mut self) -> Option<Vec<u8>> {
        self.held.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_faults_is_the_identity() {
        let mut f = FaultInjector::new(FaultConfig::default(), 0);
        assert_eq!(f.apply(vec![1, 2, 3]), vec![vec![1, 2, 3]]);
        assert_eq!(f.counts, FaultCounts::default());
    }

    #[test]
    fn counts_of_several_streams_add_field_by_field() {
        let one = FaultCounts {
            lost: 1,
            reordered: 2,
            duplicated: 3,
            corrupted: 4,
            truncated: 5,
            garbage: 6,
        };
        let mut total = one;
        total += one;
        assert_eq!(
            total,
            FaultCounts {
                lost: 2,
                reordered: 4,
                duplicated: 6,
                corrupted: 8,
                truncated: 10,
                garbage: 12,
            }
        );
    }

    #[test]
    fn rates_are_honoured_and_reproducible() {
        let cfg = FaultConfig {
            loss: 0.1,
            duplicate: 0.05,
            reorder: 0.05,
            seed: 42,
            ..Default::default()
        };
        let run = || {
            let mut f = FaultInjector::new(cfg, 1);
            let sent: Vec<Vec<u8>> = (0..10_000u32).flat_map(|i| f.apply(i.to_le_bytes().to_vec())).collect();
            (sent, f.counts)
        };
        let (a, ca) = run();
        let (b, cb) = run();
        assert_eq!(a, b);
        assert_eq!(ca, cb);
        assert!((800..1200).contains(&ca.lost), "{ca:?}");
        assert!((300..700).contains(&ca.duplicated), "{ca:?}");
        assert!(ca.reordered > 300);
    }

    #[test]
    fn reordering_swaps_neighbours() {
        let cfg = FaultConfig {
            reorder: 1.0,
            seed: 1,
            ..Default::default()
        };
        let mut f = FaultInjector::new(cfg, 0);
        assert!(f.apply(vec![1]).is_empty());
        assert_eq!(f.apply(vec![2]), vec![vec![2], vec![1]]);
    }
}
