//! RflySim's `Config.json` (spec §1), read as RflySim users already write it:
//! `//`, `/* */` and `#` comments, integers written as floats, 8 or 16
//! `otherParams`, SeqID 0 meaning "previous + 1", port 0 meaning 9999 + SeqID.
//! What RflySim's Python SDK would refuse for a missing field is defaulted
//! here, and reported ([`ConfigReport::defaulted`]) so that the bridge can say so.

use std::fmt;
use std::net::Ipv4Addr;
use std::path::Path;

use serde_json::Value;

use crate::sensor::{SensorClass, SensorKind, Transport};

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

    /// The UDP port data arrives on: `SendProtocol[5]`, or 9999 + SeqID for 0.
    pub fn udp_port(&self) -> u16 {
        match self.send_protocol[5] {
            0 => 9999u16.saturating_add(self.seq_id),
            p => p,
        }
    }

    /// The largest frame this sensor can send, by its configured size and
    /// kind (spec §3): what a lying datagram header may make a receiver
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
            // The seed's float layout is the larger of the two.
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

/// Removes `//` and `#` line comments and `/* */` block comments outside strings.
pub fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '#' => skip_line(&mut chars, &mut out),
            '/' if chars.peek() == Some(&'/') => skip_line(&mut chars, &mut out),
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = '\0';
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n'); // keeps serde_json's line numbers right
                    }
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

fn skip_line(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, out: &mut String) {
    for n in chars.by_ref() {
        if n == '\n' {
            out.push('\n');
            break;
        }
    }
}

/// The fields RflySim's Python SDK (`VisionCaptureApi.jsonLoad`) needs in every
/// sensor besides `TypeID`; `SensorAngQuat` too when `EularOrQuat` is present.
pub const SDK_REQUIRED_FIELDS: [&str; 11] = [
    "SeqID",
    "TargetCopter",
    "TargetMountType",
    "DataWidth",
    "DataHeight",
    "DataCheckFreq",
    "SendProtocol",
    "CameraFOV",
    "SensorPosXYZ",
    "SensorAngEular",
    "otherParams",
];

/// A field the SDK requires that the file left out, and the value used instead.
#[derive(Debug, Clone, PartialEq)]
pub struct DefaultedField {
    pub field: &'static str,
    pub value: String,
}

/// The defaulted fields of one sensor.
#[derive(Debug, Clone, PartialEq)]
pub struct SensorDefaults {
    /// 0-based index in `VisionSensors`.
    pub index: usize,
    pub seq_id: u16,
    pub fields: Vec<DefaultedField>,
}

impl fmt::Display for SensorDefaults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sensor {}: defaulted ", self.seq_id)?;
        for (k, d) in self.fields.iter().enumerate() {
            let sep = if k == 0 { "" } else { ", " };
            write!(f, "{sep}{}={}", d.field, d.value)?;
        }
        Ok(())
    }
}

/// The sensors of a config, and those of them with defaulted fields.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigReport {
    pub sensors: Vec<SensorConfig>,
    /// Only the sensors that left out some field; in file order.
    pub defaulted: Vec<SensorDefaults>,
}

/// Reads `Config.json` from a file.
pub fn load_config(path: &Path, unit: AngleUnit) -> Result<Vec<SensorConfig>, ConfigError> {
    load_config_report(path, unit).map(|r| r.sensors)
}

/// Reads `Config.json` from a file, reporting the fields it defaulted.
pub fn load_config_report(path: &Path, unit: AngleUnit) -> Result<ConfigReport, ConfigError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| err(None, None, format!("cannot read {}: {e}", path.display())))?;
    parse_config_report(&text, unit).map_err(|mut e| {
        e.message = format!("{} (in {})", e.message, path.display());
        e
    })
}

/// Parses the text of a `Config.json`.
pub fn parse_config(text: &str, unit: AngleUnit) -> Result<Vec<SensorConfig>, ConfigError> {
    parse_config_report(text, unit).map(|r| r.sensors)
}

