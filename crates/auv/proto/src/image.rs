//! Image messages: `[id: u8][front JPEG][bottom JPEG]`, both cameras of one
//! AUV in one message (so they share one stamp).
//!
//! Parsing checks the envelope, the size bound and the JPEG markers without
//! decoding or copying: the parts are borrowed or moved as they came.

use crate::error::{exact_parts, id_of, WireError};
use crate::{DEFAULT_MAX_JPEG_BYTES, IMAGE_PARTS};
use image_codec::{JPEG_END as EOI, JPEG_START as SOI};

const WHAT: &str = "image message";

/// Bounds applied to every camera part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageLimits {
    pub max_jpeg_bytes: usize,
}

impl Default for ImageLimits {
    fn default() -> Self {
        ImageLimits {
            max_jpeg_bytes: DEFAULT_MAX_JPEG_BYTES,
        }
    }
}

/// The cameras, in wire order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Camera {
    Front,
    Bottom,
}

impl Camera {
    pub const ALL: [Camera; 2] = [Camera::Front, Camera::Bottom];

    pub fn name(self) -> &'static str {
        match self {
            Camera::Front => "front",
            Camera::Bottom => "bottom",
        }
    }
}

/// One image message; `P` is whatever holds a part's bytes (`Vec<u8>`, `&[u8]`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageMessage<P> {
    pub auv_id: u8,
    pub front: P,
    pub bottom: P,
}

impl<P: AsRef<[u8]>> ImageMessage<P> {
    /// Checks a received message; moves its parts into the result.
    pub fn parse(parts: Vec<P>, limits: &ImageLimits) -> Result<Self, WireError> {
        let [id, front, bottom] = exact_parts::<P, IMAGE_PARTS>(WHAT, parts)?;
        let auv_id = id_of(WHAT, id.as_ref())?;
        let message = ImageMessage { auv_id, front, bottom };
        message.validate(limits)?;
        Ok(message)
    }

    /// The checks of [`Self::parse`] on the two JPEGs (the emulator uses it before sending).
    pub fn validate(&self, limits: &ImageLimits) -> Result<(), WireError> {
        check_jpeg("front camera", self.front.as_ref(), limits)?;
        check_jpeg("bottom camera", self.bottom.as_ref(), limits)
    }

    pub fn jpeg(&self, camera: Camera) -> &[u8] {
        match camera {
            Camera::Front => self.front.as_ref(),
            Camera::Bottom => self.bottom.as_ref(),
        }
    }

    /// The first part on the wire.
    pub fn id_part(&self) -> [u8; 1] {
        [self.auv_id]
    }
}

fn check_jpeg(what: &'static str, data: &[u8], limits: &ImageLimits) -> Result<(), WireError> {
    if data.len() > limits.max_jpeg_bytes {
        return Err(WireError::TooLarge {
            what,
            got: data.len(),
            max: limits.max_jpeg_bytes,
        });
    }
    if data.len() < SOI.len() + EOI.len() || !data.starts_with(&SOI) || !data.ends_with(&EOI) {
        return Err(WireError::NotJpeg { what, len: data.len() });
    }
    Ok(())
}

/// Width and height from a JPEG's first start-of-frame marker, without
/// decoding it (for `CameraInfo`); `None` when the markers don't say.
pub fn jpeg_dimensions(data: &[u8]) -> Option<(u16, u16)> {
    if !data.starts_with(&SOI[..2]) {
        return None;
    }
    let mut i = 2;
    while i + 4 <= data.len() {
        if data[i] != 0xFF {
            return None;
        }
        let marker = data[i + 1];
        // Fill bytes, and the length-less markers TEM and RSTn.
        if marker == 0xFF {
            i += 1;
            continue;
        }
        if marker == 0x01 || (0xD0..=0xD7).contains(&marker) {
            i += 2;
            continue;
        }
        let len = usize::from(u16::from_be_bytes([data[i + 2], data[i + 3]]));
        if len < 2 {
            return None;
        }
        let is_sof = matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
        if is_sof {
            let body = data.get(i + 4..i + 2 + len)?;
            if body.len() < 5 {
                return None;
            }
            let height = u16::from_be_bytes([body[1], body[2]]);
            let width = u16::from_be_bytes([body[3], body[4]]);
            return (width > 0 && height > 0).then_some((width, height));
        }
        if marker == 0xDA || marker == 0xD9 {
            return None;
        }
        i += 2 + len;
    }
    None
}

