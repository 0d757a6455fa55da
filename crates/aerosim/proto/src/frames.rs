//! AeroSim's attitude quaternion. AeroSim builds it as scipy's
//! `Rotation.from_euler("zyx", [roll, pitch, yaw])`: extrinsic rotations,
//! roll about z, then pitch about y, then yaw about x, so
//! q = q_x(yaw) ⊗ q_y(pitch) ⊗ q_z(roll) (yaw 90° gives (0.707, 0.707, 0, 0)).
//! It is not the aerospace quaternion; the angles inside it are, and
//! [`attitude_ned_frd`] builds the proper NED→FRD rotation from them.

use crate::types::Quaternion;

/// Aircraft angles, radians: roll right-wing-down, pitch nose-up, yaw
/// (heading) clockwise from north.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Attitude {
    pub roll: f64,
    pub pitch: f64,
    pub yaw: f64,
}

/// AeroSim's quaternion `[w, x, y, z]` of roll, pitch and yaw.
pub fn quaternion_from_roll_pitch_yaw(roll: f64, pitch: f64, yaw: f64) -> [f64; 4] {
    let (sr, cr) = (roll / 2.0).sin_cos();
    let (sp, cp) = (pitch / 2.0).sin_cos();
    let (sy, cy) = (yaw / 2.0).sin_cos();
    let qx = [cy, sy, 0.0, 0.0];
    let qy = [cp, 0.0, sp, 0.0];
    let qz = [cr, 0.0, 0.0, sr];
    ::frames::quat_mul(::frames::quat_mul(qx, qy), qz)
}

/// The angles inside AeroSim's quaternion: with R = Rx(yaw)·Ry(pitch)·Rz(roll),
/// R₀₂ = sin pitch, R₁₂/R₂₂ = −tan yaw, R₀₁/R₀₀ = −tan roll.
pub fn attitude(q: &Quaternion) -> Attitude {
    let n = (q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z).sqrt();
    let (w, x, y, z) = (q.w / n, q.x / n, q.y / n, q.z / n);
    let r00 = 1.0 - 2.0 * (y * y + z * z);
    let r01 = 2.0 * (x * y - w * z);
    let r02 = 2.0 * (x * z + w * y);
    let r12 = 2.0 * (y * z - w * x);
    let r22 = 1.0 - 2.0 * (x * x + y * y);
    Attitude {
        roll: (-r01).atan2(r00),
        pitch: r02.clamp(-1.0, 1.0).asin(),
        yaw: (-r12).atan2(r22),
    }
}

/// The FRD body in NED (aerospace Z-Y-X: yaw, then pitch, then roll).
pub fn attitude_ned_frd(a: Attitude) -> ::frames::Quat {
    ::frames::euler_to_quat(a.roll, a.pitch, a.yaw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(a: [f64; 4]) -> Quaternion {
        Quaternion {
            w: a[0],
            x: a[1],
            y: a[2],
            z: a[3],
        }
    }

    #[test]
    fn known_vectors_of_aerosim_convention() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let close = |a: [f64; 4], b: [f64; 4]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12);
        // Values from scipy: from_euler("zyx", [r, p, y], degrees=True).as_quat() reordered to w, x, y, z.
        assert!(close(
            quaternion_from_roll_pitch_yaw(0.0, 0.0, 90f64.to_radians()),
            [h, h, 0.0, 0.0]
        ));
        assert!(close(
            quaternion_from_roll_pitch_yaw(90f64.to_radians(), 0.0, 0.0),
            [h, 0.0, 0.0, h]
        ));
        assert!(close(
            quaternion_from_roll_pitch_yaw(0.0, 90f64.to_radians(), 0.0),
            [h, 0.0, h, 0.0]
        ));
        // zyx [10°, 20°, 30°]
        let s = quaternion_from_roll_pitch_yaw(10f64.to_radians(), 20f64.to_radians(), 30f64.to_radians());
        assert!(
            close(
                s,
                [
                    0.943_714_364_147_489,
                    0.268_535_822_751_569_2,
                    0.144_878_125_417_369_14,
                    0.127_679_440_695_780_63
                ]
            ),
            "{s:?}"
        );
    }

    #[test]
    fn angles_come_back_out() {
        for (r, p, y) in [(0.1, -0.2, 2.9), (-1.0, 0.4, -0.3), (0.0, 0.0, 0.0), (0.5, 1.2, 1.0)] {
            let a = attitude(&q(quaternion_from_roll_pitch_yaw(r, p, y)));
            assert!(
                (a.roll - r).abs() < 1e-12 && (a.pitch - p).abs() < 1e-12 && (a.yaw - y).abs() < 1e-12,
                "{a:?}"
            );
        }
    }
}
