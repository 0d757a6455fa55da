//! Messages in ROS 2's serialized form (`CompressedImage`, `Image`,
//! `PointCloud2`), written straight from the borrowed bytes into a buffer
//! the publisher keeps.
//!
//! Why: publishing a typed message costs, per frame, a C message with a copy
//! of the payload (a fresh allocation of its size, which glibc serves with
//! new pages: page faults were a third of an AUV image thread's time), and
//! the serialization's copy. Publishing these bytes instead
//! (`rcl_publish_serialized_message`) leaves one copy here, into memory that
//! is reused.
//!
//! The form is what every ROS 2 middleware exchanges and `rmw_serialize`
//! writes: a 4-byte encapsulation header (CDR, little-endian), then the
//! fields in order, each aligned to its size counted from the end of that
//! header; a string is its length including the terminating NUL (u32), its
//! bytes and the NUL; a sequence is its length (u32) and its elements; a
//! bool is one byte. The tests compare it with `rmw_serialize`'s output.

use r2r::builtin_interfaces::msg::Time;
use r2r::sensor_msgs::msg::PointCloud2;
use r2r::std_msgs::msg::Header;

/// Encapsulation `CDR_LE` (0x0001), no options.
const CDR_LE: [u8; 4] = [0x00, 0x01, 0x00, 0x00];
const HEADER_LEN: usize = CDR_LE.len();

/// The ROS type names for untyped publishers of these bytes.
pub const COMPRESSED_IMAGE_TYPE: &str = "sensor_msgs/msg/CompressedImage";
pub const IMAGE_TYPE: &str = "sensor_msgs/msg/Image";
pub const POINT_CLOUD2_TYPE: &str = "sensor_msgs/msg/PointCloud2";

/// A field the message cannot carry (its length): longer than CDR's u32
/// length allows, or not the length of a fixed-size array field. Nothing is
/// published then.
pub type TooLong = usize;

