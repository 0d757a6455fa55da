//! TF of RflySim's sensors: static transforms for every sensor mount
//! (vehicle FLU body → sensor FLU → camera optical), and the publisher of
//! odom → base_link.

use r2r::tf2_msgs::msg::TFMessage;
use r2r::{Node, Publisher};
use ros_common::tf::{optical_rotation, Mount};

use frames::{euler_to_quat, frd_mount_to_flu, frd_to_flu, quat_normalize};
use rflysim_proto::config::{MountAttitude, SensorConfig};

use crate::names;

/// The mount of one sensor (two for a camera: the sensor and its optical frame).
pub fn sensor_mounts(cfg: &SensorConfig) -> Vec<Mount> {
    let q_frd = match cfg.mount_attitude() {
        MountAttitude::Euler([r, p, y]) => euler_to_quat(r, p, y),
        MountAttitude::Quaternion(q) => quat_normalize(q),
    };
    let t = frd_to_flu(cfg.sensor_pos_xyz.map(f64::from));
    let sensor = names::sensor_frame(cfg);
    let mut out = vec![Mount::new(
        &names::base_frame(cfg.target_copter),
        &sensor,
        t,
        frd_mount_to_flu(q_frd),
    )];
    if cfg.kind().is_some_and(|k| k.is_camera()) {
        out.push(Mount::new(
            &sensor,
            &names::optical_frame(cfg),
            [0.0; 3],
            optical_rotation(),
        ));
    }
    out
}

/// The publisher of odom → base_link on `/tf` (from the LiDAR pose or the true state).
pub fn odometry_tf_publisher(node: &mut Node) -> r2r::Result<Publisher<TFMessage>> {
    node.create_publisher("/tf", ros_common::qos::tf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use frames::rotate;
    use rflysim_proto::config::{parse_config, AngleUnit};

    #[test]
    fn a_camera_below_and_right_pitched_down() {
        let cfg = parse_config(
            r#"{"VisionSensors":[{"SeqID":3,"TypeID":1,"TargetCopter":2,"SensorPosXYZ":[0.2,0.1,0.3],"SensorAngEular":[0,-1.5707963267948966,0]}]}"#,
            AngleUnit::Radians,
        )
        .unwrap();
        let tfs: Vec<_> = sensor_mounts(&cfg[0])
            .iter()
            .map(|m| m.stamped(Default::default()))
            .collect();
        assert_eq!(tfs.len(), 2);
        assert_eq!(tfs[0].header.frame_id, "rflysim/uav2/base_link");
        assert_eq!(tfs[0].child_frame_id, "rflysim/uav2/sensor3");
        assert_eq!(tfs[1].child_frame_id, "rflysim/uav2/sensor3_optical");
        let t = &tfs[0].transform.translation;
        assert!((t.x - 0.2).abs() < 1e-6 && (t.y + 0.1).abs() < 1e-6 && (t.z + 0.3).abs() < 1e-6);
        // FRD pitch −90° looks down in FRD (+z); in FLU that is −z.
        let r = &tfs[0].transform.rotation;
        let look = rotate([r.w, r.x, r.y, r.z], [1.0, 0.0, 0.0]);
        assert!((look[2] + 1.0).abs() < 1e-6, "{look:?}");
    }
}
