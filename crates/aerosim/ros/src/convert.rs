//! AeroSim's messages to ROS messages and back. AeroSim's world is NED
//! from the scenario's origin (at sea level), its body FRD; ROS gets ENU
//! and FLU (REP-103), with the conversion named in the frame ids.

use aerosim_proto::frames::{attitude_ned_frd, Attitude};
use aerosim_proto::types::{
    AutopilotCommand, AutopilotFlightPlanCommand, FlightControlCommand, HsiMode, PrimaryFlightDisplayData, VehicleState,
};
use frames::{frd_to_flu, ids, ned_to_enu, rotate, Quat, Vec3};
use r2r::geometry_msgs::msg::{Point, Pose, Twist, TwistWithCovariance, TwistWithCovarianceStamped};
use r2r::nav_msgs::msg::Odometry;
use r2r::sensor_msgs::msg::{Imu, NavSatFix, NavSatStatus};
use r2r::std_msgs::msg::{ColorRGBA, Header};
use r2r::visualization_msgs::msg::Marker;
use ros_common::msgs::{diagonal3, diagonal6, pose_with_covariance, quaternion, vector3, Covariances};

/// Gravity, m/s² (JSBSim's standard value).
const G: f64 = 9.80665;
const FT_PER_M: f64 = 1.0 / 0.3048;
const KTS_PER_MPS: f64 = 3600.0 / 1852.0;
/// WGS-84.
const EARTH_A: f64 = 6_378_137.0;
const EARTH_E2: f64 = 6.694_379_990_14e-3;

/// The frame ids of one actor ([`ids`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActorFrames {
    /// ENU world (AeroSim's NED origin, axes converted).
    pub world: String,
    /// FLU body (AeroSim's FRD body, axes converted).
    pub base_link: String,
    pub camera_optical: String,
}

impl ActorFrames {
    pub fn new(world: &str, prefix: &str, actor: &str) -> Self {
        Self {
            world: ids::world(prefix, world),
            base_link: ids::base_link(prefix, actor),
            camera_optical: ids::optical(prefix, actor, "camera"),
        }
    }
}

/// `cmd_vel` to a flight control command: roll from the turn rate, pitch
/// from the climb rate, power from the forward speed; each saturates at the
/// command's range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwistGains {
    /// Power per m/s of `linear.x`.
    pub power: f64,
    /// Pitch command per m/s of `linear.z`.
    pub pitch: f64,
    /// Roll command per rad/s of `angular.z` (left turn = roll left).
    pub roll: f64,
    /// Yaw command per rad/s of `angular.z`.
    pub yaw: f64,
}

/// Where AeroSim's NED origin is on the Earth (the scenario's `world.origin`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Origin {
    pub latitude_deg: f64,
    pub longitude_deg: f64,
    /// AeroSim's NED origin is at sea level: `z` is minus the height above it.
    pub altitude_m: f64,
}

fn v(a: &aerosim_proto::types::Vector3) -> Vec3 {
    [a.x, a.y, a.z]
}

fn inverse(q: Quat) -> Quat {
    [q[0], -q[1], -q[2], -q[3]]
}

/// A vehicle state in REP-103 terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kinematics {
    pub position_enu: Vec3,
    /// FLU body in ENU.
    pub orientation_enu_flu: Quat,
    /// World velocity, ENU.
    pub velocity_enu: Vec3,
    /// Body velocity, FLU.
    pub velocity_flu: Vec3,
    pub angular_velocity_flu: Vec3,
    /// What an accelerometer reads (specific force), FLU.
    pub specific_force_flu: Vec3,
    pub attitude: Attitude,
}

