//! LiDAR (TypeID 20–23) and depth-cloud (TypeID 7) payloads (RflySim's SDK: VisionCaptureApi.py's UDP receivers), decoded
//! in one pass into `sensor_msgs/PointCloud2` data: x, y, z, seg as
//! little-endian f32 with a 16-byte step.

use bytes::Bytes;

use crate::error::DecodeError;
use crate::wire::{Fields, Writer};

pub const POINT_STEP: usize = 16;
/// `<ii6f` pose and `<i` count in front of the protocol layout's float points.
pub const FLOAT_HEADER_LEN: usize = 36;
/// `<6f` pose and `<i` count in front of the SDK layouts' points.
pub const SDK_HEADER_LEN: usize = 28;
/// `<4h` x, y, z, seg.
pub const SDK_INT16_POINT_LEN: usize = 8;
/// `<3h` x, y, z (depth cloud).
pub const SDK_INT16_XYZ_POINT_LEN: usize = 6;

/// The vehicle pose that comes with a frame (RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 1.2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LidarPose {
    /// Present in the protocol layout only.
    pub copter_id: Option<i32>,
    /// 0 local, 1 world (protocol layout); `None` in the SDK layout.
    pub axis_type: Option<i32>,
    /// x, y, z (m) in RflySim's NED world frame.
    pub position: [f32; 3],
    /// roll, pitch, yaw (rad), FRD body in the NED world.
    pub euler: [f32; 3],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloudLayout {
    /// `<ii6f` `<i` N × `<4f`: 36 + 16 N bytes.
    ProtocolFloat,
    /// `<6f` `<i` N × `<4h`: 28 + 8 N bytes, scaled by the max range.
    SdkInt16,
    /// Depth cloud: `<6f` `<i` N × `<3h`: 28 + 6 N bytes.
    SdkInt16Xyz,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PointCloud {
    pub layout: CloudLayout,
    pub pose: LidarPose,
    pub points: usize,
    /// `points` × 16 bytes: x, y, z, seg (f32 LE).
    pub data: Bytes,
}

fn protocol_count(p: &[u8]) -> Option<usize> {
    (p.len() >= FLOAT_HEADER_LEN)
        .then(|| Fields(p).i32(32))
        .and_then(|n| usize::try_from(n).ok())
}

/// The pose and point count of `p` when it is a frame of the protocol's float
/// layout (`36 + 16 N` bytes, N its count field): its points are then
/// `p[FLOAT_HEADER_LEN..]`, already in `PointCloud2`'s layout, and a consumer
/// can use them where they are.
pub fn protocol_float_frame(p: &[u8]) -> Option<(LidarPose, usize)> {
    let n = protocol_count(p)
        .filter(|n| n.checked_mul(POINT_STEP).and_then(|b| b.checked_add(FLOAT_HEADER_LEN)) == Some(p.len()))?;
    Some((protocol_pose(Fields(p)), n))
}

fn sdk_count(p: &[u8]) -> Option<usize> {
    (p.len() >= 28)
        .then(|| Fields(p).i32(24))
        .and_then(|n| usize::try_from(n).ok())
}

fn protocol_pose(f: Fields<'_>) -> LidarPose {
    LidarPose {
        copter_id: Some(f.i32(0)),
        axis_type: Some(f.i32(4)),
        position: f.f32s(8),
        euler: f.f32s(20),
    }
}

fn sdk_pose(f: Fields<'_>) -> LidarPose {
    LidarPose {
        copter_id: None,
        axis_type: None,
        position: f.f32s(0),
        euler: f.f32s(12),
    }
}

/// Decodes a LiDAR frame in either layout, told apart by its length and count
/// field. The protocol's float points are passed on without a copy.
pub fn decode_lidar(payload: Bytes, max_range: f32) -> Result<PointCloud, DecodeError> {
    let p = &payload[..];
    if let Some((pose, n)) = protocol_float_frame(p) {
        return Ok(PointCloud {
            layout: CloudLayout::ProtocolFloat,
            pose,
            points: n,
            data: payload.slice(FLOAT_HEADER_LEN..),
        });
    }
    if let Some(n) = sdk_count(p).filter(|n| n.checked_mul(8).and_then(|b| b.checked_add(28)) == Some(p.len())) {
        let pose = sdk_pose(Fields(p));
        let data = int16_points(&p[28..], 4, max_range);
        return Ok(PointCloud {
            layout: CloudLayout::SdkInt16,
            pose,
            points: n,
            data: data.into(),
        });
    }
    Err(DecodeError::length(
        "LiDAR",
        p.len(),
        "36 + 16·N (float) or 28 + 8·N (SDK int16) with N its point count",
    ))
}

/// The SDK int16 cloud at the start of a shared-memory payload area, which is
/// sized for the most points (RflySim's SDK: VisionCaptureApi.py's img_mem_thrd): its count says how many of them are
/// this frame's; the bytes after them are stale. `per_point` is 4 (LiDAR:
/// x, y, z, seg) or 3 (depth cloud: x, y, z).
fn decode_sdk_int16_region(
    area: &[u8],
    per_point: usize,
    max_range: f32,
    what: &'static str,
) -> Result<PointCloud, DecodeError> {
    let stride = 2 * per_point;
    let n =
        sdk_count(area).ok_or_else(|| DecodeError::length(what, area.len(), "at least the 28-byte pose and count"))?;
    let fits = n
        .checked_mul(stride)
        .and_then(|b| b.checked_add(SDK_HEADER_LEN))
        .is_some_and(|l| l <= area.len());
    if !fits {
        return Err(DecodeError::invalid(
            what,
            format!("{n} points do not fit a region of {} bytes", area.len()),
        ));
    }
    let data = int16_points(&area[SDK_HEADER_LEN..SDK_HEADER_LEN + n * stride], per_point, max_range);
    Ok(PointCloud {
        layout: if per_point == 4 {
            CloudLayout::SdkInt16
        } else {
            CloudLayout::SdkInt16Xyz
        },
        pose: sdk_pose(Fields(area)),
        points: n,
        data: data.into(),
    })
}

/// A LiDAR frame in its shared-memory region: the SDK int16 layout, which
/// is what RflySim3D writes there.
pub fn decode_lidar_region(area: &[u8], max_range: f32) -> Result<PointCloud, DecodeError> {
    decode_sdk_int16_region(area, 4, max_range, "LiDAR region")
}

/// A depth cloud in its shared-memory region: the SDK int16 x, y, z layout.
pub fn decode_depth_cloud_region(area: &[u8], max_range: f32) -> Result<PointCloud, DecodeError> {
    decode_sdk_int16_region(area, 3, max_range, "depth-cloud region")
}

/// Decodes a depth cloud (TypeID 7): the protocol's float layout (36 + 16 N, x,
/// y, z and padding) or the SDK's int16 x, y, z (28 + 6 N) scaled by `max_range`.
pub fn decode_depth_cloud(payload: Bytes, max_range: f32) -> Result<PointCloud, DecodeError> {
    let p = &payload[..];
    if let Some((pose, n)) = protocol_float_frame(p) {
        let mut data = p[FLOAT_HEADER_LEN..].to_vec();
        zero_depth_padding(&mut data);
        return Ok(PointCloud {
            layout: CloudLayout::ProtocolFloat,
            pose,
            points: n,
            data: data.into(),
        });
    }
    if let Some(n) = sdk_count(p).filter(|n| n.checked_mul(6).and_then(|b| b.checked_add(28)) == Some(p.len())) {
        let pose = sdk_pose(Fields(p));
        let data = int16_points(&p[28..], 3, max_range);
        return Ok(PointCloud {
            layout: CloudLayout::SdkInt16Xyz,
            pose,
            points: n,
            data: data.into(),
        });
    }
    Err(DecodeError::length(
        "depth cloud",
        p.len(),
        "36 + 16·N (float) or 28 + 6·N (int16 x, y, z)",
    ))
}

/// The fourth float of a protocol-layout depth cloud's points is padding, not a
/// segment label: it is published as 0.
pub fn zero_depth_padding(points: &mut [u8]) {
    points.chunks_exact_mut(POINT_STEP).for_each(|pt| pt[12..16].fill(0));
}

/// int16 components (`per_point` of them: x, y, z[, seg]) → 16-byte f32
/// points, each value raw / 32767 × max range. One pass, no intermediate.
fn int16_points(src: &[u8], per_point: usize, max_range: f32) -> Vec<u8> {
    let scale = max_range / 32767.0;
    let n = src.len() / (2 * per_point);
    let mut out = vec![0u8; n * POINT_STEP];
    for (dst, s) in out.chunks_exact_mut(POINT_STEP).zip(src.chunks_exact(2 * per_point)) {
        let v = |i: usize| f32::from(i16::from_le_bytes([s[2 * i], s[2 * i + 1]]));
        dst[0..4].copy_from_slice(&(v(0) * scale).to_le_bytes());
        dst[4..8].copy_from_slice(&(v(1) * scale).to_le_bytes());
        dst[8..12].copy_from_slice(&(v(2) * scale).to_le_bytes());
        // A segment label is a class number: it is not scaled.
        let seg = if per_point == 4 { v(3) } else { 0.0 };
        dst[12..16].copy_from_slice(&seg.to_le_bytes());
    }
    out
}

/// Encoders for the emulator and the tests.
pub mod encode {
    use super::*;

    /// The vision protocol's layout: points are (x, y, z, seg).
    pub fn protocol_float(
        copter_id: i32,
        axis_type: i32,
        position: [f32; 3],
        euler: [f32; 3],
        points: &[[f32; 4]],
    ) -> Vec<u8> {
        let mut w = Writer::with_capacity(36 + 16 * points.len());
        w.i32(copter_id)
            .i32(axis_type)
            .f32s(&position)
            .f32s(&euler)
            .i32(points.len() as i32);
        points.iter().for_each(|p| {
            w.f32s(p);
        });
        w.finish()
    }

    /// SDK layout: points (x, y, z, seg) quantised to int16 against `max_range`.
    pub fn sdk_int16(position: [f32; 3], euler: [f32; 3], points: &[[f32; 4]], max_range: f32) -> Vec<u8> {
        let mut w = Writer::with_capacity(28 + 8 * points.len());
        w.f32s(&position).f32s(&euler).i32(points.len() as i32);
        for p in points {
            for v in &p[..3] {
                w.i16(quantise(*v, max_range));
            }
            w.i16(p[3].round().clamp(-32768.0, 32767.0) as i16);
        }
        w.finish()
    }

    /// SDK depth-cloud layout: x, y, z quantised to int16 against `max_range`.
    pub fn sdk_int16_xyz(position: [f32; 3], euler: [f32; 3], points: &[[f32; 3]], max_range: f32) -> Vec<u8> {
        let mut w = Writer::with_capacity(28 + 6 * points.len());
        w.f32s(&position).f32s(&euler).i32(points.len() as i32);
        for p in points {
            for v in p {
                w.i16(quantise(*v, max_range));
            }
        }
        w.finish()
    }

    pub fn quantise(v: f32, max_range: f32) -> i16 {
        if max_range <= 0.0 {
            return 0;
        }
        (v / max_range * 32767.0).round().clamp(-32767.0, 32767.0) as i16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(data: &[u8]) -> Vec<f32> {
        data.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn golden_protocol_float_frame() {
        // copter 1, axis 0, pos (1, 2, -3), euler (0, 0, 0.5), N = 1, point (1.5, -2, 0.25, 7)
        let mut b = vec![1, 0, 0, 0, 0, 0, 0, 0];
        for v in [1.0f32, 2.0, -3.0, 0.0, 0.0, 0.5] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&[1, 0, 0, 0]);
        b.extend_from_slice(&[
            0x00, 0x00, 0xC0, 0x3F, 0x00, 0x00, 0x00, 0xC0, 0x00, 0x00, 0x80, 0x3E, 0x00, 0x00, 0xE0, 0x40,
        ]);
        assert_eq!(b.len(), 52);
        let c = decode_lidar(Bytes::from(b), 100.0).unwrap();
        assert_eq!(c.layout, CloudLayout::ProtocolFloat);
        assert_eq!(
            c.pose,
            LidarPose {
                copter_id: Some(1),
                axis_type: Some(0),
                position: [1.0, 2.0, -3.0],
                euler: [0.0, 0.0, 0.5]
            }
        );
        assert_eq!(f32s(&c.data), vec![1.5, -2.0, 0.25, 7.0]);
    }

    #[test]
    fn golden_sdk_int16_frame() {
        // pose zeros, N = 2: (32767, -32767, 16384, 3) and (0, 1, -1, 0), max range 50
        let mut b = vec![0u8; 24];
        b.extend_from_slice(&2i32.to_le_bytes());
        b.extend_from_slice(&[0xFF, 0x7F, 0x01, 0x80, 0x00, 0x40, 0x03, 0x00]);
        b.extend_from_slice(&[0x00, 0x00, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x00]);
        let c = decode_lidar(Bytes::from(b), 50.0).unwrap();
        assert_eq!((c.layout, c.points, c.pose.copter_id), (CloudLayout::SdkInt16, 2, None));
        let v = f32s(&c.data);
        assert_eq!(v.len(), 8);
        assert_eq!((v[0], v[1], v[3]), (50.0, -50.0, 3.0));
        assert!((v[2] - 16384.0 / 32767.0 * 50.0).abs() < 1e-5);
        assert!((v[5] - 50.0 / 32767.0).abs() < 1e-7 && (v[6] + 50.0 / 32767.0).abs() < 1e-7);
    }

    #[test]
    fn layouts_are_told_apart_and_bad_lengths_refused() {
        let pts: Vec<[f32; 4]> = (0..10).map(|i| [i as f32, -(i as f32), 0.5, 1.0]).collect();
        let sample = encode::protocol_float(2, 1, [0.0; 3], [0.0; 3], &pts);
        let sdk = encode::sdk_int16([0.0; 3], [0.0; 3], &pts, 20.0);
        assert_eq!(
            decode_lidar(sample.clone().into(), 20.0).unwrap().layout,
            CloudLayout::ProtocolFloat
        );
        assert_eq!(
            decode_lidar(sdk.clone().into(), 20.0).unwrap().layout,
            CloudLayout::SdkInt16
        );
        for bad in [&sample[..sample.len() - 1], &sdk[..sdk.len() - 8], &[0u8; 10][..], &[]] {
            assert!(decode_lidar(Bytes::copy_from_slice(bad), 20.0).is_err());
        }
        let mut negative = sample.clone();
        negative[32..36].copy_from_slice(&(-1i32).to_le_bytes());
        assert!(decode_lidar(negative.into(), 20.0).is_err());
    }

    #[test]
    fn a_region_holds_fewer_points_than_it_has_room_for() {
        let pts: Vec<[f32; 4]> = (0..5).map(|i| [i as f32, 1.0, -2.0, 3.0]).collect();
        let frame = encode::sdk_int16([1.0, 2.0, 3.0], [0.0; 3], &pts, 20.0);
        // A region for 10 points, with stale bytes after this frame's 5.
        let mut area = vec![0x5Au8; SDK_HEADER_LEN + 10 * SDK_INT16_POINT_LEN];
        area[..frame.len()].copy_from_slice(&frame);
        let c = decode_lidar_region(&area, 20.0).unwrap();
        assert_eq!(
            (c.points, c.layout, c.pose.position),
            (5, CloudLayout::SdkInt16, [1.0, 2.0, 3.0])
        );
        assert_eq!(c, decode_lidar(frame.into(), 20.0).unwrap());
        // A count the region cannot hold is refused, whatever the bytes after it.
        area[24..28].copy_from_slice(&11i32.to_le_bytes());
        assert!(decode_lidar_region(&area, 20.0).is_err());
        area[24..28].copy_from_slice(&(-1i32).to_le_bytes());
        assert!(decode_lidar_region(&area, 20.0).is_err());
        assert!(decode_lidar_region(&area[..20], 20.0).is_err());

        let xyz = [[1.0f32, 2.0, 3.0]; 4];
        let depth = encode::sdk_int16_xyz([0.0; 3], [0.0; 3], &xyz, 10.0);
        let mut area = vec![0u8; SDK_HEADER_LEN + 9 * SDK_INT16_XYZ_POINT_LEN];
        area[..depth.len()].copy_from_slice(&depth);
        let c = decode_depth_cloud_region(&area, 10.0).unwrap();
        assert_eq!(c, decode_depth_cloud(depth.into(), 10.0).unwrap());
    }

    #[test]
    fn depth_cloud_layouts() {
        let xyz: Vec<[f32; 3]> = vec![[1.0, 2.0, 3.0], [-4.0, 0.0, 10.0]];
        let sdk = encode::sdk_int16_xyz([0.0; 3], [0.0; 3], &xyz, 10.0);
        let c = decode_depth_cloud(sdk.into(), 10.0).unwrap();
        assert_eq!((c.layout, c.points), (CloudLayout::SdkInt16Xyz, 2));
        let v = f32s(&c.data);
        for (got, want) in v.chunks(4).zip(&xyz) {
            for k in 0..3 {
                assert!((got[k] - want[k]).abs() < 10.0 / 32767.0, "{got:?} {want:?}");
            }
            assert_eq!(got[3], 0.0);
        }
        let sample = encode::protocol_float(1, 0, [0.0; 3], [0.0; 3], &[[1.0, 2.0, 3.0, 99.0]]);
        assert_eq!(
            f32s(&decode_depth_cloud(sample.into(), 10.0).unwrap().data),
            vec![1.0, 2.0, 3.0, 0.0]
        );
    }
}

#[cfg(test)]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn int16_round_trip_is_within_one_step(pts in prop::collection::vec((-50f32..50.0, -50f32..50.0, -50f32..50.0, 0u8..255), 0..200)) {
            let pts: Vec<[f32; 4]> = pts.iter().map(|&(x, y, z, s)| [x, y, z, f32::from(s)]).collect();
            let c = decode_lidar(encode::sdk_int16([0.0; 3], [0.0; 3], &pts, 50.0).into(), 50.0).unwrap();
            prop_assert_eq!(c.points, pts.len());
            for (got, want) in c.data.chunks_exact(16).zip(&pts) {
                for k in 0..3 {
                    let g = f32::from_le_bytes(got[4 * k..4 * k + 4].try_into().unwrap());
                    prop_assert!((g - want[k]).abs() <= 50.0 / 32767.0);
                }
                prop_assert_eq!(f32::from_le_bytes(got[12..16].try_into().unwrap()), want[3]);
            }
        }

        #[test]
        fn protocol_float_round_trip_is_exact(pts in prop::collection::vec(prop::array::uniform4(-1e6f32..1e6), 0..100), id in any::<i32>()) {
            let c = decode_lidar(encode::protocol_float(id, 1, [1.0, 2.0, 3.0], [0.1, 0.2, 0.3], &pts).into(), 1.0).unwrap();
            prop_assert_eq!(c.pose.copter_id, Some(id));
            let want: Vec<u8> = pts.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
            prop_assert_eq!(&c.data[..], &want[..]);
        }
    }
}
