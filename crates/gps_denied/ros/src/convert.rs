//! The simulator's telemetry as ROS 2 messages, and ROS 2 commands as its
//! commands. Pure functions: no node, no I/O. Axes are already REP-103's
//! (`gps_denied_proto::frames`), so vectors pass through unchanged.

use frames::{euler_to_quat, ids, Quat};
use gps_denied_proto::frames::{orientation, pad_in_body, CAMERA_OPTICAL_IN_BODY};
use gps_denied_proto::{Command, CommandError, DroneTelemetry, PadReport, RoverTelemetry, TwistGains, Vector3};
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{PointStamped, Twist, TwistStamped, TwistWithCovariance};
use r2r::nav_msgs::msg::Odometry;
use r2r::rflysim_bridge::msg::{AttitudeThrust, LandingPad};
use r2r::sensor_msgs::msg::{Imu, Range};
use r2r::std_msgs::msg::{Bool, Header};
use ros_common::msgs::{diagonal3, diagonal6, point, pose_with_covariance, quaternion, unknown_covariance, vector3};
use ros_common::msgs::{header, Covariances};
use ros_common::tf::Mount;

/// The frame ids, each `frame_prefix` (`gps_denied/` by default) + the
/// vehicle + the frame, by the rule of [`ids`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameIds {
    /// The drone's body, FLU.
    pub base: String,
    /// The downward camera's optical frame.
    pub camera: String,
    /// The altimeter: its x axis points down (`sensor_msgs/Range` measures along x).
    pub altimeter: String,
    /// The simulator's world (z up), where the rover's odometry is.
    pub world: String,
    /// The rover's body.
    pub rover: String,
}

impl FrameIds {
    pub fn new(prefix: &str) -> Self {
        Self {
            base: ids::base_link(prefix, "drone"),
            camera: ids::optical(prefix, "drone", "camera"),
            altimeter: ids::sensor(prefix, "drone", "altimeter"),
            world: ids::world(prefix, ids::MAP),
            rover: ids::base_link(prefix, "rover"),
        }
    }
}

/// `sensor_msgs/Range` constants of the altimeter (parameters of the node).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AltimeterModel {
    pub field_of_view: f32,
    pub min_range: f32,
    pub max_range: f32,
}

impl Default for AltimeterModel {
    fn default() -> Self {
        Self {
            field_of_view: 0.05,
            min_range: 0.0,
            max_range: 100.0,
        }
    }
}

fn v3(v: Vector3) -> [f64; 3] {
    v.to_array()
}

/// The IMU, when at least one of its parts arrived; a missing part is
/// zero with covariance[0] = −1 (REP-145).
pub fn imu(t: &DroneTelemetry, header: Header, cov: &Covariances) -> Option<Imu> {
    if t.orientation.is_none() && t.angular_velocity.is_none() && t.linear_acceleration.is_none() {
        return None;
    }
    let mut m = Imu {
        header,
        ..Default::default()
    };
    match t.orientation {
        Some(e) => {
            m.orientation = quaternion(orientation(e));
            m.orientation_covariance = diagonal3(cov.imu_orientation);
        }
        None => m.orientation_covariance = unknown_covariance(9),
    }
    match t.angular_velocity {
        Some(w) => {
            m.angular_velocity = vector3(v3(w));
            m.angular_velocity_covariance = diagonal3(cov.imu_gyro);
        }
        None => m.angular_velocity_covariance = unknown_covariance(9),
    }
    match t.linear_acceleration {
        Some(a) => {
            m.linear_acceleration = vector3(v3(a));
            m.linear_acceleration_covariance = diagonal3(cov.imu_accel);
        }
        None => m.linear_acceleration_covariance = unknown_covariance(9),
    }
    Some(m)
}

/// `altimeter.altitude`, looking down.
pub fn altitude(t: &DroneTelemetry, header: Header, model: &AltimeterModel) -> Option<Range> {
    let a = t.altitude?;
    // `..Default::default()`: Jazzy's Range has a `variance` that Humble's lacks.
    let m = Range {
        header,
        radiation_type: Range::INFRARED as u8,
        field_of_view: model.field_of_view,
        min_range: model.min_range,
        max_range: model.max_range,
        range: a as f32,
        ..Default::default()
    };
    Some(m)
}

