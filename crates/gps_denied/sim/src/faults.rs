//! Faults on demand, each with a probability per telemetry datagram, all
//! from one seeded generator so that a run can be reproduced: junk
//! datagrams, truncated JSON, parts of the wrong type, missing parts, bad
//! base64 and corrupt JPEGs (the last two only in frames with an image).

use gps_denied_proto::image::{decode_base64_jpeg, encode_base64};
use process_support::faults::{FaultKind, Faults};
use serde_json::{json, Value};

/// The faults of the GPS-denied drone simulator's telemetry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DroneFault {
    /// A datagram of random bytes sent before the frame.
    Junk,
    /// The frame's JSON cut short.
    Truncate,
    /// One part replaced by a value of the wrong type.
    WrongTypes,
    /// One part removed.
    MissingFields,
    /// The image's base64 broken.
    BadBase64,
    /// The image's bytes broken: not a JPEG at all, or cut in half.
    CorruptJpeg,
}

impl FaultKind for DroneFault {
    const ALL: &'static [Self] = &[
        DroneFault::Junk,
        DroneFault::Truncate,
        DroneFault::WrongTypes,
        DroneFault::MissingFields,
        DroneFault::BadBase64,
        DroneFault::CorruptJpeg,
    ];
    fn name(self) -> &'static str {
        match self {
            DroneFault::Junk => "junk",
            DroneFault::Truncate => "truncated",
            DroneFault::WrongTypes => "wrong_types",
            DroneFault::MissingFields => "missing_fields",
            DroneFault::BadBase64 => "bad_base64",
            DroneFault::CorruptJpeg => "corrupt_jpeg",
        }
    }
}

/// Probabilities per telemetry frame, 0..=1.
pub type FaultRates = process_support::faults::FaultRates<DroneFault>;
pub type FaultCounts = process_support::faults::FaultCounts<DroneFault>;

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
    faults: Faults<DroneFault>,
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
            faults: Faults::new(rates, 0),
        }
    }

    pub fn counts(&self) -> FaultCounts {
        self.faults.counts
    }

    /// Faults inside the JSON object of one drone frame.
    pub fn corrupt_value(&mut self, v: &mut Value) {
        let f = &mut self.faults;
        if f.strikes(DroneFault::WrongTypes) {
            let part = PARTS[f.rng.below(PARTS.len())];
            // A value of some other type than the part's.
            let wrong = match f.rng.below(4) {
                0 => json!("not a number"),
                1 => json!([1, 2, 3]),
                2 if part != "/landed" => json!(true),
                _ => json!({"unexpected": {}}),
            };
            if let Some(slot) = v.pointer_mut(part) {
                *slot = wrong;
                f.counts.note(DroneFault::WrongTypes);
            }
        }
        if f.strikes(DroneFault::MissingFields) && remove_pointer(v, PARTS[f.rng.below(PARTS.len())]) {
            f.counts.note(DroneFault::MissingFields);
        }
        let Some(Value::String(image)) = v.pointer_mut("/camera/image") else {
            return;
        };
        if f.roll_if(DroneFault::BadBase64, !image.is_empty()) {
            // Characters outside the alphabet, or a length no base64 has.
            if f.rng.below(2) == 0 {
                let at = f.rng.below(image.len());
                image.replace_range(at..at + 1, "*");
            } else {
                // 4k + 1 characters: no padding rule allows that.
                let keep = (image.len() / 4 * 4).saturating_sub(3).max(1);
                image.truncate(keep);
            }
        }
        if f.strikes(DroneFault::CorruptJpeg) {
            if let Ok(mut jpeg) = decode_base64_jpeg(image, usize::MAX) {
                if f.rng.below(2) == 0 {
                    jpeg[..2].copy_from_slice(b"GI");
                } else {
                    jpeg.truncate(jpeg.len() / 2);
                }
                *image = encode_base64(&jpeg);
                f.counts.note(DroneFault::CorruptJpeg);
            }
        }
    }

    /// Faults on the encoded frame: what to send, in order.
    pub fn datagrams(&mut self, mut frame: Vec<u8>) -> Vec<Vec<u8>> {
        let f = &mut self.faults;
        let mut out = Vec::with_capacity(2);
        if f.roll(DroneFault::Junk) {
            let n = 1 + f.rng.below(512);
            out.push(f.rng.bytes(n));
        }
        if f.roll_if(DroneFault::Truncate, frame.len() > 1) {
            // Any proper prefix of an object's text is not JSON.
            frame.truncate(1 + f.rng.below(frame.len() - 1));
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
        FaultInjector::new(rates.seeded(7))
    }

    #[test]
    fn every_fault_is_one_the_parser_reports() {
        let l = Limits::default();
        type Count = fn(&FaultCounts) -> u64;
        let only = |kind| FaultRates::default().with(kind, 1.0);
        let cases: [(FaultRates, Count); 4] = [
            (only(DroneFault::WrongTypes), |c| c.get(DroneFault::WrongTypes)),
            (only(DroneFault::MissingFields), |c| c.get(DroneFault::MissingFields)),
            (only(DroneFault::BadBase64), |c| c.get(DroneFault::BadBase64)),
            (only(DroneFault::CorruptJpeg), |c| c.get(DroneFault::CorruptJpeg)),
        ];
        for (rates, count) in cases {
            let mut f = injector(rates);
            for _ in 0..50 {
                let mut v = frame();
                f.corrupt_value(&mut v);
                let p = parse_telemetry(v.to_string().as_bytes(), &l).unwrap();
                let faults: Vec<(Part, Fault)> = p.faults.iter().collect();
                let image_fault = p.faults.get(Part::Image);
                if rates.rate(DroneFault::CorruptJpeg) > 0.0 && image_fault.is_none() {
                    // Cut in half, it still starts like a JPEG: only a decoder sees it.
                    assert!(faults.is_empty());
                } else {
                    assert!(!faults.is_empty(), "{rates:?}: {v}");
                }
            }
            assert_eq!(count(&f.counts()), 50, "{rates:?}");
        }
    }

    #[test]
    fn truncation_and_junk_make_datagrams_the_parser_refuses() {
        let mut f = injector(
            FaultRates::default()
                .with(DroneFault::Truncate, 1.0)
                .with(DroneFault::Junk, 1.0),
        );
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
        assert_eq!(
            (f.counts().get(DroneFault::Truncate), f.counts().get(DroneFault::Junk)),
            (50, 50)
        );
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
