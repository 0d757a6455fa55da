//! Gimbal control bits and the gimbal's status echo (RflySim's SDK:
//! `VisionSensorReq` "Gimbal control bitmask", gimbal status). The bit
//! numbering differs between RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html) and the SDK's
//! `CameraCtrlApi.py`; both tables are here, and only here.

use crate::error::DecodeError;
use crate::request::{RequestForm, VisionSensorReq};
use crate::sensor::type_id;

/// One thing a gimbal request can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GimbalControl {
    FocalLength,
    Centre,
    Rates,
    OpticalZoom,
    ZoomBase,
    TrackTarget,
    Ranging,
    LightSource,
    AiBoxSelect,
    Fov,
    Angle,
    Quaternion,
    SensorType,
}

/// Which bit stands for which control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GimbalBitTable {
    pub name: &'static str,
    bits: &'static [(GimbalControl, u8)],
}

/// RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.1 (what RflySim3D documents).
pub const PROTOCOL_BITS: GimbalBitTable = GimbalBitTable {
    name: "protocol",
    bits: &[
        (GimbalControl::FocalLength, 4),
        (GimbalControl::Centre, 5),
        (GimbalControl::Rates, 6),
        (GimbalControl::OpticalZoom, 7),
        (GimbalControl::TrackTarget, 8),
        (GimbalControl::Ranging, 9),
        (GimbalControl::LightSource, 10),
        (GimbalControl::AiBoxSelect, 11),
        (GimbalControl::ZoomBase, 13),
    ],
};

/// RflySim SDK `CameraCtrlApi.py` numbering.
pub const SDK_BITS: GimbalBitTable = GimbalBitTable {
    name: "sdk",
    bits: &[
        (GimbalControl::Fov, 6),
        (GimbalControl::Angle, 7),
        (GimbalControl::Quaternion, 8),
        (GimbalControl::FocalLength, 9),
        (GimbalControl::Centre, 10),
        (GimbalControl::Rates, 11),
        (GimbalControl::OpticalZoom, 12),
        (GimbalControl::ZoomBase, 13),
        (GimbalControl::TrackTarget, 14),
        (GimbalControl::Ranging, 15),
        (GimbalControl::SensorType, 16),
    ],
};

impl GimbalBitTable {
    /// By name: `protocol` or `sdk`.
    pub fn by_name(name: &str) -> Option<GimbalBitTable> {
        [PROTOCOL_BITS, SDK_BITS].into_iter().find(|t| t.name == name)
    }

    /// The mask bit of `control`, or `None` when this numbering has none
    /// (the control is then carried by the request's own fields).
    pub fn bit(&self, control: GimbalControl) -> Option<u32> {
        self.bits.iter().find(|(c, _)| *c == control).map(|(_, b)| 1u32 << b)
    }

    pub fn controls_in(&self, mask: u32) -> Vec<GimbalControl> {
        self.bits
            .iter()
            .filter(|(_, b)| mask & (1 << b) != 0)
            .map(|(c, _)| *c)
            .collect()
    }

    /// Bits of `mask` this table doesn't know.
    pub fn unknown_bits(&self, mask: u32) -> u32 {
        mask & !self.bits.iter().fold(0u32, |m, (_, b)| m | (1 << b))
    }
}

impl GimbalControl {
    /// The `otherParams` slots the control's values travel in (none: the
    /// request's own fields carry it).
    pub fn slots(self) -> &'static [usize] {
        match self {
            GimbalControl::FocalLength => &[slot::FOCAL_LENGTH],
            GimbalControl::Centre => &[slot::CENTRE],
            GimbalControl::Rates => &[slot::PITCH_RATE, slot::YAW_RATE],
            GimbalControl::OpticalZoom => &[slot::OPTICAL_ZOOM],
            GimbalControl::ZoomBase => &[slot::ZOOM_BASE],
            GimbalControl::TrackTarget => &[slot::TRACK_TARGET],
            GimbalControl::Ranging => &[slot::RANGING],
            GimbalControl::LightSource => &[slot::LIGHT_SOURCE],
            GimbalControl::AiBoxSelect => &[slot::AI_MODE, slot::AI_PIXEL_X, slot::AI_PIXEL_Y],
            GimbalControl::Fov | GimbalControl::Angle | GimbalControl::Quaternion | GimbalControl::SensorType => &[],
        }
    }
}

