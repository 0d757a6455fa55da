//! Fixed-size RflySim structs other than images and clouds: laser distance,
//! detections, `CameraData`, the CopterSim IMU, true state and heartbeat
//! (RflySim's SDK: VisionCaptureApi.py's UDP receivers, VisionCaptureApi.py's IMU request, PX4MavCtrlV4.py, RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.2). Each has a decoder and, for the emulator and the
//! tests, an encoder.

use crate::error::DecodeError;
use crate::wire::{checksum, exact, Fields, Writer};

/// TypeID 5: `<f i 3f 3f 3f 3f>`, 56 bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaserDistance {
    pub distance: f32,
    pub copter_id: i32,
    pub ray_start: [f32; 3],
    pub ang_euler: [f32; 3],
    pub impact_point: [f32; 3],
    pub box_origin: [f32; 3],
}

impl LaserDistance {
    pub const LEN: usize = 56;

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        let f = exact("laser distance", p, Self::LEN)?;
        Ok(Self {
            distance: f.f32(0),
            copter_id: f.i32(4),
            ray_start: f.f32s(8),
            ang_euler: f.f32s(20),
            impact_point: f.f32s(32),
            box_origin: f.f32s(44),
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::LEN);
        w.f32(self.distance).i32(self.copter_id);
        w.f32s(&self.ray_start)
            .f32s(&self.ang_euler)
            .f32s(&self.impact_point)
            .f32s(&self.box_origin);
        w.finish()
    }
}

/// One detection box (TypeID 30/31).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detection {
    pub id: i32,
    /// `None` in the short `<i3f>` form.
    pub score: Option<f32>,
    /// minX, minY, maxX, maxY in the long form; the short form's three floats
    /// are kept in the first three places.
    pub values: [f32; 4],
}

/// The room a shared-memory region leaves for detections: 64 long-form boxes.
pub const MAX_DETECTIONS_PAYLOAD: usize = 4 + 24 * 64;

/// `<i` N, then N × `<i5f` (24 bytes) or N × `<i3f` (16 bytes).
pub fn decode_detections(p: &[u8]) -> Result<Vec<Detection>, DecodeError> {
    const WHAT: &str = "detections";
    if p.len() < 4 {
        return Err(DecodeError::length(WHAT, p.len(), "4 + 24·N or 4 + 16·N"));
    }
    let f = Fields(p);
    let n = usize::try_from(f.i32(0)).map_err(|_| DecodeError::invalid(WHAT, "negative count"))?;
    let body = p.len() - 4;
    let stride = if n.checked_mul(24) == Some(body) {
        24
    } else if n.checked_mul(16) == Some(body) {
        16
    } else {
        return Err(DecodeError::length(WHAT, p.len(), format!("4 + 24·{n} or 4 + 16·{n}")));
    };
    Ok((0..n)
        .map(|i| {
            let at = 4 + i * stride;
            if stride == 24 {
                Detection {
                    id: f.i32(at),
                    score: Some(f.f32(at + 4)),
                    values: f.f32s(at + 8),
                }
            } else {
                let v: [f32; 3] = f.f32s(at + 4);
                Detection {
                    id: f.i32(at),
                    score: None,
                    values: [v[0], v[1], v[2], 0.0],
                }
            }
        })
        .collect())
}

pub fn encode_detections(dets: &[Detection]) -> Vec<u8> {
    let mut w = Writer::with_capacity(4 + 24 * dets.len());
    w.i32(dets.len() as i32);
    for d in dets {
        w.i32(d.id).f32(d.score.unwrap_or(0.0)).f32s(&d.values);
    }
    w.finish()
}

pub const CAMERA_DATA_CHECKSUM: i32 = 1_234_567_891;

