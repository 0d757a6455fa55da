//! The command object, `{"thrust":..,"pitch":..,"roll":..,"yaw":..}`: built
//! only from values in the protocol's ranges, so that nothing out of range can be
//! encoded; decoded (for the emulator) with the same checks.

use serde::Serialize;
use serde_json::Value;

use crate::wire::{ATTITUDE_LIMIT, MAX_DATAGRAM_BYTES, THRUST_LIMIT};

/// A command inside the protocol's ranges (thrust ±1, pitch/roll/yaw ±0.5).
/// `f32`, as the ROS message carries it, so that `0.1` is written `0.1`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Command {
    thrust: f32,
    pitch: f32,
    roll: f32,
    yaw: f32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CommandError {
    NotFinite {
        field: &'static str,
    },
    OutOfRange {
        field: &'static str,
        value: f64,
        limit: f32,
    },
    /// Decoding: not a JSON object, a field missing or not a number.
    Malformed(String),
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandError::NotFinite { field } => write!(f, "{field} is not a finite number"),
            CommandError::OutOfRange { field, value, limit } => {
                write!(f, "{field} = {value} is outside ±{limit}")
            }
            CommandError::Malformed(why) => write!(f, "not a command object: {why}"),
        }
    }
}

impl std::error::Error for CommandError {}

fn checked(field: &'static str, value: f64, limit: f32) -> Result<f32, CommandError> {
    if !value.is_finite() {
        return Err(CommandError::NotFinite { field });
    }
    if value.abs() > f64::from(limit) {
        return Err(CommandError::OutOfRange { field, value, limit });
    }
    // -0.0 + 0.0 is 0.0: a zero is written `0.0`, never `-0.0`.
    Ok(value as f32 + 0.0)
}

impl Command {
    /// Hover: no thrust change, level, no rotation.
    pub const NEUTRAL: Command = Command {
        thrust: 0.0,
        pitch: 0.0,
        roll: 0.0,
        yaw: 0.0,
    };

    /// Rejects values outside the ranges and non-finite ones.
    pub fn new(thrust: f64, pitch: f64, roll: f64, yaw: f64) -> Result<Self, CommandError> {
        Ok(Self {
            thrust: checked("thrust", thrust, THRUST_LIMIT)?,
            pitch: checked("pitch", pitch, ATTITUDE_LIMIT)?,
            roll: checked("roll", roll, ATTITUDE_LIMIT)?,
            yaw: checked("yaw", yaw, ATTITUDE_LIMIT)?,
        })
    }

    /// Clamps into the ranges; only non-finite values are rejected.
    pub fn clamped(thrust: f64, pitch: f64, roll: f64, yaw: f64) -> Result<Self, CommandError> {
        let t = f64::from(THRUST_LIMIT);
        let a = f64::from(ATTITUDE_LIMIT);
        let clamp = |field, v: f64, l: f64| {
            if v.is_finite() {
                Ok(v.clamp(-l, l))
            } else {
                Err(CommandError::NotFinite { field })
            }
        };
        Self::new(
            clamp("thrust", thrust, t)?,
            clamp("pitch", pitch, a)?,
            clamp("roll", roll, a)?,
            clamp("yaw", yaw, a)?,
        )
    }

    pub fn thrust(&self) -> f32 {
        self.thrust
    }
    pub fn pitch(&self) -> f32 {
        self.pitch
    }
    pub fn roll(&self) -> f32 {
        self.roll
    }
    pub fn yaw(&self) -> f32 {
        self.yaw
    }

    /// Exactly `{"thrust":T,"pitch":P,"roll":R,"yaw":Y}`.
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("four finite floats serialise")
    }

    /// The emulator's side. Unknown fields are ignored; the four fields are
    /// required (integers count as numbers) and range-checked.
    pub fn decode(input: &[u8]) -> Result<Self, CommandError> {
        if input.len() > MAX_DATAGRAM_BYTES {
            return Err(CommandError::Malformed(format!("{} bytes", input.len())));
        }
        let value: Value = serde_json::from_slice(input).map_err(|e| CommandError::Malformed(e.to_string()))?;
        let Value::Object(map) = value else {
            return Err(CommandError::Malformed("not an object".into()));
        };
        let get = |field: &str| {
            map.get(field)
                .and_then(Value::as_f64)
                .ok_or_else(|| CommandError::Malformed(format!("{field} is missing or not a number")))
        };
        Self::new(get("thrust")?, get("pitch")?, get("roll")?, get("yaw")?)
    }
}

