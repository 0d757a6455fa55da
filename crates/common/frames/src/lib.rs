//! A simulator's aerospace frames (NED world, FRD body) to REP-103's (ENU
//! world, FLU body), for vectors and orientations, and Z-Y-X Euler angles to
//! quaternions. Pure math shared by every simulator's protocol crate,
//! emulator and bridge, so that a conversion is written (and tested) once.
//!
//! Quaternions are `[w, x, y, z]`, Hamilton convention, rotating body
//! coordinates into world coordinates. The frames' ids: [`ids`].

pub mod ids;

pub type Vec3 = [f64; 3];
pub type Quat = [f64; 4];

/// A point or a world-frame vector: NED (north, east, down) → ENU (east, north, up).
pub fn ned_to_enu(v: Vec3) -> Vec3 {
    [v[1], v[0], -v[2]]
}

pub fn enu_to_ned(v: Vec3) -> Vec3 {
    [v[1], v[0], -v[2]]
}

/// A body-frame vector: FRD (front, right, down) → FLU (front, left, up), as
/// RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 1.4 does for the IMU.
pub fn frd_to_flu(v: Vec3) -> Vec3 {
    [v[0], -v[1], -v[2]]
}

pub fn flu_to_frd(v: Vec3) -> Vec3 {
    [v[0], -v[1], -v[2]]
}

