//! Pure mappings between the wire's values and ROS 2 messages: no node, no
//! socket, unit-tested on known vectors.

use auv_proto::image::Camera;
use auv_proto::mixing::{command_from_unit, mix_twist, MixGains, TwistDemand};
use auv_proto::pose::{BodyTwist, Pose};
use auv_proto::thruster::ThrusterCommand;
use auv_proto::WireError;
use frames::{Quat, Vec3};
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{PoseStamped, Twist, TwistWithCovariance};
use r2r::nav_msgs::msg::Odometry;
use r2r::rflysim_bridge::msg::ThrusterCommand as ThrusterCommandMsg;
use ros_common::msgs::{
    diagonal6, header, point, pose_with_covariance, quaternion, unknown_covariance, vector3, Covariances,
};
use ros_common::tf::{optical_rotation, Mount};

use crate::names;

/// The AUV's covariances: the pose is f32 from a simulator, exact but for
/// rounding; the twist is a finite difference over receipt times that
/// jitter by a few ms, so its default is wider than the shared one.
pub fn default_covariances() -> Covariances {
    Covariances {
        twist_linear: 1e-3,
        twist_angular: 1e-3,
        ..Covariances::default()
    }
}

/// Where each camera sits on the body (FLU, metres) and how its optical
/// frame (z forward, x right, y down) is turned from `base_link`.
pub fn camera_mount(camera: Camera) -> (Vec3, Quat) {
    match camera {
        Camera::Front => ([0.4, 0.0, 0.0], optical_rotation()),
        // Looking down, the image's top towards the bow: optical x is body
        // right (−y), y is body aft (−x), z is body down (−z); π about (1, −1, 0)/√2.
        Camera::Bottom => (
            [0.0, 0.0, -0.2],
            [
                0.0,
                std::f64::consts::FRAC_1_SQRT_2,
                -std::f64::consts::FRAC_1_SQRT_2,
                0.0,
            ],
        ),
    }
}

/// The camera mounts of every AUV, for `/tf_static`.
pub fn camera_mounts(frame_prefix: &str, ids: &[u8]) -> Vec<Mount> {
    ids.iter()
        .flat_map(|&id| {
            Camera::ALL.map(|camera| {
                let (t, q) = camera_mount(camera);
                Mount::new(
                    &names::base_link(frame_prefix, id),
                    &names::optical_frame(frame_prefix, id, camera),
                    t,
                    q,
                )
            })
        })
        .collect()
}

pub fn pose_stamped(pose: &Pose, stamp: Time, world_frame: &str) -> PoseStamped {
    PoseStamped {
        header: header(stamp, world_frame),
        pose: r2r::geometry_msgs::msg::Pose {
            position: point(pose.position),
            orientation: quaternion(pose.orientation),
        },
    }
}

/// Odometry: the pose in the world frame, the twist in the body (child)
/// frame `base_link`. Without a twist estimate the twist is unknown (REP-145:
/// covariance[0] = −1).
pub fn odometry(
    base_link: String,
    pose: &Pose,
    twist: Option<&BodyTwist>,
    stamp: Time,
    world_frame: &str,
    cov: &Covariances,
) -> Odometry {
    let twist = match twist {
        Some(t) => TwistWithCovariance {
            twist: Twist {
                linear: vector3(t.linear),
                angular: vector3(t.angular),
            },
            covariance: diagonal6(cov.twist_linear, cov.twist_angular),
        },
        None => TwistWithCovariance {
            twist: Twist::default(),
            covariance: unknown_covariance(36),
        },
    };
    Odometry {
        header: header(stamp, world_frame),
        child_frame_id: base_link,
        pose: pose_with_covariance(pose.position, pose.orientation, cov),
        twist,
    }
}

/// A `ThrusterCommand` message → the wire command (NaN keeps a thruster;
/// out of range or ±∞ refuses the whole message).
pub fn thruster_command(id: u8, m: &ThrusterCommandMsg) -> Result<ThrusterCommand, WireError> {
    command_from_unit(id, [m.left, m.right, m.side, m.vertical])
}

