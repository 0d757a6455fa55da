//! Faults on demand, per datagram: loss, reordering, duplication, corruption,
//! truncation and garbage, each with a rate, all from one seeded generator so
//! that a run can be reproduced. The scene's datagrams on the status port
//! have faults of their own ([`SceneFault`]).

use process_support::faults::{FaultKind, Faults};

/// The faults of RflySim's UDP datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatagramFault {
    Loss,
    Reorder,
    Duplicate,
    /// A bit flipped in the datagram's header (what a receiver can notice).
    Corrupt,
    /// A bit flipped in the payload (RflySim has no payload checksum: no
    /// receiver can notice; for testing what reaches the user).
    CorruptPayload,
    Truncate,
    /// A random datagram sent before this one.
    Garbage,
}

impl FaultKind for DatagramFault {
    const ALL: &'static [Self] = &[
        DatagramFault::Loss,
        DatagramFault::Reorder,
        DatagramFault::Duplicate,
        DatagramFault::Corrupt,
        DatagramFault::CorruptPayload,
        DatagramFault::Truncate,
        DatagramFault::Garbage,
    ];
    fn name(self) -> &'static str {
        match self {
            DatagramFault::Loss => "lost",
            DatagramFault::Reorder => "reordered",
            DatagramFault::Duplicate => "duplicated",
            DatagramFault::Corrupt => "corrupted",
            DatagramFault::CorruptPayload => "corrupted_payload",
            DatagramFault::Truncate => "truncated",
            DatagramFault::Garbage => "garbage",
        }
    }
}

/// Rates are probabilities per datagram, 0..=1.
pub type FaultConfig = process_support::faults::FaultRates<DatagramFault>;
/// What the injector did, to check against the receiver's counters.
pub type FaultCounts = process_support::faults::FaultCounts<DatagramFault>;

#[derive(Debug)]
pub struct FaultInjector {
    faults: Faults<DatagramFault>,
    held: Option<Vec<u8>>,
}

impl FaultInjector {
    pub fn new(config: FaultConfig, stream: u64) -> Self {
        Self {
            faults: Faults::new(config, stream.wrapping_mul(0xA24B_AED4_963E_E407)),
            held: None,
        }
    }

    /// What was injected since the last [`Self::take_counts`].
    pub fn take_counts(&mut self) -> FaultCounts {
        std::mem::take(&mut self.faults.counts)
    }

    /// Applies the faults to one datagram; returns what to send, in order.
    pub fn apply(&mut self, datagram: Vec<u8>) -> Vec<Vec<u8>> {
        let f = &mut self.faults;
        let mut out = Vec::with_capacity(2);
        if !f.any() {
            out.push(datagram);
            return out;
        }
        if f.roll(DatagramFault::Garbage) {
            let n = 1 + f.rng.below(256);
            out.push(f.rng.bytes(n));
        }
        if f.roll(DatagramFault::Loss) {
            out.extend(self.held.take());
            return out;
        }
        let mut d = datagram;
        const HEADER: usize = 32;
        if f.roll_if(DatagramFault::Corrupt, !d.is_empty()) {
            let i = f.rng.below(d.len().min(HEADER));
            d[i] ^= 1 << f.rng.below(8);
        }
        if f.roll_if(DatagramFault::CorruptPayload, d.len() > HEADER) {
            let i = HEADER + f.rng.below(d.len() - HEADER);
            d[i] ^= 1 << f.rng.below(8);
        }
        if f.roll_if(DatagramFault::Truncate, d.len() > 1) {
            let n = 1 + f.rng.below(d.len() - 1);
            d.truncate(n);
        }
        let dup = f.roll(DatagramFault::Duplicate);
        if self.held.is_none() && f.roll(DatagramFault::Reorder) {
            // Hold this one back; it goes out after the next datagram.
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

/// The faults of the scene's datagrams on the status port (`reqVeCrashData`,
/// `CoptReqData`, `ObjReqData`): what a receiver of port 20006 must survive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SceneFault {
    /// A random datagram sent before this one.
    Garbage,
    Truncate,
    /// A bit flipped in the checksum.
    BadChecksum,
}

impl FaultKind for SceneFault {
    const ALL: &'static [Self] = &[SceneFault::Garbage, SceneFault::Truncate, SceneFault::BadChecksum];
    fn name(self) -> &'static str {
        match self {
            SceneFault::Garbage => "garbage",
            SceneFault::Truncate => "truncated",
            SceneFault::BadChecksum => "bad_checksum",
        }
    }
}

pub type SceneFaultConfig = process_support::faults::FaultRates<SceneFault>;
pub type SceneFaultCounts = process_support::faults::FaultCounts<SceneFault>;

#[derive(Debug)]
pub struct SceneFaultInjector {
    faults: Faults<SceneFault>,
}

impl SceneFaultInjector {
    pub fn new(config: SceneFaultConfig) -> Self {
        Self {
            faults: Faults::new(config, 0x5CE7_E000),
        }
    }

    /// What was injected since the last [`Self::take_counts`].
    pub fn take_counts(&mut self) -> SceneFaultCounts {
        std::mem::take(&mut self.faults.counts)
    }