/// Body-frame velocity: linear from `velocity`, angular from the IMU
/// (zero when the IMU's rates are missing).
pub fn velocity(t: &DroneTelemetry, header: Header) -> Option<TwistStamped> {
    let v = t.velocity?;
    Some(TwistStamped {
        header,
        twist: Twist {
            linear: vector3(v3(v)),
            angular: vector3(t.angular_velocity.map_or([0.0; 3], v3)),
        },
    })
}

/// One per frame: `detected` false when the pad is not seen, or its report
/// is missing or bad.
pub fn landing_pad(t: &DroneTelemetry, header: Header) -> LandingPad {
    match t.landing_pad {
        Some(PadReport::Detected(p)) => LandingPad {
            header,
            detected: true,
            relative_x: p.relative_x as f32,
            relative_y: p.relative_y as f32,
            distance: p.distance as f32,
            confidence: p.confidence as f32,
        },
        _ => LandingPad {
            header,
            ..Default::default()
        },
    }
}

/// The pad in `base_link`, only when it is seen (for rviz2).
pub fn pad_point(t: &DroneTelemetry, header: Header) -> Option<PointStamped> {
    match &t.landing_pad {
        Some(PadReport::Detected(p)) => Some(PointStamped {
            header,
            point: point(pad_in_body(p)),
        }),
        _ => None,
    }
}

pub fn landed(t: &DroneTelemetry) -> Option<Bool> {
    t.landed.map(|data| Bool { data })
}

/// The rover faces where it drives; `None` while it stands still.
pub fn rover_heading(v: Vector3) -> Option<f64> {
    (v.x.hypot(v.y) > 1e-3).then(|| v.y.atan2(v.x))
}

/// The rover's odometry in the world frame, when its position arrived. Its
/// orientation is the heading of its velocity (the last one known while it
/// stands still, else none: identity with the orientation variance of
/// "unknown", 1e6); its twist is in its own frame.
pub fn rover_odometry(
    r: &RoverTelemetry,
    last_heading: Option<f64>,
    stamp: Time,
    ids: &FrameIds,
    cov: &Covariances,
) -> Option<Odometry> {
    let position = r.position?;
    let heading = r.velocity.and_then(rover_heading).or(last_heading);
    let q: Quat = euler_to_quat(0.0, 0.0, heading.unwrap_or(0.0));
    let mut pose = pose_with_covariance(v3(position), q, cov);
    if heading.is_none() {
        pose.covariance = diagonal6(cov.pose_position, 1e6);
    }
    let twist = match r.velocity {
        Some(v) => {
            let (s, c) = heading.unwrap_or(0.0).sin_cos();
            TwistWithCovariance {
                twist: Twist {
                    linear: vector3([c * v.x + s * v.y, -s * v.x + c * v.y, v.z]),
                    angular: Default::default(),
                },
                covariance: diagonal6(cov.twist_linear, cov.twist_angular),
            }
        }
        None => TwistWithCovariance {
            covariance: unknown_covariance(36),
            ..Default::default()
        },
    };
    Some(Odometry {
        header: header(stamp, &ids.world),
        child_frame_id: ids.rover.clone(),
        pose,
        twist,
    })
}

/// `cmd` → command; values outside the protocol's ranges are rejected.
pub fn attitude_command(m: &AttitudeThrust) -> Result<Command, CommandError> {
    Command::new(
        f64::from(m.thrust),
        f64::from(m.pitch),
        f64::from(m.roll),
        f64::from(m.yaw),
    )
}

/// `cmd_vel` → command, scaled and clamped; whether it was clamped.
pub fn twist_command(m: &Twist, gains: &TwistGains) -> Result<(Command, bool), CommandError> {
    gains.command(m.linear.z, [m.angular.x, m.angular.y, m.angular.z])
}

/// The mounts, published once on `/tf_static`: the camera's optical frame
/// and the altimeter (x down: pitched a quarter turn), both at `base_link`.
pub fn mounts(ids: &FrameIds) -> Vec<Mount> {
    vec![
        Mount::new(&ids.base, &ids.camera, [0.0; 3], CAMERA_OPTICAL_IN_BODY),
        Mount::new(
            &ids.base,
            &ids.altimeter,
            [0.0; 3],
            euler_to_quat(0.0, std::f64::consts::FRAC_PI_2, 0.0),
        ),
    ]
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
