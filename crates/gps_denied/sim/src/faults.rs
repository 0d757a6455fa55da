//! Faults on demand, each with a probability per telemetry datagram, all
//! from one seeded generator so that a run can be reproduced: junk
//! datagrams, truncated JSON, parts of the wrong type, missing parts, bad
//! base64 and corrupt JPEGs (the last two only in frames with an image).

use process_support::seeded_rng::Rng;

use gps_denied_proto::image::{decode_base64_jpeg, encode_base64};
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FaultRates {
    /// A datagram of random bytes sent before the frame.
    pub junk: f64,
    /// The frame's JSON cut short.
    pub truncate: f64,
    /// One part replaced by a value of the wrong type.
    pub wrong_types: f64,
    /// One part removed.
    pub missing_fields: f64,
    /// The image's base64 broken.
    pub bad_base64: f64,
    /// The image's bytes broken: not a JPEG at all, or cut in half.
    pub corrupt_jpeg: f64,
    pub seed: u64,
}

impl FaultRates {
    pub fn any(&self) -> bool {
        self.junk + self.truncate + self.wrong_types + self.missing_fields + self.bad_base64 + self.corrupt_jpeg > 0.0
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultCounts {
    pub junk: u64,
    pub truncated: u64,
    pub wrong_types: u64,
    pub missing_fields: u64,
    pub bad_base64: u64,
    pub corrupt_jpeg: u64,
}

impl std::fmt::Display for FaultCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "junk {} truncated {} wrong_types {} missing_fields {} bad_base64 {} corrupt_jpeg {}",
            self.junk, self.truncated, self.wrong_types, self.missing_fields, self.bad_base64, self.corrupt_jpeg
        )
    }
}

/// JSON pointers of the parts faults pick from.
const PARTS: [&str; 11] = [
    "/imu/orientation",
    "/imu/angular_velocity",
    "/imu/linear_acceleration",
    "/altimeter/altitude",
    "/altimeter/vertical_velocity",
    "/velocity",
    "/landing_pad",
    "/camera/width",
    "/landed",
    "/timestamp",
    "/imu",
];

#[derive(Debug)]
pub struct FaultInjector {
    rates: FaultRates,
    rng: Rng,
    pub counts: FaultCounts,
}

fn remove_pointer(v: &mut Value, pointer: &str) -> bool {
    let (parent, key) = pointer.rsplit_once('/').expect("pointers start with /");
    match v.pointer_mut(if parent.is_empty() { "" } else { parent }) {
        Some(Value::Object(o)) => o.remove(key).is_some(),
        _ => false,
    }
}

impl FaultInjector {
    pub fn new(rates: FaultRates) -> Self {
        Self {
            rates,
            rng: Rng::new(rates.seed),
            counts: FaultCounts::default(),
        }
    }

    fn roll(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.unit() < p
    }

    /// Faults inside the JSON object of one drone frame.
    pub fn corrupt_value(&mut self, v: &mut Value) {
        if self.roll(self.rates.wrong_types) {
            let part = PARTS[self.rng.below(PARTS.len())];
            // A value of some other type than the part's.
            let wrong = match self.rng.below(4) {
                0 => json!("not a number"),
                1 => json!([1, 2, 3]),
                2 if part != "/landed" => json!(true),
                _ => json!({"unexpected": {}}),
            };
            if let Some(slot) = v.pointer_mut(part) {
                *slot = wrong;
                self.counts.wrong_types += 1;
            }
        }
        if self.roll(self.rates.missing_fields) && remove_pointer(v, PARTS[self.rng.below(PARTS.len())]) {
            self.counts.missing_fields += 1;
        }
        let Some(Value::String(image)) = v.pointer_mut("/camera/image") else {
            return;
        };
        if self.roll(self.rates.bad_base64) && !image.is_empty() {
            // Characters outside the alphabet, or a length no base64 has.
            if self.rng.below(2) == 0 {
                let at = self.rng.below(image.len());
                image.replace_range(at..at + 1, "*");
            } else {
                // 4k + 1 characters: no padding rule allows that.
                let keep = (image.len() / 4 * 4).saturating_sub(3).max(1);
                image.truncate(keep);
            }
            self.counts.bad_base64 += 1;
        }
        if self.roll(self.rates.corrupt_jpeg) {
            if let Ok(mut jpeg) = decode_base64_jpeg(image, usize::MAX) {
                if self.rng.below(2) == 0 {
                    jpeg[..2].copy_from_slice(b"GI");
                } else {
                    jpeg.truncate(jpeg.len() / 2);
                }
                *image = encode_base64(&jpeg);
                self.counts.corrupt_jpeg += 1;
            }
        }
    }

