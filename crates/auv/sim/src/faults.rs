//! Faults on demand, per message sent: junk messages, wrong part counts,
//! wrong lengths and corrupt JPEGs, each with a rate, all from one seeded
//! generator so that a run can be reproduced.

use process_support::seeded_rng::Rng;

/// Rates are probabilities per message, 0..=1.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FaultConfig {
    /// A message of random parts, starting with a valid AUV id, sent before this one.
    pub junk: f64,
    /// This message with one part missing or one part too many.
    pub wrong_parts: f64,
    /// This message with a two-byte id (images) or a payload of the wrong length (telemetry).
    pub wrong_length: f64,
    /// One of this image message's JPEGs cut short (its end-of-image marker lost).
    pub corrupt_jpeg: f64,
    pub seed: u64,
}

impl FaultConfig {
    pub fn any(&self) -> bool {
        self.junk + self.wrong_parts + self.wrong_length + self.corrupt_jpeg > 0.0
    }
}

/// What the injector did, to check against a receiver's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultCounts {
    pub junk: u64,
    pub wrong_parts: u64,
    pub wrong_length: u64,
    pub corrupt_jpeg: u64,
}

impl FaultCounts {
    pub fn total(&self) -> u64 {
        self.junk + self.wrong_parts + self.wrong_length + self.corrupt_jpeg
    }

    pub fn add(&mut self, o: &FaultCounts) {
        self.junk += o.junk;
        self.wrong_parts += o.wrong_parts;
        self.wrong_length += o.wrong_length;
        self.corrupt_jpeg += o.corrupt_jpeg;
    }
}

/// Which stream a message belongs to (the faults that apply differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Images,
    Telemetry,
}

#[derive(Debug)]
pub struct FaultInjector {
    config: FaultConfig,
    rng: Rng,
    pub counts: FaultCounts,
}

pub type Parts = Vec<Vec<u8>>;

impl FaultInjector {
    pub fn new(config: FaultConfig, stream: Stream) -> Self {
        let salt = match stream {
            Stream::Images => 0xA24B_AED4_963E_E407,
            Stream::Telemetry => 0x9FB2_1C65_1E98_DF25,
        };
        FaultInjector {
            config,
            rng: Rng::new(config.seed ^ salt),
            counts: FaultCounts::default(),
        }
    }

    /// Applies the faults to one good message; returns what to send, in order.
    pub fn apply(&mut self, stream: Stream, message: Parts) -> Vec<Parts> {
        let c = self.config;
        if !c.any() {
            return vec![message];
        }
        let mut out = Vec::with_capacity(2);
        let id = message.first().and_then(|p| p.first()).copied().unwrap_or(0);
        if self.rng.unit() < c.junk {
            self.counts.junk += 1;
            let mut junk = vec![vec![id]];
            for _ in 0..self.rng.below(4) {
                // Odd lengths: never a telemetry payload that happens to be valid.
                let n = 2 * self.rng.below(32) + 1;
                junk.push(self.rng.bytes(n));
            }
            out.push(junk);
        }
        let mut m = message;
        if self.rng.unit() < c.wrong_parts {
            self.counts.wrong_parts += 1;
            if self.rng.below(2) == 0 {
                m.pop();
            } else {
                let n = self.rng.below(16);
                m.push(self.rng.bytes(n));
            }
        } else if self.rng.unit() < c.wrong_length {
            self.counts.wrong_length += 1;
            match stream {
                Stream::Images => m[0].push(id),
                Stream::Telemetry => {
                    let payload = &mut m[1];
                    if self.rng.below(2) == 0 {
                        payload.truncate(self.rng.below(payload.len()));
                    } else {
                        let n = 1 + self.rng.below(8);
                        payload.extend(self.rng.bytes(n));
                    }
                }
            }
        } else if stream == Stream::Images && self.rng.unit() < c.corrupt_jpeg {
            self.counts.corrupt_jpeg += 1;
            let jpeg = &mut m[1 + self.rng.below(2)];
            jpeg.truncate(self.rng.below(jpeg.len()));
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
        assert_eq!(f.counts, FaultCounts::default());
    }

    /// Every injected fault is one that a receiver detects, of the kind it was meant to be.
    #[test]
    fn every_fault_is_detectable_and_of_its_kind() {
        let cfg = FaultConfig {
            junk: 0.2,
            wrong_parts: 0.2,
            wrong_length: 0.2,
            corrupt_jpeg: 0.3,
            seed: 7,
        };
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
        let c = images.counts;
        assert_eq!(kinds.get("wrong_id_length").copied().unwrap_or(0), c.wrong_length);
        assert_eq!(
            kinds.get("corrupt_jpeg").copied().unwrap_or(0),
            c.corrupt_jpeg + junk_jpeg(&kinds, c)
        );
        assert_eq!(kinds.values().sum::<u64>(), c.total());
        assert_eq!(good, 5000 - (c.wrong_parts + c.wrong_length + c.corrupt_jpeg));
        assert!((800..1200).contains(&c.junk), "{c:?}");

        let mut telemetry = FaultInjector::new(cfg, Stream::Telemetry);
        let mut bad = 0;
        for _ in 0..5000 {
            for m in telemetry.apply(Stream::Telemetry, telemetry_message()) {
                bad += u64::from(Telemetry::parse(&m).is_err());
            }
        }
        assert_eq!(bad, telemetry.counts.total());
        assert_eq!(telemetry.counts.corrupt_jpeg, 0);
    }

    /// Junk of three parts is refused for its JPEGs; the rest for its part count.
    fn junk_jpeg(kinds: &std::collections::HashMap<&str, u64>, c: FaultCounts) -> u64 {
        let part_count = kinds.get("wrong_part_count").copied().unwrap_or(0);
        c.junk + c.wrong_parts - part_count
    }

    #[test]
    fn reproducible_for_a_seed() {
        let cfg = FaultConfig {
            junk: 0.5,
            wrong_parts: 0.5,
            seed: 3,
            ..Default::default()
        };
        let run = || {
            let mut f = FaultInjector::new(cfg, Stream::Telemetry);
            (0..100)
                .flat_map(|_| f.apply(Stream::Telemetry, telemetry_message()))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}
