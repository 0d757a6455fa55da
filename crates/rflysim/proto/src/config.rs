//! RflySim's `Config.json` (RflySim's Config.json), read as RflySim users already write it:
//! `//`, `/* */` and `#` comments, integers written as floats, 8 or 16
//! `otherParams`, SeqID 0 meaning "previous + 1", port 0 meaning 9999 + SeqID.
//! What RflySim's Python SDK would refuse for a missing field is defaulted
//! here, and reported ([`ConfigReport::defaulted`]) so that the bridge can say so.

use std::fmt;
use std::net::Ipv4Addr;

use crate::sensor::{SensorClass, SensorKind, Transport};

mod parse;

pub use parse::{
    load_config, load_config_report, parse_config, parse_config_report, strip_comments, ConfigReport, DefaultedField,
    SensorDefaults, SDK_REQUIRED_FIELDS,
};

/// How mount Euler angles in the file are to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AngleUnit {
    Radians,
    Degrees,
    /// Radians, unless some angle of the sensor exceeds 2π in magnitude, which
    /// only a file written in degrees can hold.
    #[default]
    Auto,
}

/// One sensor of `Config.json`, with RflySim's raw values kept for requests.
#[derive(Debug, Clone, PartialEq)]
pub struct SensorConfig {
    pub seq_id: u16,
    pub type_id: u16,
    pub target_copter: u16,
    pub target_mount_type: u16,
    pub data_width: u16,
    pub data_height: u16,
    /// As written; 0 means 30 Hz (see [`SensorConfig::rate_hz`]).
    pub data_check_freq: u16,
    pub send_protocol: [u16; 8],
    pub camera_fov_deg: f32,
    pub sensor_pos_xyz: [f32; 3],
    pub eular_or_quat: f32,
    /// As written in the file (see [`SensorConfig::mount_euler_rad`]).
    pub sensor_ang_eular: [f32; 3],
    pub sensor_ang_quat: [f32; 4],
    /// Always 16 entries; a legacy 8-entry list is padded with zeros.
    pub other_params: [f32; 16],
    /// Whether the file gave only 8 `otherParams` (the 92-byte request form).
    pub legacy_other_params: bool,
    pub angles_in_degrees: bool,
}

/// Where a sensor's mount points, as RflySim states it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MountAttitude {
    /// Roll, pitch, yaw in radians (FRD body, 3-2-1 as RflySim applies them).
    Euler([f64; 3]),
    /// (w, x, y, z) as RflySim's `SensorAngQuat`.
    Quaternion([f64; 4]),
}

