//! The emulator's world: one vehicle flying a smooth, known trajectory over a
//! textured ground plane with a few coloured boxes. Everything is a pure
//! function of simulation time, so tests can compute what a sensor must see.
//!
//! RflySim's conventions: world NED (metres, ground at z = 0, up is −z), body
//! FRD, Euler roll/pitch/yaw (Z-Y-X).

use frames::{quat_to_euler, Quat, Vec3};

pub const GRAVITY: f64 = 9.81;

/// A circle with a slow altitude wave; the nose follows the velocity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trajectory {
    pub radius: f64,
    /// rad/s around the circle.
    pub omega: f64,
    pub altitude: f64,
    pub altitude_amplitude: f64,
    pub altitude_omega: f64,
}

impl Default for Trajectory {
    fn default() -> Self {
        Self {
            radius: 10.0,
            omega: 0.25,
            altitude: 5.0,
            altitude_amplitude: 1.0,
            altitude_omega: 0.4,
        }
    }
}

/// The vehicle's full state at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VehicleState {
    pub position: Vec3,
    pub velocity: Vec3,
    pub acceleration: Vec3,
    /// Body (FRD) → world (NED).
    pub attitude: Quat,
    /// roll, pitch, yaw, rad.
    pub euler: Vec3,
    /// rad/s in FRD.
    pub body_rates: Vec3,
    /// What an accelerometer reads, m/s² in FRD: (0, 0, −g) at rest.
    pub specific_force: Vec3,
}

type Mat3 = [[f64; 3]; 3];

fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn norm(a: Vec3) -> Vec3 {
    let n = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    [a[0] / n, a[1] / n, a[2] / n]
}

fn mat_t_vec(m: &Mat3, v: Vec3) -> Vec3 {
    // m's columns are the body axes in the world: mᵀ v takes v into the body.
    std::array::from_fn(|i| m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2])
}

fn quat_from_mat(m: &Mat3) -> Quat {
    let tr = m[0][0] + m[1][1] + m[2][2];
    let q = if tr > 0.0 {
        let s = (tr + 1.0).sqrt() * 2.0;
        [
            0.25 * s,
            (m[2][1] - m[1][2]) / s,
            (m[0][2] - m[2][0]) / s,
            (m[1][0] - m[0][1]) / s,
        ]
    } else if m[0][0] > m[1][1] && m[0][0] > m[2][2] {
        let s = (1.0 + m[0][0] - m[1][1] - m[2][2]).sqrt() * 2.0;
        [
            (m[2][1] - m[1][2]) / s,
            0.25 * s,
            (m[0][1] + m[1][0]) / s,
            (m[0][2] + m[2][0]) / s,
        ]
    } else if m[1][1] > m[2][2] {
        let s = (1.0 + m[1][1] - m[0][0] - m[2][2]).sqrt() * 2.0;
        [
            (m[0][2] - m[2][0]) / s,
            (m[0][1] + m[1][0]) / s,
            0.25 * s,
            (m[1][2] + m[2][1]) / s,
        ]
    } else {
        let s = (1.0 + m[2][2] - m[0][0] - m[1][1]).sqrt() * 2.0;
        [
            (m[1][0] - m[0][1]) / s,
            (m[0][2] + m[2][0]) / s,
            (m[1][2] + m[2][1]) / s,
            0.25 * s,
        ]
    };
    if q[0] < 0.0 {
        q.map(|v| -v)
    } else {
        q
    }
}

impl Trajectory {
    /// Standing still at `altitude` metres, nose north.
    pub fn hovering(altitude: f64) -> Self {
        Self {
            radius: 0.0,
            omega: 0.0,
            altitude,
            altitude_amplitude: 0.0,
            altitude_omega: 0.0,
        }
    }

    pub fn position(&self, t: f64) -> Vec3 {
        let (s, c) = (self.omega * t).sin_cos();
        let alt = self.altitude + self.altitude_amplitude * (self.altitude_omega * t).sin();
        [self.radius * c, self.radius * s, -alt]
    }