pub fn kinematics(s: &VehicleState) -> Kinematics {
    let attitude = aerosim_proto::frames::attitude(&s.state.pose.orientation);
    let q_ned_frd = attitude_ned_frd(attitude);
    let velocity_ned = v(&s.velocity);
    let to_body = inverse(q_ned_frd);
    // What an accelerometer feels: the body velocity's own rate of change
    // (JSBSim's u̇, v̇, ẇ), the turning of that velocity (ω × v) and the
    // reaction to gravity.
    let gravity_frd = rotate(to_body, [0.0, 0.0, G]);
    let w = v(&s.angular_velocity);
    let u = rotate(to_body, velocity_ned);
    let turning = [
        w[1] * u[2] - w[2] * u[1],
        w[2] * u[0] - w[0] * u[2],
        w[0] * u[1] - w[1] * u[0],
    ];
    let d = v(&s.acceleration);
    let a = [d[0] + turning[0], d[1] + turning[1], d[2] + turning[2]];
    Kinematics {
        position_enu: ned_to_enu(v(&s.state.pose.position)),
        orientation_enu_flu: frames::ned_frd_to_enu_flu(q_ned_frd),
        velocity_enu: ned_to_enu(velocity_ned),
        velocity_flu: frd_to_flu(rotate(to_body, velocity_ned)),
        angular_velocity_flu: frd_to_flu(v(&s.angular_velocity)),
        specific_force_flu: frd_to_flu([a[0] - gravity_frd[0], a[1] - gravity_frd[1], a[2] - gravity_frd[2]]),
        attitude,
    }
}

pub fn odometry(k: &Kinematics, header: Header, child: &str, cov: &Covariances) -> Odometry {
    Odometry {
        header,
        child_frame_id: child.to_string(),
        pose: pose_with_covariance(k.position_enu, k.orientation_enu_flu, cov),
        twist: TwistWithCovariance {
            twist: Twist {
                linear: vector3(k.velocity_flu),
                angular: vector3(k.angular_velocity_flu),
            },
            covariance: diagonal6(cov.twist_linear, cov.twist_angular),
        },
    }
}

pub fn imu(k: &Kinematics, header: Header, cov: &Covariances) -> Imu {
    Imu {
        header,
        orientation: quaternion(k.orientation_enu_flu),
        orientation_covariance: diagonal3(cov.imu_orientation),
        angular_velocity: vector3(k.angular_velocity_flu),
        angular_velocity_covariance: diagonal3(cov.imu_gyro),
        linear_acceleration: vector3(k.specific_force_flu),
        linear_acceleration_covariance: diagonal3(cov.imu_accel),
    }
}

/// Latitude, longitude (degrees) and altitude (m) of a NED point from the
/// origin: the tangent plane at the origin, with the ellipsoid's radii of
/// curvature there (metres of error only tens of kilometres out).
pub fn geodetic(origin: &Origin, ned: Vec3) -> (f64, f64, f64) {
    let lat0 = origin.latitude_deg.to_radians();
    let s = lat0.sin();
    let w = (1.0 - EARTH_E2 * s * s).sqrt();
    let meridian = EARTH_A * (1.0 - EARTH_E2) / (w * w * w);
    let normal = EARTH_A / w;
    let lat = origin.latitude_deg + (ned[0] / meridian).to_degrees();
    let lon = origin.longitude_deg + (ned[1] / (normal * lat0.cos().max(1e-9))).to_degrees();
    (lat, lon, origin.altitude_m - ned[2])
}

pub fn nav_sat_fix(s: &VehicleState, origin: &Origin, header: Header, cov: &Covariances) -> NavSatFix {
    let (latitude, longitude, altitude) = geodetic(origin, v(&s.state.pose.position));
    NavSatFix {
        header,
        status: NavSatStatus {
            status: NavSatStatus::STATUS_FIX as i8,
            service: NavSatStatus::SERVICE_GPS as u16,
        },
        latitude,
        longitude,
        altitude,
        position_covariance: diagonal3(cov.pose_position),
        position_covariance_type: NavSatFix::COVARIANCE_TYPE_DIAGONAL_KNOWN as u8,
    }
}

