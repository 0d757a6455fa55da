//! The emulator's world: one vehicle flying a smooth, known trajectory over a
//! textured ground with a few coloured boxes, flat but for the hills of the
//! map ([`Terrain`]), which the renderer, the LiDAR, the crash checks and the
//! map files RflySim ships for each map ([`write_map_files`]) all share.
//! Everything is a pure function of simulation time, so tests can compute
//! what a sensor must see.
//!
//! RflySim's conventions: world NED (metres, the flat ground at z = 0, up is
//! −z), body FRD, Euler roll/pitch/yaw (Z-Y-X).

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
    pub terrain: Terrain,
}

/// A hill: a raised cosine, `height` m at `centre` (NED x, y), down to the
/// flat ground at `radius` m from it (smooth, and exactly flat beyond).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hill {
    pub centre: [f64; 2],
    pub radius: f64,
    pub height: f64,
}

impl Hill {
    fn distance(&self, x: f64, y: f64) -> f64 {
        (x - self.centre[0]).hypot(y - self.centre[1])
    }

    fn height_at(&self, x: f64, y: f64) -> f64 {
        let r = self.distance(x, y);
        if r >= self.radius {
            return 0.0;
        }
        self.height * (1.0 + (std::f64::consts::PI * r / self.radius).cos()) / 2.0
    }

    /// d(height)/dx, d(height)/dy.
    fn slope_at(&self, x: f64, y: f64) -> [f64; 2] {
        let r = self.distance(x, y);
        if r >= self.radius || r < 1e-12 {
            return [0.0, 0.0];
        }
        let k = std::f64::consts::PI / self.radius;
        let dh_dr = -self.height * k * (k * r).sin() / 2.0;
        [dh_dr * (x - self.centre[0]) / r, dh_dr * (y - self.centre[1]) / r]
    }

    /// The part of a ray (from `o` along `d`, up to `t_max`) over the hill's
    /// footprint and below its top: where it may meet the hill.
    fn span(&self, o: Vec3, d: Vec3, t_max: f64) -> Option<(f64, f64)> {
        let (px, py) = (o[0] - self.centre[0], o[1] - self.centre[1]);
        let a = d[0] * d[0] + d[1] * d[1];
        let c = px * px + py * py - self.radius * self.radius;
        let (mut lo, mut hi) = if a < 1e-18 {
            if c >= 0.0 {
                return None;
            }
            (0.0, t_max)
        } else {
            let b = px * d[0] + py * d[1];
            let disc = b * b - a * c;
            if disc <= 0.0 {
                return None;
            }
            let root = disc.sqrt();
            ((-b - root) / a, (-b + root) / a)
        };
        // Below the top (z ≥ −height) …
        let top = -self.height;
        if d[2] > 1e-12 {
            lo = lo.max((top - o[2]) / d[2]);
        } else if d[2] < -1e-12 {
            hi = hi.min((top - o[2]) / d[2]);
        } else if o[2] < top {
            return None;
        }
        lo = lo.max(0.0);
        hi = hi.min(t_max);
        (lo <= hi).then_some((lo, hi))
    }
}

/// The ground of a map: flat at z = 0 but for its hills.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Terrain {
    pub hills: Vec<Hill>,
}

/// The emulator's maps, by the names of maps RflySim ships: each its own
/// ground (the objects are the same in all). The first is the one it starts with.
pub const MAPS: &[&str] = &["Grasslands", "MountainTerrain"];

impl Terrain {
    pub fn flat() -> Self {
        Self::default()
    }

    /// The ground of one of [`MAPS`], by name (any case).
    pub fn of_map(name: &str) -> Option<Self> {
        let hill = |x, y, radius, height| Hill {
            centre: [x, y],
            radius,
            height,
        };
        // Away from the circle vehicle 1 flies and from the objects, in sight of both.
        let hills = match MAPS.iter().position(|m| m.eq_ignore_ascii_case(name))? {
            0 => vec![hill(40.0, -40.0, 12.0, 6.0)],
            _ => vec![hill(-40.0, 40.0, 15.0, 10.0), hill(40.0, 40.0, 10.0, 4.0)],
        };
        Some(Self { hills })
    }