/// `CameraData` on port 20006: `<5i11f1d>` (72 bytes) or the legacy
/// `<5i7f1d>` (56 bytes) without the quaternion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraData {
    pub seq_id: i32,
    pub type_id: i32,
    pub data_height: i32,
    pub data_width: i32,
    pub camera_fov: f32,
    /// m, NED, as the scene's other replies ([`crate::scene`]).
    pub pos_ue: [f32; 3],
    /// roll, pitch, yaw, rad.
    pub ang_euler: [f32; 3],
    pub ang_quat: Option<[f32; 4]>,
    pub time_stamp: f64,
}

impl CameraData {
    pub const LEN: usize = 72;
    pub const LEGACY_LEN: usize = 56;

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        const WHAT: &str = "CameraData";
        if p.len() != Self::LEN && p.len() != Self::LEGACY_LEN {
            return Err(DecodeError::length(WHAT, p.len(), "72 or 56"));
        }
        let f = Fields(p);
        checksum(WHAT, f, CAMERA_DATA_CHECKSUM)?;
        let full = p.len() == Self::LEN;
        Ok(Self {
            seq_id: f.i32(4),
            type_id: f.i32(8),
            data_height: f.i32(12),
            data_width: f.i32(16),
            camera_fov: f.f32(20),
            pos_ue: f.f32s(24),
            ang_euler: f.f32s(36),
            ang_quat: full.then(|| f.f32s(48)),
            time_stamp: f.f64(if full { 64 } else { 48 }),
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::LEN);
        w.i32(CAMERA_DATA_CHECKSUM)
            .i32(self.seq_id)
            .i32(self.type_id)
            .i32(self.data_height)
            .i32(self.data_width);
        w.f32(self.camera_fov).f32s(&self.pos_ue).f32s(&self.ang_euler);
        if let Some(q) = self.ang_quat {
            w.f32s(&q);
        }
        w.f64(self.time_stamp);
        w.finish()
    }
}

pub const IMU_CHECKSUM: i32 = 1_234_567_898;

/// CopterSim IMU packet `<2i1d6f>`, 40 bytes; vectors in FRD.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImuSample {
    pub seq: i32,
    pub time_stamp: f64,
    /// Specific force, m/s², FRD (reads (0, 0, −9.81) at rest).
    pub acc: [f32; 3],
    /// Body rates, rad/s, FRD.
    pub gyro: [f32; 3],
}

impl ImuSample {
    pub const LEN: usize = 40;

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        let f = exact("IMU", p, Self::LEN)?;
        checksum("IMU", f, IMU_CHECKSUM)?;
        Ok(Self {
            seq: f.i32(4),
            time_stamp: f.f64(8),
            acc: f.f32s(16),
            gyro: f.f32s(28),
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::LEN);
        w.i32(IMU_CHECKSUM)
            .i32(self.seq)
            .f64(self.time_stamp)
            .f32s(&self.acc)
            .f32s(&self.gyro);
        w.finish()
    }
}

pub const COPTERSIM_CHECKSUM: i32 = 123_456_789;

/// CopterSim true state `<4i24f7d>`, 168 bytes (RflySim's SDK: PX4MavCtrlV4.py).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrueState {
    pub copter_id: i32,
    pub vehicle_type: i32,
    pub runned_time_ms: i32,
    /// m/s, NED.
    pub vel_ned: [f32; 3],
    /// roll, pitch, yaw, rad.
    pub ang_euler: [f32; 3],
    /// w, x, y, z (FRD body in NED).
    pub quaternion: [f32; 4],
    pub motor_rpm: [f32; 8],
    /// m/s², FRD.
    pub acc_body: [f32; 3],
    /// rad/s, FRD.
    pub rate_body: [f32; 3],
    pub runned_time: f64,
    /// m, NED.
    pub pos_ned: [f64; 3],
    pub gps: [f64; 3],
}

