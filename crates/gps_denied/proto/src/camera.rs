//! The pinhole model of the downward camera from `camera.width`, `height`
//! and `fov` (horizontal, degrees): square pixels, no distortion, principal
//! point at (w/2, h/2) — the intrinsics the bridge publishes in
//! `camera_info` (ros_common's), so that what the emulator renders is what
//! a user's vision code computes with.

use crate::frames::body_to_optical;
use crate::telemetry::CameraGeometry;
use crate::wire::{DEFAULT_FOV_DEG, DEFAULT_IMAGE_HEIGHT, DEFAULT_IMAGE_WIDTH};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraModel {
    pub width: u32,
    pub height: u32,
    /// Focal length in pixels (fx = fy).
    pub focal: f64,
    /// Principal point (pixel centres at integer coordinates, as in OpenCV).
    pub cx: f64,
    pub cy: f64,
}

impl Default for CameraModel {
    /// The protocol's 320 × 240, 60°.
    fn default() -> Self {
        Self::new(&CameraGeometry {
            width: DEFAULT_IMAGE_WIDTH,
            height: DEFAULT_IMAGE_HEIGHT,
            fov_deg: DEFAULT_FOV_DEG,
        })
    }
}

impl CameraModel {
    pub fn new(g: &CameraGeometry) -> Self {
        let w = f64::from(g.width);
        let h = f64::from(g.height);
        Self {
            width: g.width,
            height: g.height,
            focal: (w / 2.0) / (g.fov_deg.to_radians() / 2.0).tan(),
            cx: w / 2.0,
            cy: h / 2.0,
        }
    }

    /// The pixel `(u, v)` where a point in front of the camera appears
    /// (possibly outside the image); `None` behind it.
    pub fn project_optical(&self, p: [f64; 3]) -> Option<(f64, f64)> {
        (p[2] > 1e-9).then(|| (self.cx + self.focal * p[0] / p[2], self.cy + self.focal * p[1] / p[2]))
    }

    pub fn project_body(&self, p: [f64; 3]) -> Option<(f64, f64)> {
        self.project_optical(body_to_optical(p))
    }

    /// The viewing ray of pixel `(u, v)` in the optical frame (z = 1).
    pub fn ray_optical(&self, u: f64, v: f64) -> [f64; 3] {
        [(u - self.cx) / self.focal, (v - self.cy) / self.focal, 1.0]
    }

    /// Whether pixel coordinates fall on the image (centres ±½ pixel).
    pub fn contains(&self, u: f64, v: f64) -> bool {
        u >= -0.5 && v >= -0.5 && u <= f64::from(self.width) - 0.5 && v <= f64::from(self.height) - 0.5
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_defaults() {
        let m = CameraModel::default();
        // 160 / tan 30° = 160 √3
        assert!((m.focal - 160.0 * 3f64.sqrt()).abs() < 1e-9);
        assert_eq!((m.cx, m.cy), (160.0, 120.0));
    }

    #[test]
    fn pixels_and_rays_agree_and_the_image_top_is_forward() {
        let m = CameraModel::default();
        // A point ahead of the drone and to its left, 4 m below.
        let (u, v) = m.project_body([1.0, 0.5, -4.0]).unwrap();
        assert!(u < m.cx, "left of the drone is left in the image");
        assert!(v < m.cy, "ahead of the drone is up in the image");
        let r = m.ray_optical(u, v);
        let opt = body_to_optical([1.0, 0.5, -4.0]);
        assert!((r[0] * opt[2] - opt[0]).abs() < 1e-9 && (r[1] * opt[2] - opt[1]).abs() < 1e-9);
        assert!(
            m.project_body([0.0, 0.0, 1.0]).is_none(),
            "above the drone is behind the camera"
        );
        // The edge of the horizontal field of view is the image's edge.
        let (u, _) = m.project_body([0.0, -(30f64.to_radians().tan()), -1.0]).unwrap();
        assert!((u - (m.cx + 160.0)).abs() < 1e-9 && !m.contains(u, 0.0) && m.contains(u - 0.5, 0.0));
    }
}
