//! The AeroSim types the bridge carries, field for field as AeroSim
//! serialises them (`aerosim-data/src/types/`). Enums travel as integers.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::AeroSimType;

macro_rules! aerosim_type {
    ($($t:ident),*) => {
        $(impl AeroSimType for $t {
            const TYPE_NAME: &'static str = concat!("aerosim::types::", stringify!($t));
        })*
    };
}

aerosim_type!(
    VehicleState,
    PrimaryFlightDisplayData,
    FlightControlCommand,
    AutopilotCommand,
    JsonData
);

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Vector3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Quaternion {
    pub w: f64,
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

impl Default for Quaternion {
    fn default() -> Self {
        Quaternion {
            w: 1.0,
            x: 0.0,
            y: 0.0,
            z: 0.0,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Pose {
    /// NED, metres from the scenario's origin (at sea level).
    pub position: Vector3,
    /// AeroSim's convention: see [`crate::frames`].
    pub orientation: Quaternion,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ActorState {
    pub pose: Pose,
}

/// `aerosim.<actor>.vehicle_state`, from AeroSim's JSBSim flight dynamics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct VehicleState {
    pub state: ActorState,
    /// NED, m/s.
    pub velocity: Vector3,
    /// Body p, q, r (FRD), rad/s.
    pub angular_velocity: Vector3,
    /// Body u̇, v̇, ẇ (FRD), m/s².
    pub acceleration: Vector3,
    pub angular_acceleration: Vector3,
}

/// Refuses a state a conversion cannot use: a number that is not finite
/// (JSON cannot carry one, but a huge one overflows in the conversions) or
/// an orientation that is no rotation.
pub fn check_finite(s: &VehicleState) -> Result<(), String> {
    // Beyond this, squares overflow; no aircraft is anywhere near it.
    const LIMIT: f64 = 1e150;
    let p = &s.state.pose;
    let o = &p.orientation;
    let named = [
        ("position", [p.position.x, p.position.y, p.position.z]),
        ("velocity", [s.velocity.x, s.velocity.y, s.velocity.z]),
        (
            "angular_velocity",
            [s.angular_velocity.x, s.angular_velocity.y, s.angular_velocity.z],
        ),
        ("acceleration", [s.acceleration.x, s.acceleration.y, s.acceleration.z]),
        (
            "angular_acceleration",
            [
                s.angular_acceleration.x,
                s.angular_acceleration.y,
                s.angular_acceleration.z,
            ],
        ),
    ];
    for (name, v) in named {
        if v.iter().any(|x| !x.is_finite() || x.abs() > LIMIT) {
            return Err(format!("{name} {v:?} is out of range"));
        }
    }
    let q = [o.w, o.x, o.y, o.z];
    if q.iter().any(|x| !x.is_finite() || x.abs() > 2.0) {
        return Err(format!("orientation {q:?} is no rotation"));
    }
    let norm = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    if !(0.5..=1.5).contains(&norm) {
        return Err(format!("orientation {q:?} is no rotation (norm {norm})"));
    }
    Ok(())
}

/// Serialises a fieldless enum as its integer, as AeroSim's `serde_repr` does.
macro_rules! integer_enum {
    ($t:ident { $($v:ident = $n:literal),* }) => {
        impl $t {
            pub fn to_u8(self) -> u8 {
                self as u8
            }

            pub fn from_u8(n: u8) -> Option<Self> {
                match n {
                    $($n => Some($t::$v),)*
                    _ => None,
                }
            }
        }

        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_u8(*self as u8)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let n = u8::deserialize(d)?;
                $t::from_u8(n).ok_or_else(|| {
                    serde::de::Error::custom(format!(concat!("{} names no ", stringify!($t)), n))
                })
            }
        }
    };
}

/// The horizontal situation indicator's source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum HsiMode {
    #[default]
    Gps = 0,
    Vor1 = 1,
    Vor2 = 2,
}
integer_enum!(HsiMode { Gps = 0, Vor1 = 1, Vor2 = 2 });

/// `aerosim.<actor>.primary_flight_display_data`: the flight deck's instruments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrimaryFlightDisplayData {
    pub airspeed_kts: f64,
    pub true_airspeed_kts: f64,
    pub altitude_ft: f64,
    pub target_altitude_ft: f64,
    pub altimeter_pressure_setting_inhg: f64,
    pub vertical_speed_fpm: f64,
    pub pitch_deg: f64,
    pub roll_deg: f64,
    /// AeroSim's name; it carries JSBSim's v̇ in ft/s².
    pub side_slip_fps2: f64,
    pub heading_deg: f64,
    pub hsi_course_select_heading_deg: f64,
    pub hsi_course_deviation_deg: f64,
    pub hsi_mode: HsiMode,
}

