//! Camera payloads (RflySim's SDK: VisionCaptureApi.py's UDP receivers, "Images"): raw pixels checked against the
//! configured size. JPEG and PNG payloads are ordinary files, decoded by
//! `image_codec`.

use bytes::Bytes;

pub use image_codec::{Encoding, Image};

use crate::error::DecodeError;

/// A depth camera's (TypeID 2) pixel where RflySim3D measured nothing:
/// nearer than the near clip (`otherParams[0]`), farther than the far clip
/// (`otherParams[1]`) or than a pixel can hold (RflySim's SDK, "Depth camera").
pub const DEPTH_NO_RETURN: u16 = u16::MAX;

/// Metres per unit of a depth pixel unless `otherParams[2]` says otherwise.
pub const DEPTH_DEFAULT_UNIT_M: f32 = 0.001;

/// Rewrites RflySim3D depth pixels (little-endian u16, `unit_m` metres
/// each) in place as 16UC1 depth: millimetres, 0 where there is no return
/// ([`DEPTH_NO_RETURN`], or a depth beyond 65.535 m). A trailing odd byte
/// (row padding) is left as is.
pub fn depth_to_millimetres(pixels: &mut [u8], unit_m: f32) {
    let to_mm = f64::from(unit_m) * 1000.0;
    let in_mm = (to_mm - 1.0).abs() < 1e-9;
    for px in pixels.chunks_exact_mut(2) {
        let value = u16::from_le_bytes([px[0], px[1]]);
        let mm = if value == DEPTH_NO_RETURN {
            0
        } else if in_mm {
            value
        } else {
            let mm = (f64::from(value) * to_mm).round();
            if mm <= f64::from(u16::MAX) {
                mm as u16
            } else {
                0
            }
        };
        px.copy_from_slice(&mm.to_le_bytes());
    }
}

/// Checks a raw frame against the configured size and wraps it without a copy.
/// Rows may be padded (`step` > width × bytes per pixel) as long as every row
/// has the same length.
pub fn raw_image(payload: Bytes, width: u32, height: u32, encoding: Encoding) -> Result<Image, DecodeError> {
    let step = raw_image_step(payload.len(), width, height, encoding)?;
    Ok(Image {
        width,
        height,
        encoding,
        step,
        data: payload,
    })
}

/// The row length of a raw frame of `len` bytes and the configured size
/// (see [`raw_image`]), or why the frame does not fit it.
pub fn raw_image_step(len: usize, width: u32, height: u32, encoding: Encoding) -> Result<u32, DecodeError> {
    let row = width as usize * encoding.bytes_per_pixel();
    let expected = row * height as usize;
    if width == 0 || height == 0 {
        return Err(DecodeError::invalid(
            "raw image",
            format!("configured size {width}×{height}"),
        ));
    }
    let step = if len == expected {
        row
    } else if len > expected && len % height as usize == 0 && len / (height as usize) < row + 64 {
        len / height as usize
    } else {
        return Err(DecodeError::length(
            "raw image",
            len,
            format!("{expected} ({width}×{height} {})", encoding.ros_name()),
        ));
    };
    u32::try_from(step).map_err(|_| DecodeError::invalid("raw image", format!("row of {step} bytes")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_checks_size_and_stride() {
        let img = raw_image(Bytes::from(vec![0u8; 4 * 3 * 3]), 4, 3, Encoding::Bgr8).unwrap();
        assert_eq!((img.step, img.data.len()), (12, 36));
        let padded = raw_image(Bytes::from(vec![0u8; 16 * 3]), 4, 3, Encoding::Bgr8).unwrap();
        assert_eq!(padded.step, 16);
        let err = raw_image(Bytes::from(vec![0u8; 35]), 4, 3, Encoding::Bgr8).unwrap_err();
        assert_eq!(err.to_string(), "raw image: 35 bytes, expected 36 (4×3 bgr8)");
        assert!(raw_image(Bytes::from(vec![0u8; 8]), 2, 2, Encoding::DepthMm16).is_ok());
        assert!(raw_image(Bytes::new(), 0, 0, Encoding::Mono8).is_err());
    }

    fn depth_pixels(values: &[u16]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn depth_in_millimetres_keeps_its_values_and_no_return_becomes_zero() {
        let mut px = depth_pixels(&[5000, DEPTH_NO_RETURN, 1, 65534, 0]);
        depth_to_millimetres(&mut px, DEPTH_DEFAULT_UNIT_M);
        assert_eq!(px, depth_pixels(&[5000, 0, 1, 65534, 0]));
    }

    #[test]
    fn depth_in_other_units_becomes_millimetres_and_what_16uc1_cannot_hold_no_return() {
        // Centimetres: 12.34 m, 655.34 m (beyond 65.535 m), no return.
        let mut px = depth_pixels(&[1234, 65534, DEPTH_NO_RETURN]);
        depth_to_millimetres(&mut px, 0.01);
        assert_eq!(px, depth_pixels(&[12340, 0, 0]));
        // Tenths of a millimetre, and a trailing padding byte left alone.
        let mut px = depth_pixels(&[50_000, 7]);
        px.push(0xAB);
        depth_to_millimetres(&mut px, 0.0001);
        assert_eq!(px, [depth_pixels(&[5000, 1]), vec![0xAB]].concat());
    }
}