/// `newer` with the controls of `older` it does not set itself (two
/// requests waiting together become one); where both use one slot, `newer`'s stays.
pub fn fold(older: &VisionSensorReq, mut newer: VisionSensorReq, bits: &GimbalBitTable) -> VisionSensorReq {
    let used: Vec<usize> = bits
        .controls_in(newer.bitmask)
        .iter()
        .flat_map(|c| c.slots().iter().copied())
        .collect();
    for control in bits.controls_in(older.bitmask & !newer.bitmask) {
        if control.slots().iter().any(|s| used.contains(s)) {
            continue;
        }
        if let Some(bit) = bits.bit(control) {
            newer.bitmask |= bit;
        }
        for &s in control.slots() {
            newer.other_params[s] = older.other_params[s];
        }
    }
    newer
}

/// Whether `req` does nothing but stop the rates (the bridge's neutral
/// command): the rates bit alone, both rates 0.
pub fn stops_rates_only(req: &VisionSensorReq, bits: &GimbalBitTable) -> bool {
    bits.bit(GimbalControl::Rates).is_some_and(|b| req.bitmask == b)
        && req.other_params[slot::PITCH_RATE] == 0.0
        && req.other_params[slot::YAW_RATE] == 0.0
}

/// The `otherParams` slots of the control values (RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.1).
pub mod slot {
    pub const FOCAL_LENGTH: usize = 0;
    pub const CENTRE: usize = 1;
    pub const PITCH_RATE: usize = 2;
    pub const YAW_RATE: usize = 3;
    pub const OPTICAL_ZOOM: usize = 4;
    /// Zoom base and the target to track share slot 5.
    pub const ZOOM_BASE: usize = 5;
    pub const TRACK_TARGET: usize = 5;
    pub const RANGING: usize = 6;
    pub const LIGHT_SOURCE: usize = 7;
    pub const AI_MODE: usize = 8;
    pub const AI_PIXEL_X: usize = 9;
    pub const AI_PIXEL_Y: usize = 10;
}

/// The TypeID a gimbal camera renders as under the `LightSource` control's
/// value (RflySim's SDK: VisionCaptureApi.py's VisionSensorReq: 0 RGB, 1 thermal, 2 IR gray).
pub fn light_source_type_id(light_source: u8) -> u16 {
    match light_source {
        1 => type_id::INFRARED,
        2 => type_id::INFRARED_GRAY,
        _ => type_id::GIMBAL,
    }
}

/// RflySim3D's 148-byte gimbal echo, read as RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.2.2 describes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GimbalEcho {
    pub seq_id: u16,
    pub type_id: u16,
    pub width: u16,
    pub height: u16,
    pub camera_fov_deg: f32,
    pub eular_or_quat: f32,
    pub euler: [f32; 3],
    pub quat: [f32; 4],
    pub focal_length: f32,
    /// Pitch and yaw rates.
    pub rates: [f32; 2],
    /// fx, fy in pixels.
    pub focal_px: [f32; 2],
    /// Pixel width and height.
    pub pixel_size: [f32; 2],
    pub laser_range: f32,
    pub request: VisionSensorReq,
}

impl GimbalEcho {
    /// The echo is the gimbal form of `VisionSensorReq` (RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.2).
    pub const LEN: usize = RequestForm::Gimbal148.byte_len();

