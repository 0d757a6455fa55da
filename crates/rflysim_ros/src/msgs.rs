//! RflySim payloads (as `rflysim_proto` decodes them) → ROS 2 messages.
//! Pure functions: no node, no I/O.

use bytes::Bytes;
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{Point, Pose, PoseWithCovariance, Quaternion, Twist, TwistWithCovariance, Vector3};
use r2r::nav_msgs::msg::Odometry;
use r2r::sensor_msgs::msg::{CameraInfo, CompressedImage, Image, Imu, PointCloud2, PointField, RegionOfInterest};
use r2r::std_msgs::msg::Header;

use rflysim_proto::frames::{
    euler_to_quat, frd_to_flu, ned_frd_to_enu_flu, ned_to_enu, quat_normalize, rotate, Quat, Vec3,
};
use rflysim_proto::image::Image as WireImage;
use rflysim_proto::lidar::{LidarPose, POINT_STEP};
use rflysim_proto::sensor::Encoding;
use rflysim_proto::telemetry::{ImuSample, TrueState};

pub fn header(stamp: Time, frame_id: &str) -> Header {
    Header {
        stamp,
        frame_id: frame_id.to_string(),
    }
}

/// Takes the bytes without a copy when nothing else holds them.
pub fn into_vec(b: Bytes) -> Vec<u8> {
    Vec::from(b)
}

pub fn image(img: WireImage, header: Header) -> Image {
    Image {
        header,
        height: img.height,
        width: img.width,
        encoding: img.encoding.ros_name().to_string(),
        is_bigendian: 0,
        step: img.step,
        data: into_vec(img.data),
    }
}

/// `image_transport`'s format string for a JPEG of `encoding`.
pub fn compressed_image(jpeg: Vec<u8>, encoding: Encoding, header: Header) -> CompressedImage {
    let e = encoding.ros_name();
    CompressedImage {
        header,
        format: format!("{e}; jpeg compressed {e}"),
        data: jpeg,
    }
}

/// Pinhole intrinsics from image size and horizontal FOV: fx = fy =
/// (w / 2) / tan(fov / 2), principal point at the image centre, no distortion.
pub fn camera_info(width: u32, height: u32, fov_deg: f64, header: Header) -> CameraInfo {
    let f = f64::from(width) / 2.0 / (fov_deg.to_radians() / 2.0).tan();
    let (cx, cy) = (f64::from(width) / 2.0, f64::from(height) / 2.0);
    CameraInfo {
        header,
        height,
        width,
        distortion_model: "plumb_bob".into(),
        d: vec![0.0; 5],
        k: vec![f, 0.0, cx, 0.0, f, cy, 0.0, 0.0, 1.0],
        r: vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        p: vec![f, 0.0, cx, 0.0, 0.0, f, cy, 0.0, 0.0, 0.0, 1.0, 0.0],
        binning_x: 0,
        binning_y: 0,
        roi: RegionOfInterest::default(),
    }
}

/// x, y, z, seg (FLOAT32 at 0, 4, 8, 12; point_step 16; height 1).
pub fn point_cloud(data: Vec<u8>, header: Header) -> PointCloud2 {
    let width = (data.len() / POINT_STEP) as u32;
    let field = |name: &str, offset: u32| PointField {
        name: name.into(),
        offset,
        datatype: PointField::FLOAT32 as u8,
        count: 1,
    };
    let is_dense = data
        .chunks_exact(4)
        .all(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_finite());
    PointCloud2 {
        header,
        height: 1,
        width,
        fields: vec![field("x", 0), field("y", 4), field("z", 8), field("seg", 12)],
        is_bigendian: false,
        point_step: POINT_STEP as u32,
        row_step: POINT_STEP as u32 * width,
        data,
        is_dense,
    }
}

/// World points in NED → ENU, in place (x, y, z, seg f32 records).
pub fn ned_points_to_enu(data: &mut [u8]) {
    for p in data.chunks_exact_mut(POINT_STEP) {
        let x = [p[0], p[1], p[2], p[3]];
        p.copy_within(4..8, 0);
        p[4..8].copy_from_slice(&x);
        // Negating an IEEE float flips its sign bit (the last byte, little-endian).
        p[11] ^= 0x80;
    }
}

fn vec3(v: Vec3) -> Vector3 {
    Vector3 {
        x: v[0],
        y: v[1],
        z: v[2],
    }
}

fn quat(q: Quat) -> Quaternion {
    Quaternion {
        w: q[0],
        x: q[1],
        y: q[2],
        z: q[3],
    }
}

fn diag6(position: f64, orientation: f64) -> Vec<f64> {
    let mut c = vec![0.0; 36];
    for i in 0..3 {
        c[i * 7] = position;
        c[(i + 3) * 7] = orientation;
    }
    c
}

/// Variances reported for simulator ground truth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Covariances {
    pub pose_position: f64,
    pub pose_orientation: f64,
    pub twist_linear: f64,
    pub twist_angular: f64,
    pub imu_gyro: f64,
    pub imu_accel: f64,
    pub imu_orientation: f64,
}