/// `cmd_vel` → the wire command, mixed with `gains`.
pub fn twist_command(id: u8, t: &Twist, gains: &MixGains) -> Result<ThrusterCommand, WireError> {
    let demand = TwistDemand {
        forward: t.linear.x,
        left: t.linear.y,
        up: t.linear.z,
        yaw_left: t.angular.z,
    };
    command_from_unit(id, mix_twist(demand, gains)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use auv_proto::pose::{body_twist, PoseConvention};
    use auv_proto::telemetry::Telemetry;
    use frames::rotate;
    use r2r::geometry_msgs::msg::Vector3;

    fn close(a: [f64; 3], b: [f64; 3]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
    }

    #[test]
    fn bottom_camera_looks_down_with_the_bow_at_the_image_top() {
        let (_, q) = camera_mount(Camera::Bottom);
        assert!(
            close(rotate(q, [0.0, 0.0, 1.0]), [0.0, 0.0, -1.0]),
            "optical z is body down"
        );
        assert!(
            close(rotate(q, [1.0, 0.0, 0.0]), [0.0, -1.0, 0.0]),
            "optical x is body right"
        );
        assert!(
            close(rotate(q, [0.0, -1.0, 0.0]), [1.0, 0.0, 0.0]),
            "image up is the bow"
        );
        let (_, q) = camera_mount(Camera::Front);
        assert!(
            close(rotate(q, [0.0, 0.0, 1.0]), [1.0, 0.0, 0.0]),
            "front optical z is forward"
        );
        let mounts = camera_mounts("auv/", &[0, 5]);
        assert_eq!(mounts.len(), 4);
        assert_eq!(mounts[3].parent, "auv/auv5/base_link");
        assert_eq!(mounts[3].child, "auv/auv5/bottom_camera_optical");
    }

    #[test]
    fn odometry_from_two_telemetry_messages() {
        let ned = PoseConvention::default();
        let t = |x: f32, yaw: f32| Telemetry {
            auv_id: 2,
            x,
            y: 3.0,
            z: 2.0,
            yaw,
            pitch: 0.0,
            roll: 0.0,
        };
        let a = ned.to_enu_flu(&t(0.0, 0.0));
        let b = ned.to_enu_flu(&t(0.05, 0.0));
        let base_link = names::base_link("auv/", 2);
        let first = odometry(
            base_link.clone(),
            &a,
            None,
            Time::default(),
            "auv/map",
            &default_covariances(),
        );
        assert_eq!(first.twist.covariance[0], -1.0);
        assert_eq!(first.child_frame_id, "auv/auv2/base_link");
        let p = &first.pose.pose.position;
        assert_eq!((p.x, p.y, p.z), (3.0, 0.0, -2.0));
        let twist = body_twist(&a, &b, 0.1).unwrap();
        let o = odometry(
            base_link,
            &b,
            Some(&twist),
            Time::default(),
            "auv/map",
            &default_covariances(),
        );
        // 5 cm north in 0.1 s, heading north: 0.5 m/s forward in the body.
        let l = &o.twist.twist.linear;
        assert!(close([l.x, l.y, l.z], [0.5, 0.0, 0.0]), "{l:?}");
        assert_eq!(o.twist.covariance[0], 1e-3);
        assert_eq!(o.pose.covariance[0], 1e-6);
        let ps = pose_stamped(&b, Time::default(), "auv/map");
        assert_eq!(ps.header.frame_id, "auv/map");
        assert!((ps.pose.position.y - 0.05).abs() < 1e-6);
    }

    #[test]
    fn thruster_messages_to_the_wire() {
        let m = ThrusterCommandMsg {
            left: 0.75,
            right: -0.5,
            side: 0.0,
            vertical: f32::NAN,
            ..Default::default()
        };
        assert_eq!(thruster_command(0, &m).unwrap().encode(), [0, 75, 0xCE, 0, 0x81]);
        let bad = ThrusterCommandMsg {
            left: 1.5,
            ..Default::default()
        };
        assert_eq!(thruster_command(0, &bad).unwrap_err().kind(), "out_of_range");
        let inf = ThrusterCommandMsg {
            side: f32::NEG_INFINITY,
            ..Default::default()
        };
        assert_eq!(thruster_command(0, &inf).unwrap_err().kind(), "non_finite");
    }

    #[test]
    fn cmd_vel_is_mixed() {
        let t = Twist {
            linear: Vector3 {
                x: 0.5,
                y: 0.0,
                z: -0.2,
            },
            angular: Vector3 {
                x: 0.0,
                y: 0.0,
                z: 0.25,
            },
        };
        let c = twist_command(1, &t, &MixGains::default()).unwrap();
        assert_eq!(c.encode(), [1, 25, 75, 0, (-20i8) as u8]);
    }
}
