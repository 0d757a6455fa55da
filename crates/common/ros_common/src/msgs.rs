//! Builders of standard ROS 2 messages that any simulator's nodes use:
//! headers, camera info, vectors and quaternions, REP-145
//! covariances. Pure functions: no node, no I/O.

use std::borrow::Cow;

use bytes::Bytes;
use frames::{Quat, Vec3};
use image_codec::Encoding;
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{Point, Pose, PoseWithCovariance, Quaternion, Vector3};
use r2r::sensor_msgs::msg::{CameraInfo, PointField, RegionOfInterest};
use r2r::std_msgs::msg::Header;

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

/// How a `CompressedImage` names the JPEG in its `format` field. Both read
/// as JPEG to `compressed_image_transport` (rviz2, `republish`): without a
/// `;` it takes the decoded image's channels (3 → bgr8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JpegFormatName {
    /// What `compressed_image_transport` itself writes: `"bgr8; jpeg compressed bgr8"`.
    #[default]
    ImageTransport,
    /// `"jpeg"`, as the AUV issue asks and as Foxglove and most hand-written clients expect.
    Plain,
}

impl JpegFormatName {
    pub fn format(self, encoding: Encoding) -> Cow<'static, str> {
        match self {
            JpegFormatName::ImageTransport => {
                let e = encoding.ros_name();
                Cow::Owned(format!("{e}; jpeg compressed {e}"))
            }
            JpegFormatName::Plain => Cow::Borrowed("jpeg"),
        }
    }

    /// The same for a PNG: `"bgr8; png compressed bgr8"`, or `"png"`.
    pub fn png_format(self, encoding: Encoding) -> Cow<'static, str> {
        match self {
            JpegFormatName::ImageTransport => {
                let e = encoding.ros_name();
                Cow::Owned(format!("{e}; png compressed {e}"))
            }
            JpegFormatName::Plain => Cow::Borrowed("png"),
        }
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

/// One `float32` field of a `sensor_msgs/PointCloud2` point, at `offset` bytes.
pub fn float32_field(name: &str, offset: u32) -> PointField {
    PointField {
        name: name.into(),
        offset,
        datatype: PointField::FLOAT32 as u8,
        count: 1,
    }
}

pub fn vector3(v: Vec3) -> Vector3 {
    Vector3 {
        x: v[0],
        y: v[1],
        z: v[2],
    }
}

pub fn point(p: Vec3) -> Point {
    Point {
        x: p[0],
        y: p[1],
        z: p[2],
    }
}

/// `[w, x, y, z]` (the `frames` crate's order) → `geometry_msgs/Quaternion`.
pub fn quaternion(q: Quat) -> Quaternion {
    Quaternion {
        w: q[0],
        x: q[1],
        y: q[2],
        z: q[3],
    }
}

/// A 3 × 3 covariance with `v` on the diagonal.
pub fn diagonal3(v: f64) -> Vec<f64> {
    vec![v, 0.0, 0.0, 0.0, v, 0.0, 0.0, 0.0, v]
}

/// A 6 × 6 covariance: `linear` for x, y, z and `angular` for the rotations.
pub fn diagonal6(linear: f64, angular: f64) -> Vec<f64> {
    let mut c = vec![0.0; 36];
    for i in 0..3 {
        c[i * 7] = linear;
        c[(i + 3) * 7] = angular;
    }
    c
}

/// REP-145's mark for data that is not there: element 0 is −1.
pub fn unknown_covariance(n: usize) -> Vec<f64> {
    let mut c = vec![0.0; n];
    c[0] = -1.0;
    c
}

/// Variances reported for simulator data (diagonal; parameters of the nodes).
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

/// One variance of [`Covariances`], by its parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variance {
    PosePosition,
    PoseOrientation,
    TwistLinear,
    TwistAngular,
    ImuGyro,
    ImuAccel,
    ImuOrientation,
}

impl Variance {
    pub const POSE: &'static [Variance] = &[Variance::PosePosition, Variance::PoseOrientation];
    pub const TWIST: &'static [Variance] = &[Variance::TwistLinear, Variance::TwistAngular];
    pub const IMU: &'static [Variance] = &[Variance::ImuGyro, Variance::ImuAccel, Variance::ImuOrientation];

