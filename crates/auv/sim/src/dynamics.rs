//! Simple, plausible AUV motion: each thruster level sets a target body
//! velocity that the AUV approaches with a first-order lag, in a NED world
//! with an FRD body (the default reading's telemetry).
//!
//! Thruster senses follow `auv_proto::thruster`: left and right forward when
//! positive (more left than right turns right), side to starboard, vertical up.

use std::f64::consts::PI;

use auv_proto::telemetry::Telemetry;
use auv_proto::thruster::ThrusterCommand;
use auv_proto::THRUST_MAX;

/// Full-thrust speeds.
pub const MAX_SURGE: f64 = 1.0;
pub const MAX_SWAY: f64 = 0.5;
pub const MAX_HEAVE: f64 = 0.5;
pub const MAX_YAW_RATE: f64 = 0.6;
/// Time constant of the velocity response (s).
const TAU: f64 = 0.8;
/// Depth of the flat seabed (m, NED z).
pub const SEABED_DEPTH: f64 = 12.0;
/// The AUV's body never goes closer to the seabed than this.
const BOTTOM_CLEARANCE: f64 = 0.3;
pub const START_DEPTH: f64 = 2.0;
/// AUVs start side by side, this far apart along east.
pub const START_SPACING: f64 = 3.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AuvState {
    pub id: u8,
    /// NED position (m).
    pub north: f64,
    pub east: f64,
    pub depth: f64,
    /// Z-Y-X Euler angles of the FRD body (rad).
    pub yaw: f64,
    pub pitch: f64,
    pub roll: f64,
    /// FRD body velocities (m/s) and yaw rate (rad/s).
    pub surge: f64,
    pub sway: f64,
    pub heave: f64,
    pub yaw_rate: f64,
    /// Held thruster levels: left, right, side, vertical.
    pub levels: [i8; 4],
}

impl AuvState {
    /// The `index`-th AUV at rest, heading north.
    pub fn start(id: u8, index: usize) -> Self {
        AuvState {
            id,
            north: 0.0,
            east: START_SPACING * index as f64,
            depth: START_DEPTH,
            yaw: 0.0,
            pitch: 0.0,
            roll: 0.0,
            surge: 0.0,
            sway: 0.0,
            heave: 0.0,
            yaw_rate: 0.0,
            levels: [0; 4],
        }
    }

    /// Applies a command; a skipped level (−127) keeps the held one.
    pub fn command(&mut self, c: &ThrusterCommand) {
        for (held, level) in self.levels.iter_mut().zip(c.levels()) {
            if let Some(v) = level {
                *held = v;
            }
        }
    }

    pub fn step(&mut self, dt: f64) {
        if dt <= 0.0 || !dt.is_finite() {
            return;
        }
        let [left, right, side, vertical] = self.levels.map(|l| f64::from(l) / f64::from(THRUST_MAX));
        let approach = 1.0 - (-dt / TAU).exp();
        let toward = |value: &mut f64, target: f64| *value += (target - *value) * approach;
        toward(&mut self.surge, MAX_SURGE * (left + right) / 2.0);
        toward(&mut self.yaw_rate, MAX_YAW_RATE * (left - right) / 2.0);
        toward(&mut self.sway, MAX_SWAY * side);
        toward(&mut self.heave, -MAX_HEAVE * vertical);

        self.yaw = wrap_angle(self.yaw + self.yaw_rate * dt);
        let (s, c) = self.yaw.sin_cos();
        self.north += (self.surge * c - self.sway * s) * dt;
        self.east += (self.surge * s + self.sway * c) * dt;
        self.depth += self.heave * dt;
        let floor = SEABED_DEPTH - BOTTOM_CLEARANCE;
        if self.depth < 0.0 || self.depth > floor {
            self.depth = self.depth.clamp(0.0, floor);
            self.heave = 0.0;
        }
        // Nose up while climbing, a bank into turns and with sideways drift.
        self.pitch = -0.2 * self.heave / MAX_HEAVE;
        self.roll = 0.1 * self.sway / MAX_SWAY + 0.15 * self.yaw_rate * self.surge;
    }

