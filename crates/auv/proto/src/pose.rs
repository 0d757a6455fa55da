//! The simulator's pose → REP-103 (ENU world, FLU body).
//!
//! Defaults: metres, radians, a NED world (x north, y east, z down) and an
//! FRD body whose orientation is yaw, then pitch, then roll (Z-Y-X).
//! `world_frame = enu` reads the telemetry as ENU with an FLU body instead
//! (the same Z-Y-X angles, then taken as they are).
//!
//! The quaternion algebra is the shared `frames` crate's.

use std::str::FromStr;

use frames::{euler_to_quat, ned_frd_to_enu_flu, ned_to_enu, quat_mul, rotate};
pub use frames::{Quat, Vec3};

use crate::telemetry::Telemetry;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AngleUnit {
    #[default]
    Rad,
    Deg,
}

impl AngleUnit {
    pub fn to_radians(self, v: f64) -> f64 {
        match self {
            AngleUnit::Rad => v,
            AngleUnit::Deg => v.to_radians(),
        }
    }
}

impl FromStr for AngleUnit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "rad" => Ok(AngleUnit::Rad),
            "deg" => Ok(AngleUnit::Deg),
            other => Err(format!("angle unit {other:?} is not rad or deg")),
        }
    }
}

/// How the simulator's world axes and body axes read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WorldFrame {
    /// x north, y east, z down; FRD body.
    #[default]
    Ned,
    /// x east, y north, z up; FLU body.
    Enu,
}

impl FromStr for WorldFrame {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ned" => Ok(WorldFrame::Ned),
            "enu" => Ok(WorldFrame::Enu),
            other => Err(format!("world frame {other:?} is not ned or enu")),
        }
    }
}

/// A body pose in ENU, body FLU; quaternion `[w, x, y, z]` rotating body
/// coordinates into world coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    pub position: Vec3,
    pub orientation: Quat,
}

/// A twist in the body (FLU) frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyTwist {
    pub linear: Vec3,
    pub angular: Vec3,
}

/// How the simulator's numbers are to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoseConvention {
    pub angle_unit: AngleUnit,
    pub world_frame: WorldFrame,
}

impl PoseConvention {
    pub fn to_enu_flu(&self, t: &Telemetry) -> Pose {
        let a = |v: f32| self.angle_unit.to_radians(f64::from(v));
        let position = [f64::from(t.x), f64::from(t.y), f64::from(t.z)];
        let q = euler_to_quat(a(t.roll), a(t.pitch), a(t.yaw));
        match self.world_frame {
            WorldFrame::Ned => Pose {
                position: ned_to_enu(position),
                orientation: ned_frd_to_enu_flu(q),
            },
            WorldFrame::Enu => Pose {
                position,
                orientation: q,
            },
        }
    }
}

fn conj(q: Quat) -> Quat {
    [q[0], -q[1], -q[2], -q[3]]
}