pub fn quat_mul(a: Quat, b: Quat) -> Quat {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

pub fn quat_normalize(q: Quat) -> Quat {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if n < 1e-12 || !n.is_finite() {
        return [1.0, 0.0, 0.0, 0.0];
    }
    [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
}

/// Rotates `v` by `q`.
pub fn rotate(q: Quat, v: Vec3) -> Vec3 {
    let p = quat_mul(quat_mul(q, [0.0, v[0], v[1], v[2]]), [q[0], -q[1], -q[2], -q[3]]);
    [p[1], p[2], p[3]]
}

/// Roll, pitch, yaw (rad) applied yaw first, then pitch, then roll (Z-Y-X,
/// the aerospace 3-2-1 order RflySim uses) → the body-to-world quaternion.
pub fn euler_to_quat(roll: f64, pitch: f64, yaw: f64) -> Quat {
    let (sr, cr) = (roll * 0.5).sin_cos();
    let (sp, cp) = (pitch * 0.5).sin_cos();
    let (sy, cy) = (yaw * 0.5).sin_cos();
    [
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    ]
}

/// The inverse of [`euler_to_quat`]: (roll, pitch, yaw) in radians.
pub fn quat_to_euler(q: Quat) -> Vec3 {
    let [w, x, y, z] = q;
    let roll = (2.0 * (w * x + y * z)).atan2(1.0 - 2.0 * (x * x + y * y));
    let pitch = (2.0 * (w * y - z * x)).clamp(-1.0, 1.0).asin();
    let yaw = (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z));
    [roll, pitch, yaw]
}

const H: f64 = std::f64::consts::FRAC_1_SQRT_2;
/// ENU ← NED: π about (x + y)/√2.
const Q_ENU_NED: Quat = [0.0, H, H, 0.0];
/// FRD ← FLU: π about x.
const Q_FRD_FLU: Quat = [0.0, 1.0, 0.0, 0.0];

/// An FRD body's orientation in NED → the same body as FLU in ENU.
pub fn ned_frd_to_enu_flu(q: Quat) -> Quat {
    quat_normalize(quat_mul(quat_mul(Q_ENU_NED, q), Q_FRD_FLU))
}

/// The inverse of [`ned_frd_to_enu_flu`].
pub fn enu_flu_to_ned_frd(q: Quat) -> Quat {
    let inv = |q: Quat| [q[0], -q[1], -q[2], -q[3]];
    quat_normalize(quat_mul(quat_mul(inv(Q_ENU_NED), q), inv(Q_FRD_FLU)))
}

/// [`enu_flu_to_ned_frd`] then [`quat_to_euler`] in one: the FRD body's
/// roll, pitch, yaw in NED of a FLU body's orientation in ENU (not
/// necessarily normalised). Written out (the two fixed rotations reduce to
/// sums of components) for the scene's swarms: thousands of poses a tick.
#[inline]
pub fn enu_flu_to_ned_frd_euler(q: Quat) -> Vec3 {
    let [w, x, y, z] = q;
    // ∝ inv(Q_ENU_NED) · q · inv(Q_FRD_FLU), up to sign and a factor of √2 · |q|.
    let (a, b, c, d) = (w + z, x + y, x - y, w - z);
    let n2 = a * a + b * b + c * c + d * d;
    let roll = (2.0 * (a * b + c * d)).atan2(a * a - b * b - c * c + d * d);
    let pitch = if n2 > 0.0 {
        (2.0 * (a * c - d * b) / n2).clamp(-1.0, 1.0).asin()
    } else {
        0.0
    };
    let yaw = (2.0 * (a * d + b * c)).atan2(a * a + b * b - c * c - d * d);
    [roll, pitch, yaw]
}

/// A mount rotation of a sensor on an FRD body → the same mount on an FLU body
/// (for TF from the vehicle's FLU `base_link`).
pub fn frd_mount_to_flu(q: Quat) -> Quat {
    quat_normalize(quat_mul(quat_mul(Q_FRD_FLU, q), Q_FRD_FLU))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_written_out_conversion_to_ned_euler_agrees_with_the_composed_one() {
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        for _ in 0..10_000 {
            let q = [next(), next(), next(), next()];
            let scale = 0.5 + next().abs();
            let fast = enu_flu_to_ned_frd_euler(q.map(|v| v * scale));
            let composed = quat_to_euler(enu_flu_to_ned_frd(q));
            // Near the poles roll and yaw trade off: compare the rotations.
            let (a, b) = (
                euler_to_quat(fast[0], fast[1], fast[2]),
                euler_to_quat(composed[0], composed[1], composed[2]),
            );
            let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
            assert!(dot.abs() > 1.0 - 1e-9, "{q:?}: {fast:?} vs {composed:?}");
        }
    }
    use std::f64::consts::{FRAC_PI_2, PI};

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    /// Same rotation (q and −q).
    fn same_rotation(a: Quat, b: Quat) -> bool {
        close(&a, &b) || close(&a, &b.map(|v| -v))
    }

    #[test]
    fn vectors() {
        assert_eq!(ned_to_enu([1.0, 2.0, 3.0]), [2.0, 1.0, -3.0]);
        assert_eq!(enu_to_ned(ned_to_enu([1.0, 2.0, 3.0])), [1.0, 2.0, 3.0]);
        // At rest an FRD accelerometer reads (0, 0, −9.81); FLU reads +9.81 up.
        assert_eq!(frd_to_flu([0.0, 0.0, -9.81]), [0.0, 0.0, 9.81]);
        assert_eq!(frd_to_flu([1.0, 2.0, 3.0]), [1.0, -2.0, -3.0]);
    }

    #[test]
    fn nose_east_in_ned_is_yaw_zero_in_enu() {
        let q = ned_frd_to_enu_flu(euler_to_quat(0.0, 0.0, FRAC_PI_2));
        assert!(same_rotation(q, [1.0, 0.0, 0.0, 0.0]), "{q:?}");
        // Nose north (NED yaw 0) is ENU yaw +90°.
        let q = ned_frd_to_enu_flu([1.0, 0.0, 0.0, 0.0]);
        assert!(close(&quat_to_euler(q), &[0.0, 0.0, FRAC_PI_2]));
        // Nose west (NED yaw −90°) is ENU yaw 180°.
        let e = quat_to_euler(ned_frd_to_enu_flu(euler_to_quat(0.0, 0.0, -FRAC_PI_2)));
        assert!(close(&e[..2], &[0.0, 0.0]) && (e[2].abs() - PI).abs() < 1e-9, "{e:?}");
    }

    #[test]
    fn nose_up_pitch_and_right_roll_keep_their_sense() {
        // FRD pitch +10° (nose up) heading north → FLU pitch −10° (FLU y points left) heading ENU 90°.
        let e = quat_to_euler(ned_frd_to_enu_flu(euler_to_quat(0.0, 10f64.to_radians(), 0.0)));
        assert!(close(&e, &[0.0, -10f64.to_radians(), FRAC_PI_2]), "{e:?}");
        // Check with a vector: the nose (body x) goes up in both worlds.
        let q_ned = euler_to_quat(0.3, 10f64.to_radians(), 0.7);
        let nose_ned = rotate(q_ned, [1.0, 0.0, 0.0]);
        let nose_enu = rotate(ned_frd_to_enu_flu(q_ned), [1.0, 0.0, 0.0]);
        assert!(close(&ned_to_enu(nose_ned), &nose_enu));
        let right_ned = rotate(q_ned, [0.0, 1.0, 0.0]);
        let left_enu = rotate(ned_frd_to_enu_flu(q_ned), [0.0, 1.0, 0.0]);
        assert!(close(&ned_to_enu(right_ned).map(|v| -v), &left_enu));
    }

    #[test]
    fn euler_round_trip_and_inverse() {
        for (r, p, y) in [(0.1, -0.2, 0.3), (-1.0, 0.5, 2.5), (0.0, 0.0, -3.0)] {
            let q = euler_to_quat(r, p, y);
            assert!(close(&quat_to_euler(q), &[r, p, y]));
            assert!(same_rotation(enu_flu_to_ned_frd(ned_frd_to_enu_flu(q)), q));
        }
        // Hand-computed: yaw 90° about z.
        assert!(close(&euler_to_quat(0.0, 0.0, FRAC_PI_2), &[H, 0.0, 0.0, H]));
    }

    #[test]
    fn a_camera_pitched_down_on_frd_is_pitched_down_on_flu() {
        // Mount pitch −90° in FRD (camera looks down): its x axis points to body +z (down).
        let m = euler_to_quat(0.0, -FRAC_PI_2, 0.0);
        let look_frd = rotate(m, [1.0, 0.0, 0.0]);
        assert!(close(&look_frd, &[0.0, 0.0, 1.0]));
        let look_flu = rotate(frd_mount_to_flu(m), [1.0, 0.0, 0.0]);
        assert!(close(&look_flu, &frd_to_flu(look_frd)));
    }
}