    pub fn parameter(self) -> &'static str {
        match self {
            Variance::PosePosition => "pose_position_variance",
            Variance::PoseOrientation => "pose_orientation_variance",
            Variance::TwistLinear => "twist_linear_variance",
            Variance::TwistAngular => "twist_angular_variance",
            Variance::ImuGyro => "imu_gyro_variance",
            Variance::ImuAccel => "imu_accel_variance",
            Variance::ImuOrientation => "imu_orientation_variance",
        }
    }

    /// What the variance is of, for the parameter tables.
    pub fn description(self) -> &'static str {
        match self {
            Variance::PosePosition => "variance of each position axis of poses and odometry (m²)",
            Variance::PoseOrientation => "variance of each orientation axis of poses and odometry (rad²)",
            Variance::TwistLinear => "variance of each linear velocity axis of odometry ((m/s)²)",
            Variance::TwistAngular => "variance of each angular velocity axis of odometry ((rad/s)²)",
            Variance::ImuGyro => "variance of each angular velocity axis of the IMU ((rad/s)²)",
            Variance::ImuAccel => "variance of each linear acceleration axis of the IMU ((m/s²)²)",
            Variance::ImuOrientation => "variance of each orientation axis of the IMU (rad²)",
        }
    }
}

impl Covariances {
    fn field(&mut self, v: Variance) -> &mut f64 {
        match v {
            Variance::PosePosition => &mut self.pose_position,
            Variance::PoseOrientation => &mut self.pose_orientation,
            Variance::TwistLinear => &mut self.twist_linear,
            Variance::TwistAngular => &mut self.twist_angular,
            Variance::ImuGyro => &mut self.imu_gyro,
            Variance::ImuAccel => &mut self.imu_accel,
            Variance::ImuOrientation => &mut self.imu_orientation,
        }
    }

    /// `defaults`, with each variance a bridge publishes read from its
    /// parameter (`<name>_variance`: finite, ≥ 0).
    pub fn from_params(node: &r2r::Node, defaults: Covariances, published: &[Variance]) -> Result<Self, String> {
        let mut c = defaults;
        for &v in published {
            let slot = c.field(v);
            *slot = crate::params::FloatParam::new(v.parameter(), *slot, 0.0..=f64::MAX, v.description()).read(node)?;
        }
        Ok(c)
    }
}

/// A pose in REP-103 frames with the configured pose covariance.
pub fn pose_with_covariance(position: Vec3, orientation: Quat, cov: &Covariances) -> PoseWithCovariance {
    PoseWithCovariance {
        pose: Pose {
            position: point(position),
            orientation: quaternion(orientation),
        },
        covariance: diagonal6(cov.pose_position, cov.pose_orientation),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h() -> Header {
        header(Time { sec: 1, nanosec: 2 }, "f")
    }

    #[test]
    fn camera_info_from_fov() {
        let ci = camera_info(640, 480, 90.0, h());
        assert!((ci.k[0] - 320.0).abs() < 1e-9 && (ci.k[4] - 320.0).abs() < 1e-9);
        assert_eq!((ci.k[2], ci.k[5], ci.p[3]), (320.0, 240.0, 0.0));
    }

    #[test]
    fn jpeg_format_names() {
        assert_eq!(
            JpegFormatName::default().format(Encoding::Bgr8),
            "bgr8; jpeg compressed bgr8"
        );
        assert_eq!(
            JpegFormatName::ImageTransport.format(Encoding::Mono8),
            "mono8; jpeg compressed mono8"
        );
        assert_eq!(JpegFormatName::Plain.format(Encoding::Bgr8), "jpeg");
    }

    #[test]
    fn covariance_layouts() {
        let c = diagonal6(1.0, 2.0);
        assert_eq!((c[0], c[7], c[14], c[21], c[28], c[35]), (1.0, 1.0, 1.0, 2.0, 2.0, 2.0));
        assert_eq!(c.iter().sum::<f64>(), 9.0);
        assert_eq!(diagonal3(3.0).iter().sum::<f64>(), 9.0);
        assert_eq!(unknown_covariance(9)[0], -1.0);
    }
}
