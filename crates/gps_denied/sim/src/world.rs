//! The emulated world: a rover carrying the landing pad drives a pattern on
//! flat ground; a drone flies above it under simple dynamics driven by the
//! protocol's commands. Axes are `gps_denied_proto::frames`' (world z up, body
//! FLU, yaw-pitch-roll Euler angles).
//!
//! Dynamics (deliberately simple, documented in `--help`): `thrust` is a
//! vertical acceleration relative to hover (0 hovers); `pitch` and `roll`
//! are tilt set-points the drone reaches with a 0.2 s lag, and a tilt
//! accelerates it horizontally by g·tan(tilt); `yaw` is a yaw rate (rad/s);
//! linear drag slows everything. Touching the ground or the rover's top
//! with a downward speed lands it; landed, it rides the rover until thrust
//! lifts it off.

use gps_denied_proto::camera::CameraModel;
use gps_denied_proto::frames::world_to_body;
use gps_denied_proto::{Command, DroneTelemetry, Euler, LandingPad, PadReport, RoverTelemetry, Vector3};

pub const GRAVITY: f64 = 9.81;
/// Vertical acceleration per unit of `thrust`, m/s².
pub const THRUST_ACCEL: f64 = 4.0;
pub const TILT_TIME_CONSTANT: f64 = 0.2;
/// Yaw rate per unit of `yaw`, rad/s.
pub const YAW_RATE: f64 = 1.0;
pub const HORIZONTAL_DRAG: f64 = 0.5;
pub const VERTICAL_DRAG: f64 = 1.0;
/// Above this thrust a landed drone takes off.
pub const TAKE_OFF_THRUST: f32 = 0.05;
pub const START_ALTITUDE: f64 = 5.0;

pub const ROVER_LENGTH: f64 = 0.9;
pub const ROVER_WIDTH: f64 = 0.7;
/// Height of the rover's deck, where the pad is.
pub const ROVER_TOP: f64 = 0.3;
pub const PAD_RADIUS: f64 = 0.3;
/// The pad is not reported closer than this (it fills the view) or farther.
pub const MIN_DETECTION_DISTANCE: f64 = 0.5;
pub const MAX_DETECTION_DISTANCE: f64 = 40.0;

const MAX_SUBSTEP: f64 = 0.01;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Circular,
    Linear,
    Figure8,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Circular => "circular",
            Pattern::Linear => "linear",
            Pattern::Figure8 => "figure8",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Pattern::Circular, Pattern::Linear, Pattern::Figure8]
            .into_iter()
            .find(|p| p.name() == s)
    }

    /// Ground position and velocity at time `t`.
    pub fn at(self, t: f64) -> ([f64; 2], [f64; 2]) {
        match self {
            Pattern::Circular => {
                let (r, w) = (2.0, 0.15);
                let (s, c) = (w * t).sin_cos();
                ([r * c, r * s], [-r * w * s, r * w * c])
            }
            Pattern::Linear => {
                let (a, w) = (3.0, 0.1);
                ([a * (w * t).sin(), 0.0], [a * w * (w * t).cos(), 0.0])
            }
            Pattern::Figure8 => {
                let (a, w) = (2.5, 0.1);
                (
                    [a * (w * t).sin(), a / 2.0 * (2.0 * w * t).sin()],
                    [a * w * (w * t).cos(), a * w * (2.0 * w * t).cos()],
                )
            }
        }
    }
}

/// Where a landed drone stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Ground,
    Rover,
}

#[derive(Debug, Clone)]
pub struct Drone {
    pub position: [f64; 3],
    /// World frame.
    pub velocity: [f64; 3],
    pub attitude: Euler,
    /// Body rates (small-angle: the Euler angle rates).
    pub rates: [f64; 3],
    /// World-frame acceleration of the last step.
    pub acceleration: [f64; 3],
    pub landed: Option<Surface>,
}

#[derive(Debug, Clone)]
pub struct World {
    pub time: f64,
    pub pattern: Pattern,
    pub drone: Drone,
    pub command: Command,
}

impl World {
    /// At time 0 the drone hovers `START_ALTITUDE` above the rover.
    pub fn new(pattern: Pattern) -> Self {
        let ([x, y], _) = pattern.at(0.0);
        Self {
            time: 0.0,
            pattern,
            drone: Drone {
                position: [x, y, START_ALTITUDE],
                velocity: [0.0; 3],
                attitude: Euler::default(),
                rates: [0.0; 3],
                acceleration: [0.0; 3],
                landed: None,
            },
            command: Command::NEUTRAL,
        }
    }

    pub fn rover_position(&self) -> [f64; 3] {
        let ([x, y], _) = self.pattern.at(self.time);
        [x, y, ROVER_TOP / 2.0]
    }

    pub fn rover_velocity(&self) -> [f64; 3] {
        let (_, [vx, vy]) = self.pattern.at(self.time);
        [vx, vy, 0.0]
    }

    /// The rover faces where it drives (straight along x for `linear`).
    pub fn rover_heading(&self) -> f64 {
        let (_, [vx, vy]) = self.pattern.at(self.time);
        if self.pattern == Pattern::Linear || vx.hypot(vy) < 1e-6 {
            0.0
        } else {
            vy.atan2(vx)
        }
    }

