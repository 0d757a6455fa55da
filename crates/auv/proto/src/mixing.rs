//! Normalised thruster levels ([−1, 1], NaN = keep) → wire levels, and a
//! body twist → the four thrusters.

use crate::error::WireError;
use crate::thruster::{Thruster, ThrusterCommand};

/// A normalised level → a wire level: round(v × 100); NaN → keep (`None`).
/// ±∞ and values outside [−1, 1] are refused.
pub fn level_from_unit(thruster: Thruster, v: f32) -> Result<Option<i8>, WireError> {
    if v.is_nan() {
        return Ok(None);
    }
    if v.is_infinite() {
        return Err(WireError::NonFinite { what: thruster.name() });
    }
    if !(-1.0..=1.0).contains(&v) {
        return Err(WireError::OutOfRange {
            what: thruster.name(),
            value: f64::from(v),
        });
    }
    // In range, so the product is within ±100 and the cast cannot saturate.
    Ok(Some((v * 100.0).round() as i8))
}

/// Left, right, side, vertical in [−1, 1] (NaN = keep) → a command.
pub fn command_from_unit(auv_id: u8, levels: [f32; 4]) -> Result<ThrusterCommand, WireError> {
    let mut wire = [None; 4];
    for ((out, v), thruster) in wire.iter_mut().zip(levels).zip(Thruster::ALL) {
        *out = level_from_unit(thruster, v)?;
    }
    ThrusterCommand::new(auv_id, wire)
}

/// Gains from a `geometry_msgs/Twist` (FLU: x forward, y left, z up, yaw
/// left-positive) to normalised thruster levels. Negative gains flip a sense.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixGains {
    /// Level per m/s forward, on left and right.
    pub surge: f64,
    /// Level per rad/s of left turn: added to right, taken from left.
    pub yaw: f64,
    /// Level per m/s to the left, on the side thruster (which pushes right
    /// when positive, hence the sign flip inside [`mix_twist`]).
    pub sway: f64,
    /// Level per m/s up, on the vertical thruster.
    pub heave: f64,
}

impl Default for MixGains {
    fn default() -> Self {
        MixGains {
            surge: 1.0,
            yaw: 1.0,
            sway: 1.0,
            heave: 1.0,
        }
    }
}

/// The body twist wanted: linear x, y, z (m/s), angular z (rad/s), FLU.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TwistDemand {
    pub forward: f64,
    pub left: f64,
    pub up: f64,
    pub yaw_left: f64,
}

/// Mixes a twist into left, right, side, vertical levels in [−1, 1]. When
/// surge plus yaw saturates, left and right are scaled down together so the
/// turn keeps its sense and ratio. Non-finite inputs are refused.
pub fn mix_twist(t: TwistDemand, g: &MixGains) -> Result<[f32; 4], WireError> {
    if ![t.forward, t.left, t.up, t.yaw_left].iter().all(|v| v.is_finite()) {
        return Err(WireError::NonFinite { what: "twist" });
    }
    let surge = g.surge * t.forward;
    let turn = g.yaw * t.yaw_left;
    let (mut left, mut right) = (surge - turn, surge + turn);
    let peak = left.abs().max(right.abs());
    if peak > 1.0 {
        left /= peak;
        right /= peak;
    }
    let side = (-g.sway * t.left).clamp(-1.0, 1.0);
    let vertical = (g.heave * t.up).clamp(-1.0, 1.0);
    let levels = [left, right, side, vertical].map(|v| v as f32);
    if levels.iter().all(|v| v.is_finite()) {
        Ok(levels)
    } else {
        Err(WireError::NonFinite { what: "mixed twist" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_levels_to_wire_levels() {
        let l = |v| level_from_unit(Thruster::Left, v);
        assert_eq!(l(0.75), Ok(Some(75)));
        assert_eq!(l(-0.5), Ok(Some(-50)));
        assert_eq!(l(1.0), Ok(Some(100)));
        assert_eq!(l(-1.0), Ok(Some(-100)));
        assert_eq!(l(0.004), Ok(Some(0)));
        // Halves (exact in binary) round away from zero.
        assert_eq!(l(0.125), Ok(Some(13)));
        assert_eq!(l(-0.125), Ok(Some(-13)));
        assert_eq!(l(-0.995), Ok(Some(-100)));
        assert_eq!(l(-0.0), Ok(Some(0)));
        assert_eq!(l(f32::NAN), Ok(None));
        assert_eq!(l(f32::INFINITY).unwrap_err().kind(), "non_finite");
        assert_eq!(l(f32::NEG_INFINITY).unwrap_err().kind(), "non_finite");
        assert_eq!(l(1.0001).unwrap_err().kind(), "out_of_range");
        assert_eq!(l(-2.0).unwrap_err().kind(), "out_of_range");
    }

    #[test]
    fn a_command_from_unit_levels_is_the_documented_example() {
        let c = command_from_unit(0, [0.75, -0.5, 0.0, f32::NAN]).unwrap();
        assert_eq!(c.encode(), [0, 75, 0xCE, 0, 0x81]);
        assert_eq!(
            command_from_unit(0, [0.0, 0.0, 1.5, 0.0]).unwrap_err().kind(),
            "out_of_range"
        );
    }

    #[test]
    fn twist_mixing() {
        let g = MixGains::default();
        let mix = |forward, left, up, yaw_left| {
            mix_twist(
                TwistDemand {
                    forward,
                    left,
                    up,
                    yaw_left,
                },
                &g,
            )
            .unwrap()
        };
        assert_eq!(mix(0.5, 0.0, 0.0, 0.0), [0.5, 0.5, 0.0, 0.0]);
        // Turning left: right pushes more than left.
        assert_eq!(mix(0.0, 0.0, 0.0, 0.25), [-0.25, 0.25, 0.0, 0.0]);
        // Moving left: the side thruster (positive = right) pushes negative.
        assert_eq!(mix(0.0, 0.5, 0.0, 0.0), [0.0, 0.0, -0.5, 0.0]);
        assert_eq!(mix(0.0, 0.0, -0.5, 0.0), [0.0, 0.0, 0.0, -0.5]);
        // Saturation keeps the turn's ratio: 1.5 ± 0.5 → (1, 2) / 2.
        assert_eq!(mix(1.5, 0.0, 0.0, 0.5), [0.5, 1.0, 0.0, 0.0]);
        assert_eq!(mix(0.0, -3.0, 3.0, 0.0), [0.0, 0.0, 1.0, 1.0]);
        let bad = TwistDemand {
            forward: f64::NAN,
            ..Default::default()
        };
        assert_eq!(mix_twist(bad, &g).unwrap_err().kind(), "non_finite");
        let huge = MixGains { surge: f64::MAX, ..g };
        let t = TwistDemand {
            forward: f64::MAX,
            ..Default::default()
        };
        assert_eq!(mix_twist(t, &huge).unwrap_err().kind(), "non_finite");
    }
}