/// Parses the text of a `Config.json`, reporting the fields it defaulted.
pub fn parse_config_report(text: &str, unit: AngleUnit) -> Result<ConfigReport, ConfigError> {
    let root: Value =
        serde_json::from_str(&strip_comments(text)).map_err(|e| err(None, None, format!("not valid JSON: {e}")))?;
    let sensors = root
        .get("VisionSensors")
        .ok_or_else(|| err(None, Some("VisionSensors"), "missing"))?
        .as_array()
        .ok_or_else(|| err(None, Some("VisionSensors"), "is not a list"))?;
    let mut out: Vec<SensorConfig> = Vec::with_capacity(sensors.len());
    let mut defaulted = Vec::new();
    for (i, s) in sensors.iter().enumerate() {
        let (mut sensor, mut fields) = parse_sensor(i, s, unit)?;
        if sensor.seq_id == 0 {
            if let Some(prev) = out.last() {
                sensor.seq_id = prev
                    .seq_id
                    .checked_add(1)
                    .ok_or_else(|| err(Some(i), Some("SeqID"), "auto-increment past 65535"))?;
            }
        }
        if let Some(j) = out.iter().position(|o| o.seq_id == sensor.seq_id) {
            return Err(err(
                Some(i),
                Some("SeqID"),
                format!("SeqID {} is already used by VisionSensors[{j}]", sensor.seq_id),
            ));
        }
        if let Some(d) = fields.iter_mut().find(|d| d.field == "SeqID") {
            d.value = sensor.seq_id.to_string();
        }
        if !fields.is_empty() {
            defaulted.push(SensorDefaults {
                index: i,
                seq_id: sensor.seq_id,
                fields,
            });
        }
        out.push(sensor);
    }
    Ok(ConfigReport {
        sensors: out,
        defaulted,
    })
}

struct SensorFields<'a> {
    index: usize,
    obj: &'a serde_json::Map<String, Value>,
    defaulted: Vec<DefaultedField>,
}

impl SensorFields<'_> {
    fn note_default(&mut self, field: &'static str, value: impl FnOnce() -> String) {
        let quaternion_required = field == "SensorAngQuat" && self.obj.contains_key("EularOrQuat");
        if quaternion_required || SDK_REQUIRED_FIELDS.contains(&field) {
            self.defaulted.push(DefaultedField { field, value: value() });
        }
    }

    fn number(&mut self, field: &'static str, default: Option<f64>) -> Result<f64, ConfigError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => {
                let v = default.ok_or_else(|| err(Some(self.index), Some(field), "missing"))?;
                self.note_default(field, || format_number(v));
                Ok(v)
            }
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite())
                .ok_or_else(|| err(Some(self.index), Some(field), format!("expected a number, found {v}"))),
        }
    }

    fn u16(&mut self, field: &'static str, default: Option<u16>) -> Result<u16, ConfigError> {
        let v = self.number(field, default.map(f64::from))?;
        to_u16(v).ok_or_else(|| {
            err(
                Some(self.index),
                Some(field),
                format!("{v} is not an integer in 0..=65535"),
            )
        })
    }

    fn list(&mut self, field: &'static str, lens: &[usize], default: &[f64]) -> Result<Vec<f64>, ConfigError> {
        let Some(v) = self.obj.get(field) else {
            self.note_default(field, || format_list(default));
            return Ok(default.to_vec());
        };
        let arr = v
            .as_array()
            .ok_or_else(|| err(Some(self.index), Some(field), format!("expected a list, found {v}")))?;
        if !lens.contains(&arr.len()) {
            let want = lens.iter().map(usize::to_string).collect::<Vec<_>>().join(" or ");
            return Err(err(
                Some(self.index),
                Some(field),
                format!("expected {want} numbers, found {}", arr.len()),
            ));
        }
        arr.iter()
            .enumerate()
            .map(|(k, x)| {
                x.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                    err(
                        Some(self.index),
                        Some(&format!("{field}[{k}]")),
                        format!("expected a number, found {x}"),
                    )
                })
            })
            .collect()
    }
}

fn format_number(v: f64) -> String {
    format!("{v}")
}