impl TrueState {
    pub const LEN: usize = 168;

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        let f = exact("true state", p, Self::LEN)?;
        checksum("true state", f, COPTERSIM_CHECKSUM)?;
        Ok(Self {
            copter_id: f.i32(4),
            vehicle_type: f.i32(8),
            runned_time_ms: f.i32(12),
            vel_ned: f.f32s(16),
            ang_euler: f.f32s(28),
            quaternion: f.f32s(40),
            motor_rpm: f.f32s(56),
            acc_body: f.f32s(88),
            rate_body: f.f32s(100),
            runned_time: f.f64(112),
            pos_ned: f.f64s(120),
            gps: f.f64s(144),
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::LEN);
        w.i32(COPTERSIM_CHECKSUM)
            .i32(self.copter_id)
            .i32(self.vehicle_type)
            .i32(self.runned_time_ms);
        w.f32s(&self.vel_ned)
            .f32s(&self.ang_euler)
            .f32s(&self.quaternion)
            .f32s(&self.motor_rpm);
        w.f32s(&self.acc_body).f32s(&self.rate_body);
        w.f64(self.runned_time).f64s(&self.pos_ned).f64s(&self.gps);
        w.finish()
    }
}

/// CopterSim heartbeat `RflyTimeStmp` `<2i3q>`, 32 bytes, as RflySim's SDK
/// reads it: the CopterSim PC's wall clock in Unix milliseconds when the
/// simulation started (sim time 0) and when the beat left, and a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heartbeat {
    pub copter_id: i32,
    /// `SysStartTime`: Unix time of sim time 0 on the PC's clock, ms.
    pub start_time_ms: i64,
    /// `SysCurrentTime`: Unix time of this beat on the PC's clock, ms.
    pub current_time_ms: i64,
    /// `HeartCount`: beats sent so far.
    pub count: i64,
}

