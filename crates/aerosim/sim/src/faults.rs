//! Faults on demand, each with a probability per record, from one seeded
//! generator: a bad record is sent *before* the good one it stands in
//! front of, so that a receiver that recovers loses nothing.

use process_support::faults::{FaultKind, Faults};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AeroSimFault {
    /// A record of random bytes.
    Junk,
    /// An envelope whose `type_name` names another type.
    WrongType,
    /// An envelope cut short.
    Truncated,
    /// A camera image whose JPEG is broken (image records).
    CorruptJpeg,
}

impl FaultKind for AeroSimFault {
    const ALL: &'static [Self] = &[
        AeroSimFault::Junk,
        AeroSimFault::WrongType,
        AeroSimFault::Truncated,
        AeroSimFault::CorruptJpeg,
    ];
    fn name(self) -> &'static str {
        match self {
            AeroSimFault::Junk => "junk",
            AeroSimFault::WrongType => "wrong_type",
            AeroSimFault::Truncated => "truncated",
            AeroSimFault::CorruptJpeg => "corrupt_jpeg",
        }
    }
}

pub type FaultRates = process_support::faults::FaultRates<AeroSimFault>;
pub type FaultCounts = process_support::faults::FaultCounts<AeroSimFault>;

/// The bad records to send before a good JSON `record` (none, mostly).
pub fn before_json(faults: &mut Faults<AeroSimFault>, record: &[u8], wrong_type: &[u8]) -> Vec<Vec<u8>> {
    let mut bad = Vec::new();
    if faults.roll(AeroSimFault::Junk) {
        let n = 1 + faults.rng.below(256);
        bad.push(faults.rng.bytes(n));
    }
    if faults.roll(AeroSimFault::WrongType) {
        bad.push(wrong_type.to_vec());
    }
    if faults.roll_if(AeroSimFault::Truncated, record.len() > 1) {
        let cut = 1 + faults.rng.below(record.len() - 1);
        bad.push(record[..cut].to_vec());
    }
    bad
}

/// A broken JPEG to send before a good image record, when the fault strikes.
pub fn corrupt_jpeg(faults: &mut Faults<AeroSimFault>, jpeg: &[u8]) -> Option<Vec<u8>> {
    if !faults.roll(AeroSimFault::CorruptJpeg) {
        return None;
    }
    Some(if faults.rng.below(2) == 0 {
        jpeg[..jpeg.len() / 2].to_vec()
    } else {
        let n = jpeg.len().min(4096);
        faults.rng.bytes(n)
    })
}