impl SensorConfig {
    pub fn kind(&self) -> Option<&'static SensorKind> {
        SensorKind::from_type_id(self.type_id)
    }

    /// A gimbal camera (TypeID 9), whose size and attitude are controls.
    pub fn is_gimbal(&self) -> bool {
        self.kind().is_some_and(SensorKind::is_gimbal)
    }

    pub fn transport(&self) -> Option<Transport> {
        Transport::from_code(self.send_protocol[0])
    }

    /// The receiver RflySim3D sends to; 0.0.0.0 means this host (loopback).
    pub fn receiver_ip(&self) -> Ipv4Addr {
        let o = |i: usize| self.send_protocol[i].min(255) as u8;
        let ip = Ipv4Addr::new(o(1), o(2), o(3), o(4));
        if ip.is_unspecified() {
            Ipv4Addr::LOCALHOST
        } else {
            ip
        }
    }

    /// The same sensor sent to `ip` (`SendProtocol[1..4]`), transport and port unchanged.
    pub fn with_receiver_ip(&self, ip: Ipv4Addr) -> SensorConfig {
        let mut c = self.clone();
        for (slot, octet) in c.send_protocol[1..5].iter_mut().zip(ip.octets()) {
            *slot = u16::from(octet);
        }
        c
    }

    /// The UDP port data arrives on: `SendProtocol[5]`, or 9999 + SeqID for 0.
    pub fn udp_port(&self) -> u16 {
        match self.send_protocol[5] {
            0 => 9999u16.saturating_add(self.seq_id),
            p => p,
        }
    }

    /// `SendProtocol` as RflySim3D is asked for it: the SDK's `jsonLoad`
    /// puts the port listened on in place of 0, which RflySim3D cannot send to.
    pub fn requested_send_protocol(&self) -> [u16; 8] {
        let mut p = self.send_protocol;
        p[5] = self.udp_port();
        p
    }

    /// The same sensor asked over UDP (`SendProtocol[0]` 1) when it is asked
    /// over shared memory, as the SDK asks on Linux: RflySim3D on another
    /// machine writes its shared memory there. `None` for a UDP sensor.
    pub fn over_udp_instead_of_shared_memory(&self) -> Option<SensorConfig> {
        (self.transport() == Some(Transport::SharedMemory)).then(|| {
            let mut c = self.clone();
            c.send_protocol[0] = SDK_UDP_INSTEAD_OF_SHARED_MEMORY.code();
            c
        })
    }

    /// The largest frame this sensor can send, by its configured size and
    /// kind (RflySim's SDK: VisionCaptureApi.py's UDP receivers): what a lying datagram header may make a receiver
    /// buffer. `None` where the size can change at run time (a gimbal camera's
    /// resolution is a control) or has no bound of its own (detections).
    pub fn max_frame_len(&self) -> Option<usize> {
        let (w, h) = self.size();
        let pixels = usize::from(w.max(1)) * usize::from(h.max(1));
        let kind = self.kind()?;
        match kind.class {
            _ if kind.is_gimbal() => None,
            SensorClass::Camera(e) => {
                let raw = pixels * e.bytes_per_pixel();
                Some(match self.transport()? {
                    Transport::UdpCompressed => COMPRESSED_SLACK + pixels * MAX_JPEG_BYTES_PER_PIXEL,
                    Transport::UdpPng => COMPRESSED_SLACK + raw + raw / 8,
                    Transport::UdpRaw | Transport::SharedMemory => raw,
                })
            }
            // The protocol's float layout is the larger of the two.
            SensorClass::Lidar | SensorClass::DepthCloud => Some(36 + 16 * pixels),
            SensorClass::LaserDistance => Some(crate::telemetry::LaserDistance::LEN),
            SensorClass::Detections => None,
        }
    }

    /// The most pixels an image of this camera may decode to: its configured
    /// size with room for a larger render, or `None` for a gimbal camera,
    /// whose resolution is a control.
    pub fn max_image_pixels(&self) -> Option<usize> {
        let (w, h) = self.size();
        (!self.is_gimbal()).then(|| 4 * usize::from(w.max(1)) * usize::from(h.max(1)))
    }

    pub fn rate_hz(&self) -> f64 {
        match self.data_check_freq {
            0 => 30.0,
            f => f64::from(f),
        }
    }

    /// Width × height, with the Mid360's fixed scan pattern applied.
    pub fn size(&self) -> (u16, u16) {
        self.kind()
            .and_then(|k| k.fixed_size())
            .unwrap_or((self.data_width, self.data_height))
    }

    pub fn mount_attitude(&self) -> MountAttitude {
        if self.eular_or_quat > 0.5 {
            MountAttitude::Quaternion(self.sensor_ang_quat.map(f64::from))
        } else {
            MountAttitude::Euler(self.mount_euler_rad())
        }
    }

    pub fn mount_euler_rad(&self) -> [f64; 3] {
        let scale = if self.angles_in_degrees {
            std::f64::consts::PI / 180.0
        } else {
            1.0
        };
        self.sensor_ang_eular.map(|a| f64::from(a) * scale)
    }

    /// Near and far clip of a depth sensor (`otherParams[0]`, `[1]`).
    pub fn depth_range(&self) -> (f32, f32) {
        (self.other_params[0], self.other_params[1])
    }

    /// Metres per unit of a depth camera's pixels (`otherParams[2]`; 0 or
    /// less: RflySim3D's default, millimetres; RflySim's SDK, "Depth camera").
    pub fn depth_unit_m(&self) -> f32 {
        match self.other_params[2] {
            u if u > 0.0 => u,
            _ => crate::image::DEPTH_DEFAULT_UNIT_M,
        }
    }

    /// The range that scales int16 LiDAR points (`otherParams[0]`).
    pub fn lidar_max_range(&self) -> f32 {
        self.other_params[0]
    }

    /// Shared-memory region name (`RflySim3DImg_<SeqID>`).
    pub fn shm_name(&self) -> String {
        format!("RflySim3DImg_{}", self.seq_id)
    }
}

/// A config file that could not be used, naming the sensor and field at fault.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    /// 0-based index in `VisionSensors`, when the fault is in one sensor.
    pub sensor_index: Option<usize>,
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.sensor_index, &self.field) {
            (Some(i), Some(field)) => write!(f, "VisionSensors[{i}].{field}: {}", self.message),
            (Some(i), None) => write!(f, "VisionSensors[{i}]: {}", self.message),
            (None, Some(field)) => write!(f, "{field}: {}", self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

fn err(sensor_index: Option<usize>, field: Option<&str>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        sensor_index,
        field: field.map(str::to_string),
        message: message.into(),
    }
}

/// What the SDK's `jsonLoad` asks for on Linux in place of shared memory:
/// `SendProtocol[0]` 1, UDP with JPEG images.
pub const SDK_UDP_INSTEAD_OF_SHARED_MEMORY: Transport = Transport::UdpCompressed;

/// A JPEG never needs more than this per pixel (libjpeg-turbo's own bound
/// for 4:4:4 is 6 bytes per pixel with room to spare; noisy quality-100
/// frames come near 3).
const MAX_JPEG_BYTES_PER_PIXEL: usize = 6;
/// Headers, tables and markers of a compressed file.
const COMPRESSED_SLACK: usize = 64 << 10;

/// Sensors of one config that would share a UDP port: RflySim3D would
/// send both streams there and no receiver could tell them apart. One line
/// per clash, naming both SeqIDs.
pub fn udp_port_clashes(sensors: &[SensorConfig]) -> Vec<String> {
    let mut clashes = Vec::new();
    let udp: Vec<&SensorConfig> = sensors
        .iter()
        .filter(|c| c.transport().is_some_and(|t| t.is_udp()))
        .collect();
    for (i, a) in udp.iter().enumerate() {
        for b in &udp[i + 1..] {
            if a.udp_port() == b.udp_port() {
                clashes.push(format!(
                    "sensors {} and {} both use UDP port {}",
                    a.seq_id,
                    b.seq_id,
                    a.udp_port()
                ));
            }
        }
    }
    clashes
}

#[cfg(test)]
mod tests;