impl Default for PrimaryFlightDisplayData {
    fn default() -> Self {
        Self {
            airspeed_kts: 0.0,
            true_airspeed_kts: 0.0,
            altitude_ft: 0.0,
            target_altitude_ft: 0.0,
            altimeter_pressure_setting_inhg: 29.92,
            vertical_speed_fpm: 0.0,
            pitch_deg: 0.0,
            roll_deg: 0.0,
            side_slip_fps2: 0.0,
            heading_deg: 0.0,
            hsi_course_select_heading_deg: 0.0,
            hsi_course_deviation_deg: 0.0,
            hsi_mode: HsiMode::Gps,
        }
    }
}

/// `aerosim.<actor>.flight_control_command`: the pilot's inputs, each
/// normalised (ranges in the field comments). AeroSim latches the last one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlightControlCommand {
    /// 0–1 per power group (split lift and cruise).
    pub power_cmd: Vec<f64>,
    /// −1–1, right positive.
    pub roll_cmd: f64,
    /// −1–1, nose up positive.
    pub pitch_cmd: f64,
    /// −1–1, right positive.
    pub yaw_cmd: f64,
    /// 0–1.
    pub thrust_tilt_cmd: f64,
    /// 0–1.
    pub flap_cmd: f64,
    /// 0–1.
    pub speedbrake_cmd: f64,
    /// 0 up – 1 down.
    pub landing_gear_cmd: f64,
    /// −1–1.
    pub wheel_steer_cmd: f64,
    /// 0–1.
    pub wheel_brake_cmd: f64,
}

impl Default for FlightControlCommand {
    fn default() -> Self {
        Self {
            power_cmd: vec![0.0],
            roll_cmd: 0.0,
            pitch_cmd: 0.0,
            yaw_cmd: 0.0,
            thrust_tilt_cmd: 0.0,
            flap_cmd: 0.0,
            speedbrake_cmd: 0.0,
            landing_gear_cmd: 0.0,
            wheel_steer_cmd: 0.0,
            wheel_brake_cmd: 0.0,
        }
    }
}

/// What the autopilot does with its flight plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum AutopilotFlightPlanCommand {
    #[default]
    Stop = 0,
    Run = 1,
    Pause = 2,
}
integer_enum!(AutopilotFlightPlanCommand { Stop = 0, Run = 1, Pause = 2 });

/// `aerosim.<actor>.autopilot_command`: flight plan and setpoints. AeroSim
/// latches the last one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AutopilotCommand {
    pub flight_plan: String,
    pub flight_plan_command: AutopilotFlightPlanCommand,
    pub use_manual_setpoints: bool,
    pub attitude_hold: bool,
    pub altitude_hold: bool,
    pub altitude_setpoint_ft: f64,
    pub airspeed_hold: bool,
    pub airspeed_setpoint_kts: f64,
    pub heading_hold: bool,
    pub heading_set_by_waypoint: bool,
    /// 0 north, 90 east.
    pub heading_setpoint_deg: f64,
    pub target_wp_latitude_deg: f64,
    pub target_wp_longitude_deg: f64,
}

/// Free-form JSON, double-encoded as AeroSim does: `{"data": "<json text>"}`.
/// The clock's ticks are `JsonData` whose metadata carries the time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonData {
    pub data: String,
}

impl JsonData {
    pub fn new(value: &serde_json::Value) -> Self {
        Self {
            data: value.to_string(),
        }
    }

    /// The JSON inside, when it is JSON.
    pub fn value(&self) -> Option<serde_json::Value> {
        serde_json::from_str(&self.data).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_travel_as_integers_and_unknown_ones_are_refused() {
        let c = AutopilotCommand {
            flight_plan_command: AutopilotFlightPlanCommand::Pause,
            ..Default::default()
        };
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["flight_plan_command"], 2);
        let mut text = v.to_string();
        assert_eq!(serde_json::from_str::<AutopilotCommand>(&text).unwrap(), c);
        text = text.replace("\"flight_plan_command\":2", "\"flight_plan_command\":7");
        assert!(serde_json::from_str::<AutopilotCommand>(&text).is_err());
        let d = serde_json::to_value(PrimaryFlightDisplayData::default()).unwrap();
        assert_eq!(d["hsi_mode"], 0);
    }

    #[test]
    fn every_field_is_required() {
        let mut v = serde_json::to_value(FlightControlCommand::default()).unwrap();
        v.as_object_mut().unwrap().remove("wheel_brake_cmd");
        assert!(serde_json::from_value::<FlightControlCommand>(v).is_err());
    }

    #[test]
    fn states_that_no_conversion_can_use_are_refused() {
        let mut s = VehicleState::default();
        assert!(check_finite(&s).is_ok());
        s.velocity.x = 1e200;
        assert!(check_finite(&s).is_err());
        s.velocity.x = 0.0;
        s.state.pose.orientation = Quaternion {
            w: 0.0,
            x: 0.0,
            y: 0.0,
            z: 0.0,
        };
        assert!(check_finite(&s).is_err());
    }
}
