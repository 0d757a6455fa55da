//! A point-mass aircraft in coordinated flight: enough to make every field
//! of AeroSim's vehicle state and flight display move consistently, and to
//! show that commands arrive. Without a command it circles; an autopilot
//! command's holds steer altitude, heading and airspeed; a flight-control
//! command sets bank, climb and power. The last command holds (AeroSim
//! latches them).

use aerosim_proto::frames::quaternion_from_roll_pitch_yaw;
use aerosim_proto::types::{
    ActorState, AutopilotCommand, FlightControlCommand, HsiMode, Pose, PrimaryFlightDisplayData, Quaternion, Vector3,
    VehicleState,
};

const G: f64 = 9.80665;
const FT_PER_M: f64 = 1.0 / 0.3048;
const KTS_PER_MPS: f64 = 3600.0 / 1852.0;
const MAX_BANK: f64 = 30.0 * std::f64::consts::PI / 180.0;
const MAX_CLIMB: f64 = 5.0;
/// The circle flown without a command.
const PATTERN_BANK: f64 = 15.0 * std::f64::consts::PI / 180.0;
const START_ALTITUDE_M: f64 = 300.0;
const START_SPEED: f64 = 40.0;

/// What steers the aircraft.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Control {
    #[default]
    Pattern,
    Autopilot(AutopilotCommand),
    FlightControl(FlightControlCommand),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Aircraft {
    /// NED, metres from the origin (at sea level).
    pub position: [f64; 3],
    /// Radians from north, clockwise.
    pub heading: f64,
    pub speed: f64,
    /// m/s, up positive.
    pub climb: f64,
    pub roll: f64,
    pub pitch: f64,
    pub roll_rate: f64,
    pub turn_rate: f64,
    pub accel: f64,
    pub target_altitude_m: f64,
}

impl Aircraft {
    /// Actor `index` starts 200 m east of the one before it.
    pub fn new(index: usize) -> Self {
        Self {
            position: [0.0, 200.0 * index as f64, -START_ALTITUDE_M],
            heading: 0.0,
            speed: START_SPEED,
            climb: 0.0,
            roll: 0.0,
            pitch: 0.0,
            roll_rate: 0.0,
            turn_rate: 0.0,
            accel: 0.0,
            target_altitude_m: START_ALTITUDE_M,
        }
    }

    pub fn altitude(&self) -> f64 {
        -self.position[2]
    }

    /// Advances `dt` seconds under `control`.
    pub fn step(&mut self, dt: f64, control: &Control) {
        let (bank, climb, speed) = match control {
            Control::Pattern => (PATTERN_BANK, (START_ALTITUDE_M - self.altitude()) * 0.2, START_SPEED),
            Control::Autopilot(c) => {
                let bank = if c.heading_hold {
                    let error = (c.heading_setpoint_deg.to_radians() - self.heading + std::f64::consts::PI)
                        .rem_euclid(2.0 * std::f64::consts::PI)
                        - std::f64::consts::PI;
                    error * 1.5
                } else {
                    self.roll
                };
                let climb = if c.altitude_hold {
                    self.target_altitude_m = c.altitude_setpoint_ft / FT_PER_M;
                    (self.target_altitude_m - self.altitude()) * 0.2
                } else {
                    self.climb
                };
                let speed = if c.airspeed_hold {
                    c.airspeed_setpoint_kts / KTS_PER_MPS
                } else {
                    self.speed
                };
                (bank, climb, speed)
            }
            // JSBSim's normalised controls, as AeroSim's flight controller
            // applies them: roll right-positive, elevator nose-down-positive.
            Control::FlightControl(c) => {
                let power = c.power_cmd.first().copied().unwrap_or(0.0);
                (c.roll_cmd * MAX_BANK, -c.pitch_cmd * MAX_CLIMB, 20.0 + 40.0 * power)
            }
        };
        let bank = bank.clamp(-MAX_BANK, MAX_BANK);
        let climb = climb.clamp(-MAX_CLIMB, MAX_CLIMB);
        // First-order responses: bank in ~1 s, climb in ~2 s, speed in ~5 s.
        let roll = self.roll + (bank - self.roll) * (dt / 1.0).min(1.0);
        self.roll_rate = (roll - self.roll) / dt;
        self.roll = roll;
        self.climb += (climb - self.climb) * (dt / 2.0).min(1.0);
        let speed = (self.speed + (speed - self.speed) * (dt / 5.0).min(1.0)).max(15.0);
        self.accel = (speed - self.speed) / dt;
        self.speed = speed;
        self.pitch = (self.climb / self.speed).atan();
        self.turn_rate = G * self.roll.tan() / self.speed;
        self.heading = (self.heading + self.turn_rate * dt).rem_euclid(2.0 * std::f64::consts::PI);
        let v = self.velocity_ned();
        for (p, v) in self.position.iter_mut().zip(v) {
            *p += v * dt;
        }
    }