    /// The echo as RflySim3D sends it (the emulator's side of [`GimbalEcho::decode`]):
    /// the fields above in their places, what they don't cover from `request`.
    pub fn encode(&self, checksum: u16) -> Vec<u8> {
        let mut r = self.request;
        r.seq_id = self.seq_id;
        r.type_id = self.type_id;
        r.data_width = self.width;
        r.data_height = self.height;
        r.camera_fov = self.camera_fov_deg;
        r.eular_or_quat = self.eular_or_quat;
        r.sensor_ang_eular = self.euler;
        r.sensor_ang_quat = self.quat;
        r.other_params[..8].copy_from_slice(&[
            self.focal_length,
            self.rates[0],
            self.rates[1],
            self.focal_px[0],
            self.focal_px[1],
            self.pixel_size[0],
            self.pixel_size[1],
            self.laser_range,
        ]);
        r.encode(RequestForm::Gimbal148, checksum)
    }

    /// The gimbal is not slewing: both rates 0.
    pub fn rates_stopped(&self) -> bool {
        self.rates == [0.0; 2]
    }

    pub fn decode(p: &[u8]) -> Result<Self, DecodeError> {
        let (r, form, _) = VisionSensorReq::decode(p)?;
        if form != RequestForm::Gimbal148 {
            return Err(DecodeError::length("gimbal echo", p.len(), "148"));
        }
        let o = r.other_params;
        Ok(Self {
            seq_id: r.seq_id,
            type_id: r.type_id,
            width: r.data_width,
            height: r.data_height,
            camera_fov_deg: r.camera_fov,
            eular_or_quat: r.eular_or_quat,
            euler: r.sensor_ang_eular,
            quat: r.sensor_ang_quat,
            focal_length: o[0],
            rates: [o[1], o[2]],
            focal_px: [o[3], o[4]],
            pixel_size: [o[5], o[6]],
            laser_range: o[7],
            request: r,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::GIMBAL_ECHO_CHECKSUM;

    #[test]
    fn both_tables() {
        assert_eq!(PROTOCOL_BITS.bit(GimbalControl::ZoomBase), Some(1 << 13));
        assert_eq!(PROTOCOL_BITS.bit(GimbalControl::Rates), Some(1 << 6));
        assert_eq!(PROTOCOL_BITS.bit(GimbalControl::Fov), None);
        assert_eq!(SDK_BITS.bit(GimbalControl::Rates), Some(1 << 11));
        assert_eq!(SDK_BITS.bit(GimbalControl::AiBoxSelect), None);
        assert_eq!(
            PROTOCOL_BITS.controls_in(1 << 5 | 1 << 9),
            vec![GimbalControl::Centre, GimbalControl::Ranging]
        );
        assert_eq!(PROTOCOL_BITS.unknown_bits(1 << 5 | 1 << 20 | 1), 1 << 20 | 1);
        assert_eq!(GimbalBitTable::by_name("sdk"), Some(SDK_BITS));
        assert_eq!(GimbalBitTable::by_name("x"), None);
    }

    #[test]
    fn folding_keeps_the_older_request_s_controls_the_newer_does_not_set() {
        let rates = PROTOCOL_BITS.bit(GimbalControl::Rates).unwrap();
        let zoom = PROTOCOL_BITS.bit(GimbalControl::OpticalZoom).unwrap();
        let base = PROTOCOL_BITS.bit(GimbalControl::ZoomBase).unwrap();
        let track = PROTOCOL_BITS.bit(GimbalControl::TrackTarget).unwrap();
        let mut older = VisionSensorReq {
            bitmask: rates | track,
            ..Default::default()
        };
        older.other_params[slot::PITCH_RATE] = 0.2;
        older.other_params[slot::YAW_RATE] = -0.1;
        older.other_params[slot::TRACK_TARGET] = 3.0;
        let mut newer = VisionSensorReq {
            bitmask: zoom | base,
            ..Default::default()
        };
        newer.other_params[slot::OPTICAL_ZOOM] = 4.0;
        newer.other_params[slot::ZOOM_BASE] = 10.0;
        let f = fold(&older, newer, &PROTOCOL_BITS);
        assert_eq!(
            f.bitmask,
            rates | zoom | base,
            "the target shares the zoom base's slot: the newer wins"
        );
        assert_eq!(&f.other_params[2..6], &[0.2, -0.1, 4.0, 10.0]);
    }

    #[test]
    fn a_rate_stop_is_the_rates_bit_alone_with_both_rates_zero() {
        let rates = PROTOCOL_BITS.bit(GimbalControl::Rates).unwrap();
        let mut r = VisionSensorReq {
            bitmask: rates,
            ..Default::default()
        };
        assert!(stops_rates_only(&r, &PROTOCOL_BITS));
        assert!(!stops_rates_only(&r, &SDK_BITS), "another numbering's bit");
        r.other_params[slot::YAW_RATE] = 0.1;
        assert!(!stops_rates_only(&r, &PROTOCOL_BITS), "a motion");
        r.other_params[slot::YAW_RATE] = 0.0;
        r.bitmask |= PROTOCOL_BITS.bit(GimbalControl::Centre).unwrap();
        assert!(!stops_rates_only(&r, &PROTOCOL_BITS), "more than the stop");
    }

    #[test]
    fn echo_fields() {
        let mut o = [0f32; 16];
        o[..8].copy_from_slice(&[35.0, 0.1, -0.2, 1100.0, 1101.0, 1280.0, 720.0, 87.5]);
        let r = VisionSensorReq {
            seq_id: 2,
            bitmask: 0,
            type_id: 9,
            target_copter: 1,
            target_mount_type: 0,
            data_width: 1280,
            data_height: 720,
            data_check_freq: 30,
            send_protocol: [0; 8],
            camera_fov: 60.0,
            sensor_pos_xyz: [0.0; 3],
            eular_or_quat: 0.0,
            sensor_ang_eular: [0.0, -0.3, 0.2],
            sensor_ang_quat: [1.0, 0.0, 0.0, 0.0],
            other_params: o,
        };
        let e = GimbalEcho::decode(&r.encode(RequestForm::Gimbal148, GIMBAL_ECHO_CHECKSUM)).unwrap();
        assert_eq!(
            (e.focal_length, e.rates, e.focal_px, e.pixel_size, e.laser_range),
            (35.0, [0.1, -0.2], [1100.0, 1101.0], [1280.0, 720.0], 87.5)
        );
        assert_eq!((e.camera_fov_deg, e.euler), (60.0, [0.0, -0.3, 0.2]));
        assert!(!e.rates_stopped());
        assert!(GimbalEcho {
            rates: [0.0, -0.0],
            ..e
        }
        .rates_stopped());
        assert!(GimbalEcho::decode(&r.encode(RequestForm::Current144, 12345)).is_err());
        // The emulator's encoder writes exactly what the decoder read.
        let bytes = e.encode(GIMBAL_ECHO_CHECKSUM);
        assert_eq!(bytes.len(), 148);
        assert_eq!(bytes, r.encode(RequestForm::Gimbal148, GIMBAL_ECHO_CHECKSUM));
        let changed = GimbalEcho {
            laser_range: 12.5,
            width: 320,
            focal_px: [7.0, 8.0],
            ..e
        };
        let back = GimbalEcho::decode(&changed.encode(GIMBAL_ECHO_CHECKSUM)).unwrap();
        assert_eq!(
            (back.laser_range, back.width, back.focal_px, back.request.data_width),
            (12.5, 320, [7.0, 8.0], 320)
        );
    }

    #[test]
    fn light_sources_render_as_their_kinds() {
        assert_eq!(
            [0, 1, 2, 3].map(light_source_type_id),
            [9, 41, 40, 9],
            "RGB, thermal, IR gray; unknown stays RGB"
        );
    }
}