    pub fn velocity(&self, t: f64) -> Vec3 {
        let (s, c) = (self.omega * t).sin_cos();
        let dz = -self.altitude_amplitude * self.altitude_omega * (self.altitude_omega * t).cos();
        [-self.radius * self.omega * s, self.radius * self.omega * c, dz]
    }

    pub fn acceleration(&self, t: f64) -> Vec3 {
        let (s, c) = (self.omega * t).sin_cos();
        let w2 = self.omega * self.omega;
        let az = self.altitude_amplitude * self.altitude_omega.powi(2) * (self.altitude_omega * t).sin();
        [-self.radius * w2 * c, -self.radius * w2 * s, az]
    }

    /// Heading along the circle's tangent (north when not moving).
    pub fn yaw(&self, t: f64) -> f64 {
        let v = self.velocity(t);
        if v[0].hypot(v[1]) < 1e-9 {
            return 0.0;
        }
        v[1].atan2(v[0])
    }

    /// Body axes in the world (columns): body z opposes the specific force,
    /// the nose as close to the heading as that allows.
    fn rotation(&self, t: f64) -> Mat3 {
        let a = self.acceleration(t);
        let f = [a[0], a[1], a[2] - GRAVITY];
        let b3 = norm([-f[0], -f[1], -f[2]]);
        let yaw = self.yaw(t);
        let heading = [yaw.cos(), yaw.sin(), 0.0];
        let b2 = norm(cross(b3, heading));
        let b1 = cross(b2, b3);
        // Row-major storage of the matrix whose columns are b1, b2, b3.
        [[b1[0], b2[0], b3[0]], [b1[1], b2[1], b3[1]], [b1[2], b2[2], b3[2]]]
    }

    pub fn state(&self, t: f64) -> VehicleState {
        let r = self.rotation(t);
        let attitude = quat_from_mat(&r);
        let a = self.acceleration(t);
        let specific_force = mat_t_vec(&r, [a[0], a[1], a[2] - GRAVITY]);
        // Body rates from Rᵀ Ṙ (central difference).
        let h = 1e-4;
        let (rp, rm) = (self.rotation(t + h), self.rotation(t - h));
        let mut w = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                w[i][j] = (0..3).map(|k| r[k][i] * (rp[k][j] - rm[k][j]) / (2.0 * h)).sum();
            }
        }
        let body_rates = [w[2][1], w[0][2], w[1][0]];
        VehicleState {
            position: self.position(t),
            velocity: self.velocity(t),
            acceleration: a,
            attitude,
            euler: quat_to_euler(attitude),
            body_rates,
            specific_force,
        }
    }
}

/// What a block of the scene is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockOwner {
    /// A static object, by the name RflySim3D would give it.
    Object(&'static str),
    /// A vehicle, by its id.
    Vehicle(i32),
}

/// An axis-aligned box: a static object standing on the ground, or a vehicle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Block {
    pub owner: BlockOwner,
    pub min: Vec3,
    pub max: Vec3,
    /// b, g, r.
    pub color: [u8; 3],
    /// Segmentation label (also the LiDAR `seg`).
    pub label: u8,
    /// Infrared intensity 0..255.
    pub heat: u8,
}

/// What a ray hit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub distance: f64,
    pub point: Vec3,
    /// b, g, r before shading.
    pub color: [u8; 3],
    pub label: u8,
    pub heat: u8,
    /// Cosine between the surface normal and the sun.
    pub light: f64,
    /// Index of the block hit, `None` for the ground.
    pub block: Option<usize>,
}

pub const GROUND_LABEL: u8 = 1;
pub const SKY_BGR: [u8; 3] = [235, 206, 135];

#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    pub blocks: Vec<Block>,
    /// Checker square size of the ground texture, m.
    pub tile: f64,
}