    /// The ground's height (up, m) under NED (x, y).
    pub fn height(&self, x: f64, y: f64) -> f64 {
        self.hills.iter().map(|h| h.height_at(x, y)).sum()
    }

    /// The ground's NED z under (x, y): minus its height.
    pub fn ground_z(&self, x: f64, y: f64) -> f64 {
        -self.height(x, y)
    }

    /// The ground's upward unit normal (NED) at (x, y).
    fn normal(&self, x: f64, y: f64) -> Vec3 {
        let (sx, sy) = self
            .hills
            .iter()
            .map(|h| h.slope_at(x, y))
            .fold((0.0, 0.0), |(a, b), [dx, dy]| (a + dx, b + dy));
        norm([-sx, -sy, -1.0])
    }

    /// Where a ray from `o` along unit `d` first meets the ground within
    /// `max_range`: its distance and the ground's normal there. A ray
    /// starting at or under the ground meets none.
    pub fn cast(&self, o: Vec3, d: Vec3, max_range: f64) -> Option<(f64, Vec3)> {
        let below = |t: f64| o[2] + d[2] * t - self.ground_z(o[0] + d[0] * t, o[1] + d[1] * t);
        if below(0.0) >= 0.0 {
            return None;
        }
        // The flat part: beyond the plane z = 0 the ray is under any ground.
        let plane = (d[2] > 1e-9).then(|| -o[2] / d[2]).filter(|t| *t <= max_range);
        let mut best = plane;
        for hill in &self.hills {
            let Some((lo, hi)) = hill.span(o, d, best.unwrap_or(max_range)) else {
                continue;
            };
            if let Some(t) = first_crossing(&below, lo, hi, hill.radius / 32.0) {
                best = Some(best.map_or(t, |b: f64| b.min(t)));
            }
        }
        let t = best?;
        Some((t, self.normal(o[0] + d[0] * t, o[1] + d[1] * t)))
    }
}

/// The first `t` in `[lo, hi]` where `below(t)` turns non-negative, found in
/// steps of at most `step`, then by bisection.
fn first_crossing(below: &impl Fn(f64) -> f64, lo: f64, hi: f64, step: f64) -> Option<f64> {
    let n = (((hi - lo) / step).ceil() as usize).clamp(1, 4096);
    let mut a = lo;
    if below(a) >= 0.0 {
        return Some(a);
    }
    for i in 1..=n {
        let b = lo + (hi - lo) * i as f64 / n as f64;
        if below(b) >= 0.0 {
            let (mut x, mut y) = (a, b);
            for _ in 0..50 {
                let m = (x + y) / 2.0;
                if below(m) >= 0.0 {
                    y = m;
                } else {
                    x = m;
                }
            }
            return Some(y);
        }
        a = b;
    }
    None
}

/// The grid the emulator's map files sample: ±[`MAP_HALF_SIZE`] m along x
/// and y, every [`MAP_SPACING`] m; heights in whole centimetres.
pub const MAP_HALF_SIZE: f64 = 100.0;
pub const MAP_SPACING: f64 = 0.5;

/// The two files RflySim ships for a map (`<name>.png`, `<name>.txt`), of
/// `terrain`, as RflySim3D's terrain scan writes them: 16-bit heights
/// (32768 + centimetres), the corners and the highest point as the calibration.
pub fn map_files(terrain: &Terrain) -> (Vec<u8>, String) {
    use rflysim_proto::terrain::{encode, Calibration, RAW_ZERO};
    let n = (2.0 * MAP_HALF_SIZE / MAP_SPACING).round() as usize + 1;
    let at = |i: usize| -MAP_HALF_SIZE + i as f64 * MAP_SPACING;
    let centimetres = |row: usize, col: usize| (terrain.height(at(col), at(row)) * 100.0).round();
    let mut raw = Vec::with_capacity(n * n);
    let mut top = (0, 0, f64::NEG_INFINITY);
    for row in 0..n {
        for col in 0..n {
            let cm = centimetres(row, col);
            if cm > top.2 {
                top = (row, col, cm);
            }
            raw.push((RAW_ZERO + cm as i32) as u16);
        }
    }
    let corner = |i: usize| at(i) * 100.0;
    let calibration = Calibration {
        upper_right: [corner(n - 1), corner(n - 1), centimetres(n - 1, n - 1)],
        lower_left: [corner(0), corner(0), centimetres(0, 0)],
        third: [corner(top.1), corner(top.0), top.2],
        gps: None,
    };
    let png = encode::heights_png(&raw, n, n).expect("the grid's own size");
    (png, encode::calibration_txt(&calibration))
}