pub fn gnss_velocity(k: &Kinematics, header: Header, cov: &Covariances) -> TwistWithCovarianceStamped {
    TwistWithCovarianceStamped {
        header,
        twist: TwistWithCovariance {
            twist: Twist {
                linear: vector3(k.velocity_enu),
                angular: vector3([0.0; 3]),
            },
            // The angular part is not measured.
            covariance: {
                let mut c = diagonal6(cov.twist_linear, 0.0);
                for i in 3..6 {
                    c[i * 7] = -1.0;
                }
                c
            },
        },
    }
}

pub fn flight_display(d: &PrimaryFlightDisplayData, header: Header) -> r2r::rflysim_bridge::msg::FlightDisplay {
    r2r::rflysim_bridge::msg::FlightDisplay {
        header,
        airspeed_kts: d.airspeed_kts,
        true_airspeed_kts: d.true_airspeed_kts,
        altitude_ft: d.altitude_ft,
        target_altitude_ft: d.target_altitude_ft,
        altimeter_pressure_setting_inhg: d.altimeter_pressure_setting_inhg,
        vertical_speed_fpm: d.vertical_speed_fpm,
        pitch_deg: d.pitch_deg,
        roll_deg: d.roll_deg,
        side_slip_fps2: d.side_slip_fps2,
        heading_deg: d.heading_deg,
        hsi_course_select_heading_deg: d.hsi_course_select_heading_deg,
        hsi_course_deviation_deg: d.hsi_course_deviation_deg,
        hsi_mode: match d.hsi_mode {
            HsiMode::Gps => 0,
            HsiMode::Vor1 => 1,
            HsiMode::Vor2 => 2,
        },
    }
}

/// Height of the flight-display text in rviz2, metres: legible from the
/// distance an aircraft is watched at.
pub const FLIGHT_TEXT_HEIGHT_M: f64 = 12.0;

/// The flight display as text above the aircraft, for rviz2 (which has no
/// display of its own for flight data): altitude, airspeed, heading,
/// vertical speed, in the units of the cockpit.
pub fn flight_display_marker(d: &PrimaryFlightDisplayData, header: Header) -> Marker {
    Marker {
        header,
        ns: "flight_display".into(),
        type_: Marker::TEXT_VIEW_FACING as i32,
        action: Marker::ADD as i32,
        pose: Pose {
            position: Point {
                x: 0.0,
                y: 0.0,
                z: 3.0 * FLIGHT_TEXT_HEIGHT_M,
            },
            orientation: quaternion([1.0, 0.0, 0.0, 0.0]),
        },
        scale: r2r::geometry_msgs::msg::Vector3 {
            z: FLIGHT_TEXT_HEIGHT_M,
            ..Default::default()
        },
        color: ColorRGBA {
            r: 0.2,
            g: 1.0,
            b: 0.2,
            a: 1.0,
        },
        // A second without an update: the text goes (the stream has stopped).
        lifetime: r2r::builtin_interfaces::msg::Duration { sec: 1, nanosec: 0 },
        frame_locked: true,
        text: format!(
            "ALT {:.0} ft  IAS {:.0} kt\nHDG {:03.0}  VS {:+.0} fpm",
            d.altitude_ft,
            d.airspeed_kts,
            d.heading_deg.rem_euclid(360.0),
            d.vertical_speed_fpm
        ),
        ..Default::default()
    }
}

/// Why a command was not sent.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandError {
    NotFinite(&'static str),
    OutOfRange(&'static str, f64),
    BadEnum(&'static str, u8),
    /// A list AeroSim reads from without looking at its length.
    Missing(&'static str),
}

impl CommandError {
    pub fn reason(&self) -> &'static str {
        match self {
            CommandError::NotFinite(_) => "not_finite",
            CommandError::OutOfRange(..) => "out_of_range",
            CommandError::BadEnum(..) => "bad_enum",
            CommandError::Missing(_) => "missing_value",
        }
    }
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandError::NotFinite(n) => write!(f, "{n} is not a finite number"),
            CommandError::OutOfRange(n, x) => write!(f, "{n} = {x} is outside its range"),
            CommandError::BadEnum(n, x) => write!(f, "{n} = {x} names no value"),
            CommandError::Missing(n) => write!(f, "{n} is empty; AeroSim reads its first value"),
        }
    }
}