/// Appends fields to a message being serialized into a reused buffer.
#[derive(Debug)]
pub struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> Writer<'a> {
    /// Replaces `out`'s contents with the encapsulation header; `capacity`
    /// is the whole message's expected size.
    pub fn start(out: &'a mut Vec<u8>, capacity: usize) -> Self {
        out.clear();
        out.reserve(HEADER_LEN + capacity);
        out.extend_from_slice(&CDR_LE);
        Self { out }
    }

    /// Zero padding up to a multiple of `n` (a power of two) from the end of the header.
    fn align(&mut self, n: usize) {
        let pad = (n - (self.out.len() - HEADER_LEN) % n) % n;
        self.out.extend_from_slice(&[0u8; 7][..pad]);
    }

    fn align4(&mut self) {
        self.align(4);
    }

    pub fn u8(&mut self, v: u8) {
        self.out.push(v);
    }

    pub fn bool(&mut self, v: bool) {
        self.out.push(u8::from(v));
    }

    pub fn u32(&mut self, v: u32) {
        self.align4();
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    pub fn i32(&mut self, v: i32) {
        self.align4();
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    pub fn f32(&mut self, v: f32) {
        self.align4();
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    pub fn f64(&mut self, v: f64) {
        self.align(8);
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    /// A fixed-size array of `N` doubles (no length on the wire).
    pub fn f64_array<const N: usize>(&mut self, v: &[f64]) -> Result<(), TooLong> {
        if v.len() != N {
            return Err(v.len());
        }
        self.align(8);
        for x in v {
            self.out.extend_from_slice(&x.to_le_bytes());
        }
        Ok(())
    }

    /// A sequence of doubles: its length, then (aligned) its elements.
    pub fn f64_seq(&mut self, v: &[f64]) -> Result<(), TooLong> {
        self.len(v.len())?;
        if !v.is_empty() {
            self.align(8);
        }
        for x in v {
            self.out.extend_from_slice(&x.to_le_bytes());
        }
        Ok(())
    }

    pub fn len(&mut self, len: usize) -> Result<(), TooLong> {
        self.u32(u32::try_from(len).map_err(|_| len)?);
        Ok(())
    }

    pub fn string(&mut self, s: &str) -> Result<(), TooLong> {
        self.len(s.len() + 1)?;
        self.out.extend_from_slice(s.as_bytes());
        self.out.push(0);
        Ok(())
    }

    pub fn bytes(&mut self, data: &[u8]) -> Result<(), TooLong> {
        self.len(data.len())?;
        self.out.extend_from_slice(data);
        Ok(())
    }

    pub fn header(&mut self, stamp: &Time, frame_id: &str) -> Result<(), TooLong> {
        self.time(stamp);
        self.string(frame_id)
    }

    pub fn time(&mut self, stamp: &Time) {
        self.i32(stamp.sec);
        self.u32(stamp.nanosec);
    }
}

/// Reads the fields of a serialized message in order, where they are: for a
/// subscription that takes a message serialized (`subscribe_raw`) and reads
/// its large arrays in place instead of having them converted into a C
/// message and then into Rust vectors. CDR in either byte order; every read
/// is bounds-checked (`None` past the end).
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    message: &'a [u8],
    at: usize,
    little_endian: bool,
}

/// The encapsulation of big-endian CDR.
const CDR_BE: [u8; 2] = [0x00, 0x00];

impl<'a> Reader<'a> {
    /// At the first field; `None` for an encapsulation other than plain CDR.
    pub fn new(message: &'a [u8]) -> Option<Self> {
        let kind = message.get(..2)?;
        let little_endian = match kind {
            k if k == &CDR_LE[..2] => true,
            k if k == &CDR_BE[..] => false,
            _ => return None,
        };
        (message.len() >= HEADER_LEN).then_some(Self {
            message,
            at: HEADER_LEN,
            little_endian,
        })
    }

    /// Whether the message's numbers are little-endian.
    pub fn little_endian(&self) -> bool {
        self.little_endian
    }

    fn align(&mut self, n: usize) {
        self.at += (n - (self.at - HEADER_LEN) % n) % n;
    }

    /// `n` bytes after aligning to `align`.
    pub fn bytes(&mut self, n: usize, align: usize) -> Option<&'a [u8]> {
        if n > 0 {
            self.align(align);
        }
        let end = self.at.checked_add(n)?;
        let b = self.message.get(self.at..end)?;
        self.at = end;
        Some(b)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let b: [u8; N] = self.bytes(N, N)?.try_into().ok()?;
        Some(b)
    }

    pub fn u32(&mut self) -> Option<u32> {
        let b = self.array::<4>()?;
        Some(if self.little_endian {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }

    pub fn i32(&mut self) -> Option<i32> {
        self.u32().map(|v| v as i32)
    }

    pub fn time(&mut self) -> Option<Time> {
        Some(Time {
            sec: self.i32()?,
            nanosec: self.u32()?,
        })
    }

    pub fn string(&mut self) -> Option<&'a str> {
        let len = self.u32()? as usize;
        let b = self.bytes(len, 1)?;
        let (text, nul) = b.split_at_checked(len.checked_sub(1)?)?;
        (nul == [0]).then_some(())?;
        std::str::from_utf8(text).ok()
    }

    /// A sequence of `n` elements of `size` bytes each, aligned to `align`:
    /// its length, then its bytes, in place.
    pub fn sequence(&mut self, size: usize, align: usize) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.bytes(n.checked_mul(size)?, align)
    }
}

/// Replaces `out` with the serialized `CompressedImage{header{stamp,
/// frame_id}, format, data}`.
pub fn compressed_image(
    out: &mut Vec<u8>,
    stamp: &Time,
    frame_id: &str,
    format: &str,
    data: &[u8],
) -> Result<(), TooLong> {
    compressed_image_before_data(out, stamp, frame_id, format, data.len(), data.len())?;
    out.extend_from_slice(data);
    Ok(())
}

/// Replaces `out` with the serialized `CompressedImage` up to its data,
/// which is `data_len` bytes (`capacity`: how many more to make room for).
fn compressed_image_before_data(
    out: &mut Vec<u8>,
    stamp: &Time,
    frame_id: &str,
    format: &str,
    data_len: usize,
    capacity: usize,
) -> Result<(), TooLong> {
    let mut w = Writer::start(out, 32 + frame_id.len() + format.len() + capacity);
    w.header(stamp, frame_id)?;
    w.string(format)?;
    w.len(data_len)
}

/// Makes `buf[start..]` the serialized `CompressedImage` whose data is
/// `buf[at..]`: its other fields are written into the `at` bytes in front
/// of the data, ending where it begins (`fields` is scratch space). No copy
/// of the data. `Ok(Some(start))`, or `Ok(None)` and `buf` untouched when
/// the fields take more than `at` bytes.
pub fn compressed_image_in_front(
    buf: &mut [u8],
    at: usize,
    fields: &mut Vec<u8>,
    stamp: &Time,
    frame_id: &str,
    format: &str,
) -> Result<Option<usize>, TooLong> {
    let data_len = buf.len().saturating_sub(at);
    compressed_image_before_data(fields, stamp, frame_id, format, data_len, 0)?;
    let Some(start) = at.checked_sub(fields.len()) else {
        return Ok(None);
    };
    buf[start..at].copy_from_slice(fields);
    Ok(Some(start))
}

/// The fields of a `sensor_msgs/Image` but its pixels.
#[derive(Debug, Clone, Copy)]
pub struct ImageLayout<'a> {
    pub height: u32,
    pub width: u32,
    pub encoding: &'a str,
    pub step: u32,
}

