//! Telemetry messages: `[id: u8][x, y, z, yaw, pitch, roll: 6 × f32 LE]`.

use crate::error::{id_of, WireError};
use crate::{TELEMETRY_PARTS, TELEMETRY_PAYLOAD_LEN};

const WHAT: &str = "telemetry message";

/// One AUV's pose as the simulator sends it: position and Z-Y-X Euler angles,
/// in the simulator's own units and axes (see [`crate::pose`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Telemetry {
    pub auv_id: u8,
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub yaw: f32,
    pub pitch: f32,
    pub roll: f32,
}

impl Telemetry {
    /// Checks and reads a received message. Non-finite values are refused:
    /// a NaN position would poison every pose and velocity derived from it.
    pub fn parse<P: AsRef<[u8]>>(parts: &[P]) -> Result<Self, WireError> {
        let [id, payload] = parts else {
            return Err(WireError::PartCount {
                what: WHAT,
                got: parts.len(),
                expected: TELEMETRY_PARTS,
            });
        };
        let auv_id = id_of(WHAT, id.as_ref())?;
        let payload = payload.as_ref();
        let Ok(payload) = <&[u8; TELEMETRY_PAYLOAD_LEN]>::try_from(payload) else {
            return Err(WireError::Length {
                what: "telemetry payload",
                got: payload.len(),
                expected: TELEMETRY_PAYLOAD_LEN,
            });
        };
        let mut v = [0f32; 6];
        for (value, bytes) in v.iter_mut().zip(payload.chunks_exact(4)) {
            *value = f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(WireError::NonFinite {
                what: "telemetry payload",
            });
        }
        let [x, y, z, yaw, pitch, roll] = v;
        Ok(Telemetry {
            auv_id,
            x,
            y,
            z,
            yaw,
            pitch,
            roll,
        })
    }

    /// The payload part (the id part is `[auv_id]`).
    pub fn payload(&self) -> [u8; TELEMETRY_PAYLOAD_LEN] {
        let mut out = [0u8; TELEMETRY_PAYLOAD_LEN];
        let values = [self.x, self.y, self.z, self.yaw, self.pitch, self.roll];
        for (chunk, value) in out.chunks_exact_mut(4).zip(values) {
            chunk.copy_from_slice(&value.to_le_bytes());
        }
        out
    }

    pub fn id_part(&self) -> [u8; 1] {
        [self.auv_id]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Telemetry {
        Telemetry {
            auv_id: 3,
            x: 1.5,
            y: -2.0,
            z: 4.25,
            yaw: 0.5,
            pitch: -0.125,
            roll: 0.0625,
        }
    }

    #[test]
    fn matches_the_protocol_struct_layout() {
        // Python: struct.pack("<ffffff", 1.5, -2.0, 4.25, 0.5, -0.125, 0.0625)
        let expected: [u8; 24] = [
            0x00, 0x00, 0xC0, 0x3F, 0x00, 0x00, 0x00, 0xC0, 0x00, 0x00, 0x88, 0x40, 0x00, 0x00, 0x00, 0x3F, 0x00, 0x00,
            0x00, 0xBE, 0x00, 0x00, 0x80, 0x3D,
        ];
        assert_eq!(sample().payload(), expected);
        let parts: [&[u8]; 2] = [&[3], &expected];
        assert_eq!(Telemetry::parse(&parts).unwrap(), sample());
    }

    #[test]
    fn each_kind_of_bad_message_has_its_own_error() {
        let p = sample().payload();
        let kind = |parts: &[&[u8]]| Telemetry::parse(parts).unwrap_err().kind();
        assert_eq!(kind(&[&[3]]), "wrong_part_count");
        assert_eq!(kind(&[&[3], &p, &p]), "wrong_part_count");
        assert_eq!(kind(&[&[3, 3], &p]), "wrong_id_length");
        assert_eq!(kind(&[&[3], &p[..23]]), "wrong_length");
        assert_eq!(kind(&[&[3], &[&p[..], &[0]].concat()]), "wrong_length");
        let mut nan = p;
        nan[8..12].copy_from_slice(&f32::NAN.to_le_bytes());
        assert_eq!(kind(&[&[3], &nan]), "non_finite");
    }
}