    /// `(x, y)` in the rover's own frame (x forward), relative to its centre.
    pub fn in_rover_frame(&self, x: f64, y: f64) -> (f64, f64) {
        let [rx, ry, _] = self.rover_position();
        let (s, c) = self.rover_heading().sin_cos();
        let (dx, dy) = (x - rx, y - ry);
        (c * dx + s * dy, -s * dx + c * dy)
    }

    pub fn on_rover_deck(&self, x: f64, y: f64) -> bool {
        let (lx, ly) = self.in_rover_frame(x, y);
        lx.abs() <= ROVER_LENGTH / 2.0 && ly.abs() <= ROVER_WIDTH / 2.0
    }

    pub fn step(&mut self, dt: f64) {
        let n = (dt / MAX_SUBSTEP).ceil().max(1.0);
        for _ in 0..n as u32 {
            self.substep(dt / n);
        }
    }

    fn substep(&mut self, dt: f64) {
        let c = self.command;
        let before = self.rover_position();
        self.time += dt;
        let after = self.rover_position();
        let rover_velocity = self.rover_velocity();
        let resting = |surface| {
            if surface == Surface::Rover {
                rover_velocity
            } else {
                [0.0; 3]
            }
        };
        let d = &mut self.drone;
        if let Some(surface) = d.landed {
            if c.thrust() <= TAKE_OFF_THRUST {
                if surface == Surface::Rover {
                    d.position[0] += after[0] - before[0];
                    d.position[1] += after[1] - before[1];
                }
                d.velocity = resting(surface);
                d.acceleration = [0.0; 3];
                return;
            }
            d.landed = None;
        }
        let a = &mut d.attitude;
        let roll_rate = (f64::from(c.roll()) - a.roll) / TILT_TIME_CONSTANT;
        let pitch_rate = (f64::from(c.pitch()) - a.pitch) / TILT_TIME_CONSTANT;
        let yaw_rate = f64::from(c.yaw()) * YAW_RATE;
        a.roll += roll_rate * dt;
        a.pitch += pitch_rate * dt;
        a.yaw = wrap_angle(a.yaw + yaw_rate * dt);
        d.rates = [roll_rate, pitch_rate, yaw_rate];
        let forward = GRAVITY * a.pitch.tan();
        let left = -GRAVITY * a.roll.tan();
        let (s, co) = a.yaw.sin_cos();
        let v = d.velocity;
        d.acceleration = [
            co * forward - s * left - HORIZONTAL_DRAG * v[0],
            s * forward + co * left - HORIZONTAL_DRAG * v[1],
            THRUST_ACCEL * f64::from(c.thrust()) - VERTICAL_DRAG * v[2],
        ];
        for i in 0..3 {
            d.velocity[i] += d.acceleration[i] * dt;
            d.position[i] += d.velocity[i] * dt;
        }
        let [x, y, z] = self.drone.position;
        let (surface, height) = if self.on_rover_deck(x, y) {
            (Surface::Rover, ROVER_TOP)
        } else {
            (Surface::Ground, 0.0)
        };
        let d = &mut self.drone;
        if z <= height && d.velocity[2] <= 0.0 {
            d.position[2] = height;
            d.landed = Some(surface);
            d.attitude.roll = 0.0;
            d.attitude.pitch = 0.0;
            d.rates = [0.0; 3];
            d.acceleration = [0.0; 3];
            d.velocity = resting(surface);
        }
    }

    /// The pad as the drone's camera sees it: body-frame offset, vertical
    /// distance, and a confidence that falls with distance and towards the
    /// image's edge; `NotVisible` when its centre is out of the image.
    pub fn pad_detection(&self, camera: &CameraModel) -> PadReport {
        let d = &self.drone;
        let [rx, ry, _] = self.rover_position();
        let offset = [rx - d.position[0], ry - d.position[1], ROVER_TOP - d.position[2]];
        let body = world_to_body(d.attitude, offset);
        let distance = d.position[2] - ROVER_TOP;
        if !(MIN_DETECTION_DISTANCE..=MAX_DETECTION_DISTANCE).contains(&distance) {
            return PadReport::NotVisible;
        }
        let Some((u, v)) = camera.project_body(body).filter(|&(u, v)| camera.contains(u, v)) else {
            return PadReport::NotVisible;
        };
        let off_centre = ((u - camera.cx).abs() / camera.cx).max((v - camera.cy).abs() / camera.cy);
        let confidence = (0.98 - 0.015 * distance - 0.3 * off_centre).clamp(0.05, 1.0);
        PadReport::Detected(LandingPad {
            relative_x: body[0],
            relative_y: body[1],
            distance,
            confidence,
        })
    }

