//! The frame convention, in one place. The protocol names no axes; the
//! simulator is PyBullet's, whose world is z-up and whose Euler angles are
//! `getQuaternionFromEuler`'s. So:
//!
//! - world: ENU-like, z up (REP-103);
//! - body (`base_link`): FLU, x forward, y left, z up (the protocol's
//!   "forward", "lateral", "positive = up"; 9.81 on `linear_acceleration.z`
//!   at rest is the specific force of a z-up frame, as REP-145 expects);
//! - `roll`, `pitch`, `yaw`: rotations about body x, y, z applied yaw first
//!   (intrinsic Z-Y'-X''), i.e. q = q_z(yaw) · q_y(pitch) · q_x(roll), the
//!   same as PyBullet's `getQuaternionFromEuler` and tf2's `setRPY`.
//!
//! Positive pitch tilts the nose down (forward flight), positive roll lowers
//! the right side (flight to the right, −y).
//!
//! Quaternions are the `frames` crate's: `[w, x, y, z]`, body → world.

use std::f64::consts::FRAC_1_SQRT_2;

use frames::{euler_to_quat, rotate, Quat, Vec3};

use crate::telemetry::{Euler, LandingPad};

/// Body → world orientation of the IMU's Euler angles (`frames`' Z-Y-X,
/// which is PyBullet's order: the angles need no frame change here).
pub fn orientation(e: Euler) -> Quat {
    euler_to_quat(e.roll, e.pitch, e.yaw)
}

/// A body-frame vector in the world frame, for a drone at attitude `e`.
pub fn body_to_world(e: Euler, v: Vec3) -> Vec3 {
    rotate(orientation(e), v)
}

/// A world-frame vector in the body frame of a drone at attitude `e`.
pub fn world_to_body(e: Euler, v: Vec3) -> Vec3 {
    let q = orientation(e);
    rotate([q[0], -q[1], -q[2], -q[3]], v)
}

/// The camera looks straight down from `base_link`; the image's top is the
/// drone's front. Its optical frame (x right in the image, y down in the
/// image, z along the view) in body axes: x_opt = −y, y_opt = −x,
/// z_opt = −z — a half turn about (1, −1, 0)/√2.
pub const CAMERA_OPTICAL_IN_BODY: Quat = [0.0, FRAC_1_SQRT_2, -FRAC_1_SQRT_2, 0.0];

/// A body-frame point in the camera's optical frame.
pub fn body_to_optical(p: [f64; 3]) -> [f64; 3] {
    [-p[1], -p[0], -p[2]]
}

/// Where the pad is in `base_link`: `distance` is vertical, so the point is
/// below the drone by it (exact when the drone is level).
pub fn pad_in_body(pad: &LandingPad) -> [f64; 3] {
    [pad.relative_x, pad.relative_y, -pad.distance]
}

#[cfg(test)]
mod tests {
    use super::*;
    use frames::rotate;
    use std::f64::consts::{FRAC_1_SQRT_2, FRAC_PI_2};

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    fn euler(roll: f64, pitch: f64, yaw: f64) -> Euler {
        Euler { roll, pitch, yaw }
    }

    #[test]
    fn single_axis_quarter_turns() {
        // A quarter turn about axis n is (cos 45°, n sin 45°).
        let h = FRAC_1_SQRT_2;
        assert!(close(&orientation(euler(FRAC_PI_2, 0.0, 0.0)), &[h, h, 0.0, 0.0]));
        assert!(close(&orientation(euler(0.0, FRAC_PI_2, 0.0)), &[h, 0.0, h, 0.0]));
        assert!(close(&orientation(euler(0.0, 0.0, FRAC_PI_2)), &[h, 0.0, 0.0, h]));
        assert!(close(&orientation(Euler::default()), &[1.0, 0.0, 0.0, 0.0]));
    }

    #[test]
    fn yaw_is_applied_first_in_body_axes() {
        // roll 90° then yaw 90° (q = qz · qx): body x → world y, body y → world z.
        let q = orientation(euler(FRAC_PI_2, 0.0, FRAC_PI_2));
        assert!(close(&rotate(q, [1.0, 0.0, 0.0]), &[0.0, 1.0, 0.0]));
        assert!(close(&rotate(q, [0.0, 1.0, 0.0]), &[0.0, 0.0, 1.0]));
        assert!(close(&rotate(q, [0.0, 0.0, 1.0]), &[1.0, 0.0, 0.0]));
        // Hand-multiplied qz(90°)·qx(90°) = (½, ½, ½, ½).
        assert!(close(&q, &[0.5, 0.5, 0.5, 0.5]));
    }

    #[test]
    fn world_to_body_undoes_the_orientation() {
        let e = euler(0.2, -0.4, 2.5);
        let v = [1.0, -2.0, 3.0];
        assert!(close(&world_to_body(e, rotate(orientation(e), v)), &v));
    }

    #[test]
    fn positive_pitch_is_nose_down_and_positive_roll_right_side_down() {
        let nose = rotate(orientation(euler(0.0, 0.3, 0.0)), [1.0, 0.0, 0.0]);
        assert!(nose[2] < 0.0 && nose[0] > 0.0);
        let left = rotate(orientation(euler(0.3, 0.0, 0.0)), [0.0, 1.0, 0.0]);
        assert!(left[2] > 0.0, "the left side rises, so the right side is down");
    }

    #[test]
    fn euler_angles_of_30_degrees_each() {
        // cos/sin of 15°: (√6 ± √2)/4; products written out by hand.
        let (c, s) = ((6f64.sqrt() + 2f64.sqrt()) / 4.0, (6f64.sqrt() - 2f64.sqrt()) / 4.0);
        let a = 30f64.to_radians();
        let q = orientation(euler(a, a, a));
        let want = [
            c * c * c + s * s * s,
            s * c * c - c * s * s,
            c * s * c + s * c * s,
            c * c * s - s * s * c,
        ];
        assert!(close(&q, &want));
        assert!((q.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_optical_quaternion_matches_the_axis_mapping() {
        let q = CAMERA_OPTICAL_IN_BODY;
        // Optical axes expressed in the body frame.
        assert!(close(&rotate(q, [1.0, 0.0, 0.0]), &[0.0, -1.0, 0.0]));
        assert!(close(&rotate(q, [0.0, 1.0, 0.0]), &[-1.0, 0.0, 0.0]));
        assert!(close(&rotate(q, [0.0, 0.0, 1.0]), &[0.0, 0.0, -1.0]));
        let p = [0.7, -0.3, -4.0];
        assert!(close(&rotate([q[0], -q[1], -q[2], -q[3]], p), &body_to_optical(p)));
    }
}