/// Replaces `out` with the serialized `Image{header, height, width,
/// encoding, is_bigendian: 0, step, data}`.
pub fn image(out: &mut Vec<u8>, header: &Header, layout: ImageLayout<'_>, data: &[u8]) -> Result<(), TooLong> {
    image_before_data(out, header, layout, data.len(), data.len())?;
    out.extend_from_slice(data);
    Ok(())
}

/// Replaces `out` with the serialized `Image` up to its pixels, which are
/// `data_len` bytes (`capacity`: how many more bytes to make room for). Its
/// length depends on `header.frame_id` and `layout.encoding` only: a
/// frame's buffer can keep that much room in front of its pixels
/// ([`image_in_place`]).
pub fn image_before_data(
    out: &mut Vec<u8>,
    header: &Header,
    layout: ImageLayout<'_>,
    data_len: usize,
    capacity: usize,
) -> Result<(), TooLong> {
    let mut w = Writer::start(out, 48 + header.frame_id.len() + layout.encoding.len() + capacity);
    w.header(&header.stamp, &header.frame_id)?;
    w.u32(layout.height);
    w.u32(layout.width);
    w.string(layout.encoding)?;
    w.u8(0);
    w.u32(layout.step);
    w.len(data_len)
}

/// Makes `message`, whose first `headroom` bytes are free and the rest the
/// pixels, the serialized `Image`: no copy of the pixels. `Ok(false)` when
/// the serialized fields before the pixels do not take exactly `headroom`
/// bytes (another frame id or encoding than the headroom was sized for).
pub fn image_in_place(
    message: &mut [u8],
    headroom: usize,
    header: &Header,
    layout: ImageLayout<'_>,
) -> Result<bool, TooLong> {
    write_in_front(message, headroom, |out, data_len| {
        image_before_data(out, header, layout, data_len, 0)
    })
}

/// Writes the fields `before(out, data_len)` serializes into `message`'s
/// first `headroom` bytes, the data being the rest. `Ok(false)`, and
/// `message` untouched, when they do not take exactly `headroom` bytes.
fn write_in_front(
    message: &mut [u8],
    headroom: usize,
    before: impl FnOnce(&mut Vec<u8>, usize) -> Result<(), TooLong>,
) -> Result<bool, TooLong> {
    let Some(data_len) = message.len().checked_sub(headroom) else {
        return Ok(false);
    };
    let mut fields = Vec::with_capacity(headroom);
    before(&mut fields, data_len)?;
    if fields.len() != headroom {
        return Ok(false);
    }
    message[..headroom].copy_from_slice(&fields);
    Ok(true)
}

