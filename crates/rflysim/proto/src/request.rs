//! What the bridge sends to RflySim: `VisionSensorReq` in its three forms
//! (RflySim's SDK: VisionCaptureApi.py's VisionSensorReq) and the CopterSim IMU request
//! (RflySim's SDK: VisionCaptureApi.py's IMU request); text console commands are in
//! [`crate::console`].
//! Decoders are here too: the emulator reads what the bridge sends, and the
//! bridge reads RflySim3D's 148-byte gimbal echo.

use std::net::Ipv4Addr;

use crate::config::SensorConfig;
use crate::error::DecodeError;
use crate::wire::{Fields, Writer};

/// The checksum of every request the bridge and the SDK send (RflySim's SDK: VisionCaptureApi.py's VisionSensorReq, VisionCaptureApi.py's IMU request).
pub const REQUEST_CHECKSUM: u16 = 12345;
/// The gimbal form's checksum in RflySim3D's echo and in the docs.
pub const GIMBAL_ECHO_CHECKSUM: u16 = 12346;
pub use crate::ports::{imu_data_port, imu_request_port, REQUEST_BASE_PORT};

/// The three layouts of `VisionSensorReq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestForm {
    /// `<16H15f>`, 92 bytes: no `EularOrQuat` and `SensorAngQuat`, 8 otherParams.
    Legacy92,
    /// `<16H28f>`, 144 bytes.
    Current144,
    /// `<2H1I14H28f>`, 148 bytes: a control bitmask after SeqID.
    Gimbal148,
}