    /// Everything but the camera (the caller adds geometry and image).
    pub fn telemetry(&self, camera: &CameraModel) -> DroneTelemetry {
        let d = &self.drone;
        let specific_force = [d.acceleration[0], d.acceleration[1], d.acceleration[2] + GRAVITY];
        let f = world_to_body(d.attitude, specific_force);
        let (s, c) = d.attitude.yaw.sin_cos();
        let [vx, vy, vz] = d.velocity;
        DroneTelemetry {
            orientation: Some(d.attitude),
            angular_velocity: Some(Vector3::new(d.rates[0], d.rates[1], d.rates[2])),
            linear_acceleration: Some(Vector3::new(f[0], f[1], f[2])),
            altitude: Some(d.position[2]),
            vertical_velocity: Some(vz),
            velocity: Some(Vector3::new(c * vx + s * vy, -s * vx + c * vy, vz)),
            landing_pad: Some(self.pad_detection(camera)),
            camera: None,
            image: None,
            landed: Some(d.landed.is_some()),
            timestamp: Some(self.time),
        }
    }

    pub fn rover_telemetry(&self) -> RoverTelemetry {
        let [x, y, z] = self.rover_position();
        let [vx, vy, vz] = self.rover_velocity();
        RoverTelemetry {
            position: Some(Vector3::new(x, y, z)),
            velocity: Some(Vector3::new(vx, vy, vz)),
            pattern: Some(self.pattern.name().to_owned()),
            timestamp: Some(self.time),
        }
    }
}

fn wrap_angle(a: f64) -> f64 {
    use std::f64::consts::{PI, TAU};
    (a + PI).rem_euclid(TAU) - PI
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pad(w: &World) -> LandingPad {
        match w.pad_detection(&CameraModel::default()) {
            PadReport::Detected(p) => p,
            PadReport::NotVisible => panic!("pad not visible"),
        }
    }

    #[test]
    fn hovers_above_the_rover_at_start_with_the_pad_below() {
        let w = World::new(Pattern::Circular);
        let p = pad(&w);
        assert!(p.relative_x.abs() < 1e-9 && p.relative_y.abs() < 1e-9);
        assert!((p.distance - (START_ALTITUDE - ROVER_TOP)).abs() < 1e-9);
        let t = w.telemetry(&CameraModel::default());
        assert_eq!(t.linear_acceleration, Some(Vector3::new(0.0, 0.0, GRAVITY)));
        assert_eq!(t.landed, Some(false));
    }

    #[test]
    fn thrust_climbs_pitch_flies_forward_roll_flies_right() {
        let mut w = World::new(Pattern::Linear);
        w.command = Command::new(0.5, 0.0, 0.0, 0.0).unwrap();
        w.step(1.0);
        assert!(w.drone.position[2] > START_ALTITUDE + 0.5, "{:?}", w.drone.position);
        let mut w = World::new(Pattern::Linear);
        w.drone.attitude.yaw = std::f64::consts::FRAC_PI_2; // facing +y
        w.command = Command::new(0.0, 0.3, 0.0, 0.0).unwrap();
        w.step(1.0);
        assert!(w.drone.position[1] > 0.5, "forward is +y when facing +y");
        let t = w.telemetry(&CameraModel::default());
        assert!(t.velocity.unwrap().x > 0.5, "body velocity is forward");
        let mut w = World::new(Pattern::Linear);
        w.command = Command::new(0.0, 0.0, 0.3, 0.0).unwrap();
        w.step(1.0);
        assert!(w.drone.position[1] < -0.5, "positive roll goes right (−y)");
    }

    #[test]
    fn descends_onto_the_rover_and_rides_it_until_thrust() {
        let mut w = World::new(Pattern::Circular);
        w.command = Command::new(-1.0, 0.0, 0.0, 0.0).unwrap();
        // Descending 4.7 m takes about 2 s; the rover moves 0.6 m meanwhile,
        // so the drone lands on the ground or the deck depending on timing —
        // follow the rover to land on it.
        for _ in 0..400 {
            let [rx, ry, _] = w.rover_position();
            w.drone.position[0] = rx;
            w.drone.position[1] = ry;
            w.step(0.01);
            if w.drone.landed.is_some() {
                break;
            }
        }
        assert_eq!(w.drone.landed, Some(Surface::Rover));
        assert!((w.drone.position[2] - ROVER_TOP).abs() < 1e-9);
        w.command = Command::NEUTRAL;
        w.step(2.0);
        assert!(
            w.on_rover_deck(w.drone.position[0], w.drone.position[1]),
            "rides the rover"
        );
        assert!(w.telemetry(&CameraModel::default()).landed.unwrap());
        w.command = Command::new(0.8, 0.0, 0.0, 0.0).unwrap();
        w.step(1.0);
        assert!(w.drone.landed.is_none() && w.drone.position[2] > ROVER_TOP + 0.5);
    }

    #[test]
    fn the_pad_leaves_the_view_as_the_rover_drives_away() {
        let mut w = World::new(Pattern::Linear);
        w.drone.position[0] += 4.0;
        assert_eq!(w.pad_detection(&CameraModel::default()), PadReport::NotVisible);
        w.drone.position[0] -= 3.0;
        let p = pad(&w);
        assert!((p.relative_x + 1.0).abs() < 1e-9, "the pad is behind: {p:?}");
        assert!(p.confidence < 0.98 - 0.015 * p.distance, "off centre costs confidence");
        w.step(0.1);
    }
}