/// Replaces `out` with the serialized `m` with `data` as its points (`m.data`
/// is not read: the points need not be copied into the message first).
pub fn point_cloud2(out: &mut Vec<u8>, m: &PointCloud2, data: &[u8]) -> Result<(), TooLong> {
    point_cloud2_before_data(out, m, data.len(), data.len() + 1)?;
    out.extend_from_slice(data);
    out.push(u8::from(m.is_dense));
    Ok(())
}

/// Replaces `out` with the serialized fields of `m` up to and including the
/// length of its `data` (`data_len` bytes; `capacity`: how many more bytes to
/// make room for). Its length depends on `m.header.frame_id` and `m.fields`
/// only: a frame's buffer can keep that much room in front of its points
/// ([`point_cloud2_in_place`]).
pub fn point_cloud2_before_data(
    out: &mut Vec<u8>,
    m: &PointCloud2,
    data_len: usize,
    capacity: usize,
) -> Result<(), TooLong> {
    let fields_len: usize = m.fields.iter().map(|f| 16 + f.name.len()).sum();
    let mut w = Writer::start(out, 48 + m.header.frame_id.len() + fields_len + capacity);
    w.header(&m.header.stamp, &m.header.frame_id)?;
    w.u32(m.height);
    w.u32(m.width);
    w.len(m.fields.len())?;
    for f in &m.fields {
        w.string(&f.name)?;
        w.u32(f.offset);
        w.u8(f.datatype);
        w.u32(f.count);
    }
    w.u8(u8::from(m.is_bigendian));
    w.u32(m.point_step);
    w.u32(m.row_step);
    w.len(data_len)
}