/// The body-frame twist that takes `prev` to `next` in `dt` seconds (finite
/// differences); `None` when `dt` is not positive.
pub fn body_twist(prev: &Pose, next: &Pose, dt: f64) -> Option<BodyTwist> {
    if !dt.is_finite() || dt <= 0.0 {
        return None;
    }
    let world_velocity = [0, 1, 2].map(|i| (next.position[i] - prev.position[i]) / dt);
    // Averaging the two orientations' view of the displacement would be
    // second-order better; at telemetry rates the difference is noise.
    let linear = rotate(conj(next.orientation), world_velocity);
    // The rotation from prev's body to next's body, in prev's body frame.
    let mut delta = quat_mul(conj(prev.orientation), next.orientation);
    if delta[0] < 0.0 {
        delta = delta.map(|v| -v);
    }
    let sin_half = (delta[1] * delta[1] + delta[2] * delta[2] + delta[3] * delta[3]).sqrt();
    let angle = 2.0 * sin_half.atan2(delta[0]);
    let angular = if sin_half < 1e-12 {
        [0.0; 3]
    } else {
        [1, 2, 3].map(|i| delta[i] / sin_half * angle / dt)
    };
    Some(BodyTwist { linear, angular })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::{FRAC_1_SQRT_2, FRAC_PI_2};

    fn telemetry(x: f32, y: f32, z: f32, yaw: f32, pitch: f32, roll: f32) -> Telemetry {
        Telemetry {
            auv_id: 0,
            x,
            y,
            z,
            yaw,
            pitch,
            roll,
        }
    }

    fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < tol)
    }

    fn same_rotation(a: Quat, b: Quat) -> bool {
        close(&a, &b, 1e-6) || close(&a, &b.map(|v| -v), 1e-6)
    }

    const NED_RAD: PoseConvention = PoseConvention {
        angle_unit: AngleUnit::Rad,
        world_frame: WorldFrame::Ned,
    };

    #[test]
    fn ned_position_and_heading_on_hand_computed_vectors() {
        // 1 m north, 2 m east, 3 m deep → x east 2, y north 1, z −3.
        let p = NED_RAD.to_enu_flu(&telemetry(1.0, 2.0, 3.0, 0.0, 0.0, 0.0));
        assert_eq!(p.position, [2.0, 1.0, -3.0]);
        // Heading north (NED yaw 0) is ENU yaw +90°: q = (cos 45°, 0, 0, sin 45°) = (1/√2, 0, 0, 1/√2).
        assert!(same_rotation(p.orientation, [FRAC_1_SQRT_2, 0.0, 0.0, FRAC_1_SQRT_2]));
        // Heading east (NED yaw 90°) is ENU yaw 0.
        let p = NED_RAD.to_enu_flu(&telemetry(0.0, 0.0, 0.0, FRAC_PI_2 as f32, 0.0, 0.0));
        assert!(same_rotation(p.orientation, [1.0, 0.0, 0.0, 0.0]));
    }

    #[test]
    fn nose_up_pitch_on_a_hand_computed_vector() {
        // Heading north, nose 30° up. In ENU/FLU: yaw 90° then pitch −30°
        // about FLU y (left): q = (c45, 0, 0, s45) ⊗ (cos −15°, 0, sin −15°, 0)
        // = (c45·c15, s45·s15, −c45·s15, s45·c15).
        let expected = [0.683_012_7, 0.183_012_7, -0.183_012_7, 0.683_012_7];
        let rad = NED_RAD.to_enu_flu(&telemetry(0.0, 0.0, 0.0, 0.0, 30f32.to_radians(), 0.0));
        assert!(same_rotation(rad.orientation, expected), "{:?}", rad.orientation);
        let deg = PoseConvention {
            angle_unit: AngleUnit::Deg,
            ..NED_RAD
        }
        .to_enu_flu(&telemetry(0.0, 0.0, 0.0, 0.0, 30.0, 0.0));
        assert!(same_rotation(deg.orientation, expected), "{:?}", deg.orientation);
        // The nose points north and up.
        let nose = rotate(deg.orientation, [1.0, 0.0, 0.0]);
        assert!(close(&nose, &[0.0, 0.866_025_4, 0.5], 1e-6), "{nose:?}");
    }

    #[test]
    fn right_roll_lowers_the_right_side() {
        // Heading north, rolled 90° right (FRD roll +90°): the body's left
        // (FLU +y) points up.
        let p = NED_RAD.to_enu_flu(&telemetry(0.0, 0.0, 0.0, 0.0, 0.0, FRAC_PI_2 as f32));
        let left = rotate(p.orientation, [0.0, 1.0, 0.0]);
        assert!(close(&left, &[0.0, 0.0, 1.0], 1e-6), "{left:?}");
    }

    #[test]
    fn enu_world_is_taken_as_it_is() {
        let enu = PoseConvention {
            angle_unit: AngleUnit::Deg,
            world_frame: WorldFrame::Enu,
        };
        let p = enu.to_enu_flu(&telemetry(1.0, 2.0, -3.0, 90.0, 0.0, 0.0));
        assert_eq!(p.position, [1.0, 2.0, -3.0]);
        assert!(same_rotation(p.orientation, [FRAC_1_SQRT_2, 0.0, 0.0, FRAC_1_SQRT_2]));
    }

    #[test]
    fn options_parse() {
        assert_eq!("deg".parse::<AngleUnit>(), Ok(AngleUnit::Deg));
        assert_eq!("rad".parse::<AngleUnit>(), Ok(AngleUnit::Rad));
        assert!("degrees".parse::<AngleUnit>().is_err());
        assert_eq!("enu".parse::<WorldFrame>(), Ok(WorldFrame::Enu));
        assert_eq!("ned".parse::<WorldFrame>(), Ok(WorldFrame::Ned));
        assert!("NED".parse::<WorldFrame>().is_err());
    }

    #[test]
    fn twist_in_the_body_frame() {
        // Heading north at 1 m/s: in ENU the AUV moves +y, in its body +x.
        let a = NED_RAD.to_enu_flu(&telemetry(0.0, 0.0, 2.0, 0.0, 0.0, 0.0));
        let b = NED_RAD.to_enu_flu(&telemetry(0.1, 0.0, 2.0, 0.0, 0.0, 0.0));
        let t = body_twist(&a, &b, 0.1).unwrap();
        assert!(close(&t.linear, &[1.0, 0.0, 0.0], 1e-6), "{t:?}");
        assert!(close(&t.angular, &[0.0, 0.0, 0.0], 1e-9));
        // Turning right (NED yaw increasing) at 0.5 rad/s is FLU yaw rate −0.5.
        let c = NED_RAD.to_enu_flu(&telemetry(0.0, 0.0, 2.0, 0.05, 0.0, 0.0));
        let t = body_twist(&a, &c, 0.1).unwrap();
        assert!(close(&t.angular, &[0.0, 0.0, -0.5], 1e-6), "{t:?}");
        // Sinking (NED z increasing) is FLU −z.
        let d = NED_RAD.to_enu_flu(&telemetry(0.0, 0.0, 2.2, 0.0, 0.0, 0.0));
        let t = body_twist(&a, &d, 0.1).unwrap();
        assert!(close(&t.linear, &[0.0, 0.0, -2.0], 1e-5), "{t:?}");
        assert!(body_twist(&a, &b, 0.0).is_none());
        assert!(body_twist(&a, &b, f64::NAN).is_none());
    }
}