fn in_range(name: &'static str, x: f64, lo: f64, hi: f64) -> Result<f64, CommandError> {
    if !x.is_finite() {
        return Err(CommandError::NotFinite(name));
    }
    if !(lo..=hi).contains(&x) {
        return Err(CommandError::OutOfRange(name, x));
    }
    Ok(x)
}

fn finite(name: &'static str, x: f64) -> Result<f64, CommandError> {
    in_range(name, x, f64::MIN, f64::MAX)
}

/// The ROS flight control command, checked against AeroSim's ranges.
pub fn flight_control(
    m: &r2r::rflysim_bridge::msg::FlightControlCommand,
) -> Result<FlightControlCommand, CommandError> {
    // AeroSim's JSBSim flight controller reads power_cmd[0] whatever the length.
    if m.power_cmd.is_empty() {
        return Err(CommandError::Missing("power_cmd"));
    }
    let mut power_cmd = Vec::with_capacity(m.power_cmd.len());
    for p in &m.power_cmd {
        power_cmd.push(in_range("power_cmd", *p, 0.0, 1.0)?);
    }
    Ok(FlightControlCommand {
        power_cmd,
        roll_cmd: in_range("roll_cmd", m.roll_cmd, -1.0, 1.0)?,
        pitch_cmd: in_range("pitch_cmd", m.pitch_cmd, -1.0, 1.0)?,
        yaw_cmd: in_range("yaw_cmd", m.yaw_cmd, -1.0, 1.0)?,
        thrust_tilt_cmd: in_range("thrust_tilt_cmd", m.thrust_tilt_cmd, 0.0, 1.0)?,
        flap_cmd: in_range("flap_cmd", m.flap_cmd, 0.0, 1.0)?,
        speedbrake_cmd: in_range("speedbrake_cmd", m.speedbrake_cmd, 0.0, 1.0)?,
        landing_gear_cmd: in_range("landing_gear_cmd", m.landing_gear_cmd, 0.0, 1.0)?,
        wheel_steer_cmd: in_range("wheel_steer_cmd", m.wheel_steer_cmd, -1.0, 1.0)?,
        wheel_brake_cmd: in_range("wheel_brake_cmd", m.wheel_brake_cmd, 0.0, 1.0)?,
    })
}

/// `cmd_vel` (FLU: forward speed, climb rate, turn rate left-positive) to
/// a flight control command: power from the speed, pitch from the climb
/// (AeroSim's `pitch_cmd` is JSBSim's elevator: negative lifts the nose),
/// roll and yaw into the turn (AeroSim's roll and yaw are right-positive),
/// each saturated at its range. Gear up, no brake.
pub fn twist_to_flight_control(t: &Twist, g: &TwistGains) -> Result<FlightControlCommand, CommandError> {
    let speed = finite("linear.x", t.linear.x)?;
    let climb = finite("linear.z", t.linear.z)?;
    let turn = finite("angular.z", t.angular.z)?;
    Ok(FlightControlCommand {
        power_cmd: vec![(speed * g.power).clamp(0.0, 1.0)],
        roll_cmd: (-turn * g.roll).clamp(-1.0, 1.0),
        pitch_cmd: (-climb * g.pitch).clamp(-1.0, 1.0),
        yaw_cmd: (-turn * g.yaw).clamp(-1.0, 1.0),
        ..FlightControlCommand::default()
    })
}