/// `[0;8]` for a list of one repeated value, `[1, 0, 0, 0]` otherwise.
fn format_list(values: &[f64]) -> String {
    match values {
        [first, rest @ ..] if !rest.is_empty() && rest.iter().all(|v| v == first) => {
            format!("[{};{}]", format_number(*first), values.len())
        }
        _ => format!(
            "[{}]",
            values.iter().map(|v| format_number(*v)).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn to_u16(v: f64) -> Option<u16> {
    (v.fract() == 0.0 && (0.0..=65535.0).contains(&v)).then_some(v as u16)
}

fn parse_sensor(
    index: usize,
    value: &Value,
    unit: AngleUnit,
) -> Result<(SensorConfig, Vec<DefaultedField>), ConfigError> {
    let obj = value
        .as_object()
        .ok_or_else(|| err(Some(index), None, "expected an object"))?;
    let mut f = SensorFields {
        index,
        obj,
        defaulted: Vec::new(),
    };
    let type_id = f.u16("TypeID", None)?;
    if SensorKind::from_type_id(type_id).is_none() {
        return Err(err(
            Some(index),
            Some("TypeID"),
            format!("unknown sensor type {type_id}"),
        ));
    }
    let protocol = f.list("SendProtocol", &[8], &[0.0; 8])?;
    let mut send_protocol = [0u16; 8];
    for (k, v) in protocol.iter().enumerate() {
        send_protocol[k] = to_u16(*v).ok_or_else(|| {
            err(
                Some(index),
                Some(&format!("SendProtocol[{k}]")),
                format!("{v} is not an integer in 0..=65535"),
            )
        })?;
    }
    if Transport::from_code(send_protocol[0]).is_none() {
        return Err(err(
            Some(index),
            Some("SendProtocol[0]"),
            format!(
                "unknown transport {} (0 shared memory, 1 UDP, 2 UDP raw, 3 UDP PNG)",
                send_protocol[0]
            ),
        ));
    }
    if let Some(k) = (1..5).find(|&k| send_protocol[k] > 255) {
        return Err(err(
            Some(index),
            Some(&format!("SendProtocol[{k}]")),
            "IPv4 octet above 255",
        ));
    }
    let pos = f.list("SensorPosXYZ", &[3], &[0.0; 3])?;
    let eul = f.list("SensorAngEular", &[3], &[0.0; 3])?;
    let quat = f.list("SensorAngQuat", &[4], &[1.0, 0.0, 0.0, 0.0])?;
    let other = f.list("otherParams", &[8, 16], &[0.0; 16])?;
    let mut other_params = [0f32; 16];
    for (k, v) in other.iter().enumerate() {
        other_params[k] = *v as f32;
    }
    let angles_in_degrees = match unit {
        AngleUnit::Radians => false,
        AngleUnit::Degrees => true,
        AngleUnit::Auto => eul.iter().any(|a| a.abs() > std::f64::consts::TAU),
    };
    let sensor = SensorConfig {
        seq_id: f.u16("SeqID", Some(0))?,
        type_id,
        target_copter: f.u16("TargetCopter", Some(1))?,
        target_mount_type: f.u16("TargetMountType", Some(0))?,
        data_width: f.u16("DataWidth", Some(0))?,
        data_height: f.u16("DataHeight", Some(0))?,
        data_check_freq: f.u16("DataCheckFreq", Some(0))?,
        send_protocol,
        camera_fov_deg: f.number("CameraFOV", Some(90.0))? as f32,
        sensor_pos_xyz: [pos[0] as f32, pos[1] as f32, pos[2] as f32],
        eular_or_quat: f.number("EularOrQuat", Some(0.0))? as f32,
        sensor_ang_eular: [eul[0] as f32, eul[1] as f32, eul[2] as f32],
        sensor_ang_quat: [quat[0] as f32, quat[1] as f32, quat[2] as f32, quat[3] as f32],
        other_params,
        legacy_other_params: other.len() == 8,
        angles_in_degrees,
    };
    // In the SDK's order (a stable sort keeps SensorAngQuat, read after SensorAngEular, next to it).
    let order = |field: &str| {
        let field = if field == "SensorAngQuat" {
            "SensorAngEular"
        } else {
            field
        };
        SDK_REQUIRED_FIELDS.iter().position(|f| *f == field)
    };
    f.defaulted.sort_by_key(|d| order(d.field));
    Ok((sensor, f.defaulted))
}

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
