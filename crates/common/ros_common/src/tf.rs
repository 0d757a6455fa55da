//! TF helpers any simulator's nodes use: a stamped transform, a fixed
//! mount, the camera optical rotation, odom → base_link from an odometry
//! message.

use frames::{euler_to_quat, Quat, Vec3};
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{Transform, TransformStamped};
use r2r::nav_msgs::msg::Odometry;
use r2r::tf2_msgs::msg::TFMessage;

use crate::msgs::{header, quaternion, vector3};

/// `child` in `parent`: translation `t`, rotation `q` (`[w, x, y, z]`).
pub fn transform(stamp: Time, parent: &str, child: &str, t: Vec3, q: Quat) -> TransformStamped {
    TransformStamped {
        header: header(stamp, parent),
        child_frame_id: child.to_string(),
        transform: Transform {
            translation: vector3(t),
            rotation: quaternion(q),
        },
    }
}

/// A fixed transform: `child` mounted in `parent` at `translation` (metres),
/// turned by `rotation` (`[w, x, y, z]`). A bridge lists its mounts; the
/// skeleton stamps and latches them on `/tf_static`.
#[derive(Debug, Clone, PartialEq)]
pub struct Mount {
    pub parent: String,
    pub child: String,
    pub translation: Vec3,
    pub rotation: Quat,
}

impl Mount {
    pub fn new(parent: &str, child: &str, translation: Vec3, rotation: Quat) -> Self {
        Mount {
            parent: parent.to_string(),
            child: child.to_string(),
            translation,
            rotation,
        }
    }

    pub fn stamped(&self, stamp: Time) -> TransformStamped {
        transform(stamp, &self.parent, &self.child, self.translation, self.rotation)
    }
}

/// Sensor FLU → optical (z forward, x right, y down): roll −90°, yaw −90°.
pub fn optical_rotation() -> Quat {
    euler_to_quat(-std::f64::consts::FRAC_PI_2, 0.0, -std::f64::consts::FRAC_PI_2)
}

/// `header.frame_id` → `child_frame_id` of an odometry message.
pub fn odometry_tf(o: &Odometry) -> TFMessage {
    let p = &o.pose.pose.position;
    let q = &o.pose.pose.orientation;
    TFMessage {
        transforms: vec![transform(
            o.header.stamp.clone(),
            &o.header.frame_id,
            &o.child_frame_id,
            [p.x, p.y, p.z],
            [q.w, q.x, q.y, q.z],
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use frames::rotate;

    #[test]
    fn optical_axes() {
        let q = optical_rotation();
        // Optical z (forward) is sensor x; optical x (right) is −y; optical y (down) is −z.
        let close = |a: [f64; 3], b: [f64; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12);
        assert!(close(rotate(q, [0.0, 0.0, 1.0]), [1.0, 0.0, 0.0]));
        assert!(close(rotate(q, [1.0, 0.0, 0.0]), [0.0, -1.0, 0.0]));
        assert!(close(rotate(q, [0.0, 1.0, 0.0]), [0.0, 0.0, -1.0]));
    }
}