pub fn autopilot(m: &r2r::rflysim_bridge::msg::AutopilotCommand) -> Result<AutopilotCommand, CommandError> {
    let flight_plan_command = match m.flight_plan_command {
        0 => AutopilotFlightPlanCommand::Stop,
        1 => AutopilotFlightPlanCommand::Run,
        2 => AutopilotFlightPlanCommand::Pause,
        x => return Err(CommandError::BadEnum("flight_plan_command", x)),
    };
    Ok(AutopilotCommand {
        flight_plan: m.flight_plan.clone(),
        flight_plan_command,
        use_manual_setpoints: m.use_manual_setpoints,
        attitude_hold: m.attitude_hold,
        altitude_hold: m.altitude_hold,
        altitude_setpoint_ft: altitude_ft(m.altitude_setpoint_ft)?,
        airspeed_hold: m.airspeed_hold,
        airspeed_setpoint_kts: airspeed_kts(m.airspeed_setpoint_kts)?,
        heading_hold: m.heading_hold,
        heading_set_by_waypoint: m.heading_set_by_waypoint,
        heading_setpoint_deg: in_range("heading_setpoint_deg", m.heading_setpoint_deg, -360.0, 360.0)?,
        target_wp_latitude_deg: in_range("target_wp_latitude_deg", m.target_wp_latitude_deg, -90.0, 90.0)?,
        target_wp_longitude_deg: in_range("target_wp_longitude_deg", m.target_wp_longitude_deg, -180.0, 180.0)?,
    })
}

fn altitude_ft(x: f64) -> Result<f64, CommandError> {
    in_range("altitude_setpoint_ft", x, -2_000.0, 100_000.0)
}

fn airspeed_kts(x: f64) -> Result<f64, CommandError> {
    in_range("airspeed_setpoint_kts", x, 0.0, 2_000.0)
}

/// What the aircraft holds when its controller is gone: the altitude,
/// heading and airspeed of its last state, by the autopilot's manual
/// setpoints (a running flight plan pauses under them); refused when the
/// state gives setpoints outside the autopilot command's ranges.
pub fn hold(s: &VehicleState) -> Result<AutopilotCommand, CommandError> {
    let k = kinematics(s);
    let altitude_m = -s.state.pose.position.z;
    let speed = k.velocity_enu.iter().map(|x| x * x).sum::<f64>().sqrt();
    let heading = finite("heading", k.attitude.yaw)?.to_degrees().rem_euclid(360.0);
    Ok(AutopilotCommand {
        attitude_hold: false,
        altitude_hold: true,
        altitude_setpoint_ft: altitude_ft(altitude_m * FT_PER_M)?,
        airspeed_hold: true,
        airspeed_setpoint_kts: airspeed_kts(speed * KTS_PER_MPS)?,
        heading_hold: true,
        heading_setpoint_deg: heading,
        ..attitude_hold()
    })
}

/// The hold when no fresh, sound state is known: the autopilot keeps the
/// attitude the aircraft has (it needs no state from the bridge).
pub fn attitude_hold() -> AutopilotCommand {
    AutopilotCommand {
        flight_plan: String::new(),
        flight_plan_command: AutopilotFlightPlanCommand::Pause,
        use_manual_setpoints: true,
        attitude_hold: true,
        altitude_hold: false,
        altitude_setpoint_ft: 0.0,
        airspeed_hold: false,
        airspeed_setpoint_kts: 0.0,
        heading_hold: false,
        heading_set_by_waypoint: false,
        heading_setpoint_deg: 0.0,
        target_wp_latitude_deg: 0.0,
        target_wp_longitude_deg: 0.0,
    }
}

/// The flight-control neutral after `last`: sticks and pedals centred, the
/// rest as it was, the power kept (with centred sticks the aircraft flies
/// on; idle would glide it down).
pub fn centred(last: &FlightControlCommand) -> FlightControlCommand {
    FlightControlCommand {
        roll_cmd: 0.0,
        pitch_cmd: 0.0,
        yaw_cmd: 0.0,
        wheel_steer_cmd: 0.0,
        ..last.clone()
    }
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