    pub fn telemetry(&self) -> Telemetry {
        Telemetry {
            auv_id: self.id,
            x: self.north as f32,
            y: self.east as f32,
            z: self.depth as f32,
            yaw: self.yaw as f32,
            pitch: self.pitch as f32,
            roll: self.roll as f32,
        }
    }
}

fn wrap_angle(a: f64) -> f64 {
    let w = (a + PI).rem_euclid(2.0 * PI) - PI;
    if w <= -PI {
        w + 2.0 * PI
    } else {
        w
    }
}

/// Every AUV of one simulator run.
#[derive(Debug, Clone, PartialEq)]
pub struct World {
    pub auvs: Vec<AuvState>,
}

impl World {
    pub fn new(ids: &[u8]) -> Self {
        World {
            auvs: ids.iter().enumerate().map(|(i, &id)| AuvState::start(id, i)).collect(),
        }
    }

    pub fn auv_mut(&mut self, id: u8) -> Option<&mut AuvState> {
        self.auvs.iter_mut().find(|a| a.id == id)
    }

    pub fn step(&mut self, dt: f64) {
        for a in &mut self.auvs {
            a.step(dt);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(levels: [Option<i8>; 4], seconds: f64) -> AuvState {
        let mut a = AuvState::start(0, 0);
        a.command(&ThrusterCommand::new(0, levels).unwrap());
        for _ in 0..(seconds * 100.0) as usize {
            a.step(0.01);
        }
        a
    }

    #[test]
    fn forward_thrust_moves_north_when_heading_north() {
        let a = run([Some(100), Some(100), None, None], 5.0);
        assert!(a.north > 3.0 && a.north < 5.0, "{a:?}");
        assert!(a.east.abs() < 1e-9 && a.yaw.abs() < 1e-9);
        assert!((a.surge - MAX_SURGE).abs() < 0.01);
    }

    #[test]
    fn more_left_than_right_turns_right() {
        let a = run([Some(50), Some(-50), None, None], 1.0);
        assert!(a.yaw > 0.1, "{a:?}");
        let b = run([Some(-50), Some(50), None, None], 1.0);
        assert!(b.yaw < -0.1, "{b:?}");
    }

    #[test]
    fn side_goes_to_starboard_and_vertical_goes_up() {
        let a = run([None, None, Some(100), None], 3.0);
        assert!(a.east > 0.5 && a.north.abs() < 1e-9, "{a:?}");
        let b = run([None, None, None, Some(100)], 2.0);
        assert!(b.depth < START_DEPTH - 0.3 && b.pitch > 0.0, "{b:?}");
        let c = run([None, None, None, Some(-100)], 100.0);
        assert!((c.depth - (SEABED_DEPTH - BOTTOM_CLEARANCE)).abs() < 1e-9);
        let d = run([None, None, None, Some(100)], 30.0);
        assert_eq!(d.depth, 0.0);
    }

    #[test]
    fn a_skipped_level_keeps_the_held_one() {
        let mut a = AuvState::start(0, 0);
        a.command(&ThrusterCommand::new(0, [Some(10), Some(20), Some(30), Some(40)]).unwrap());
        a.command(&ThrusterCommand::new(0, [None, Some(-5), None, None]).unwrap());
        assert_eq!(a.levels, [10, -5, 30, 40]);
    }

    #[test]
    fn yaw_stays_wrapped() {
        let a = run([Some(100), Some(-100), None, None], 30.0);
        assert!(a.yaw > -PI && a.yaw <= PI);
        assert_eq!(wrap_angle(PI), PI);
        assert_eq!(wrap_angle(-PI), PI);
        assert!((wrap_angle(3.0 * PI / 2.0) + PI / 2.0).abs() < 1e-12);
    }
}
