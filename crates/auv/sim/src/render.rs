//! Cheap pictures of the scene so that motion is visible in both cameras:
//! the bottom camera sees a sand seabed with a 1 m grid, 5 m checkers and
//! coloured markers; the front camera sees the water, the horizon between
//! water and seabed (tilting with pitch and roll) and coloured pillars on a
//! 10 m grid. Both have a 90° horizontal field of view.

use std::f64::consts::PI;

use image_codec::Encoding;

use crate::dynamics::{AuvState, SEABED_DEPTH};

const SAND: [f64; 3] = [194.0, 178.0, 128.0];
const WATER_DEEP: [f64; 3] = [10.0, 40.0, 90.0];
const WATER_SHALLOW: [f64; 3] = [60.0, 150.0, 200.0];
const PILLAR_SPACING: f64 = 10.0;
const PILLAR_HEIGHT: f64 = 5.0;
const PILLAR_RADIUS: f64 = 0.4;
/// How far the front camera sees pillars (m): beyond, the water hides them.
const VISIBILITY: f64 = 45.0;
/// Markers on the seabed: (north, east, radius, BGR).
const MARKERS: [(f64, f64, f64, [u8; 3]); 4] = [
    (0.0, 0.0, 0.6, [40, 40, 220]),
    (5.0, 0.0, 0.4, [60, 200, 40]),
    (0.0, 5.0, 0.4, [220, 80, 40]),
    (-5.0, -5.0, 0.5, [20, 200, 230]),
];

/// Renders into one reused bgr8 buffer and JPEG-encodes it.
#[derive(Debug)]
pub struct Renderer {
    width: usize,
    height: usize,
    quality: i32,
    pixels: Vec<u8>,
}

impl Renderer {
    pub fn new(width: usize, height: usize, quality: i32) -> Result<Self, String> {
        if width < 8 || height < 8 || width > 8192 || height > 8192 {
            return Err(format!("image size {width}×{height} is outside 8..=8192"));
        }
        if !(1..=100).contains(&quality) {
            return Err(format!("JPEG quality {quality} is outside 1..=100"));
        }
        Ok(Renderer {
            width,
            height,
            quality,
            pixels: vec![0; width * height * 3],
        })
    }

    /// Focal length in pixels for a 90° horizontal field of view.
    fn focal(&self) -> f64 {
        self.width as f64 / 2.0
    }

    fn encode(&mut self) -> Result<Vec<u8>, String> {
        // The size was checked in `new`: both fit in u32.
        image_codec::encode::jpeg(
            &self.pixels,
            self.width as u32,
            self.height as u32,
            Encoding::Bgr8,
            self.quality,
        )
        .map_err(|e| e.0)
    }

    /// The downward camera: image top is the AUV's forward direction.
    pub fn bottom(&mut self, auv: &AuvState) -> Result<Vec<u8>, String> {
        let f = self.focal();
        let altitude = (SEABED_DEPTH - auv.depth).max(0.1);
        let metres_per_pixel = altitude / f;
        let (s, c) = auv.yaw.sin_cos();
        let (cx, cy) = (self.width as f64 / 2.0, self.height as f64 / 2.0);
        // A line is at least ~1.5 pixels wide at any altitude.
        let line = (metres_per_pixel * 1.5).max(0.03);
        for row in 0..self.height {
            let forward = (cy - row as f64) * metres_per_pixel;
            let row_px = &mut self.pixels[row * self.width * 3..(row + 1) * self.width * 3];
            for (col, px) in row_px.chunks_exact_mut(3).enumerate() {
                let right = (col as f64 - cx) * metres_per_pixel;
                let north = auv.north + forward * c - right * s;
                let east = auv.east + forward * s + right * c;
                px.copy_from_slice(&seabed_colour(north, east, line, altitude));
            }
        }
        self.encode()
    }