    pub fn velocity_ned(&self) -> [f64; 3] {
        let horizontal = self.speed * self.pitch.cos();
        [
            horizontal * self.heading.cos(),
            horizontal * self.heading.sin(),
            -self.climb,
        ]
    }

    /// As AeroSim's JSBSim model reports it.
    pub fn vehicle_state(&self) -> VehicleState {
        let v = self.velocity_ned();
        let (sr, cr) = self.roll.sin_cos();
        let (_, cp) = self.pitch.sin_cos();
        let vec = |x: f64, y: f64, z: f64| Vector3 { x, y, z };
        let q = quaternion_from_roll_pitch_yaw(self.roll, self.pitch, self.heading);
        VehicleState {
            state: ActorState {
                pose: Pose {
                    position: vec(self.position[0], self.position[1], self.position[2]),
                    orientation: Quaternion {
                        w: q[0],
                        x: q[1],
                        y: q[2],
                        z: q[3],
                    },
                },
            },
            velocity: vec(v[0], v[1], v[2]),
            // Body rates of a coordinated turn (yaw rate about the vertical).
            angular_velocity: vec(self.roll_rate, self.turn_rate * sr * cp, self.turn_rate * cr * cp),
            acceleration: vec(self.accel, 0.0, 0.0),
            angular_acceleration: vec(0.0, 0.0, 0.0),
        }
    }

    pub fn flight_display(&self) -> PrimaryFlightDisplayData {
        PrimaryFlightDisplayData {
            airspeed_kts: self.speed * KTS_PER_MPS,
            true_airspeed_kts: self.speed * KTS_PER_MPS,
            altitude_ft: self.altitude() * FT_PER_M,
            target_altitude_ft: self.target_altitude_m * FT_PER_M,
            altimeter_pressure_setting_inhg: 29.92,
            vertical_speed_fpm: self.climb * FT_PER_M * 60.0,
            pitch_deg: self.pitch.to_degrees(),
            roll_deg: self.roll.to_degrees(),
            side_slip_fps2: 0.0,
            heading_deg: self.heading.to_degrees(),
            hsi_course_select_heading_deg: 0.0,
            hsi_course_deviation_deg: 0.0,
            hsi_mode: HsiMode::Gps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fly(control: &Control, seconds: f64) -> Aircraft {
        let mut a = Aircraft::new(0);
        for _ in 0..(seconds * 100.0) as usize {
            a.step(0.01, control);
        }
        a
    }

    #[test]
    fn without_commands_it_circles_at_its_altitude() {
        let a = fly(&Control::Pattern, 60.0);
        assert!((a.altitude() - START_ALTITUDE_M).abs() < 1.0, "{a:?}");
        assert!((a.roll - PATTERN_BANK).abs() < 1e-3);
        assert!(a.turn_rate > 0.05);
    }

    #[test]
    fn flight_controls_follow_jsbsim_signs() {
        let up = FlightControlCommand {
            power_cmd: vec![0.5],
            pitch_cmd: -0.5,
            ..FlightControlCommand::default()
        };
        let a = fly(&Control::FlightControl(up), 10.0);
        assert!(
            a.altitude() > START_ALTITUDE_M + 10.0,
            "negative pitch_cmd climbs: {}",
            a.altitude()
        );
        let left = FlightControlCommand {
            power_cmd: vec![0.5],
            roll_cmd: -0.5,
            ..FlightControlCommand::default()
        };
        let mut a = Aircraft::new(0);
        a.heading = 1.0;
        for _ in 0..200 {
            a.step(0.01, &Control::FlightControl(left.clone()));
        }
        assert!(a.heading < 1.0, "negative roll_cmd turns left: heading {}", a.heading);
    }

    #[test]
    fn an_autopilot_command_is_followed() {
        let c = AutopilotCommand {
            altitude_hold: true,
            altitude_setpoint_ft: 1500.0,
            heading_hold: true,
            heading_setpoint_deg: 90.0,
            airspeed_hold: true,
            airspeed_setpoint_kts: 100.0,
            use_manual_setpoints: true,
            ..AutopilotCommand::default()
        };
        let a = fly(&Control::Autopilot(c), 120.0);
        assert!(
            (a.altitude() * FT_PER_M - 1500.0).abs() < 20.0,
            "{}",
            a.altitude() * FT_PER_M
        );
        assert!(
            (a.heading.to_degrees() - 90.0).abs() < 2.0,
            "{}",
            a.heading.to_degrees()
        );
        assert!((a.speed * KTS_PER_MPS - 100.0).abs() < 1.0);
    }
}
