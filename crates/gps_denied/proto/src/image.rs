//! `camera.image`: a base64 JPEG. Decoding is bounded: a field longer than
//! the limit is refused before any byte of it is decoded, and what decodes
//! must start like a JPEG.

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;

use image_codec::JPEG_START;

/// Python's `base64.b64encode` pads; other writers don't. Both are read.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageError {
    /// Longer than the limit: refused before decoding.
    TooLong {
        len: usize,
        max: usize,
    },
    BadBase64,
    /// Decoded, but the bytes are not a JPEG.
    NotJpeg,
}

impl std::fmt::Display for ImageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImageError::TooLong { len, max } => write!(f, "base64 image of {len} bytes (at most {max})"),
            ImageError::BadBase64 => f.write_str("image is not base64"),
            ImageError::NotJpeg => f.write_str("image does not start like a JPEG"),
        }
    }
}

impl std::error::Error for ImageError {}

/// Decodes a base64 JPEG of at most `max_base64_len` characters. Line breaks
/// (as `base64.encodebytes` writes them) are skipped.
pub fn decode_base64_jpeg(text: &str, max_base64_len: usize) -> Result<Vec<u8>, ImageError> {
    if text.len() > max_base64_len {
        return Err(ImageError::TooLong {
            len: text.len(),
            max: max_base64_len,
        });
    }
    let bytes = text.as_bytes();
    // Whitespace is no base64 byte: the text is looked at for it only when
    // it does not decode as it is (most images have none).
    let decoded = LENIENT
        .decode(bytes)
        .or_else(|e| {
            if bytes.iter().any(u8::is_ascii_whitespace) {
                let compact: Vec<u8> = bytes.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
                LENIENT.decode(compact)
            } else {
                Err(e)
            }
        })
        .map_err(|_| ImageError::BadBase64)?;
    if decoded.starts_with(&JPEG_START) {
        Ok(decoded)
    } else {
        Err(ImageError::NotJpeg)
    }
}

/// Standard, padded base64 (what Python's `base64.b64encode` writes).
pub fn encode_base64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// The length of the base64 text of `n` bytes.
pub const fn base64_len(n: usize) -> usize {
    n.div_ceil(3) * 4
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY_JPEG_START: [u8; 6] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];

    #[test]
    fn round_trip_padded_unpadded_and_wrapped() {
        let padded = encode_base64(&TINY_JPEG_START[..5]);
        assert!(padded.ends_with('='));
        assert_eq!(decode_base64_jpeg(&padded, 100).unwrap(), &TINY_JPEG_START[..5]);
        let unpadded = padded.trim_end_matches('=');
        assert_eq!(decode_base64_jpeg(unpadded, 100).unwrap(), &TINY_JPEG_START[..5]);
        let wrapped = format!("{}\n{}\n", &padded[..4], &padded[4..]);
        assert_eq!(decode_base64_jpeg(&wrapped, 100).unwrap(), &TINY_JPEG_START[..5]);
    }

    #[test]
    fn too_long_is_refused_before_decoding() {
        // Not even base64: had it been decoded, the error would say so.
        let text = "!".repeat(101);
        assert_eq!(
            decode_base64_jpeg(&text, 100),
            Err(ImageError::TooLong { len: 101, max: 100 })
        );
        assert_eq!(decode_base64_jpeg(&"!".repeat(100), 100), Err(ImageError::BadBase64));
    }

    #[test]
    fn non_jpeg_and_bad_base64_are_told_apart() {
        assert_eq!(
            decode_base64_jpeg(&encode_base64(b"\x89PNG\r\n"), 100),
            Err(ImageError::NotJpeg)
        );
        assert_eq!(decode_base64_jpeg("/9j/4A*=", 100), Err(ImageError::BadBase64));
        assert_eq!(decode_base64_jpeg("/9j/4", 100), Err(ImageError::BadBase64));
        assert_eq!(decode_base64_jpeg("", 100), Err(ImageError::NotJpeg));
    }

    #[test]
    fn lengths() {
        for n in 0..20 {
            assert_eq!(encode_base64(&vec![0; n]).len(), base64_len(n));
        }
    }
}
