//! `sensor_msgs/CompressedImage` in ROS 2's serialized form, written
//! straight from the borrowed JPEG into a buffer the camera keeps.
//!
//! Why: publishing the typed message costs, per frame, an owned copy of the
//! JPEG, a C message with a second copy (both fresh allocations of the
//! JPEG's size, which glibc serves with new pages: page faults were a third
//! of an AUV image thread's time), and the serialization's copy. Publishing
//! these bytes instead (`rcl_publish_serialized_message`) leaves one copy
//! here, into memory that is reused.
//!
//! The form is what every ROS 2 middleware exchanges and `rmw_serialize`
//! writes: a 4-byte encapsulation header (CDR, little-endian), then the
//! fields in order, each aligned to its size counted from the end of that
//! header; a string is its length including the terminating NUL (u32), its
//! bytes and the NUL; a byte sequence is its length (u32) and its bytes. The
//! tests compare it with `rmw_serialize`'s output.

use r2r::builtin_interfaces::msg::Time;

/// Encapsulation `CDR_LE` (0x0001), no options.
const CDR_LE: [u8; 4] = [0x00, 0x01, 0x00, 0x00];
const HEADER_LEN: usize = CDR_LE.len();

/// The ROS type name for an untyped publisher of these bytes.
pub const COMPRESSED_IMAGE_TYPE: &str = "sensor_msgs/msg/CompressedImage";

fn align4(out: &mut Vec<u8>) {
    let pad = (4 - (out.len() - HEADER_LEN) % 4) % 4;
    out.extend_from_slice(&[0u8; 3][..pad]);
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    align4(out);
    out.extend_from_slice(&v.to_le_bytes());
}

/// Lengths above u32 cannot be serialized (nor received anywhere).
fn put_len(out: &mut Vec<u8>, len: usize) -> Result<(), usize> {
    put_u32(out, u32::try_from(len).map_err(|_| len)?);
    Ok(())
}

fn put_string(out: &mut Vec<u8>, s: &str) -> Result<(), usize> {
    put_len(out, s.len() + 1)?;
    out.extend_from_slice(s.as_bytes());
    out.push(0);
    Ok(())
}

/// Replaces `out` with the serialized `CompressedImage{header{stamp,
/// frame_id}, format, data}`; `Err(len)` for a field longer than CDR's u32
/// length allows (nothing is published then).
pub fn compressed_image(
    out: &mut Vec<u8>,
    stamp: &Time,
    frame_id: &str,
    format: &str,
    data: &[u8],
) -> Result<(), usize> {
    out.clear();
    out.reserve(HEADER_LEN + 32 + frame_id.len() + format.len() + data.len());
    out.extend_from_slice(&CDR_LE);
    out.extend_from_slice(&stamp.sec.to_le_bytes());
    out.extend_from_slice(&stamp.nanosec.to_le_bytes());
    put_string(out, frame_id)?;
    put_string(out, format)?;
    put_len(out, data.len())?;
    out.extend_from_slice(data);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use r2r::sensor_msgs::msg::CompressedImage;
    use r2r::std_msgs::msg::Header;
    use r2r::WrappedTypesupport;

    fn reference(stamp: &Time, frame_id: &str, format: &str, data: &[u8]) -> Vec<u8> {
        CompressedImage {
            header: Header {
                stamp: stamp.clone(),
                frame_id: frame_id.into(),
            },
            format: format.into(),
            data: data.to_vec(),
        }
        .to_serialized_bytes()
        .expect("rmw_serialize")
    }

    /// Where alignment pads: after each string. CDR leaves padding bytes
    /// unspecified (rmw_serialize leaves what its reused buffer held); this
    /// writer zeroes them.
    fn padding(frame_id: &str, format: &str) -> Vec<usize> {
        let mut at = HEADER_LEN + 8;
        let mut pads = Vec::new();
        for s in [frame_id, format] {
            at += 4 + s.len() + 1;
            while (at - HEADER_LEN) % 4 != 0 {
                pads.push(at);
                at += 1;
            }
        }
        pads
    }

    /// Every alignment case of the two strings and the sequence: lengths
    /// 0–8 of each, against the middleware's own serializer.
    #[test]
    fn matches_rmw_serialize_for_every_alignment() {
        let stamp = Time {
            sec: -7,
            nanosec: 999_999_999,
        };
        let mut out = Vec::new();
        let names = [
            "",
            "a",
            "ab",
            "abc",
            "abcd",
            "auv0/front_camera_optical",
            "abcdefg",
            "abcdefgh",
        ];
        for frame_id in names {
            for format in ["", "jpeg", "bgr8; jpeg compressed bgr8", "pn", "png"] {
                for len in [0usize, 1, 2, 3, 4, 5, 7, 8, 1000] {
                    let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
                    compressed_image(&mut out, &stamp, frame_id, format, &data).unwrap();
                    let mut expected = reference(&stamp, frame_id, format, &data);
                    for at in padding(frame_id, format) {
                        assert_eq!(out[at], 0, "padding at {at}");
                        expected[at] = 0;
                    }
                    assert_eq!(
                        out, expected,
                        "frame_id {frame_id:?}, format {format:?}, {len} data bytes"
                    );
                }
            }
        }
    }

    #[test]
    fn reads_back_with_rmw_deserialize() {
        let stamp = Time { sec: 12, nanosec: 34 };
        let jpeg: Vec<u8> = (0..150_001u32).map(|i| (i % 251) as u8).collect();
        let mut out = vec![0xAA; 3];
        compressed_image(&mut out, &stamp, "auv3/bottom_camera_optical", "jpeg", &jpeg).unwrap();
        let m = CompressedImage::from_serialized_bytes(&out).expect("rmw_deserialize");
        assert_eq!(
            (m.header.stamp, m.header.frame_id.as_str()),
            (stamp, "auv3/bottom_camera_optical")
        );
        assert_eq!((m.format.as_str(), m.data), ("jpeg", jpeg));
    }
}