impl Block {
    /// Whether it is the static object called `name`.
    pub fn is_object(&self, name: &str) -> bool {
        matches!(self.owner, BlockOwner::Object(n) if n == name)
    }

    pub fn centre(&self) -> Vec3 {
        std::array::from_fn(|k| (self.min[k] + self.max[k]) / 2.0)
    }

    /// Half its size along north, east, down.
    pub fn half_extent(&self) -> Vec3 {
        std::array::from_fn(|k| (self.max[k] - self.min[k]) / 2.0)
    }

    /// The box where `self` and `other` overlap, if they do.
    pub fn overlap(&self, other: &Block) -> Option<(Vec3, Vec3)> {
        let min: Vec3 = std::array::from_fn(|k| self.min[k].max(other.min[k]));
        let max: Vec3 = std::array::from_fn(|k| self.max[k].min(other.max[k]));
        (0..3).all(|k| min[k] <= max[k]).then_some((min, max))
    }
}

impl Default for Scene {
    fn default() -> Self {
        let b = |name, cx: f64, cy: f64, half: f64, h: f64, color: [u8; 3], label: u8, heat: u8| Block {
            owner: BlockOwner::Object(name),
            min: [cx - half, cy - half, -h],
            max: [cx + half, cy + half, 0.0],
            color,
            label,
            heat,
        };
        Self {
            blocks: vec![
                b("Building_1", 16.0, 0.0, 1.5, 6.0, [40, 40, 220], 10, 230), // red, hot
                b("Tree_2", 0.0, 16.0, 2.0, 4.0, [40, 200, 40], 11, 120),     // green
                b("Building_3", -16.0, 0.0, 1.5, 8.0, [220, 60, 40], 12, 60), // blue
                b("Container_4", 0.0, -16.0, 2.5, 3.0, [30, 200, 230], 13, 180), // yellow
                b("Tower_5", 0.0, 0.0, 1.0, 12.0, [200, 200, 200], 14, 90),   // grey pillar in the middle
            ],
            tile: 2.0,
        }
    }
}

/// Sun direction (towards the sun), NED.
const SUN: Vec3 = [0.3, 0.4, -0.866];

impl Scene {
    /// The first surface along `dir` (unit, NED) from `origin`, within `max_range`.
    pub fn cast(&self, origin: Vec3, dir: Vec3, max_range: f64) -> Option<Hit> {
        let mut best: Option<(f64, Option<usize>, Vec3)> = None;
        if dir[2] > 1e-9 && origin[2] < 0.0 {
            let t = -origin[2] / dir[2];
            if t <= max_range {
                best = Some((t, None, [0.0, 0.0, -1.0]));
            }
        }
        for (i, b) in self.blocks.iter().enumerate() {
            if let Some((t, normal)) = slab(origin, dir, b) {
                if t <= max_range && best.is_none_or(|(bt, _, _)| t < bt) {
                    best = Some((t, Some(i), normal));
                }
            }
        }
        let (t, block, normal) = best?;
        let point = [origin[0] + dir[0] * t, origin[1] + dir[1] * t, origin[2] + dir[2] * t];
        let light = (normal[0] * SUN[0] + normal[1] * SUN[1] + normal[2] * SUN[2]).max(0.0);
        let (color, label, heat) = match block {
            Some(i) => (self.blocks[i].color, self.blocks[i].label, self.blocks[i].heat),
            None => {
                let cell = ((point[0] / self.tile).floor() as i64 + (point[1] / self.tile).floor() as i64) & 1;
                let c = if cell == 0 { [60, 140, 70] } else { [90, 170, 110] };
                (c, GROUND_LABEL, 40)
            }
        };
        Some(Hit {
            distance: t,
            point,
            color,
            label,
            heat,
            light,
            block,
        })
    }
}

