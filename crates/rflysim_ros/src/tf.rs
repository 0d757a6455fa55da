//! TF: static transforms for every sensor mount (vehicle FLU body → sensor
//! FLU → camera optical), and odom → base_link from odometry.

use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{Quaternion, Transform, TransformStamped, Vector3};
use r2r::nav_msgs::msg::Odometry;
use r2r::tf2_msgs::msg::TFMessage;

use rflysim_proto::config::{MountAttitude, SensorConfig};
use rflysim_proto::frames::{euler_to_quat, frd_mount_to_flu, frd_to_flu, quat_normalize, Quat};

use crate::names;

fn transform(stamp: Time, parent: &str, child: &str, t: [f64; 3], q: Quat) -> TransformStamped {
    TransformStamped {
        header: crate::msgs::header(stamp, parent),
        child_frame_id: child.to_string(),
        transform: Transform {
            translation: Vector3 {
                x: t[0],
                y: t[1],
                z: t[2],
            },
            rotation: Quaternion {
                w: q[0],
                x: q[1],
                y: q[2],
                z: q[3],
            },
        },
    }
}

/// Sensor FLU → optical (z forward, x right, y down): roll −90°, yaw −90°.
pub fn optical_rotation() -> Quat {
    euler_to_quat(-std::f64::consts::FRAC_PI_2, 0.0, -std::f64::consts::FRAC_PI_2)
}

/// The mount of one sensor as static transforms (two for a camera).
pub fn mount_transforms(cfg: &SensorConfig, stamp: Time) -> Vec<TransformStamped> {
    let q_frd = match cfg.mount_attitude() {
        MountAttitude::Euler([r, p, y]) => euler_to_quat(r, p, y),
        MountAttitude::Quaternion(q) => quat_normalize(q),
    };
    let t = frd_to_flu(cfg.sensor_pos_xyz.map(f64::from));
    let sensor = names::sensor_frame(cfg);
    let mut out = vec![transform(
        stamp.clone(),
        &names::base_frame(cfg.target_copter),
        &sensor,
        t,
        frd_mount_to_flu(q_frd),
    )];
    if cfg.kind().is_some_and(|k| k.is_camera()) {
        out.push(transform(
            stamp,
            &sensor,
            &names::optical_frame(cfg),
            [0.0; 3],
            optical_rotation(),
        ));
    }
    out
}

pub fn static_tf(sensors: &[SensorConfig], stamp: Time) -> TFMessage {
    TFMessage {
        transforms: sensors
            .iter()
            .flat_map(|c| mount_transforms(c, stamp.clone()))
            .collect(),
    }
}

/// odom → base_link of an odometry message.
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
    use rflysim_proto::config::{parse_config, AngleUnit};
    use rflysim_proto::frames::rotate;

    #[test]
    fn optical_axes() {
        let q = optical_rotation();
        // Optical z (forward) is sensor x; optical x (right) is −y; optical y (down) is −z.
        let close = |a: [f64; 3], b: [f64; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12);
        assert!(close(rotate(q, [0.0, 0.0, 1.0]), [1.0, 0.0, 0.0]));
        assert!(close(rotate(q, [1.0, 0.0, 0.0]), [0.0, -1.0, 0.0]));
        assert!(close(rotate(q, [0.0, 1.0, 0.0]), [0.0, 0.0, -1.0]));
    }

    #[test]
    fn a_camera_below_and_right_pitched_down() {
        let cfg = parse_config(
            r#"{"VisionSensors":[{"SeqID":3,"TypeID":1,"TargetCopter":2,"SensorPosXYZ":[0.2,0.1,0.3],"SensorAngEular":[0,-1.5707963267948966,0]}]}"#,
            AngleUnit::Radians,
        )
        .unwrap();
        let tfs = mount_transforms(&cfg[0], Time::default());
        assert_eq!(tfs.len(), 2);
        assert_eq!(tfs[0].header.frame_id, "rflysim/uav2/base_link_flu");
        assert_eq!(tfs[0].child_frame_id, "rflysim/uav2/sensor3_flu");
        assert_eq!(tfs[1].child_frame_id, "rflysim/uav2/sensor3_optical");
        let t = &tfs[0].transform.translation;
        assert!((t.x - 0.2).abs() < 1e-6 && (t.y + 0.1).abs() < 1e-6 && (t.z + 0.3).abs() < 1e-6);
        // FRD pitch −90° looks down in FRD (+z); in FLU that is −z.
        let r = &tfs[0].transform.rotation;
        let look = rotate([r.w, r.x, r.y, r.z], [1.0, 0.0, 0.0]);
        assert!((look[2] + 1.0).abs() < 1e-6, "{look:?}");
    }
}