impl Default for Covariances {
    fn default() -> Self {
        Self {
            pose_position: 1e-6,
            pose_orientation: 1e-6,
            twist_linear: 1e-4,
            twist_angular: 1e-4,
            imu_gyro: 1e-6,
            imu_accel: 1e-4,
            imu_orientation: 1e-6,
        }
    }
}

/// An ENU pose from the simulator, with its (small) ground-truth covariance.
fn ground_truth_pose(p: Vec3, q: Quat, cov: &Covariances) -> PoseWithCovariance {
    PoseWithCovariance {
        pose: Pose {
            position: Point {
                x: p[0],
                y: p[1],
                z: p[2],
            },
            orientation: quat(q),
        },
        covariance: diag6(cov.pose_position, cov.pose_orientation),
    }
}

/// The pose that comes with a LiDAR frame, as odometry in ENU / FLU. Its
/// twist is unknown (covariance −1, as REP-145 marks unknown data).
pub fn odometry_from_lidar_pose(pose: &LidarPose, header: Header, child_frame: &str, cov: &Covariances) -> Odometry {
    let p = ned_to_enu(pose.position.map(f64::from));
    let e = pose.euler.map(f64::from);
    let q = ned_frd_to_enu_flu(euler_to_quat(e[0], e[1], e[2]));
    let mut twist_cov = vec![0.0; 36];
    twist_cov[0] = -1.0;
    Odometry {
        header,
        child_frame_id: child_frame.to_string(),
        pose: ground_truth_pose(p, q, cov),
        twist: TwistWithCovariance {
            twist: Twist::default(),
            covariance: twist_cov,
        },
    }
}

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
        pose: ground_truth_pose(p, q, cov),
        twist: TwistWithCovariance {
            twist: Twist {
                linear: vec3(v_body),
                angular: vec3(w_body),
            },
            covariance: diag6(cov.twist_linear, cov.twist_angular),
        },
    }
}

/// The IMU in FLU (seed 000 §1.4: x, −y, −z). Orientation, which the IMU
/// packet lacks, comes from CopterSim's true state when given; otherwise
/// `orientation_covariance[0] = -1` (REP-145).
pub fn imu(sample: &ImuSample, orientation_ned_frd: Option<Quat>, header: Header, cov: &Covariances) -> Imu {
    let diag3 = |v: f64| vec![v, 0.0, 0.0, 0.0, v, 0.0, 0.0, 0.0, v];
    let (orientation, orientation_covariance) = match orientation_ned_frd {
        Some(q) => (quat(ned_frd_to_enu_flu(q)), diag3(cov.imu_orientation)),
        None => {
            let mut c = vec![0.0; 9];
            c[0] = -1.0;
            (
                Quaternion {
                    x: 0.0,
                    y: 0.0,
                    z: 0.0,
                    w: 1.0,
                },
                c,
            )
        }
    };
    Imu {
        header,
        orientation,
        orientation_covariance,
        angular_velocity: vec3(frd_to_flu(sample.gyro.map(f64::from))),
        angular_velocity_covariance: diag3(cov.imu_gyro),
        linear_acceleration: vec3(frd_to_flu(sample.acc.map(f64::from))),
        linear_acceleration_covariance: diag3(cov.imu_accel),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h() -> Header {
        header(Time { sec: 1, nanosec: 2 }, "f")
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
    fn lidar_pose_odometry_is_enu_flu() {
        let pose = LidarPose {
            copter_id: Some(1),
            axis_type: Some(0),
            position: [1.0, 2.0, -3.0],
            euler: [0.0, 0.0, 0.0],
        };
        let o = odometry_from_lidar_pose(&pose, h(), "base", &Covariances::default());
        assert_eq!(
            (o.pose.pose.position.x, o.pose.pose.position.y, o.pose.pose.position.z),
            (2.0, 1.0, 3.0)
        );
        // Nose north = ENU yaw +90°: q = (cos 45°, 0, 0, sin 45°).
        let q = &o.pose.pose.orientation;
        assert!((q.w.abs() - q.z.abs()).abs() < 1e-9 && q.x.abs() < 1e-9 && q.y.abs() < 1e-9 && q.w * q.z > 0.0);
        assert_eq!(o.twist.covariance[0], -1.0);
        assert_eq!(o.child_frame_id, "base");
    }

    #[test]
    fn point_cloud_layout_and_world_points() {
        let mut data: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        ned_points_to_enu(&mut data);
        let v: Vec<f32> = data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(v, vec![2.0, 1.0, -3.0, 4.0]);
        let pc = point_cloud(data, h());
        assert_eq!((pc.width, pc.height, pc.point_step, pc.row_step), (1, 1, 16, 16));
        assert_eq!(
            pc.fields
                .iter()
                .map(|f| (f.name.as_str(), f.offset))
                .collect::<Vec<_>>(),
            vec![("x", 0), ("y", 4), ("z", 8), ("seg", 12)]
        );
        assert!(pc.is_dense);
    }

    #[test]
    fn camera_info_from_fov() {
        let ci = camera_info(640, 480, 90.0, h());
        assert!((ci.k[0] - 320.0).abs() < 1e-9 && (ci.k[4] - 320.0).abs() < 1e-9);
        assert_eq!((ci.k[2], ci.k[5], ci.p[3]), (320.0, 240.0, 0.0));
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