    /// Applies the faults to one datagram; returns what to send, in order.
    pub fn apply(&mut self, datagram: Vec<u8>) -> Vec<Vec<u8>> {
        let f = &mut self.faults;
        let mut out = Vec::with_capacity(2);
        if f.roll(SceneFault::Garbage) {
            let n = 1 + f.rng.below(256);
            out.push(f.rng.bytes(n));
        }
        let mut d = datagram;
        if f.roll_if(SceneFault::BadChecksum, d.len() >= 4) {
            d[f.rng.below(4)] ^= 1 << f.rng.below(8);
        }
        if f.roll_if(SceneFault::Truncate, d.len() > 1) {
            let n = 1 + f.rng.below(d.len() - 1);
            d.truncate(n);
        }
        out.push(d);
        out
    }
}

/// Gimbal neutral requests (the rates bit alone, both rates 0) that are not
/// applied, as if lost on the way: the first `first` of them, and each
/// later one with probability `share` (what a bridge must notice in the echo).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NeutralDrops {
    pub first: u64,
    pub share: f64,
    pub seed: u64,
}

/// Decides, neutral by neutral, which are dropped ([`NeutralDrops`]).
#[derive(Debug)]
pub struct NeutralDropper {
    config: NeutralDrops,
    rng: process_support::seeded_rng::Rng,
    seen: u64,
}

impl NeutralDropper {
    pub fn new(config: NeutralDrops) -> Self {
        Self {
            config,
            rng: process_support::seeded_rng::Rng::new(config.seed ^ 0x6E75_7472_616C),
            seen: 0,
        }
    }

    /// Whether the next neutral request is dropped.
    pub fn drops(&mut self) -> bool {
        self.seen += 1;
        self.seen <= self.config.first || (self.config.share > 0.0 && self.rng.unit() < self.config.share)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_faults_is_the_identity() {
        let mut f = FaultInjector::new(FaultConfig::default(), 0);
        assert_eq!(f.apply(vec![1, 2, 3]), vec![vec![1, 2, 3]]);
        assert_eq!(f.take_counts(), FaultCounts::default());
    }

    #[test]
    fn rates_are_honoured_and_reproducible() {
        let cfg = FaultConfig::default()
            .with(DatagramFault::Loss, 0.1)
            .with(DatagramFault::Duplicate, 0.05)
            .with(DatagramFault::Reorder, 0.05)
            .seeded(42);
        let run = || {
            let mut f = FaultInjector::new(cfg, 1);
            let sent: Vec<Vec<u8>> = (0..10_000u32).flat_map(|i| f.apply(i.to_le_bytes().to_vec())).collect();
            (sent, f.take_counts())
        };
        let (a, ca) = run();
        let (b, cb) = run();
        assert_eq!(a, b);
        assert_eq!(ca, cb);
        assert!((800..1200).contains(&ca.get(DatagramFault::Loss)), "{ca:?}");
        assert!((300..700).contains(&ca.get(DatagramFault::Duplicate)), "{ca:?}");
        assert!(ca.get(DatagramFault::Reorder) > 300);
    }

    #[test]
    fn scene_faults_leave_a_datagram_that_no_reader_takes_for_a_good_one() {
        use rflysim_proto::scene::{SilIntFloat, StatusDatagram};
        // Its checksum is no other struct's at any shorter length.
        let good = SilIntFloat {
            copter_id: 1,
            ints: [0; 8],
            floats: [0.0; 20],
        }
        .encode();
        for fault in [SceneFault::Truncate, SceneFault::BadChecksum] {
            let mut f = SceneFaultInjector::new(SceneFaultConfig::default().with(fault, 1.0).seeded(3));
            for _ in 0..100 {
                let out = f.apply(good.clone());
                assert_eq!(out.len(), 1);
                assert!(StatusDatagram::decode(&out[0]).is_err(), "{fault:?}: {:?}", out[0]);
            }
            assert_eq!(f.take_counts().get(fault), 100);
        }
        let mut f = SceneFaultInjector::new(SceneFaultConfig::default().with(SceneFault::Garbage, 1.0));
        let out = f.apply(good.clone());
        assert_eq!((out.len(), &out[1]), (2, &good));
        let mut none = SceneFaultInjector::new(SceneFaultConfig::default());
        assert_eq!(none.apply(good.clone()), vec![good]);
    }

    #[test]
    fn neutral_drops_take_the_first_ones_then_a_share() {
        let mut d = NeutralDropper::new(NeutralDrops {
            first: 2,
            ..Default::default()
        });
        assert_eq!(
            (0..5).map(|_| d.drops()).collect::<Vec<_>>(),
            [true, true, false, false, false]
        );
        let mut all = NeutralDropper::new(NeutralDrops {
            share: 1.0,
            ..Default::default()
        });
        assert!((0..100).all(|_| all.drops()));
        let mut half = NeutralDropper::new(NeutralDrops {
            share: 0.5,
            seed: 7,
            ..Default::default()
        });
        let dropped = (0..10_000).filter(|_| half.drops()).count();
        assert!((4_500..5_500).contains(&dropped), "{dropped}");
        assert!(!NeutralDropper::new(NeutralDrops::default()).drops());
    }

    #[test]
    fn reordering_swaps_neighbours() {
        let cfg = FaultConfig::default().with(DatagramFault::Reorder, 1.0).seeded(1);
        let mut f = FaultInjector::new(cfg, 0);
        assert!(f.apply(vec![1]).is_empty());
        assert_eq!(f.apply(vec![2]), vec![vec![2], vec![1]]);
    }
}
