//! Faults on demand, per message sent: junk messages, wrong part counts,
//! wrong lengths and corrupt JPEGs, each with a rate, all from one seeded
//! generator so that a run can be reproduced.

use process_support::faults::{FaultKind, Faults};

/// The faults of the AUV simulator's messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuvFault {
    /// A message of random parts, starting with a valid AUV id, sent before this one.
    Junk,
    /// This message with one part missing or one part too many.
    WrongParts,
    /// This message with a two-byte id (images) or a payload of the wrong length (telemetry).
    WrongLength,
    /// One of this image message's JPEGs cut short (its end-of-image marker lost).
    CorruptJpeg,
}

impl FaultKind for AuvFault {
    const ALL: &'static [Self] = &[
        AuvFault::Junk,
        AuvFault::WrongParts,
        AuvFault::WrongLength,
        AuvFault::CorruptJpeg,
    ];
    fn name(self) -> &'static str {
        match self {
            AuvFault::Junk => "junk",
            AuvFault::WrongParts => "wrong_parts",
            AuvFault::WrongLength => "wrong_length",
            AuvFault::CorruptJpeg => "corrupt_jpeg",
        }
    }
}

/// Rates are probabilities per message, 0..=1.
pub type FaultConfig = process_support::faults::FaultRates<AuvFault>;
/// What the injector did, to check against a receiver's counters.
pub type FaultCounts = process_support::faults::FaultCounts<AuvFault>;

/// Which stream a message belongs to (the faults that apply differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Images,
    Telemetry,
}

#[derive(Debug)]
pub struct FaultInjector {
    faults: Faults<AuvFault>,
}

pub type Parts = Vec<Vec<u8>>;

impl FaultInjector {
    pub fn new(config: FaultConfig, stream: Stream) -> Self {
        let salt = match stream {
            Stream::Images => 0xA24B_AED4_963E_E407,
            Stream::Telemetry => 0x9FB2_1C65_1E98_DF25,
        };
        FaultInjector {
            faults: Faults::new(config, salt),
        }
    }

    pub fn counts(&self) -> FaultCounts {
        self.faults.counts
    }

    /// Applies the faults to one good message; returns what to send, in order.
    pub fn apply(&mut self, stream: Stream, message: Parts) -> Vec<Parts> {
        let f = &mut self.faults;
        if !f.any() {
            return vec![message];
        }
        let mut out = Vec::with_capacity(2);
        let id = message.first().and_then(|p| p.first()).copied().unwrap_or(0);
        if f.roll(AuvFault::Junk) {
            let mut junk = vec![vec![id]];
            for _ in 0..f.rng.below(4) {
                // Odd lengths: never a telemetry payload that happens to be valid.
                let n = 2 * f.rng.below(32) + 1;
                junk.push(f.rng.bytes(n));
            }
            out.push(junk);
        }
        let mut m = message;
        if f.roll(AuvFault::WrongParts) {
            if f.rng.below(2) == 0 {
                m.pop();
            } else {
                let n = f.rng.below(16);
                m.push(f.rng.bytes(n));
            }
        } else if f.roll(AuvFault::WrongLength) {
            match stream {
                Stream::Images => m[0].push(id),
                Stream::Telemetry => {
                    let payload = &mut m[1];
                    if f.rng.below(2) == 0 {
                        payload.truncate(f.rng.below(payload.len()));
                    } else {
                        let n = 1 + f.rng.below(8);
                        payload.extend(f.rng.bytes(n));
                    }
                }
            }
        } else if stream == Stream::Images && f.roll(AuvFault::CorruptJpeg) {
            let jpeg = &mut m[1 + f.rng.below(2)];
            jpeg.truncate(f.rng.below(jpeg.len()));
            // A cut that happens to end on an end-of-image marker would still pass.
            if jpeg.ends_with(&[0xFF, 0xD9]) {
                jpeg.pop();
            }
        }
        out.push(m);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use auv_proto::image::{ImageLimits, ImageMessage};
    use auv_proto::telemetry::Telemetry;

    fn image_message() -> Parts {
        let jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 1, 2, 0xFF, 0xD9];
        vec![vec![3], jpeg.clone(), jpeg]
    }

    fn telemetry_message() -> Parts {
        let t = Telemetry {
            auv_id: 3,
            x: 1.0,
            y: 2.0,
            z: 3.0,
            yaw: 0.0,
            pitch: 0.0,
            roll: 0.0,
        };
        vec![t.id_part().to_vec(), t.payload().to_vec()]
    }

    #[test]
    fn no_faults_is_the_identity() {
        let mut f = FaultInjector::new(FaultConfig::default(), Stream::Images);
        assert_eq!(f.apply(Stream::Images, image_message()), vec![image_message()]);
        assert_eq!(f.counts(), FaultCounts::default());
    }

    /// Every injected fault is one that a receiver detects, of the kind it was meant to be.
    #[test]
    fn every_fault_is_detectable_and_of_its_kind() {
        let cfg = FaultConfig::default()
            .with(AuvFault::Junk, 0.2)
            .with(AuvFault::WrongParts, 0.2)
            .with(AuvFault::WrongLength, 0.2)
            .with(AuvFault::CorruptJpeg, 0.3)
            .seeded(7);
        let mut images = FaultInjector::new(cfg, Stream::Images);
        let mut kinds = std::collections::HashMap::new();
        let mut good = 0;
        for _ in 0..5000 {
            for m in images.apply(Stream::Images, image_message()) {
                match ImageMessage::parse(m, &ImageLimits::default()) {
                    Ok(_) => good += 1,
                    Err(e) => *kinds.entry(e.kind()).or_insert(0u64) += 1,
                }
            }
        }
        let c = images.counts();
        assert_eq!(
            kinds.get("wrong_id_length").copied().unwrap_or(0),
            c.get(AuvFault::WrongLength)
        );
        assert_eq!(
            kinds.get("corrupt_jpeg").copied().unwrap_or(0),
            c.get(AuvFault::CorruptJpeg) + junk_jpeg(&kinds, c)
        );
        assert_eq!(kinds.values().sum::<u64>(), c.total());
        assert_eq!(
            good,
            5000 - (c.get(AuvFault::WrongParts) + c.get(AuvFault::WrongLength) + c.get(AuvFault::CorruptJpeg))
        );
        assert!((800..1200).contains(&c.get(AuvFault::Junk)), "{c:?}");

        let mut telemetry = FaultInjector::new(cfg, Stream::Telemetry);
        let mut bad = 0;
        for _ in 0..5000 {
            for m in telemetry.apply(Stream::Telemetry, telemetry_message()) {
                bad += u64::from(Telemetry::parse(&m).is_err());
            }
        }
        assert_eq!(bad, telemetry.counts().total());
        assert_eq!(telemetry.counts().get(AuvFault::CorruptJpeg), 0);
    }

    /// Junk of three parts is refused for its JPEGs; the rest for its part count.
    fn junk_jpeg(kinds: &std::collections::HashMap<&str, u64>, c: FaultCounts) -> u64 {
        let part_count = kinds.get("wrong_part_count").copied().unwrap_or(0);
        c.get(AuvFault::Junk) + c.get(AuvFault::WrongParts) - part_count
    }

    #[test]
    fn reproducible_for_a_seed() {
        let cfg = FaultConfig::default()
            .with(AuvFault::Junk, 0.5)
            .with(AuvFault::WrongParts, 0.5)
            .seeded(3);
        let run = || {
            let mut f = FaultInjector::new(cfg, Stream::Telemetry);
            (0..100)
                .flat_map(|_| f.apply(Stream::Telemetry, telemetry_message()))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}
