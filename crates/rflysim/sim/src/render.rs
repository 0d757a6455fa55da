//! What each sensor sees of the world: cameras rendered with a pinhole model
//! from the sensor's mount, size and FOV; LiDARs, depth clouds and the laser
//! range finder ray-cast against the same scene. RGB, depth, gray,
//! segmentation and infrared of one instant therefore agree.

use frames::{euler_to_quat, frd_to_flu, quat_mul, quat_normalize, rotate, Quat, Vec3};
use rflysim_proto::config::{MountAttitude, SensorConfig};
use rflysim_proto::image::DEPTH_NO_RETURN;
use rflysim_proto::sensor::{type_id, Encoding};
use rflysim_proto::telemetry::LaserDistance;

use crate::world::{Hit, Scene, VehicleState, SKY_BGR};

/// Where a sensor sits on its vehicle and how it looks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mount {
    /// Offset in the body frame (FRD), m.
    pub position: Vec3,
    /// Sensor → body rotation.
    pub rotation: Quat,
}

impl Mount {
    pub fn of(cfg: &SensorConfig) -> Mount {
        let rotation = match cfg.mount_attitude() {
            MountAttitude::Euler([r, p, y]) => euler_to_quat(r, p, y),
            MountAttitude::Quaternion(q) => quat_normalize(q),
        };
        Mount {
            position: cfg.sensor_pos_xyz.map(f64::from),
            rotation,
        }
    }

    /// Sensor origin (NED) and sensor → world rotation.
    pub fn pose_in_world(&self, v: &VehicleState) -> (Vec3, Quat) {
        let off = rotate(v.attitude, self.position);
        let origin = [v.position[0] + off[0], v.position[1] + off[1], v.position[2] + off[2]];
        (origin, quat_normalize(quat_mul(v.attitude, self.rotation)))
    }
}

/// Pinhole intrinsics from size and horizontal FOV, as the bridge's CameraInfo.
pub fn focal_px(width: u32, fov_deg: f64) -> f64 {
    (f64::from(width) / 2.0) / (fov_deg.to_radians() / 2.0).tan()
}

fn shade(c: [u8; 3], light: f64) -> [u8; 3] {
    let k = 0.55 + 0.45 * light;
    c.map(|v| (f64::from(v) * k).round().min(255.0) as u8)
}

fn luma(bgr: [u8; 3]) -> u8 {
    ((u32::from(bgr[2]) * 77 + u32::from(bgr[1]) * 150 + u32::from(bgr[0]) * 29) >> 8) as u8
}

pub fn label_color(label: u8) -> [u8; 3] {
    if label == 0 {
        return [0, 0, 0];
    }
    let l = u32::from(label);
    [(l * 37 % 256) as u8, (l * 91 % 256) as u8, (l * 53 % 256) as u8]
}

/// The camera kinds by TypeID, for pixels.
/// What a depth camera (TypeID 2) measures and in which unit, from its
/// `otherParams` (RflySim's SDK, "Depth camera").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DepthOptics {
    /// Nearer than this (m) is no return; 0: no near clip.
    pub near_m: f64,
    /// Farther than this (m) is no return; 0: only the pixel's range limits it.
    pub far_m: f64,
    /// Metres per pixel unit.
    pub unit_m: f64,
}

impl DepthOptics {
    pub fn of(cfg: &SensorConfig) -> DepthOptics {
        let (near, far) = cfg.depth_range();
        DepthOptics {
            near_m: f64::from(near.max(0.0)),
            far_m: f64::from(far.max(0.0)),
            unit_m: f64::from(cfg.depth_unit_m()),
        }
    }

