//! Camera payloads (RflySim's SDK: VisionCaptureApi.py's UDP receivers, "Images"): raw pixels checked against the
//! configured size. JPEG and PNG payloads are ordinary files, decoded by
//! `image_codec`.

use bytes::Bytes;

pub use image_codec::{Encoding, Image};

use crate::error::DecodeError;

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
        assert!(raw_image(Bytes::from(vec![0u8; 8]), 2, 2, Encoding::Mono16).is_ok());
        assert!(raw_image(Bytes::new(), 0, 0, Encoding::Mono8).is_err());
    }
}
