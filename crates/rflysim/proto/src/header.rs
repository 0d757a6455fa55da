//! The two datagram headers of RflySim's UDP sensor streams (RflySim's SDK: VisionCaptureApi.py's UDP receivers), told
//! apart by their checksum on every datagram.

use crate::wire::{Fields, Writer};

pub const IMAGE_HEADER_CHECKSUM: i32 = 1_234_567_890;
pub const FRAME_HEADER_CHECKSUM: i32 = 1_234_567_893;
/// Payload bytes RflySim3D puts in one datagram at most.
pub const MAX_PACKET_PAYLOAD: usize = 60_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeaderKind {
    /// `imageHeaderNew`, `<4i1d`, 24 bytes.
    Image24,
    /// The frame header, `<6i1d`, 32 bytes, with a frame id.
    Frame32,
}

impl HeaderKind {
    pub const fn header_len(self) -> usize {
        match self {
            HeaderKind::Image24 => 24,
            HeaderKind::Frame32 => 32,
        }
    }
    pub const fn checksum(self) -> i32 {
        match self {
            HeaderKind::Image24 => IMAGE_HEADER_CHECKSUM,
            HeaderKind::Frame32 => FRAME_HEADER_CHECKSUM,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DatagramHeader {
    pub kind: HeaderKind,
    /// The datagram's length including the header (SDK), or the frame's
    /// length (RflySim's vision protocol, rflysim.com/doc/en/4.DevRef/vis-comm.html): the reassembler accepts both.
    pub pkg_len: i32,
    pub pkg_id: i32,
    pub pkg_num: i32,
    /// Only in the 32-byte header.
    pub frame_id: Option<i32>,
    pub time_stamp: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    TooShort,
    UnknownChecksum(i32),
}

impl DatagramHeader {
    /// Parses the header at the start of `datagram`, whatever kind it is.
    pub fn parse(datagram: &[u8]) -> Result<DatagramHeader, HeaderError> {
        if datagram.len() < 4 {
            return Err(HeaderError::TooShort);
        }
        let f = Fields(datagram);
        let kind = match f.i32(0) {
            IMAGE_HEADER_CHECKSUM => HeaderKind::Image24,
            FRAME_HEADER_CHECKSUM => HeaderKind::Frame32,
            other => return Err(HeaderError::UnknownChecksum(other)),
        };
        if datagram.len() < kind.header_len() {
            return Err(HeaderError::TooShort);
        }
        Ok(match kind {
            HeaderKind::Image24 => DatagramHeader {
                kind,
                pkg_len: f.i32(4),
                pkg_id: f.i32(8),
                pkg_num: f.i32(12),
                frame_id: None,
                time_stamp: f.f64(16),
            },
            HeaderKind::Frame32 => DatagramHeader {
                kind,
                pkg_len: f.i32(4),
                pkg_id: f.i32(8),
                pkg_num: f.i32(12),
                frame_id: Some(f.i32(16)),
                time_stamp: f.f64(24),
            },
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(self.kind.header_len());
        w.i32(self.kind.checksum())
            .i32(self.pkg_len)
            .i32(self.pkg_id)
            .i32(self.pkg_num);
        if self.kind == HeaderKind::Frame32 {
            w.i32(self.frame_id.unwrap_or(0)).i32(0);
        }
        w.f64(self.time_stamp);
        w.finish()
    }
}

/// Splits one frame's payload into datagrams as RflySim3D does: at most
/// `max_payload` bytes each, `pkg_len` = the datagram's length.
pub fn split_frame(
    kind: HeaderKind,
    frame_id: i32,
    time_stamp: f64,
    payload: &[u8],
    max_payload: usize,
) -> Vec<Vec<u8>> {
    let max_payload = max_payload.max(1);
    let chunks: Vec<&[u8]> = if payload.is_empty() {
        vec![&[][..]]
    } else {
        payload.chunks(max_payload).collect()
    };
    let pkg_num = chunks.len() as i32;
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let header = DatagramHeader {
                kind,
                pkg_len: (kind.header_len() + chunk.len()) as i32,
                pkg_id: i as i32,
                pkg_num,
                frame_id: Some(frame_id),
                time_stamp,
            };
            let mut d = header.encode();
            d.extend_from_slice(chunk);
            d
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_24_byte_header() {
        // <4i1d: 1234567890, pkg_len 1024, pkg_id 2, pkg_num 3, time 1.5
        let bytes: [u8; 24] = [
            0xD2, 0x02, 0x96, 0x49, 0x00, 0x04, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0xF8, 0x3F,
        ];
        let h = DatagramHeader::parse(&bytes).unwrap();
        assert_eq!(h.kind, HeaderKind::Image24);
        assert_eq!((h.pkg_len, h.pkg_id, h.pkg_num, h.frame_id), (1024, 2, 3, None));
        assert_eq!(h.time_stamp, 1.5);
        assert_eq!(h.encode(), bytes);
    }

    #[test]
    fn golden_32_byte_header() {
        // <6i1d: 1234567893, pkg_len 60032, pkg_id 0, pkg_num 2, frame 7, preserve 0, time -2.0
        let bytes: [u8; 32] = [
            0xD5, 0x02, 0x96, 0x49, 0x80, 0xEA, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC0,
        ];
        let h = DatagramHeader::parse(&bytes).unwrap();
        assert_eq!(h.kind, HeaderKind::Frame32);
        assert_eq!((h.pkg_len, h.pkg_id, h.pkg_num, h.frame_id), (60032, 0, 2, Some(7)));
        assert_eq!(h.time_stamp, -2.0);
        assert_eq!(h.encode(), bytes);
    }

    #[test]
    fn rejects_short_and_unknown() {
        assert_eq!(DatagramHeader::parse(&[1, 2]), Err(HeaderError::TooShort));
        assert_eq!(
            DatagramHeader::parse(&IMAGE_HEADER_CHECKSUM.to_le_bytes()),
            Err(HeaderError::TooShort)
        );
        assert_eq!(DatagramHeader::parse(&[0; 32]), Err(HeaderError::UnknownChecksum(0)));
    }

    #[test]
    fn split_sizes() {
        let payload = vec![7u8; 130_000];
        let d = split_frame(HeaderKind::Frame32, 3, 0.5, &payload, MAX_PACKET_PAYLOAD);
        assert_eq!(d.iter().map(Vec::len).collect::<Vec<_>>(), vec![60_032, 60_032, 10_032]);
        let h = DatagramHeader::parse(&d[2]).unwrap();
        assert_eq!((h.pkg_id, h.pkg_num, h.pkg_len), (2, 3, 10_032));
        assert_eq!(split_frame(HeaderKind::Image24, 0, 0.0, &[], 10).len(), 1);
    }
}
