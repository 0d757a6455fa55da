//! The renderer's camera: a forward view of sky and ground whose horizon
//! tilts with roll and moves with pitch, JPEG-compressed as AeroSim's
//! renderer does (bgr8 here).

use image_codec::Encoding;

const SKY: [u8; 3] = [235, 206, 135];
const GROUND: [u8; 3] = [60, 120, 70];

/// A `width`×`height` bgr8 frame of the view at `roll`, `pitch` (radians),
/// for a horizontal field of view of `fov_deg`.
pub fn horizon(width: u32, height: u32, roll: f64, pitch: f64, fov_deg: f64) -> Vec<u8> {
    let (w, h) = (width as usize, height as usize);
    let focal = w as f64 / 2.0 / (fov_deg.to_radians() / 2.0).tan();
    let (sin, cos) = roll.sin_cos();
    // The horizon: points where (y - cy)·cos + (x - cx)·sin = focal·tan(pitch)
    // (image y down; nose up lowers it, right roll raises its right end), sky above it.
    let offset = focal * pitch.tan();
    let (cx, cy) = (w as f64 / 2.0, h as f64 / 2.0);
    let mut out = vec![0u8; w * h * 3];
    for (y, row) in out.chunks_exact_mut(w * 3).enumerate() {
        let dy = (y as f64 - cy) * cos;
        for (x, px) in row.chunks_exact_mut(3).enumerate() {
            let below = dy + (x as f64 - cx) * sin > offset;
            px.copy_from_slice(if below { &GROUND } else { &SKY });
        }
    }
    out
}

pub fn jpeg(pixels: &[u8], width: u32, height: u32, quality: i32) -> Result<Vec<u8>, String> {
    image_codec::encode::jpeg(pixels, width, height, Encoding::Bgr8, quality).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_flight_shows_sky_above_ground_below() {
        let img = horizon(64, 48, 0.0, 0.0, 90.0);
        assert_eq!(&img[..3], &SKY);
        assert_eq!(&img[img.len() - 3..], &GROUND);
        // Nose up: more sky.
        let up = horizon(64, 48, 0.0, 0.3, 90.0);
        let sky = |i: &[u8]| i.chunks(3).filter(|p| *p == SKY).count();
        assert!(sky(&up) > sky(&img));
        // Right wing down: ground on the right at mid height, sky on the left.
        let right = horizon(64, 48, 0.5, 0.0, 90.0);
        let at = |x: usize, y: usize| &right[(y * 64 + x) * 3..(y * 64 + x) * 3 + 3];
        assert_eq!((at(2, 20), at(61, 20)), (&SKY[..], &GROUND[..]));
    }
}