    /// The pixel of a surface `depth_m` along the optical axis (`None`:
    /// nothing hit), as RflySim3D writes it: [`DEPTH_NO_RETURN`] outside the
    /// clip range or beyond what a pixel holds.
    pub fn pixel(&self, depth_m: Option<f64>) -> u16 {
        let Some(d) = depth_m else {
            return DEPTH_NO_RETURN;
        };
        let units = (d / self.unit_m).round();
        if d < self.near_m || (self.far_m > 0.0 && d > self.far_m) || units >= f64::from(DEPTH_NO_RETURN) {
            DEPTH_NO_RETURN
        } else {
            units.max(1.0) as u16
        }
    }
}

impl Default for DepthOptics {
    /// No clip, millimetres.
    fn default() -> Self {
        DepthOptics {
            near_m: 0.0,
            far_m: 0.0,
            unit_m: f64::from(rflysim_proto::image::DEPTH_DEFAULT_UNIT_M),
        }
    }
}

fn pixel(type_id: u16, hit: Option<&Hit>, depth_m: f64, row_frac: f64, depth: &DepthOptics, out: &mut [u8]) {
    let bgr = || match hit {
        Some(h) => shade(h.color, h.light),
        None => SKY_BGR.map(|v| (f64::from(v) * (0.85 + 0.15 * row_frac)) as u8),
    };
    match type_id {
        type_id::DEPTH => out.copy_from_slice(&depth.pixel(hit.map(|_| depth_m)).to_le_bytes()),
        // Gray kinds fill every channel, so a gimbal switched to IR gray still fills bgr8.
        type_id::GRAY => out.fill(luma(bgr())),
        type_id::SEGMENTATION => out.copy_from_slice(&label_color(hit.map_or(0, |h| h.label))),
        type_id::INFRARED_GRAY => out.fill(hit.map_or(10, |h| (f64::from(h.heat) * (0.8 + 0.2 * h.light)) as u8)),
        type_id::INFRARED => {
            let heat = hit.map_or(10u8, |h| h.heat);
            out.copy_from_slice(&[255 - heat, heat / 2, heat]);
        }
        _ => out.copy_from_slice(&bgr()),
    }
}

/// What a camera renders: its kind, image size and optics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraView {
    pub type_id: u16,
    pub encoding: Encoding,
    pub width: u32,
    pub height: u32,
    pub fov_deg: f64,
    pub max_range: f64,
    /// A depth camera's clip range and unit.
    pub depth: DepthOptics,
}

impl CameraView {
    /// The view a configured camera has (its TypeID's encoding, size and FOV).
    pub fn of(cfg: &SensorConfig) -> Option<CameraView> {
        Some(CameraView {
            type_id: cfg.type_id,
            encoding: cfg.kind()?.encoding()?,
            width: u32::from(cfg.data_width.max(1)),
            height: u32::from(cfg.data_height.max(1)),
            fov_deg: f64::from(cfg.camera_fov_deg),
            max_range: 1000.0,
            depth: DepthOptics::of(cfg),
        })
    }
}

/// Renders a camera frame in its ROS encoding (bgr8, mono8, or for depth
/// RflySim3D's little-endian u16 in `depth` units), row-major, `width × height`.
pub fn render_camera(scene: &Scene, vehicle: &VehicleState, mount: &Mount, view: &CameraView) -> Vec<u8> {
    let CameraView {
        type_id,
        encoding,
        width,
        height,
        fov_deg,
        max_range,
        depth: depth_optics,
    } = *view;
    let (origin, rot) = mount.pose_in_world(vehicle);
    let f = focal_px(width, fov_deg);
    let (cx, cy) = (f64::from(width) / 2.0, f64::from(height) / 2.0);
    let axis = rotate(rot, [1.0, 0.0, 0.0]);
    let du = rotate(rot, [0.0, 1.0 / f, 0.0]);
    let dv = rotate(rot, [0.0, 0.0, 1.0 / f]);
    let bpp = encoding.bytes_per_pixel();
    let mut out = vec![0u8; width as usize * height as usize * bpp];
    for (v, row) in out.chunks_exact_mut(width as usize * bpp).enumerate() {
        let fv = v as f64 + 0.5 - cy;
        let row_frac = v as f64 / f64::from(height);
        for (u, px) in row.chunks_exact_mut(bpp).enumerate() {
            let fu = u as f64 + 0.5 - cx;
            let d = [
                axis[0] + fu * du[0] + fv * dv[0],
                axis[1] + fu * du[1] + fv * dv[1],
                axis[2] + fu * du[2] + fv * dv[2],
            ];
            let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            let dir = [d[0] / n, d[1] / n, d[2] / n];
            let hit = scene.cast(origin, dir, max_range);
            // z-depth: distance along the optical axis.
            let depth = hit.as_ref().map_or(0.0, |h| h.distance / n);
            pixel(type_id, hit.as_ref(), depth, row_frac, &depth_optics, px);
        }
    }
    out
}