    /// The forward camera.
    pub fn front(&mut self, auv: &AuvState) -> Result<Vec<u8>, String> {
        let f = self.focal();
        let (cx, cy) = (self.width as f64 / 2.0, self.height as f64 / 2.0);
        let (sr, cr) = auv.roll.sin_cos();
        let horizon = f * auv.pitch.tan();
        // Lighter water near the surface.
        let shallow = (1.0 - auv.depth / SEABED_DEPTH).clamp(0.0, 1.0);
        for row in 0..self.height {
            let dy = row as f64 - cy;
            let row_px = &mut self.pixels[row * self.width * 3..(row + 1) * self.width * 3];
            for (col, px) in row_px.chunks_exact_mut(3).enumerate() {
                let dx = col as f64 - cx;
                // Image y of this pixel in a camera rolled level.
                let level_y = -dx * sr + dy * cr;
                let colour = if level_y < horizon {
                    let up = ((horizon - level_y) / f).min(1.5) / 1.5;
                    mix(WATER_DEEP, WATER_SHALLOW, 0.3 * shallow + 0.7 * up * shallow.max(0.2))
                } else {
                    let down = ((level_y - horizon) / f).min(1.0);
                    mix(mix(SAND, WATER_DEEP, 0.7), SAND, down)
                };
                px.copy_from_slice(&bgr(colour));
            }
        }
        self.pillars(auv, f, cx, cy);
        self.encode()
    }

    fn pillars(&mut self, auv: &AuvState, f: f64, cx: f64, cy: f64) {
        let reach = (VISIBILITY / PILLAR_SPACING).ceil() as i64;
        let (gn, ge) = (
            (auv.north / PILLAR_SPACING).round() as i64,
            (auv.east / PILLAR_SPACING).round() as i64,
        );
        let mut visible = Vec::new();
        for i in gn - reach..=gn + reach {
            for j in ge - reach..=ge + reach {
                let (pn, pe) = (i as f64 * PILLAR_SPACING + 5.0, j as f64 * PILLAR_SPACING + 5.0);
                let (dn, de) = (pn - auv.north, pe - auv.east);
                let distance = dn.hypot(de);
                let bearing = wrap(de.atan2(dn) - auv.yaw);
                if distance > 0.5 && distance < VISIBILITY && bearing.abs() < PI / 4.0 + 0.1 {
                    visible.push((distance, bearing, i, j));
                }
            }
        }
        // Far pillars first, so near ones hide them.
        visible.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (distance, bearing, i, j) in visible {
            let along = distance * bearing.cos();
            if along < 0.3 {
                continue;
            }
            let centre = cx + f * bearing.tan();
            let half_width = (f * PILLAR_RADIUS / along).max(1.0);
            let row_of = |below_camera: f64| cy + f * ((below_camera / along).atan() + auv.pitch).tan();
            let top = row_of(SEABED_DEPTH - PILLAR_HEIGHT - auv.depth);
            let bottom = row_of(SEABED_DEPTH - auv.depth);
            let fog = (distance / VISIBILITY).powi(2);
            let colour = bgr(mix(pillar_colour(i, j), WATER_DEEP, fog));
            self.fill_rect(centre - half_width, centre + half_width, top, bottom, colour);
        }
    }

    fn fill_rect(&mut self, x0: f64, x1: f64, y0: f64, y1: f64, colour: [u8; 3]) {
        let clampx = |v: f64| v.clamp(0.0, self.width as f64) as usize;
        let clampy = |v: f64| v.clamp(0.0, self.height as f64) as usize;
        let (x0, x1, y0, y1) = (clampx(x0), clampx(x1), clampy(y0.min(y1)), clampy(y1.max(y0)));
        for row in y0..y1 {
            let start = (row * self.width + x0) * 3;
            let end = (row * self.width + x1) * 3;
            for px in self.pixels[start..end].chunks_exact_mut(3) {
                px.copy_from_slice(&colour);
            }
        }
    }
}