/// `cmd_vel` → command: thrust = gain × linear.z, roll = gain × angular.x,
/// pitch = gain × angular.y, yaw = gain × angular.z, then clamped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwistGains {
    /// Thrust per m/s of `linear.z`.
    pub thrust: f64,
    /// Roll per rad/s of `angular.x`.
    pub roll: f64,
    /// Pitch per rad/s of `angular.y`.
    pub pitch: f64,
    /// Yaw per rad/s of `angular.z`.
    pub yaw: f64,
}

impl Default for TwistGains {
    fn default() -> Self {
        Self {
            thrust: 1.0,
            roll: 1.0,
            pitch: 1.0,
            yaw: 1.0,
        }
    }
}

impl TwistGains {
    /// The command and whether any value had to be clamped.
    pub fn command(&self, linear_z: f64, angular: [f64; 3]) -> Result<(Command, bool), CommandError> {
        let [x, y, z] = angular;
        let (thrust, roll, pitch, yaw) = (self.thrust * linear_z, self.roll * x, self.pitch * y, self.yaw * z);
        let command = Command::clamped(thrust, pitch, roll, yaw)?;
        let exact = Command::new(thrust, pitch, roll, yaw).is_ok();
        Ok((command, !exact))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_exactly_the_documented_object() {
        let c = Command::new(0.5, 0.1, -0.2, 0.0).unwrap();
        assert_eq!(
            String::from_utf8(c.encode()).unwrap(),
            r#"{"thrust":0.5,"pitch":0.1,"roll":-0.2,"yaw":0.0}"#
        );
        let c = Command::new(-0.0, 1e-7, -0.5, 0.5).unwrap();
        assert_eq!(
            String::from_utf8(c.encode()).unwrap(),
            r#"{"thrust":0.0,"pitch":1e-7,"roll":-0.5,"yaw":0.5}"#
        );
    }

    #[test]
    fn out_of_range_and_non_finite_are_rejected() {
        assert!(Command::new(1.0, 0.5, -0.5, -0.5).is_ok());
        assert_eq!(
            Command::new(1.01, 0.0, 0.0, 0.0),
            Err(CommandError::OutOfRange {
                field: "thrust",
                value: 1.01,
                limit: 1.0
            })
        );
        assert!(matches!(
            Command::new(0.0, 0.0, 0.0, -0.51),
            Err(CommandError::OutOfRange { field: "yaw", .. })
        ));
        assert!(matches!(
            Command::new(0.0, 0.6, 0.0, 0.0),
            Err(CommandError::OutOfRange { field: "pitch", .. })
        ));
        assert_eq!(
            Command::new(0.0, 0.0, f64::NAN, 0.0),
            Err(CommandError::NotFinite { field: "roll" })
        );
        assert_eq!(
            Command::new(f64::INFINITY, 0.0, 0.0, 0.0),
            Err(CommandError::NotFinite { field: "thrust" })
        );
    }

    #[test]
    fn decodes_what_python_writes_and_checks_it() {
        let c = Command::decode(br#"{"thrust": 0.5, "pitch": 0.1, "roll": -0.2, "yaw": 0, "extra": [1]}"#).unwrap();
        assert_eq!((c.thrust(), c.pitch(), c.roll(), c.yaw()), (0.5, 0.1, -0.2, 0.0));
        assert!(Command::decode(br#"{"thrust": 0.5, "pitch": 0.1, "roll": -0.2}"#).is_err());
        assert!(Command::decode(br#"{"thrust": "0.5", "pitch": 0, "roll": 0, "yaw": 0}"#).is_err());
        assert!(Command::decode(br#"{"thrust": 2, "pitch": 0, "roll": 0, "yaw": 0}"#).is_err());
        assert!(Command::decode(b"[0.5, 0, 0, 0]").is_err());
        assert!(Command::decode(b"{\"thrust\": 0.5,").is_err());
        let c = Command::new(-0.75, 0.25, 0.125, -0.5).unwrap();
        assert_eq!(Command::decode(&c.encode()).unwrap(), c);
    }

    #[test]
    fn twist_is_scaled_then_clamped() {
        let gains = TwistGains {
            thrust: 0.5,
            roll: 1.0,
            pitch: 2.0,
            yaw: 0.25,
        };
        let (c, clamped) = gains.command(1.0, [0.1, 0.2, -1.0]).unwrap();
        assert_eq!((c.thrust(), c.roll(), c.pitch(), c.yaw()), (0.5, 0.1, 0.4, -0.25));
        assert!(!clamped);
        let (c, clamped) = gains.command(-3.0, [-2.0, 0.3, 4.0]).unwrap();
        assert_eq!((c.thrust(), c.roll(), c.pitch(), c.yaw()), (-1.0, -0.5, 0.5, 0.5));
        assert!(clamped);
        assert!(gains.command(f64::NAN, [0.0; 3]).is_err());
        assert!(gains.command(0.0, [0.0, f64::INFINITY, 0.0]).is_err());
    }
}