/// Makes `message`, whose first `headroom` bytes are free and the rest the
/// points, the serialized `m` (`m.data` is not read): no copy of the points;
/// `is_dense`, the last field, is appended. `Ok(false)`, and `message`
/// untouched, when the fields before the points do not take exactly
/// `headroom` bytes (another frame id or other fields than the headroom was
/// sized for).
pub fn point_cloud2_in_place(message: &mut Vec<u8>, headroom: usize, m: &PointCloud2) -> Result<bool, TooLong> {
    let written = write_in_front(message, headroom, |out, data_len| {
        point_cloud2_before_data(out, m, data_len, 0)
    })?;
    if written {
        message.push(u8::from(m.is_dense));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use r2r::sensor_msgs::msg::{CompressedImage, Image, PointField};
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

    /// `ours` is what `rmw_serialize` makes of `expected`, but for padding,
    /// which CDR leaves unspecified (rmw_serialize leaves what its reused
    /// buffer held) and this writer zeroes: same length, reads back as
    /// `expected`, and every byte that differs is zero here.
    fn assert_same_as_rmw<T>(ours: &[u8], expected: &T, what: &str)
    where
        T: WrappedTypesupport + PartialEq + std::fmt::Debug,
    {
        let reference = expected.to_serialized_bytes().expect("rmw_serialize");
        assert_eq!(ours.len(), reference.len(), "{what}: length");
        for (at, (a, b)) in ours.iter().zip(&reference).enumerate() {
            assert!(a == b || *a == 0, "{what}: byte {at} is {a}, rmw_serialize wrote {b}");
        }
        assert_eq!(
            &T::from_serialized_bytes(ours).expect("rmw_deserialize"),
            expected,
            "{what}"
        );
    }

    const NAMES: [&str; 8] = ["", "a", "ab", "abc", "abcd", "sensor3_optical", "abcdefg", "abcdefgh"];

    #[test]
    fn image_matches_rmw_serialize_for_every_alignment() {
        let mut out = Vec::new();
        for frame_id in NAMES {
            for encoding in ["", "a", "bgr8", "mono16", "32FC1"] {
                for len in [0usize, 1, 3, 4, 5, 1001] {
                    let data: Vec<u8> = (0..len).map(|i| (i * 13 + 1) as u8).collect();
                    let header = Header {
                        stamp: Time { sec: -3, nanosec: 7 },
                        frame_id: frame_id.into(),
                    };
                    let layout = ImageLayout {
                        height: 2,
                        width: 0x0102_0304,
                        encoding,
                        step: 0xA0B0_C0D0,
                    };
                    image(&mut out, &header, layout, &data).unwrap();
                    let expected = Image {
                        header,
                        height: layout.height,
                        width: layout.width,
                        encoding: encoding.into(),
                        is_bigendian: 0,
                        step: layout.step,
                        data,
                    };
                    assert_same_as_rmw(&out, &expected, &format!("{frame_id:?} {encoding:?} {len}"));
                }
            }
        }
    }

    #[test]
    fn image_in_place_is_image() {
        let pixels: Vec<u8> = (0..999u32).map(|i| (i * 7) as u8).collect();
        for frame_id in NAMES {
            for encoding in ["", "bgr8", "mono16"] {
                let header = Header {
                    stamp: Time { sec: 8, nanosec: 9 },
                    frame_id: frame_id.into(),
                };
                let layout = ImageLayout {
                    height: 3,
                    width: 111,
                    encoding,
                    step: 333,
                };
                let mut copied = Vec::new();
                image(&mut copied, &header, layout, &pixels).unwrap();
                let mut before = Vec::new();
                image_before_data(&mut before, &header, layout, 0, 0).unwrap();
                let headroom = before.len();
                let mut frame = [vec![0xCC; headroom], pixels.clone()].concat();
                assert!(image_in_place(&mut frame, headroom, &header, layout).unwrap());
                assert_eq!(frame, copied, "{frame_id:?} {encoding:?}");
                let mut wrong = [vec![0xCC; headroom + 1], pixels.clone()].concat();
                assert!(!image_in_place(&mut wrong, headroom + 1, &header, layout).unwrap());
            }
        }
    }

    #[test]
    fn point_cloud2_matches_rmw_serialize_for_every_alignment() {
        let mut out = vec![0xEE; 9];
        for frame_id in NAMES {
            for fields in 0..=4usize {
                for (len, flags) in [(0usize, false), (1, true), (3, false), (16, true), (1600, false)] {
                    let expected = PointCloud2 {
                        header: Header {
                            stamp: Time { sec: 5, nanosec: 6 },
                            frame_id: frame_id.into(),
                        },
                        height: 1,
                        width: (len / 16) as u32,
                        fields: (0..fields)
                            .map(|i| PointField {
                                name: NAMES[(i * 3 + frame_id.len()) % NAMES.len()].into(),
                                offset: 4 * i as u32,
                                datatype: PointField::FLOAT32 as u8,
                                count: i as u32,
                            })
                            .collect(),
                        is_bigendian: flags,
                        point_step: 16,
                        row_step: len as u32,
                        data: (0..len).map(|i| (i * 31 + 7) as u8).collect(),
                        is_dense: !flags,
                    };
                    let fields_only = PointCloud2 {
                        data: vec![1, 2, 3],
                        ..expected.clone()
                    };
                    point_cloud2(&mut out, &fields_only, &expected.data).unwrap();
                    let what = format!("{frame_id:?} {fields} fields {len}");
                    assert_same_as_rmw(&out, &expected, &what);
                    // In place: the same bytes, from the points after the room
                    // the fields before them take.
                    let mut before = Vec::new();
                    point_cloud2_before_data(&mut before, &fields_only, 0, 0).unwrap();
                    let headroom = before.len();
                    let mut message = [vec![0xEE; headroom], expected.data.clone()].concat();
                    assert!(point_cloud2_in_place(&mut message, headroom, &fields_only).unwrap());
                    assert_eq!(message, out, "{what}: in place");
                    for wrong in [headroom - 1, headroom + 1] {
                        let mut message = [vec![0xEE; wrong], expected.data.clone()].concat();
                        let untouched = message.clone();
                        assert!(!point_cloud2_in_place(&mut message, wrong, &fields_only).unwrap());
                        assert_eq!(message, untouched, "{what}: headroom {wrong}");
                    }
                }
            }
        }
    }

    /// In front of the data, with room to spare or exactly enough: the
    /// same bytes as written whole; with too little room, nothing written.
    #[test]
    fn compressed_image_in_front_is_compressed_image() {
        let stamp = Time { sec: 3, nanosec: 4 };
        let data: Vec<u8> = (0..777u32).map(|i| (i * 5) as u8).collect();
        let mut fields = Vec::new();
        for frame_id in ["", "a", "auv7/front_camera_optical", "abcdefgh"] {
            for format in ["", "jpeg", "bgr8; jpeg compressed bgr8"] {
                let mut whole = Vec::new();
                compressed_image(&mut whole, &stamp, frame_id, format, &data).unwrap();
                let needed = whole.len() - data.len();
                for room in [needed, needed + 1, needed + 100] {
                    let mut buf = [vec![0xAB; room], data.clone()].concat();
                    let start = compressed_image_in_front(&mut buf, room, &mut fields, &stamp, frame_id, format)
                        .unwrap()
                        .expect("fits");
                    assert_eq!(start, room - needed);
                    assert_eq!(&buf[start..], &whole[..], "{frame_id:?} {format:?} room {room}");
                }
                let mut buf = [vec![0xAB; needed - 1], data.clone()].concat();
                let untouched = buf.clone();
                let none = compressed_image_in_front(&mut buf, needed - 1, &mut fields, &stamp, frame_id, format);
                assert_eq!(none, Ok(None));
                assert_eq!(buf, untouched);
            }
        }
    }

    /// What `rmw_serialize` writes reads back field by field, wherever the
    /// strings leave the sequences aligned; a message cut anywhere reads as
    /// `None`, never past its end.
    #[test]
    fn reader_reads_what_rmw_serialize_writes() {
        for frame_id in NAMES {
            for len in [0usize, 1, 3, 8, 50] {
                let expected = PointCloud2 {
                    header: Header {
                        stamp: Time { sec: -9, nanosec: 77 },
                        frame_id: frame_id.into(),
                    },
                    height: 3,
                    width: len as u32,
                    fields: vec![PointField {
                        name: "intensity".into(),
                        offset: 12,
                        datatype: 7,
                        count: 1,
                    }],
                    is_bigendian: false,
                    point_step: 16,
                    row_step: 99,
                    data: (0..len).map(|i| i as u8).collect(),
                    is_dense: true,
                };
                let bytes = expected.to_serialized_bytes().unwrap();
                let read = |bytes: &[u8]| -> Option<(Time, String, u32, Vec<u8>)> {
                    let mut r = Reader::new(bytes)?;
                    let stamp = r.time()?;
                    let frame_id = r.string()?.to_string();
                    let height = r.u32()?;
                    let _width = r.u32()?;
                    let fields = r.u32()?;
                    for _ in 0..fields {
                        r.string()?;
                        r.bytes(4, 4)?;
                        r.bytes(1, 1)?;
                        r.u32()?;
                    }
                    r.bytes(1, 1)?;
                    r.u32()?;
                    r.u32()?;
                    let data = r.sequence(1, 1)?.to_vec();
                    Some((stamp, frame_id, height, data))
                };
                let got = read(&bytes).expect("reads");
                assert_eq!(
                    got,
                    (
                        expected.header.stamp.clone(),
                        frame_id.to_string(),
                        3,
                        expected.data.clone()
                    )
                );
                for cut in 0..bytes.len() - 1 {
                    // The last byte (is_dense) is not read above.
                    assert_eq!(read(&bytes[..cut]), None, "cut at {cut}");
                }
            }
        }
        assert!(Reader::new(&[0x00, 0x07, 0, 0]).is_none(), "another encapsulation");
        let mut big = Reader::new(&[0, 0, 0, 0, 0, 0, 1, 2]).unwrap();
        assert_eq!(big.u32(), Some(0x0102));
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
