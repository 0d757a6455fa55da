//! CopterSim's samples (as `rflysim_proto` decodes them) → ROS 2 messages:
//! the IMU and the true state. Pure functions: no node, no I/O. (A sensor
//! frame's messages are made in `sensor::frame`.)

use r2r::geometry_msgs::msg::{Quaternion, Twist, TwistWithCovariance};
use r2r::nav_msgs::msg::Odometry;
use r2r::sensor_msgs::msg::Imu;
use r2r::std_msgs::msg::Header;
use ros_common::msgs::{
    diagonal3, diagonal6, pose_with_covariance, quaternion, unknown_covariance, vector3, Covariances,
};

use frames::{frd_to_flu, ned_frd_to_enu_flu, ned_to_enu, quat_normalize, rotate, Quat};
use rflysim_proto::telemetry::{ImuSample, TrueState};

/// CopterSim's true state as odometry: pose in ENU, twist in the FLU body
/// (REP-105: twist in `child_frame_id`).
pub fn odometry_from_true_state(s: &TrueState, header: Header, child_frame: &str, cov: &Covariances) -> Odometry {
    let p = ned_to_enu(s.pos_ned);
    let q_ned = quat_normalize(s.quaternion.map(f64::from));
    let q = ned_frd_to_enu_flu(q_ned);
    let inv = [q_ned[0], -q_ned[1], -q_ned[2], -q_ned[3]];
    let v_body = frd_to_flu(rotate(inv, s.vel_ned.map(f64::from)));
    let w_body = frd_to_flu(s.rate_body.map(f64::from));
    Odometry {
        header,
        child_frame_id: child_frame.to_string(),
        pose: pose_with_covariance(p, q, cov),
        twist: TwistWithCovariance {
            twist: Twist {
                linear: vector3(v_body),
                angular: vector3(w_body),
            },
            covariance: diagonal6(cov.twist_linear, cov.twist_angular),
        },
    }
}

/// The IMU in FLU (RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 1.4: x, −y, −z). Orientation, which the IMU
/// packet lacks, comes from CopterSim's true state when given; otherwise
/// `orientation_covariance[0] = -1` (REP-145).
pub fn imu(sample: &ImuSample, orientation_ned_frd: Option<Quat>, header: Header, cov: &Covariances) -> Imu {
    let (orientation, orientation_covariance) = match orientation_ned_frd {
        Some(q) => (quaternion(ned_frd_to_enu_flu(q)), diagonal3(cov.imu_orientation)),
        None => (
            Quaternion {
                x: 0.0,
                y: 0.0,
                z: 0.0,
                w: 1.0,
            },
            unknown_covariance(9),
        ),
    };
    Imu {
        header,
        orientation,
        orientation_covariance,
        angular_velocity: vector3(frd_to_flu(sample.gyro.map(f64::from))),
        angular_velocity_covariance: diagonal3(cov.imu_gyro),
        linear_acceleration: vector3(frd_to_flu(sample.acc.map(f64::from))),
        linear_acceleration_covariance: diagonal3(cov.imu_accel),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use frames::euler_to_quat;

    use r2r::builtin_interfaces::msg::Time;

    fn h() -> Header {
        ros_common::msgs::header(Time { sec: 1, nanosec: 2 }, "f")
    }

    #[test]
    fn imu_frd_to_flu_on_known_vectors() {
        let s = ImuSample {
            seq: 0,
            time_stamp: 0.0,
            acc: [0.5, 0.25, -9.81],
            gyro: [0.1, -0.2, 0.3],
        };
        let m = imu(&s, None, h(), &Covariances::default());
        assert_eq!((m.linear_acceleration.x, m.linear_acceleration.y), (0.5, -0.25));
        assert!((m.linear_acceleration.z - 9.81).abs() < 1e-6);
        assert!((m.angular_velocity.x - 0.1).abs() < 1e-7 && (m.angular_velocity.y - 0.2).abs() < 1e-7);
        assert!((m.angular_velocity.z + 0.3).abs() < 1e-7);
        assert_eq!(m.orientation_covariance[0], -1.0);
        assert!(m.angular_velocity_covariance[0] > 0.0);
        // With orientation: NED yaw 90° (nose east) is ENU yaw 0, the identity.
        let q = euler_to_quat(0.0, 0.0, std::f64::consts::FRAC_PI_2);
        let m = imu(&s, Some(q), h(), &Covariances::default());
        assert!((m.orientation.w.abs() - 1.0).abs() < 1e-9, "{:?}", m.orientation);
    }

    #[test]
    fn true_state_twist_is_in_the_body() {
        // Nose east (NED yaw 90°), flying east at 2 m/s: forward in FLU.
        let q = euler_to_quat(0.0, 0.0, std::f64::consts::FRAC_PI_2).map(|v| v as f32);
        let s = TrueState {
            copter_id: 1,
            vehicle_type: 3,
            runned_time_ms: 0,
            vel_ned: [0.0, 2.0, 0.0],
            ang_euler: [0.0; 3],
            quaternion: q,
            motor_rpm: [0.0; 8],
            acc_body: [0.0; 3],
            rate_body: [0.0, 0.0, 0.5],
            runned_time: 0.0,
            pos_ned: [0.0, 0.0, -2.0],
            gps: [0.0; 3],
        };
        let o = odometry_from_true_state(&s, h(), "b", &Covariances::default());
        let v = &o.twist.twist.linear;
        assert!(
            (v.x - 2.0).abs() < 1e-6 && v.y.abs() < 1e-6 && v.z.abs() < 1e-6,
            "{v:?}"
        );
        assert!((o.twist.twist.angular.z + 0.5).abs() < 1e-6);
        assert_eq!(o.pose.pose.position.z, 2.0);
    }
}