fn seabed_colour(north: f64, east: f64, line: f64, altitude: f64) -> [u8; 3] {
    for (n, e, r, colour) in MARKERS {
        let (dn, de) = (north - n, east - e);
        if dn * dn + de * de < r * r {
            return colour;
        }
    }
    let on_line = |v: f64| v - v.floor() < line;
    let checker = ((north / 5.0).floor() as i64 + (east / 5.0).floor() as i64).rem_euclid(2) == 0;
    let base = if checker {
        SAND
    } else {
        mix(SAND, [120.0, 100.0, 70.0], 0.35)
    };
    let base = if on_line(north) || on_line(east) {
        mix(base, [60.0, 50.0, 40.0], 0.6)
    } else {
        base
    };
    // Deeper water tints the seabed blue.
    bgr(mix(base, WATER_DEEP, (altitude / SEABED_DEPTH * 0.5).min(0.6)))
}

/// An RGB colour as the buffer's blue, green, red bytes.
fn bgr(c: [f64; 3]) -> [u8; 3] {
    [c[2], c[1], c[0]].map(|v| v.clamp(0.0, 255.0) as u8)
}

fn pillar_colour(i: i64, j: i64) -> [f64; 3] {
    let h = (i.wrapping_mul(73_856_093) ^ j.wrapping_mul(19_349_663)).rem_euclid(6);
    [
        [200.0, 60.0, 50.0],
        [60.0, 180.0, 70.0],
        [230.0, 140.0, 30.0],
        [150.0, 70.0, 190.0],
        [230.0, 230.0, 230.0],
        [40.0, 40.0, 40.0],
    ][h as usize]
}

fn mix(a: [f64; 3], b: [f64; 3], t: f64) -> [f64; 3] {
    [0, 1, 2].map(|i| a[i] + (b[i] - a[i]) * t)
}

fn wrap(a: f64) -> f64 {
    (a + PI).rem_euclid(2.0 * PI) - PI
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(jpeg: &[u8]) -> image_codec::Image {
        image_codec::JpegDecoder::new(1 << 20)
            .unwrap()
            .decode(jpeg, Encoding::Bgr8)
            .unwrap()
    }

    fn difference(a: &[u8], b: &[u8]) -> f64 {
        let da = decode(a);
        let db = decode(b);
        da.data
            .iter()
            .zip(db.data.iter())
            .map(|(x, y)| f64::from(x.abs_diff(*y)))
            .sum::<f64>()
            / da.data.len() as f64
    }

    #[test]
    fn both_cameras_give_jpegs_of_the_configured_size() {
        let mut r = Renderer::new(160, 120, 80).unwrap();
        let auv = AuvState::start(0, 0);
        for jpeg in [r.front(&auv).unwrap(), r.bottom(&auv).unwrap()] {
            let img = decode(&jpeg);
            assert_eq!((img.width, img.height), (160, 120));
        }
        assert!(Renderer::new(4, 4, 80).is_err());
        assert!(Renderer::new(64, 64, 0).is_err());
    }

    #[test]
    fn motion_is_visible_in_both_cameras() {
        let mut r = Renderer::new(160, 120, 80).unwrap();
        let still = AuvState::start(0, 0);
        let moved = AuvState { north: 0.5, ..still };
        let turned = AuvState { yaw: 0.3, ..still };
        let same = difference(&r.bottom(&still).unwrap(), &r.bottom(&still).unwrap());
        assert_eq!(same, 0.0);
        assert!(difference(&r.bottom(&still).unwrap(), &r.bottom(&moved).unwrap()) > 1.0);
        assert!(difference(&r.front(&still).unwrap(), &r.front(&turned).unwrap()) > 1.0);
        let pitched = AuvState { pitch: 0.2, ..still };
        assert!(difference(&r.front(&still).unwrap(), &r.front(&pitched).unwrap()) > 1.0);
    }
}
