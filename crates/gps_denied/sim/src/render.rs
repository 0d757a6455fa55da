//! The downward camera's view, ray-cast through `gps_denied_proto`'s camera
//! model (so that a pixel of the image and a point of `landing_pad` agree):
//! a checkered field, the rover's dark deck, and on it the pad, a red disc
//! with a white "H". No other red is in the scene, so a test can find the
//! pad by colour.

use gps_denied_proto::camera::CameraModel;
use gps_denied_proto::frames::body_to_world;
use image_codec::{encode, Encoding};

use crate::world::{World, PAD_RADIUS, ROVER_LENGTH, ROVER_TOP, ROVER_WIDTH};

// Colours in bgr8 order, the encoder's.
pub const PAD_BGR: [u8; 3] = [30, 30, 220];
pub const MARK_BGR: [u8; 3] = [245, 245, 245];
pub const DECK_BGR: [u8; 3] = [65, 55, 55];
pub const GROUND_BGR: [[u8; 3]; 2] = [[60, 125, 70], [75, 150, 95]];
pub const SKY_BGR: [u8; 3] = [235, 190, 150];
/// Metres per checker square.
const TILE: f64 = 1.0;

pub struct Renderer {
    camera: CameraModel,
    quality: i32,
    /// Each pixel's viewing ray in the body frame.
    rays: Vec<[f64; 3]>,
    bgr: Vec<u8>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer").field("camera", &self.camera).finish()
    }
}

/// The "H" on the pad, in the pad's frame (x along the rover), metres.
fn on_mark(x: f64, y: f64) -> bool {
    let bar = 0.03;
    let (half_height, half_gap) = (0.14, 0.09);
    let legs = x.abs() <= half_height && (y.abs() - half_gap).abs() <= bar;
    let cross = x.abs() <= bar && y.abs() <= half_gap;
    legs || cross
}

impl Renderer {
    pub fn new(camera: CameraModel, quality: i32) -> Self {
        let rays = (0..camera.height)
            .flat_map(|v| (0..camera.width).map(move |u| (u, v)))
            .map(|(u, v)| {
                let o = camera.ray_optical(f64::from(u), f64::from(v));
                // Optical → body: x_opt = −y, y_opt = −x, z_opt = −z.
                [-o[1], -o[0], -o[2]]
            })
            .collect();
        let bgr = vec![0; camera.width as usize * camera.height as usize * 3];
        Self {
            camera,
            quality,
            rays,
            bgr,
        }
    }

    /// The view from the drone now, as packed bgr8.
    pub fn render(&mut self, world: &World) -> &[u8] {
        let d = &world.drone;
        // Columns of the body → world rotation, once per frame.
        let (ex, ey, ez) = (
            body_to_world(d.attitude, [1.0, 0.0, 0.0]),
            body_to_world(d.attitude, [0.0, 1.0, 0.0]),
            body_to_world(d.attitude, [0.0, 0.0, 1.0]),
        );
        let [px, py, pz] = d.position;
        let [rx, ry, _] = world.rover_position();
        let (hs, hc) = world.rover_heading().sin_cos();
        for (ray, out) in self.rays.iter().zip(self.bgr.chunks_exact_mut(3)) {
            let w = [
                ex[0] * ray[0] + ey[0] * ray[1] + ez[0] * ray[2],
                ex[1] * ray[0] + ey[1] * ray[1] + ez[1] * ray[2],
                ex[2] * ray[0] + ey[2] * ray[1] + ez[2] * ray[2],
            ];
            let colour = if w[2] >= -1e-9 {
                SKY_BGR
            } else {
                let mut colour = None;
                if pz > ROVER_TOP {
                    let t = (ROVER_TOP - pz) / w[2];
                    let (dx, dy) = (px + t * w[0] - rx, py + t * w[1] - ry);
                    let (lx, ly) = (hc * dx + hs * dy, -hs * dx + hc * dy);
                    if lx.abs() <= ROVER_LENGTH / 2.0 && ly.abs() <= ROVER_WIDTH / 2.0 {
                        colour = Some(if lx * lx + ly * ly > PAD_RADIUS * PAD_RADIUS {
                            DECK_BGR
                        } else if on_mark(lx, ly) {
                            MARK_BGR
                        } else {
                            PAD_BGR
                        });
                    }
                }
                colour.unwrap_or_else(|| {
                    let t = -pz / w[2];
                    let (gx, gy) = (px + t * w[0], py + t * w[1]);
                    let parity = ((gx / TILE).floor() + (gy / TILE).floor()).rem_euclid(2.0) as usize;
                    GROUND_BGR[parity]
                })
            };
            out.copy_from_slice(&colour);
        }
        &self.bgr
    }

    /// The view as a JPEG.
    pub fn jpeg(&mut self, world: &World) -> Result<Vec<u8>, String> {
        self.render(world);
        let (w, h) = (self.camera.width, self.camera.height);
        encode::jpeg(&self.bgr, w, h, Encoding::Bgr8, self.quality).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::Pattern;
    use gps_denied_proto::PadReport;

    /// Centroid of the pad's red pixels.
    fn red_centroid(bgr: &[u8], width: usize) -> Option<(f64, f64, usize)> {
        let (mut su, mut sv, mut n) = (0.0, 0.0, 0usize);
        for (i, px) in bgr.chunks_exact(3).enumerate() {
            if px == PAD_BGR {
                su += (i % width) as f64;
                sv += (i / width) as f64;
                n += 1;
            }
        }
        (n > 0).then(|| (su / n as f64, sv / n as f64, n))
    }

    #[test]
    fn the_pad_appears_where_landing_pad_says() {
        let camera = CameraModel::default();
        let mut r = Renderer::new(camera, 70);
        let mut w = World::new(Pattern::Figure8);
        w.drone.position[0] += 1.2;
        w.drone.position[1] -= 0.6;
        w.drone.attitude.yaw = 0.7;
        let PadReport::Detected(pad) = w.pad_detection(&camera) else {
            panic!("pad not visible")
        };
        let (u, v) = camera
            .project_body([pad.relative_x, pad.relative_y, -pad.distance])
            .unwrap();
        let (cu, cv, n) = red_centroid(r.render(&w), camera.width as usize).unwrap();
        assert!(
            (cu - u).abs() < 1.0 && (cv - v).abs() < 1.0,
            "({cu}, {cv}) vs ({u}, {v})"
        );
        // Disc area minus the H, in pixels: about π r² f² / d².
        let disc = std::f64::consts::PI * (PAD_RADIUS * camera.focal / pad.distance).powi(2);
        assert!(
            (n as f64) > 0.6 * disc && (n as f64) < disc,
            "{n} red pixels for a disc of {disc}"
        );
        let jpeg = r.jpeg(&w).unwrap();
        assert!(
            jpeg.starts_with(&[0xFF, 0xD8, 0xFF]) && jpeg.len() < 40_000,
            "{} bytes",
            jpeg.len()
        );
    }

    #[test]
    fn no_pad_in_view_means_no_red() {
        let camera = CameraModel::default();
        let mut r = Renderer::new(camera, 70);
        let mut w = World::new(Pattern::Circular);
        w.drone.position[0] += 6.0;
        assert_eq!(w.pad_detection(&camera), PadReport::NotVisible);
        assert!(red_centroid(r.render(&w), camera.width as usize).is_none());
    }
}