/// Writes the map files of every one of [`MAPS`] into `dir`.
pub fn write_map_files(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for name in MAPS {
        let (png, txt) = map_files(&Terrain::of_map(name).expect("one of MAPS"));
        std::fs::write(dir.join(format!("{name}.png")), png)?;
        std::fs::write(dir.join(format!("{name}.txt")), txt)?;
    }
    Ok(())
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
            terrain: Terrain::of_map(MAPS[0]).expect("the first map"),
        }
    }
}

/// Sun direction (towards the sun), NED.
const SUN: Vec3 = [0.3, 0.4, -0.866];

impl Scene {
    /// The first surface along `dir` (unit, NED) from `origin`, within `max_range`.
    pub fn cast(&self, origin: Vec3, dir: Vec3, max_range: f64) -> Option<Hit> {
        let mut best: Option<(f64, Option<usize>, Vec3)> =
            self.terrain.cast(origin, dir, max_range).map(|(t, n)| (t, None, n));
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

    #[test]
    fn the_hills_are_smooth_and_rays_land_on_them() {
        let t = Terrain::of_map("grasslands").unwrap();
        assert_eq!(t.height(40.0, -40.0), 6.0);
        assert_eq!(t.height(40.0, -28.0), 0.0, "flat from the radius on");
        assert!((t.height(40.0, -34.0) - 3.0).abs() < 1e-12, "half way: half the height");
        assert_eq!(t.height(0.0, 0.0), 0.0, "flat where vehicle 1 flies");
        // Straight down onto the slope: the distance to the ground under it.
        let (d, n) = t.cast([40.0, -36.0, -20.0], [0.0, 0.0, 1.0], 100.0).unwrap();
        assert!((d - (20.0 - t.height(40.0, -36.0))).abs() < 1e-9, "{d}");
        assert!(n[1] > 0.0 && n[2] < 0.0, "the slope faces east and up: {n:?}");
        // Level, 2 m up, towards the hill from the west: it meets the slope
        // where the ground is 2 m high.
        let (d, _) = t.cast([40.0, -80.0, -2.0], [0.0, 1.0, 0.0], 100.0).unwrap();
        assert!((t.height(40.0, -80.0 + d) - 2.0).abs() < 1e-9, "{d}");
        assert!(
            t.cast([40.0, -80.0, -7.0], [0.0, 1.0, 0.0], 100.0).is_none(),
            "over the top"
        );
        assert!(
            t.cast([40.0, -40.0, -5.0], [0.0, 0.0, 1.0], 100.0).is_none(),
            "from inside"
        );
        assert!(Terrain::of_map("Nowhere").is_none());
        let scene = Scene::default();
        let hit = scene.cast([40.0, -40.0, -10.0], [0.0, 0.0, 1.0], 100.0).unwrap();
        assert!((hit.distance - 4.0).abs() < 1e-9 && hit.block.is_none());
    }

    #[test]
    fn the_map_files_give_the_ground_the_emulator_draws() {
        use rflysim_proto::terrain::HeightMap;
        for name in MAPS {
            let t = Terrain::of_map(name).unwrap();
            let (png, txt) = map_files(&t);
            let m = HeightMap::from_files(&png, &txt).unwrap();
            assert_eq!((m.rows(), m.columns()), (401, 401));
            for i in 0..500 {
                let x = -60.0 + (f64::from(i) * 0.731) % 120.0;
                let y = -60.0 + (f64::from(i) * 1.377) % 120.0;
                // Whole centimetres, bilinear over 0.5 m: within 1.5 cm.
                let got = -m.terrain_alt(x, y);
                assert!((got - t.height(x, y)).abs() < 0.015, "{name} ({x}, {y}): {got}");
            }
        }
    }
}