/// Marks a camera frame (`width` pixels of `bytes_per_pixel` a row) as
/// the `variant`-th of a cycle: the first pixel of every 8 × 8 block takes
/// a value drawn from the variant and the block. Two variants then differ
/// in every few rows, raw or JPEG-encoded, where a rendered sky alone would
/// leave whole rows alike; so a frame stitched from two is neither.
pub fn mark_variant(pixels: &mut [u8], width: u32, bytes_per_pixel: usize, variant: u64) {
    let row = width as usize * bytes_per_pixel;
    if row == 0 {
        return;
    }
    for (r, line) in pixels.chunks_mut(row).enumerate().step_by(8) {
        for (c, px) in line.chunks_mut(bytes_per_pixel).enumerate().step_by(8) {
            let block = ((r / 8) as u64) << 32 | (c / 8) as u64;
            let value = splitmix64(variant.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ block).to_le_bytes();
            px.copy_from_slice(&value[..px.len()]);
        }
    }
}

/// A well-mixed 64-bit value of `x` (SplitMix64's finaliser).
fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A LiDAR's ray directions in its own frame (FRD), by kind.
pub fn lidar_rays(type_id: u16, width: u32, height: u32) -> Vec<Vec3> {
    let (w, h) = (width.max(1), height.max(1));
    let (h_from, h_span, v_from, v_to) = match type_id {
        type_id::LIVOX_LIDAR => (-35.2f64, 70.4, -38.6, 38.6), // forward cone
        type_id::MID360_LIDAR => (-180.0, 360.0, -7.0, 52.0),
        _ => (-180.0, 360.0, -15.0, 15.0), // mechanical 360°
    };
    let mut rays = Vec::with_capacity((w * h) as usize);
    for j in 0..h {
        // Elevation up is −z in FRD.
        let el = if h == 1 {
            0.0
        } else {
            v_from + (v_to - v_from) * f64::from(j) / f64::from(h - 1)
        }
        .to_radians();
        for i in 0..w {
            let az = (h_from + h_span * f64::from(i) / f64::from(w)).to_radians();
            rays.push([el.cos() * az.cos(), el.cos() * az.sin(), -el.sin()]);
        }
    }
    rays
}

/// One LiDAR scan: points (x, y, z, seg). TypeID 21 gives world NED points;
/// the others give points in the sensor's own frame as FLU (RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 1.1.2).
pub fn scan_lidar(
    scene: &Scene,
    vehicle: &VehicleState,
    mount: &Mount,
    type_id: u16,
    rays: &[Vec3],
    max_range: f64,
) -> Vec<[f32; 4]> {
    let (origin, rot) = mount.pose_in_world(vehicle);
    let inv = [rot[0], -rot[1], -rot[2], -rot[3]];
    rays.iter()
        .filter_map(|r| {
            let hit = scene.cast(origin, rotate(rot, *r), max_range)?;
            let p = if type_id == type_id::GLOBAL_LIDAR {
                hit.point
            } else {
                let rel = [
                    hit.point[0] - origin[0],
                    hit.point[1] - origin[1],
                    hit.point[2] - origin[2],
                ];
                frd_to_flu(rotate(inv, rel))
            };
            Some([p[0] as f32, p[1] as f32, p[2] as f32, f32::from(hit.label)])
        })
        .collect()
}

