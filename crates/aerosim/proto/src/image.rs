//! The renderer's camera images: `aerosim::types::CompressedImage` records,
//! bincode 1 (little-endian, fixed-width integers, u64 lengths), on a topic
//! that also carries JSON responses.
//!
//! Layout: topic (u64 length + UTF-8), type name (u64 length + UTF-8),
//! simulation time (i32 sec, u32 nanosec), platform time (the same),
//! format (u32: 0 JPEG, 1 PNG), image bytes (u64 length + bytes).

use crate::envelope::{Metadata, TimeStamp};
use crate::DecodeError;

pub const TYPE_NAME: &str = "aerosim::types::CompressedImage";
/// Topic and type names are short; a longer one is a corrupt record.
const MAX_NAME_BYTES: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Jpeg,
    Png,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressedImage {
    pub format: ImageFormat,
    pub data: Vec<u8>,
}

/// What a record on the renderer's topic is, by its first byte: JSON
/// starts with `{`; bincode with its topic's length, far below `{` (123).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadKind {
    Json,
    Bincode,
    Unknown,
}

pub fn classify(bytes: &[u8]) -> PayloadKind {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => PayloadKind::Json,
        Some(_) if bytes.len() >= 8 => PayloadKind::Bincode,
        _ => PayloadKind::Unknown,
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let left = self.bytes.len() - self.at;
        if n > left {
            return Err(DecodeError::Truncated { needed: n, left });
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    fn stamp(&mut self) -> Result<TimeStamp, DecodeError> {
        let sec = self.u32()? as i32;
        Ok(TimeStamp {
            sec,
            nanosec: self.u32()?,
        })
    }

    /// A length checked against `max` and what is left before anything is allocated.
    fn len(&mut self, what: &str, max: usize) -> Result<usize, DecodeError> {
        let n = self.u64()?;
        let left = self.bytes.len() - self.at;
        if n > max as u64 {
            return Err(DecodeError::BadImage(format!("{what} of {n} bytes (limit {max})")));
        }
        if n > left as u64 {
            return Err(DecodeError::Truncated {
                needed: n as usize,
                left,
            });
        }
        Ok(n as usize)
    }

    fn name(&mut self, what: &str) -> Result<String, DecodeError> {
        let n = self.len(what, MAX_NAME_BYTES)?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| DecodeError::BadImage(format!("{what} is not UTF-8")))
    }
}

/// One image record, its bytes at most `max_image_bytes`.
pub fn decode_image(bytes: &[u8], max_image_bytes: usize) -> Result<(Metadata, CompressedImage), DecodeError> {
    if classify(bytes) != PayloadKind::Bincode {
        return Err(DecodeError::BadImage("not a bincode record".into()));
    }
    let mut c = Cursor { bytes, at: 0 };
    let topic = c.name("topic")?;
    let type_name = c.name("type name")?;
    if type_name != TYPE_NAME {
        return Err(DecodeError::WrongType {
            expected: TYPE_NAME,
            found: type_name,
        });
    }
    let timestamp_sim = c.stamp()?;
    let timestamp_platform = c.stamp()?;
    let format = match c.u32()? {
        0 => ImageFormat::Jpeg,
        1 => ImageFormat::Png,
        n => return Err(DecodeError::BadImage(format!("format {n} (0 JPEG, 1 PNG)"))),
    };
    let n = c.len("image", max_image_bytes)?;
    let data = c.take(n)?.to_vec();
    if c.at != bytes.len() {
        return Err(DecodeError::BadImage(format!(
            "{} bytes after the image",
            bytes.len() - c.at
        )));
    }
    if data.is_empty() {
        return Err(DecodeError::BadImage("no image bytes".into()));
    }
    Ok((
        Metadata {
            topic,
            type_name,
            timestamp_sim,
            timestamp_platform,
        },
        CompressedImage { format, data },
    ))
}

/// The record AeroSim's bincode serializer writes for `image` on `topic`.
pub fn encode_image(topic: &str, sim: TimeStamp, platform: TimeStamp, image: &CompressedImage) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + topic.len() + image.data.len());
    for s in [topic, TYPE_NAME] {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    for t in [sim, platform] {
        out.extend_from_slice(&t.sec.to_le_bytes());
        out.extend_from_slice(&t.nanosec.to_le_bytes());
    }
    let format: u32 = match image.format {
        ImageFormat::Jpeg => 0,
        ImageFormat::Png => 1,
    };
    out.extend_from_slice(&format.to_le_bytes());
    out.extend_from_slice(&(image.data.len() as u64).to_le_bytes());
    out.extend_from_slice(&image.data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Vec<u8> {
        encode_image(
            "aerosim.renderer.responses",
            TimeStamp::UNSET,
            TimeStamp {
                sec: 1_764_000_000,
                nanosec: 5,
            },
            &CompressedImage {
                format: ImageFormat::Jpeg,
                data: vec![0xFF, 0xD8, 0xFF, 0xD9],
            },
        )
    }

    #[test]
    fn the_layout_is_bincode_1() {
        let r = record();
        // u64 topic length, then the topic.
        assert_eq!(&r[..8], &26u64.to_le_bytes());
        assert_eq!(&r[8..34], b"aerosim.renderer.responses");
        assert_eq!(&r[34..42], &(TYPE_NAME.len() as u64).to_le_bytes());
        let after_names = 42 + TYPE_NAME.len();
        assert_eq!(&r[after_names..after_names + 4], &i32::MIN.to_le_bytes());
        assert_eq!(&r[r.len() - 16..r.len() - 12], &0u32.to_le_bytes());
        assert_eq!(&r[r.len() - 4..], &[0xFF, 0xD8, 0xFF, 0xD9]);
        let (m, img) = decode_image(&r, 1 << 20).unwrap();
        assert_eq!(m.topic, "aerosim.renderer.responses");
        assert_eq!(m.timestamp_sim.to_seconds(), None);
        assert_eq!(img.data.len(), 4);
        assert_eq!(classify(&r), PayloadKind::Bincode);
        assert_eq!(classify(b" {\"x\": 1}"), PayloadKind::Json);
    }

    #[test]
    fn every_cut_is_refused_without_reading_past_the_end() {
        let r = record();
        for n in 0..r.len() {
            assert!(decode_image(&r[..n], 1 << 20).is_err(), "{n}");
        }
        let mut long = r.clone();
        long.push(0);
        assert_eq!(decode_image(&long, 1 << 20).unwrap_err().reason(), "bad_image");
        assert_eq!(decode_image(&r, 3).unwrap_err().reason(), "bad_image");
    }
}