/// A JPEG with a comment segment (`COM`) inserted right after SOI: the
/// emulator tags each frame so that a benchmark can tell them apart.
pub fn with_comment(jpeg: &[u8], comment: &[u8]) -> Vec<u8> {
    let comment = &comment[..comment.len().min(u16::MAX as usize - 2)];
    let mut out = Vec::with_capacity(jpeg.len() + comment.len() + 4);
    out.extend_from_slice(&jpeg[..2.min(jpeg.len())]);
    out.extend_from_slice(&[0xFF, 0xFE]);
    out.extend_from_slice(&((comment.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(comment);
    out.extend_from_slice(jpeg.get(2..).unwrap_or_default());
    out
}

/// The first comment segment of a JPEG, if it comes before the image data.
pub fn jpeg_comment(data: &[u8]) -> Option<&[u8]> {
    let mut i = 2;
    if !data.starts_with(&SOI[..2]) {
        return None;
    }
    while i + 4 <= data.len() && data[i] == 0xFF {
        let marker = data[i + 1];
        let len = usize::from(u16::from_be_bytes([data[i + 2], data[i + 3]]));
        if len < 2 || marker == 0xDA {
            return None;
        }
        if marker == 0xFE {
            return data.get(i + 4..i + 2 + len);
        }
        i += 2 + len;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest shape that passes the marker checks: SOI, an SOF0 of 640×480, EOI.
    fn fake_jpeg() -> Vec<u8> {
        let mut j = vec![
            0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x0B, 8, 0x01, 0xE0, 0x02, 0x80, 1, 1, 0x11, 0,
        ];
        j.extend_from_slice(&EOI);
        j
    }

    #[test]
    fn parses_a_good_message_without_copying() {
        let front = fake_jpeg();
        let bottom = fake_jpeg();
        let parts: Vec<&[u8]> = vec![&[7], &front, &bottom];
        let m = ImageMessage::parse(parts, &ImageLimits::default()).unwrap();
        assert_eq!(m.auv_id, 7);
        assert!(std::ptr::eq(m.front, &front[..]));
        assert_eq!(m.jpeg(Camera::Bottom), &bottom[..]);
        assert_eq!(m.id_part(), [7]);
    }

    #[test]
    fn each_kind_of_bad_message_has_its_own_error() {
        let j = fake_jpeg();
        let limits = ImageLimits { max_jpeg_bytes: 64 };
        let kind = |parts: Vec<&[u8]>| ImageMessage::parse(parts, &limits).unwrap_err().kind();
        assert_eq!(kind(vec![&[0], &j]), "wrong_part_count");
        assert_eq!(kind(vec![&[0], &j, &j, &j]), "wrong_part_count");
        assert_eq!(kind(vec![]), "wrong_part_count");
        assert_eq!(kind(vec![&[0, 0], &j, &j]), "wrong_id_length");
        assert_eq!(kind(vec![&[], &j, &j]), "wrong_id_length");
        assert_eq!(kind(vec![&[0], &j[..j.len() - 1], &j]), "corrupt_jpeg");
        assert_eq!(kind(vec![&[0], &j, &j[1..]]), "corrupt_jpeg");
        assert_eq!(kind(vec![&[0], &j, &[]]), "corrupt_jpeg");
        let big = [&j[..3], &[0u8; 100][..], &EOI[..]].concat();
        assert_eq!(kind(vec![&[0], &big, &j]), "too_large");
    }

    #[test]
    fn dimensions_from_the_frame_header() {
        assert_eq!(jpeg_dimensions(&fake_jpeg()), Some((640, 480)));
        assert_eq!(jpeg_dimensions(&[0xFF, 0xD8, 0xFF, 0xD9]), None);
        assert_eq!(jpeg_dimensions(&fake_jpeg()[..8]), None);
        // An APP0 segment before the SOF is skipped.
        let j = fake_jpeg();
        let with_app0 = [&j[..2], &[0xFF, 0xE0, 0x00, 0x04, 1, 2][..], &j[2..]].concat();
        assert_eq!(jpeg_dimensions(&with_app0), Some((640, 480)));
    }

    #[test]
    fn comments_round_trip_and_keep_the_jpeg_valid() {
        let tagged = with_comment(&fake_jpeg(), b"seq 42");
        assert_eq!(jpeg_comment(&tagged), Some(&b"seq 42"[..]));
        assert_eq!(jpeg_dimensions(&tagged), Some((640, 480)));
        let parts: Vec<&[u8]> = vec![&[1], &tagged, &tagged];
        assert!(ImageMessage::parse(parts, &ImageLimits::default()).is_ok());
        assert_eq!(jpeg_comment(&fake_jpeg()), None);
    }
}
