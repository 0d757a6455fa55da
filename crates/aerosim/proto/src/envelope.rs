//! The envelope around every JSON record: `{"metadata": {"topic",
//! "type_name", "timestamp_sim", "timestamp_platform"}, "data": {...}}`.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{AeroSimType, DecodeError};

/// AeroSim's time: seconds and nanoseconds. A simulation time with a
/// negative `sec` (AeroSim writes `i32::MIN`) is unset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeStamp {
    pub sec: i32,
    pub nanosec: u32,
}

impl TimeStamp {
    /// What AeroSim writes when it has no simulation time.
    pub const UNSET: TimeStamp = TimeStamp {
        sec: i32::MIN,
        nanosec: 0,
    };

    /// `seconds` as a stamp; unset when negative, not finite or past 2038.
    pub fn from_seconds(seconds: f64) -> TimeStamp {
        if !(0.0..f64::from(i32::MAX)).contains(&seconds) {
            return TimeStamp::UNSET;
        }
        let mut sec = seconds.floor();
        let mut nanosec = ((seconds - sec) * 1e9).round();
        if nanosec >= 1e9 {
            sec += 1.0;
            nanosec = 0.0;
        }
        TimeStamp {
            sec: sec as i32,
            nanosec: nanosec as u32,
        }
    }

    /// Seconds, or `None` when unset (negative) or malformed (`nanosec` of a second or more).
    pub fn to_seconds(self) -> Option<f64> {
        (self.sec >= 0 && self.nanosec < 1_000_000_000).then_some(f64::from(self.sec) + f64::from(self.nanosec) * 1e-9)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    pub topic: String,
    pub type_name: String,
    pub timestamp_sim: TimeStamp,
    /// Unix time at the sender.
    pub timestamp_platform: TimeStamp,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Envelope<T> {
    pub metadata: Metadata,
    pub data: T,
}

#[derive(Serialize)]
struct EnvelopeRef<'a, T> {
    metadata: Metadata,
    data: &'a T,
}

#[derive(Deserialize)]
struct MetadataOnly {
    metadata: Metadata,
}

/// One JSON record of type `T`, at most `max_bytes` long. The type name in
/// the metadata must be `T`'s.
pub fn decode_envelope<T: AeroSimType + DeserializeOwned>(
    bytes: &[u8],
    max_bytes: usize,
) -> Result<Envelope<T>, DecodeError> {
    if bytes.len() > max_bytes {
        return Err(DecodeError::TooLarge {
            len: bytes.len(),
            max: max_bytes,
        });
    }
    match serde_json::from_slice::<Envelope<T>>(bytes) {
        Ok(e) if e.metadata.type_name == T::TYPE_NAME => Ok(e),
        Ok(e) => Err(DecodeError::WrongType {
            expected: T::TYPE_NAME,
            found: e.metadata.type_name,
        }),
        Err(e) if e.is_data() => Err(classify_data_error::<T>(bytes, e)),
        Err(e) => Err(DecodeError::NotJson(e.to_string())),
    }
}

/// A record that is JSON but not a `T` envelope: another type, no
/// envelope at all, or a bad field of the right type.
fn classify_data_error<T: AeroSimType>(bytes: &[u8], e: serde_json::Error) -> DecodeError {
    match serde_json::from_slice::<MetadataOnly>(bytes) {
        Ok(m) if m.metadata.type_name != T::TYPE_NAME => DecodeError::WrongType {
            expected: T::TYPE_NAME,
            found: m.metadata.type_name,
        },
        Ok(_) => DecodeError::BadField(e.to_string()),
        Err(m) => DecodeError::BadEnvelope(m.to_string()),
    }
}

/// The JSON record AeroSim's Kafka serializer writes for `data` on `topic`.
pub fn encode_envelope<T: AeroSimType + Serialize>(
    topic: &str,
    data: &T,
    timestamp_sim: TimeStamp,
    timestamp_platform: TimeStamp,
) -> Vec<u8> {
    let e = EnvelopeRef {
        metadata: Metadata {
            topic: topic.to_string(),
            type_name: T::TYPE_NAME.to_string(),
            timestamp_sim,
            timestamp_platform,
        },
        data,
    };
    // Serialising plain structs of numbers, strings and booleans cannot fail.
    serde_json::to_vec(&e).expect("AeroSim types serialise to JSON")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{JsonData, PrimaryFlightDisplayData, VehicleState};

    #[test]
    fn stamps_round_trip_and_unset_is_none() {
        let t = TimeStamp::from_seconds(12.25);
        assert_eq!(
            t,
            TimeStamp {
                sec: 12,
                nanosec: 250_000_000
            }
        );
        assert_eq!(t.to_seconds(), Some(12.25));
        assert_eq!(TimeStamp::UNSET.to_seconds(), None);
        assert_eq!(TimeStamp::from_seconds(f64::NAN), TimeStamp::UNSET);
        assert_eq!(TimeStamp::from_seconds(-1.0), TimeStamp::UNSET);
        assert_eq!(
            TimeStamp::from_seconds(0.999_999_999_9),
            TimeStamp { sec: 1, nanosec: 0 }
        );
        assert_eq!(
            TimeStamp {
                sec: 1,
                nanosec: 1_000_000_000
            }
            .to_seconds(),
            None
        );
    }

    #[test]
    fn an_envelope_as_aerosim_writes_it_decodes() {
        // Shaped like a record from AeroSim's KafkaSerializer (serde_json of Message).
        let text = br#"{"metadata":{"topic":"aerosim.clock","type_name":"aerosim::types::JsonData",
            "timestamp_sim":{"sec":3,"nanosec":500000000},"timestamp_platform":{"sec":1764000000,"nanosec":7}},
            "data":{"data":"{\"x\":1}"}}"#;
        let e = decode_envelope::<JsonData>(text, 1 << 16).unwrap();
        assert_eq!(e.metadata.timestamp_sim.to_seconds(), Some(3.5));
        assert_eq!(e.data.value().unwrap()["x"], 1);
    }

    #[test]
    fn each_failure_has_its_reason() {
        let display = encode_envelope(
            "aerosim.actor1.primary_flight_display_data",
            &PrimaryFlightDisplayData::default(),
            TimeStamp::from_seconds(1.0),
            TimeStamp::from_seconds(2.0),
        );
        let reason = |b: &[u8]| decode_envelope::<VehicleState>(b, 4096).unwrap_err().reason();
        assert_eq!(reason(&display), "wrong_type");
        assert_eq!(reason(&display[..display.len() - 3]), "not_json");
        assert_eq!(reason(b"{\"data\": 1}"), "bad_envelope");
        assert_eq!(reason(&vec![b' '; 5000]), "too_large");
        let mut renamed = String::from_utf8(display).unwrap();
        renamed = renamed.replace("PrimaryFlightDisplayData", "VehicleState");
        assert_eq!(reason(renamed.as_bytes()), "bad_field");
    }
}