/// A depth camera's pixels as points in its own frame (FLU).
pub fn depth_cloud(
    scene: &Scene,
    vehicle: &VehicleState,
    mount: &Mount,
    width: u32,
    height: u32,
    fov_deg: f64,
    max_range: f64,
) -> Vec<[f32; 3]> {
    let (origin, rot) = mount.pose_in_world(vehicle);
    let f = focal_px(width, fov_deg);
    let (cx, cy) = (f64::from(width) / 2.0, f64::from(height) / 2.0);
    let mut pts = Vec::new();
    for v in 0..height {
        for u in 0..width {
            let d = [1.0, (f64::from(u) + 0.5 - cx) / f, (f64::from(v) + 0.5 - cy) / f];
            let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            let local = [d[0] / n, d[1] / n, d[2] / n];
            if let Some(hit) = scene.cast(origin, rotate(rot, local), max_range) {
                let p = frd_to_flu(local.map(|c| c * hit.distance));
                pts.push([p[0] as f32, p[1] as f32, p[2] as f32]);
            }
        }
    }
    pts
}

/// The laser range finder: one ray along the sensor's x axis.
pub fn laser(
    scene: &Scene,
    vehicle: &VehicleState,
    mount: &Mount,
    copter_id: i32,
    mount_euler: [f32; 3],
    max_range: f64,
) -> LaserDistance {
    let (origin, rot) = mount.pose_in_world(vehicle);
    let hit = scene.cast(origin, rotate(rot, [1.0, 0.0, 0.0]), max_range);
    let f = |v: Vec3| v.map(|c| c as f32);
    let box_origin = hit.and_then(|h| h.block).map_or([0.0; 3], |i| scene.blocks[i].centre());
    LaserDistance {
        distance: hit.map_or(0.0, |h| h.distance as f32),
        copter_id,
        ray_start: f(origin),
        ang_euler: mount_euler,
        impact_point: hit.map_or([0.0; 3], |h| f(h.point)),
        box_origin: f(box_origin),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::Trajectory;

    fn hover() -> VehicleState {
        Trajectory::hovering(5.0).state(0.0)
    }

    fn view(type_id: u16, encoding: Encoding, width: u32, height: u32, fov_deg: f64) -> CameraView {
        CameraView {
            type_id,
            encoding,
            width,
            height,
            fov_deg,
            max_range: 200.0,
            depth: DepthOptics::default(),
        }
    }

    fn down_mount() -> Mount {
        Mount {
            position: [0.0; 3],
            rotation: euler_to_quat(0.0, -std::f64::consts::FRAC_PI_2, 0.0),
        }
    }

    #[test]
    fn a_downward_depth_camera_sees_the_ground_at_the_altitude() {
        let flat = Scene {
            blocks: vec![],
            tile: 2.0,
            terrain: crate::world::Terrain::flat(),
        };
        let img = render_camera(
            &flat,
            &hover(),
            &down_mount(),
            &view(2, Encoding::DepthMm16, 9, 7, 60.0),
        );
        // Every pixel sees the ground; the z-depth is the altitude everywhere.
        for px in img.chunks_exact(2) {
            assert_eq!(u16::from_le_bytes([px[0], px[1]]), 5000);
        }
    }

    /// RflySim3D's depth: the unit of `otherParams[2]`, and no return
    /// outside the clip range, for nothing hit, or beyond what a pixel holds.
    #[test]
    fn depth_pixels_follow_the_clip_range_and_unit() {
        let mm = DepthOptics::default();
        assert_eq!(mm.pixel(Some(5.0)), 5000);
        assert_eq!(mm.pixel(Some(65.534)), 65_534);
        assert_eq!(mm.pixel(Some(70.0)), DEPTH_NO_RETURN);
        assert_eq!(mm.pixel(None), DEPTH_NO_RETURN);
        let clipped_cm = DepthOptics {
            near_m: 0.5,
            far_m: 100.0,
            unit_m: 0.01,
        };
        assert_eq!(clipped_cm.pixel(Some(80.0)), 8000);
        assert_eq!(clipped_cm.pixel(Some(0.4)), DEPTH_NO_RETURN);
        assert_eq!(clipped_cm.pixel(Some(100.5)), DEPTH_NO_RETURN);
    }

    #[test]
    fn camera_kinds_agree_pixel_for_pixel() {
        let scene = Scene::default();
        let v = Trajectory::default().state(2.0);
        let m = Mount {
            position: [0.2, 0.0, 0.0],
            rotation: euler_to_quat(0.0, -0.3, 0.0),
        };
        let (w, h) = (32, 24);
        let rgb = render_camera(&scene, &v, &m, &view(1, Encoding::Bgr8, w, h, 90.0));
        let gray = render_camera(&scene, &v, &m, &view(3, Encoding::Mono8, w, h, 90.0));
        let mut depth_view = view(2, Encoding::DepthMm16, w, h, 90.0);
        // Centimetres: every surface within the view's 200 m fits a pixel.
        depth_view.depth.unit_m = 0.01;
        let depth = render_camera(&scene, &v, &m, &depth_view);
        let seg = render_camera(&scene, &v, &m, &view(4, Encoding::Bgr8, w, h, 90.0));
        for i in 0..(w * h) as usize {
            let bgr = [rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]];
            assert_eq!(gray[i], luma(bgr));
            let d = u16::from_le_bytes([depth[2 * i], depth[2 * i + 1]]);
            let s = [seg[3 * i], seg[3 * i + 1], seg[3 * i + 2]];
            // Sky: no return and no label; anything else: both.
            assert_eq!(d == DEPTH_NO_RETURN, s == [0, 0, 0], "pixel {i}");
        }
    }

    #[test]
    fn lidar_points_are_in_the_sensor_frame_as_flu() {
        let rays = lidar_rays(20, 8, 1);
        let pts = scan_lidar(
            &Scene::default(),
            &hover(),
            &Mount {
                position: [0.0; 3],
                rotation: [1.0, 0.0, 0.0, 0.0],
            },
            20,
            &rays,
            100.0,
        );
        // From inside the pillar, a level ring at 5 m hits only the boxes taller than 5 m, at its own height.
        assert!(pts.is_empty() || pts.iter().all(|p| p[2].abs() < 1e-3));
        let down = scan_lidar(
            &Scene::default(),
            &hover(),
            &down_mount(),
            20,
            &[[1.0, 0.0, 0.0]],
            100.0,
        );
        assert_eq!(down.len(), 1);
        // Straight down through a pitched-down mount is +x in the sensor frame.
        assert!(
            (down[0][0] - 5.0).abs() < 1e-3 && down[0][1].abs() < 1e-3 && down[0][2].abs() < 1e-3,
            "{down:?}"
        );
        assert_eq!(down[0][3], 1.0);
        let world = scan_lidar(
            &Scene::default(),
            &hover(),
            &down_mount(),
            21,
            &[[1.0, 0.0, 0.0]],
            100.0,
        );
        assert!(world[0][2].abs() < 1e-3, "world NED ground at z = 0: {world:?}");
    }

    #[test]
    fn laser_hits_the_pillar_from_the_side() {
        let scene = Scene::default();
        let still = Trajectory::hovering(5.0);
        let mut v = still.state(0.0);
        v.position = [-10.0, 0.0, -5.0];
        let l = laser(
            &scene,
            &v,
            &Mount {
                position: [0.0; 3],
                rotation: [1.0, 0.0, 0.0, 0.0],
            },
            1,
            [0.0; 3],
            100.0,
        );
        assert!((l.distance - 9.0).abs() < 1e-4, "{l:?}");
        assert_eq!(l.box_origin, [0.0, 0.0, -6.0]);
    }
}