impl RequestForm {
    pub const fn byte_len(self) -> usize {
        match self {
            RequestForm::Legacy92 => 92,
            RequestForm::Current144 => 144,
            RequestForm::Gimbal148 => 148,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct VisionSensorReq {
    pub seq_id: u16,
    /// Only in the gimbal form.
    pub bitmask: u32,
    pub type_id: u16,
    pub target_copter: u16,
    pub target_mount_type: u16,
    pub data_width: u16,
    pub data_height: u16,
    pub data_check_freq: u16,
    pub send_protocol: [u16; 8],
    pub camera_fov: f32,
    pub sensor_pos_xyz: [f32; 3],
    pub eular_or_quat: f32,
    pub sensor_ang_eular: [f32; 3],
    pub sensor_ang_quat: [f32; 4],
    pub other_params: [f32; 16],
}

impl From<&SensorConfig> for VisionSensorReq {
    fn from(c: &SensorConfig) -> Self {
        Self {
            seq_id: c.seq_id,
            bitmask: 0,
            type_id: c.type_id,
            target_copter: c.target_copter,
            target_mount_type: c.target_mount_type,
            data_width: c.data_width,
            data_height: c.data_height,
            data_check_freq: c.data_check_freq,
            send_protocol: c.requested_send_protocol(),
            camera_fov: c.camera_fov_deg,
            sensor_pos_xyz: c.sensor_pos_xyz,
            eular_or_quat: c.eular_or_quat,
            sensor_ang_eular: c.sensor_ang_eular,
            sensor_ang_quat: c.sensor_ang_quat,
            other_params: c.other_params,
        }
    }
}

impl VisionSensorReq {
    /// The sensor a request in `form` describes, as RflySim3D takes it: the
    /// inverse of `VisionSensorReq::from(&SensorConfig)`. Angles travel in
    /// radians; a 92-byte request carries 8 `otherParams`.
    pub fn sensor_config(&self, form: RequestForm) -> SensorConfig {
        SensorConfig {
            seq_id: self.seq_id,
            type_id: self.type_id,
            target_copter: self.target_copter,
            target_mount_type: self.target_mount_type,
            data_width: self.data_width,
            data_height: self.data_height,
            data_check_freq: self.data_check_freq,
            send_protocol: self.send_protocol,
            camera_fov_deg: self.camera_fov,
            sensor_pos_xyz: self.sensor_pos_xyz,
            eular_or_quat: self.eular_or_quat,
            sensor_ang_eular: self.sensor_ang_eular,
            sensor_ang_quat: self.sensor_ang_quat,
            other_params: self.other_params,
            legacy_other_params: form == RequestForm::Legacy92,
            angles_in_degrees: false,
        }
    }

    /// Encodes in `form` with `checksum` (12345 for requests; see
    /// [`GIMBAL_ECHO_CHECKSUM`] for RflySim3D's own gimbal echo).
    pub fn encode(&self, form: RequestForm, checksum: u16) -> Vec<u8> {
        let mut w = Writer::with_capacity(form.byte_len());
        w.u16(checksum).u16(self.seq_id);
        if form == RequestForm::Gimbal148 {
            w.u32(self.bitmask);
        }
        w.u16(self.type_id).u16(self.target_copter).u16(self.target_mount_type);
        w.u16(self.data_width).u16(self.data_height).u16(self.data_check_freq);
        w.u16s(&self.send_protocol);
        w.f32(self.camera_fov).f32s(&self.sensor_pos_xyz);
        if form == RequestForm::Legacy92 {
            w.f32s(&self.sensor_ang_eular).f32s(&self.other_params[..8]);
        } else {
            w.f32(self.eular_or_quat)
                .f32s(&self.sensor_ang_eular)
                .f32s(&self.sensor_ang_quat);
            w.f32s(&self.other_params);
        }
        w.finish()
    }

    /// Decodes any of the three forms, told apart by length; returns the form
    /// and the checksum found (12345, or 12346 for the gimbal form).
    pub fn decode(p: &[u8]) -> Result<(VisionSensorReq, RequestForm, u16), DecodeError> {
        const WHAT: &str = "VisionSensorReq";
        let form = match p.len() {
            92 => RequestForm::Legacy92,
            144 => RequestForm::Current144,
            148 => RequestForm::Gimbal148,
            n => return Err(DecodeError::length(WHAT, n, "92, 144 or 148")),
        };
        let f = Fields(p);
        let checksum = f.u16(0);
        let ok = checksum == REQUEST_CHECKSUM || (form == RequestForm::Gimbal148 && checksum == GIMBAL_ECHO_CHECKSUM);
        if !ok {
            return Err(DecodeError::Checksum {
                what: WHAT,
                got: i64::from(checksum),
            });
        }
        let (bitmask, b) = if form == RequestForm::Gimbal148 {
            (f.u32(4), 8)
        } else {
            (0, 4)
        };
        let floats = b + 28; // 14 u16 after the checksum and SeqID (and bitmask)
        let legacy = form == RequestForm::Legacy92;
        let (eular_or_quat, eul_at, sensor_ang_quat, other_at, n_other) = if legacy {
            (0.0, floats + 16, [1.0, 0.0, 0.0, 0.0], floats + 28, 8)
        } else {
            (f.f32(floats + 16), floats + 20, f.f32s(floats + 32), floats + 48, 16)
        };
        let mut other_params = [0f32; 16];
        for (k, v) in other_params.iter_mut().take(n_other).enumerate() {
            *v = f.f32(other_at + 4 * k);
        }
        let req = VisionSensorReq {
            seq_id: f.u16(2),
            bitmask,
            type_id: f.u16(b),
            target_copter: f.u16(b + 2),
            target_mount_type: f.u16(b + 4),
            data_width: f.u16(b + 6),
            data_height: f.u16(b + 8),
            data_check_freq: f.u16(b + 10),
            send_protocol: f.u16s(b + 12),
            camera_fov: f.f32(floats),
            sensor_pos_xyz: f.f32s(floats + 4),
            eular_or_quat,
            sensor_ang_eular: f.f32s(eul_at),
            sensor_ang_quat,
            other_params,
        };
        Ok((req, form, checksum))
    }
}

/// The IMU request `<4H4B6f>`, 36 bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImuRequest {
    /// 0 = IMU.
    pub sensor_type: u16,
    pub freq_hz: u16,
    pub port: u16,
    pub receiver: Ipv4Addr,
    pub params: [f32; 6],
}

impl ImuRequest {
    pub const LEN: usize = 36;

    pub fn for_copter(copter_id: u16, receiver: Ipv4Addr, freq_hz: u16) -> Self {
        Self {
            sensor_type: 0,
            freq_hz,
            port: imu_data_port(copter_id),
            receiver,
            params: [0.0; 6],
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(Self::LEN);
        w.u16(REQUEST_CHECKSUM)
            .u16(self.sensor_type)
            .u16(self.freq_hz)
            .u16(self.port);
        w.bytes(&self.receiver.octets()).f32s(&self.params);
        w.finish()
    }

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        if p.len() != Self::LEN {
            return Err(DecodeError::length("IMU request", p.len(), "36"));
        }
        let f = Fields(p);
        if f.u16(0) != REQUEST_CHECKSUM {
            return Err(DecodeError::Checksum {
                what: "IMU request",
                got: i64::from(f.u16(0)),
            });
        }
        Ok(Self {
            sensor_type: f.u16(2),
            freq_hz: f.u16(4),
            port: f.u16(6),
            receiver: Ipv4Addr::new(p[8], p[9], p[10], p[11]),
            params: f.f32s(12),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> VisionSensorReq {
        let mut other = [0f32; 16];
        other.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32 + 0.5);
        VisionSensorReq {
            seq_id: 3,
            bitmask: 1 << 4 | 1 << 13,
            type_id: 9,
            target_copter: 1,
            target_mount_type: 0,
            data_width: 1280,
            data_height: 720,
            data_check_freq: 30,
            send_protocol: [2, 127, 0, 0, 1, 10002, 0, 0],
            camera_fov: 90.0,
            sensor_pos_xyz: [0.1, 0.0, -0.2],
            eular_or_quat: 0.0,
            sensor_ang_eular: [0.0, -0.5, 0.0],
            sensor_ang_quat: [1.0, 0.0, 0.0, 0.0],
            other_params: other,
        }
    }

    #[test]
    fn offsets_of_the_144_byte_form_follow_the_spec() {
        let b = sample().encode(RequestForm::Current144, REQUEST_CHECKSUM);
        assert_eq!(b.len(), 144);
        let f = Fields(&b);
        assert_eq!(
            (f.u16(0), f.u16(2), f.u16(4), f.u16(10), f.u16(12), f.u16(14)),
            (12345, 3, 9, 1280, 720, 30)
        );
        assert_eq!((f.u16(16), f.u16(18), f.u16(24), f.u16(26)), (2, 127, 1, 10002));
        assert_eq!(
            (f.f32(32), f.f32(36), f.f32(48), f.f32(56), f.f32(64)),
            (90.0, 0.1, 0.0, -0.5, 1.0)
        );
        assert_eq!((f.f32(80), f.f32(140)), (0.5, 15.5));
    }

    #[test]
    fn a_request_and_the_sensor_it_describes_convert_both_ways() {
        for form in [RequestForm::Current144, RequestForm::Legacy92] {
            let mut r = sample();
            r.bitmask = 0;
            let cfg = r.sensor_config(form);
            assert_eq!(cfg.legacy_other_params, form == RequestForm::Legacy92);
            assert_eq!((cfg.seq_id, cfg.type_id, cfg.udp_port()), (3, 9, 10002));
            assert_eq!(VisionSensorReq::from(&cfg), r);
            // What the emulator decodes is the sensor the bridge encoded.
            let (decoded, got_form, _) = VisionSensorReq::decode(&r.encode(form, REQUEST_CHECKSUM)).unwrap();
            assert_eq!(got_form, form);
            if form == RequestForm::Current144 {
                assert_eq!(decoded.sensor_config(form), cfg);
            }
        }
    }

    #[test]
    fn the_148_byte_form_shifts_everything_by_the_bitmask() {
        let b = sample().encode(RequestForm::Gimbal148, GIMBAL_ECHO_CHECKSUM);
        assert_eq!(b.len(), 148);
        let f = Fields(&b);
        assert_eq!(
            (f.u16(0), f.u16(2), f.u32(4), f.u16(8)),
            (12346, 3, (1 << 4) | (1 << 13), 9)
        );
        assert_eq!((f.f32(36), f.f32(84), f.f32(144)), (90.0, 0.5, 15.5));
    }

    #[test]
    fn legacy_form_has_eight_other_params() {
        let b = sample().encode(RequestForm::Legacy92, REQUEST_CHECKSUM);
        assert_eq!(b.len(), 92);
        // fov, pos[3], euler[3], then otherParams from offset 60.
        assert_eq!(
            (
                Fields(&b).f32(32),
                Fields(&b).f32(48),
                Fields(&b).f32(60),
                Fields(&b).f32(88)
            ),
            (90.0, 0.0, 0.5, 7.5)
        );
        let (r, form, _) = VisionSensorReq::decode(&b).unwrap();
        assert_eq!(form, RequestForm::Legacy92);
        assert_eq!(r.other_params[7], 7.5);
        assert_eq!(r.other_params[8], 0.0);
    }

    #[test]
    fn decode_round_trips_and_checks() {
        for (form, ck) in [
            (RequestForm::Current144, 12345),
            (RequestForm::Gimbal148, 12345),
            (RequestForm::Gimbal148, 12346),
        ] {
            let (r, f, c) = VisionSensorReq::decode(&sample().encode(form, ck)).unwrap();
            assert_eq!((f, c), (form, ck));
            let mut want = sample();
            if form != RequestForm::Gimbal148 {
                want.bitmask = 0;
            }
            assert_eq!(r, want);
        }
        assert!(VisionSensorReq::decode(&sample().encode(RequestForm::Current144, 12346)).is_err());
        assert!(VisionSensorReq::decode(&[0; 100]).is_err());
    }

    /// A sensor of Config.json as RflySim's SDK loads it (`jsonLoad`).
    fn configured(seq_id: u16, type_id: u16, send_protocol: [u16; 8]) -> SensorConfig {
        let json = format!(
            r#"{{"VisionSensors": [{{"SeqID": {seq_id}, "TypeID": {type_id}, "TargetCopter": 1,
            "TargetMountType": 0, "DataWidth": 640, "DataHeight": 480, "DataCheckFreq": 30,
            "SendProtocol": {send_protocol:?}, "CameraFOV": 90, "SensorPosXYZ": [0, 0, 0],
            "EularOrQuat": 0, "SensorAngEular": [0, 0, 0], "SensorAngQuat": [1, 0, 0, 0],
            "otherParams": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}}]}}"#
        );
        crate::config::parse_config(&json, crate::config::AngleUnit::Auto)
            .unwrap()
            .remove(0)
    }

    /// `struct.pack("<16H", 12345, 3, 1, 1, 0, 640, 480, 30, 2, 127, 0, 0, 1, 10002, 0, 0)`:
    /// the SDK's request for SeqID 3 written with port 0, which its `jsonLoad` makes 9999 + 3.
    const SDK_REQUEST_PORT_FILLED: [u8; 32] = [
        0x39, 0x30, 0x03, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x80, 0x02, 0xe0, 0x01, 0x1e, 0x00, //
        0x02, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x12, 0x27, 0x00, 0x00, 0x00, 0x00,
    ];

    #[test]
    fn a_sensor_without_a_port_is_asked_for_the_port_it_is_listened_on() {
        let cfg = configured(3, 1, [2, 127, 0, 0, 1, 0, 0, 0]);
        let b = VisionSensorReq::from(&cfg).encode(RequestForm::Current144, REQUEST_CHECKSUM);
        assert_eq!(b[..32], SDK_REQUEST_PORT_FILLED);
        assert_eq!(cfg.udp_port(), 10002);
        let given = configured(3, 1, [2, 127, 0, 0, 1, 9100, 0, 0]);
        assert_eq!(
            VisionSensorReq::from(&given).send_protocol[5],
            9100,
            "a port written is kept"
        );
    }

    /// `struct.pack("<16H", 12345, 7, 1, 1, 0, 640, 480, 30, 1, 0, 0, 0, 0, 10006, 0, 0)`:
    /// the SDK's request on Linux for SeqID 7 written as shared memory, `[0, 0, 0, 0, 0, 0, 0, 0]`.
    const SDK_REQUEST_ON_LINUX_FOR_SHARED_MEMORY: [u8; 32] = [
        0x39, 0x30, 0x07, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x80, 0x02, 0xe0, 0x01, 0x1e, 0x00, //
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x16, 0x27, 0x00, 0x00, 0x00, 0x00,
    ];

    #[test]
    fn shared_memory_is_asked_as_udp_as_the_sdk_asks_on_linux() {
        let shm = configured(7, 1, [0; 8]);
        let udp = shm.over_udp_instead_of_shared_memory().unwrap();
        let b = VisionSensorReq::from(&udp).encode(RequestForm::Current144, REQUEST_CHECKSUM);
        assert_eq!(b[..32], SDK_REQUEST_ON_LINUX_FOR_SHARED_MEMORY);
        assert_eq!(udp.udp_port(), shm.udp_port());
        assert_eq!(
            configured(7, 1, [2, 127, 0, 0, 1, 0, 0, 0]).over_udp_instead_of_shared_memory(),
            None,
            "a UDP sensor stays as it is"
        );
    }

    #[test]
    fn imu_request_layout() {
        let r = ImuRequest::for_copter(2, Ipv4Addr::new(192, 168, 1, 5), 200);
        let b = r.encode();
        assert_eq!(b.len(), 36);
        assert_eq!(&b[..12], &[0x39, 0x30, 0, 0, 200, 0, 0x19, 0x79, 192, 168, 1, 5]);
        assert_eq!(ImuRequest::decode(&b).unwrap(), r);
        assert_eq!(
            (imu_request_port(1), imu_request_port(3), imu_data_port(3)),
            (30100, 30104, 31002)
        );
    }
}