/// Ray / box intersection (slab method): distance and outward normal.
fn slab(o: Vec3, d: Vec3, b: &Block) -> Option<(f64, Vec3)> {
    let mut t_near = f64::NEG_INFINITY;
    let mut t_far = f64::INFINITY;
    let mut axis = 0;
    let mut sign = 1.0;
    for k in 0..3 {
        if d[k].abs() < 1e-12 {
            if o[k] < b.min[k] || o[k] > b.max[k] {
                return None;
            }
            continue;
        }
        let (t1, t2) = ((b.min[k] - o[k]) / d[k], (b.max[k] - o[k]) / d[k]);
        let (lo, hi, s) = if t1 < t2 { (t1, t2, -1.0) } else { (t2, t1, 1.0) };
        if lo > t_near {
            t_near = lo;
            axis = k;
            sign = s;
        }
        t_far = t_far.min(hi);
        if t_near > t_far {
            return None;
        }
    }
    if t_near < 1e-6 {
        return None; // starts inside or behind
    }
    let mut n = [0.0; 3];
    n[axis] = sign;
    Some((t_near, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use frames::rotate;

    #[test]
    fn at_rest_the_accelerometer_reads_minus_g_down() {
        let still = Trajectory::hovering(5.0);
        // With no velocity the heading is atan2(0, 0) = 0: nose north.
        let s = still.state(3.0);
        assert!(
            s.specific_force
                .iter()
                .zip([0.0, 0.0, -GRAVITY])
                .all(|(a, b)| (a - b).abs() < 1e-9),
            "{:?}",
            s.specific_force
        );
        assert!(s.body_rates.iter().all(|r| r.abs() < 1e-6));
        assert_eq!(s.position, [0.0, 0.0, -5.0]);
    }

    #[test]
    fn the_circle_is_consistent() {
        let tr = Trajectory::default();
        let h = 1e-5;
        for t in [0.0, 1.3, 7.9] {
            let s = tr.state(t);
            // Velocity is the derivative of position, acceleration of velocity.
            for k in 0..3 {
                let dv = (tr.position(t + h)[k] - tr.position(t - h)[k]) / (2.0 * h);
                assert!((dv - s.velocity[k]).abs() < 1e-5);
                let da = (tr.velocity(t + h)[k] - tr.velocity(t - h)[k]) / (2.0 * h);
                assert!((da - s.acceleration[k]).abs() < 1e-5);
            }
            // The specific force rotated into the world is a − g.
            let f = rotate(s.attitude, s.specific_force);
            let want = [s.acceleration[0], s.acceleration[1], s.acceleration[2] - GRAVITY];
            assert!(f.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-9));
            // The nose points along the horizontal velocity.
            let nose = rotate(s.attitude, [1.0, 0.0, 0.0]);
            let v = s.velocity;
            assert!(nose[0] * v[0] + nose[1] * v[1] > 0.99 * (v[0].hypot(v[1])) * nose[0].hypot(nose[1]));
            // Yaw rate ≈ omega about the world's down axis.
            let rate_world = rotate(s.attitude, s.body_rates);
            assert!((rate_world[2] - tr.omega).abs() < 0.02, "{rate_world:?}");
        }
    }

    #[test]
    fn rays_hit_the_ground_and_the_boxes() {
        let scene = Scene::default();
        let down = scene.cast([3.0, 3.0, -5.0], [0.0, 0.0, 1.0], 100.0).unwrap();
        assert!((down.distance - 5.0).abs() < 1e-9);
        assert_eq!((down.label, down.block), (GROUND_LABEL, None));
        let east = scene.cast([16.0, -10.0, -1.0], [0.0, 1.0, 0.0], 100.0).unwrap();
        assert!((east.distance - 8.5).abs() < 1e-9, "{east:?}");
        assert_eq!(east.block, Some(0));
        assert!(
            scene.cast([0.0, 5.0, -5.0], [0.0, 0.0, -1.0], 100.0).is_none(),
            "looking up sees sky"
        );
        assert!(
            scene.cast([3.0, 3.0, -5.0], [0.0, 0.0, 1.0], 4.0).is_none(),
            "beyond range"
        );
    }
}