    /// Faults on the encoded frame: what to send, in order.
    pub fn datagrams(&mut self, mut frame: Vec<u8>) -> Vec<Vec<u8>> {
        let mut out = Vec::with_capacity(2);
        if self.roll(self.rates.junk) {
            let n = 1 + self.rng.below(512);
            out.push(self.rng.bytes(n));
            self.counts.junk += 1;
        }
        if self.roll(self.rates.truncate) && frame.len() > 1 {
            // Any proper prefix of an object's text is not JSON.
            frame.truncate(1 + self.rng.below(frame.len() - 1));
            self.counts.truncated += 1;
        }
        out.push(frame);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gps_denied_proto::{parse_telemetry, Fault, Limits, Part, TelemetryError};

    fn frame() -> Value {
        json!({
            "imu": {"orientation": {"roll": 0, "pitch": 0, "yaw": 0},
                    "angular_velocity": {"x": 0, "y": 0, "z": 0},
                    "linear_acceleration": {"x": 0, "y": 0, "z": 9.81}},
            "altimeter": {"altitude": 5.0, "vertical_velocity": 0.0},
            "velocity": {"x": 0, "y": 0, "z": 0},
            "landing_pad": null,
            "camera": {"width": 320, "height": 240, "fov": 60.0,
                       "image": encode_base64(&[0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 4, 5, 6, 7, 8, 9])},
            "landed": false,
            "timestamp": 1.0
        })
    }

    fn injector(rates: FaultRates) -> FaultInjector {
        FaultInjector::new(FaultRates { seed: 7, ..rates })
    }

    #[test]
    fn every_fault_is_one_the_parser_reports() {
        let l = Limits::default();
        type Count = fn(&FaultCounts) -> u64;
        let only = |set: fn(&mut FaultRates)| {
            let mut r = FaultRates::default();
            set(&mut r);
            r
        };
        let cases: [(FaultRates, Count); 4] = [
            (only(|r| r.wrong_types = 1.0), |c| c.wrong_types),
            (only(|r| r.missing_fields = 1.0), |c| c.missing_fields),
            (only(|r| r.bad_base64 = 1.0), |c| c.bad_base64),
            (only(|r| r.corrupt_jpeg = 1.0), |c| c.corrupt_jpeg),
        ];
        for (rates, count) in cases {
            let mut f = injector(rates);
            for _ in 0..50 {
                let mut v = frame();
                f.corrupt_value(&mut v);
                let p = parse_telemetry(v.to_string().as_bytes(), &l).unwrap();
                let faults: Vec<(Part, Fault)> = p.faults.iter().collect();
                let image_fault = p.faults.get(Part::Image);
                if rates.corrupt_jpeg > 0.0 && image_fault.is_none() {
                    // Cut in half, it still starts like a JPEG: only a decoder sees it.
                    assert!(faults.is_empty());
                } else {
                    assert!(!faults.is_empty(), "{rates:?}: {v}");
                }
            }
            assert_eq!(count(&f.counts), 50, "{rates:?}");
        }
    }

    #[test]
    fn truncation_and_junk_make_datagrams_the_parser_refuses() {
        let mut f = injector(FaultRates {
            truncate: 1.0,
            junk: 1.0,
            ..Default::default()
        });
        for _ in 0..50 {
            let sent = f.datagrams(frame().to_string().into_bytes());
            assert_eq!(sent.len(), 2);
            for d in sent {
                let r = parse_telemetry(&d, &Limits::default());
                assert!(
                    matches!(r, Err(TelemetryError::Malformed(_) | TelemetryError::NotAnObject)),
                    "{r:?}"
                );
            }
        }
        assert_eq!((f.counts.truncated, f.counts.junk), (50, 50));
    }

    #[test]
    fn no_rates_no_change() {
        let mut f = injector(FaultRates::default());
        let mut v = frame();
        f.corrupt_value(&mut v);
        assert_eq!(v, frame());
        assert_eq!(f.datagrams(b"{}".to_vec()), vec![b"{}".to_vec()]);
    }
}