impl Heartbeat {
    pub const LEN: usize = 32;

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        let f = exact("heartbeat", p, Self::LEN)?;
        checksum("heartbeat", f, COPTERSIM_CHECKSUM)?;
        Ok(Self {
            copter_id: f.i32(4),
            start_time_ms: f.i64(8),
            current_time_ms: f.i64(16),
            count: f.i64(24),
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::LEN);
        w.i32(COPTERSIM_CHECKSUM)
            .i32(self.copter_id)
            .i64(self.start_time_ms)
            .i64(self.current_time_ms)
            .i64(self.count);
        w.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_imu_packet() {
        // <2i1d6f>: 1234567898, seq 7, t 2.5, acc (0, 0, -9.81), gyro (0.5, -0.25, 1)
        let mut b = vec![0xDA, 0x02, 0x96, 0x49, 0x07, 0, 0, 0];
        b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x04, 0x40]);
        b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0xC3, 0xF5, 0x1C, 0xC1]);
        b.extend_from_slice(&[0, 0, 0, 0x3F, 0, 0, 0x80, 0xBE, 0, 0, 0x80, 0x3F]);
        let s = ImuSample::decode(&b).unwrap();
        assert_eq!(
            s,
            ImuSample {
                seq: 7,
                time_stamp: 2.5,
                acc: [0.0, 0.0, -9.81],
                gyro: [0.5, -0.25, 1.0]
            }
        );
        assert_eq!(s.encode(), b);
        let mut wrong = b.clone();
        wrong[0] = 0;
        assert!(matches!(ImuSample::decode(&wrong), Err(DecodeError::Checksum { .. })));
        assert!(ImuSample::decode(&b[..39]).is_err());
    }

    #[test]
    fn golden_laser_distance_offsets() {
        let mut b = vec![0u8; 56];
        b[0..4].copy_from_slice(&12.5f32.to_le_bytes());
        b[4..8].copy_from_slice(&3i32.to_le_bytes());
        b[32..36].copy_from_slice(&7.0f32.to_le_bytes());
        b[52..56].copy_from_slice(&(-1.0f32).to_le_bytes());
        let l = LaserDistance::decode(&b).unwrap();
        assert_eq!(
            (l.distance, l.copter_id, l.impact_point[0], l.box_origin[2]),
            (12.5, 3, 7.0, -1.0)
        );
        assert_eq!(l.encode(), b);
    }

    #[test]
    fn camera_data_both_lengths() {
        let c = CameraData {
            seq_id: 2,
            type_id: 9,
            data_height: 720,
            data_width: 1280,
            camera_fov: 60.0,
            pos_ue: [1.0, 2.0, 3.0],
            ang_euler: [0.0, -0.5, 1.0],
            ang_quat: Some([1.0, 0.0, 0.0, 0.0]),
            time_stamp: 12.25,
        };
        let b = c.encode();
        assert_eq!(b.len(), 72);
        assert_eq!(&b[0..4], &[0xD3, 0x02, 0x96, 0x49]);
        assert_eq!(f64::from_le_bytes(b[64..72].try_into().unwrap()), 12.25);
        assert_eq!(CameraData::decode(&b).unwrap(), c);
        let legacy = CameraData { ang_quat: None, ..c };
        let lb = legacy.encode();
        assert_eq!(lb.len(), 56);
        assert_eq!(CameraData::decode(&lb).unwrap(), legacy);
    }

    #[test]
    fn true_state_offsets_follow_the_spec() {
        let s = TrueState {
            copter_id: 1,
            vehicle_type: 3,
            runned_time_ms: 1000,
            vel_ned: [1.0, 2.0, 3.0],
            ang_euler: [0.1, 0.2, 0.3],
            quaternion: [1.0, 0.0, 0.0, 0.0],
            motor_rpm: [0.0; 8],
            acc_body: [0.0, 0.0, -9.81],
            rate_body: [0.0, 0.0, 0.5],
            runned_time: 1.0,
            pos_ned: [10.0, 20.0, -5.0],
            gps: [40.0, 116.0, 50.0],
        };
        let b = s.encode();
        assert_eq!(b.len(), 168);
        let f = Fields(&b);
        assert_eq!(
            (
                f.f32(16),
                f.f32(28),
                f.f32(40),
                f.f32(96),
                f.f64(112),
                f.f64(120),
                f.f64(144)
            ),
            (1.0, 0.1, 1.0, -9.81, 1.0, 10.0, 40.0)
        );
        assert_eq!(TrueState::decode(&b).unwrap(), s);
    }

    #[test]
    fn heartbeat_and_detections() {
        let h = Heartbeat {
            copter_id: 1,
            start_time_ms: 1_700_000_000_000,
            current_time_ms: 1_700_000_005_000,
            count: 10,
        };
        assert_eq!(Heartbeat::decode(&h.encode()).unwrap(), h);
        // The bytes of RflySim's SDK: struct.pack('<2i3q', 123456789, 1,
        // 1700000000000, 1700000005000, 10), SysStartTime and SysCurrentTime in ms.
        let sdk: [u8; 32] = [
            0x15, 0xcd, 0x5b, 0x07, 0x01, 0, 0, 0, 0x00, 0x68, 0xe5, 0xcf, 0x8b, 0x01, 0, 0, 0x88, 0x7b, 0xe5, 0xcf,
            0x8b, 0x01, 0, 0, 0x0a, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert_eq!(h.encode(), sdk);
        let d = vec![Detection {
            id: 4,
            score: Some(0.9),
            values: [1.0, 2.0, 30.0, 40.0],
        }];
        assert_eq!(decode_detections(&encode_detections(&d)).unwrap(), d);
        let mut short = 1i32.to_le_bytes().to_vec();
        short.extend_from_slice(&5i32.to_le_bytes());
        for v in [1.0f32, 2.0, 3.0] {
            short.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(
            decode_detections(&short).unwrap()[0],
            Detection {
                id: 5,
                score: None,
                values: [1.0, 2.0, 3.0, 0.0]
            }
        );
        assert!(decode_detections(&(-1i32).to_le_bytes()).is_err());
        assert!(decode_detections(&[1, 0, 0, 0, 1]).is_err());
    }
}
