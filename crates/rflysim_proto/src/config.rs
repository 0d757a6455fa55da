//! RflySim's `Config.json` (spec §1), read as RflySim users already write it:
//! `//`, `/* */` and `#` comments, integers written as floats, 8 or 16
//! `otherParams`, SeqID 0 meaning "previous + 1", port 0 meaning 9999 + SeqID.

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
            _ if self.type_id == 9 => None,
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
        (self.type_id != 9).then(|| 4 * usize::from(w.max(1)) * usize::from(h.max(1)))
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

/// Reads `Config.json` from a file.
pub fn load_config(path: &Path, unit: AngleUnit) -> Result<Vec<SensorConfig>, ConfigError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| err(None, None, format!("cannot read {}: {e}", path.display())))?;
    parse_config(&text, unit).map_err(|mut e| {
        e.message = format!("{} (in {})", e.message, path.display());
        e
    })
}

/// Parses the text of a `Config.json`.
pub fn parse_config(text: &str, unit: AngleUnit) -> Result<Vec<SensorConfig>, ConfigError> {
    let root: Value =
        serde_json::from_str(&strip_comments(text)).map_err(|e| err(None, None, format!("not valid JSON: {e}")))?;
    let sensors = root
        .get("VisionSensors")
        .ok_or_else(|| err(None, Some("VisionSensors"), "missing"))?
        .as_array()
        .ok_or_else(|| err(None, Some("VisionSensors"), "is not a list"))?;
    let mut out: Vec<SensorConfig> = Vec::with_capacity(sensors.len());
    for (i, s) in sensors.iter().enumerate() {
        let mut sensor = parse_sensor(i, s, unit)?;
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
        out.push(sensor);
    }
    Ok(out)
}

struct SensorFields<'a> {
    index: usize,
    obj: &'a serde_json::Map<String, Value>,
}

impl SensorFields<'_> {
    fn number(&self, field: &str, default: Option<f64>) -> Result<f64, ConfigError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => default.ok_or_else(|| err(Some(self.index), Some(field), "missing")),
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite())
                .ok_or_else(|| err(Some(self.index), Some(field), format!("expected a number, found {v}"))),
        }
    }

    fn u16(&self, field: &str, default: Option<u16>) -> Result<u16, ConfigError> {
        let v = self.number(field, default.map(f64::from))?;
        to_u16(v).ok_or_else(|| {
            err(
                Some(self.index),
                Some(field),
                format!("{v} is not an integer in 0..=65535"),
            )
        })
    }

    fn list(&self, field: &str, lens: &[usize], default: &[f64]) -> Result<Vec<f64>, ConfigError> {
        let Some(v) = self.obj.get(field) else {
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

fn to_u16(v: f64) -> Option<u16> {
    (v.fract() == 0.0 && (0.0..=65535.0).contains(&v)).then_some(v as u16)
}

fn parse_sensor(index: usize, value: &Value, unit: AngleUnit) -> Result<SensorConfig, ConfigError> {
    let obj = value
        .as_object()
        .ok_or_else(|| err(Some(index), None, "expected an object"))?;
    let f = SensorFields { index, obj };
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
    let seq_id = f.u16("SeqID", Some(0))?;
    Ok(SensorConfig {
        seq_id,
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
    })
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
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
    // RflySim Config.json, as users write them
    {
      "VisionSensors": [
        {
          "SeqID": 0, "TypeID": 1, "TargetCopter": 1, "TargetMountType": 0,
          "DataWidth": 640, "DataHeight": 480, "DataCheckFreq": 30,
          "SendProtocol": [2, 127, 0, 0, 1, 0, 0, 0],   # raw UDP to this host
          "CameraFOV": 90, "SensorPosXYZ": [0.3, 0, 0], "EularOrQuat": 0,
          "SensorAngEular": [0, 0, 0], "SensorAngQuat": [1, 0, 0, 0],
          "otherParams": [0, 0, 0, 0, 0, 0, 0, 0]
        },
        /* a LiDAR, SeqID auto-incremented */
        {
          "SeqID": 0, "TypeID": 20, "DataWidth": 360.0, "DataHeight": 16,
          "DataCheckFreq": 0, "SendProtocol": [1, 0, 0, 0, 0, 20100, 0, 0],
          "EularOrQuat": 1, "SensorAngQuat": [0.6, 0, 0, 0.8],
          "otherParams": [50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
          "SensorAngEular": [0, 90, 0], "note": "url://not-a-comment#really"
        },
        { "SeqID": 7, "TypeID": 23, "SendProtocol": [0, 0, 0, 0, 0, 0, 0, 0] }
      ]
    }"#;

    #[test]
    fn reads_the_example_with_comments_defaults_and_auto_increment() {
        let s = parse_config(EXAMPLE, AngleUnit::Auto).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].seq_id, s[1].seq_id, s[2].seq_id), (0, 1, 7));
        assert_eq!(s[0].udp_port(), 9999);
        assert_eq!(s[1].udp_port(), 20100);
        assert_eq!(s[2].udp_port(), 10006);
        assert_eq!(s[0].receiver_ip(), Ipv4Addr::LOCALHOST);
        assert_eq!(s[0].transport(), Some(Transport::UdpRaw));
        assert_eq!(s[2].transport(), Some(Transport::SharedMemory));
        assert_eq!(s[0].rate_hz(), 30.0);
        assert_eq!(s[1].rate_hz(), 30.0);
        assert!(s[0].legacy_other_params && !s[1].legacy_other_params);
        assert_eq!(s[1].lidar_max_range(), 50.0);
        assert_eq!(s[1].other_params[15], 1.0);
        assert_eq!(s[1].data_width, 360);
        assert_eq!(s[2].size(), (64, 272));
        assert_eq!(s[2].shm_name(), "RflySim3DImg_7");
        assert_eq!(s[0].sensor_pos_xyz, [0.3, 0.0, 0.0]);
    }

    #[test]
    fn quaternion_and_euler_mounts() {
        let s = parse_config(EXAMPLE, AngleUnit::Auto).unwrap();
        assert_eq!(s[0].mount_attitude(), MountAttitude::Euler([0.0; 3]));
        match s[1].mount_attitude() {
            MountAttitude::Quaternion(q) => {
                assert!((q[0] - 0.6).abs() < 1e-6 && (q[3] - 0.8).abs() < 1e-6)
            }
            other => panic!("{other:?}"),
        }
        // 90 > 2π: the file is in degrees.
        assert!(s[1].angles_in_degrees);
        assert!((s[1].mount_euler_rad()[1] - std::f64::consts::FRAC_PI_2).abs() < 1e-9);
        let radians = parse_config(EXAMPLE, AngleUnit::Radians).unwrap();
        assert_eq!(radians[1].mount_euler_rad()[1], 90.0);
    }

    #[test]
    fn errors_name_the_sensor_and_the_field() {
        let bad = |text: &str| parse_config(text, AngleUnit::Auto).unwrap_err().to_string();
        assert_eq!(
            bad(r#"{"VisionSensors":[{"TypeID":1},{"TypeID":"x"}]}"#),
            "VisionSensors[1].TypeID: expected a number, found \"x\""
        );
        assert_eq!(
            bad(r#"{"VisionSensors":[{"TypeID":1,"otherParams":[1,2,3]}]}"#),
            "VisionSensors[0].otherParams: expected 8 or 16 numbers, found 3"
        );
        assert_eq!(
            bad(r#"{"VisionSensors":[{"TypeID":99}]}"#),
            "VisionSensors[0].TypeID: unknown sensor type 99"
        );
        assert_eq!(
            bad(r#"{"VisionSensors":[{"TypeID":1,"SendProtocol":[9,0,0,0,0,0,0,0]}]}"#),
            "VisionSensors[0].SendProtocol[0]: unknown transport 9 (0 shared memory, 1 UDP, 2 UDP raw, 3 UDP PNG)"
        );
        assert_eq!(
            bad(r#"{"VisionSensors":[{"TypeID":1,"DataWidth":-3}]}"#),
            "VisionSensors[0].DataWidth: -3 is not an integer in 0..=65535"
        );
        assert_eq!(
            bad(r#"{"VisionSensors":[{"TypeID":1,"SeqID":2},{"TypeID":1,"SeqID":2}]}"#),
            "VisionSensors[1].SeqID: SeqID 2 is already used by VisionSensors[0]"
        );
        assert_eq!(bad(r#"{"Sensors":[]}"#), "VisionSensors: missing");
        assert!(bad("{").starts_with("not valid JSON"));
    }

    #[test]
    fn comments_inside_strings_are_kept() {
        assert_eq!(strip_comments("{\"a\":\"x//y#z\"} // c"), "{\"a\":\"x//y#z\"} ");
        assert_eq!(strip_comments("1 /* a\nb */ 2"), "1 \n  2");
        assert_eq!(strip_comments("\"q\\\"#\" # c\n3"), "\"q\\\"#\" \n3");
    }

    #[test]
    fn sensors_sharing_a_udp_port_are_reported() {
        let cfg = parse_config(
            r#"{"VisionSensors":[
                {"SeqID":1,"TypeID":1,"SendProtocol":[1,0,0,0,0,0,0,0]},
                {"SeqID":2,"TypeID":1,"SendProtocol":[1,0,0,0,0,10000,0,0]},
                {"SeqID":3,"TypeID":1,"SendProtocol":[0,0,0,0,0,10000,0,0]},
                {"SeqID":4,"TypeID":1,"SendProtocol":[2,0,0,0,0,0,0,0]}]}"#,
            AngleUnit::Auto,
        )
        .unwrap();
        // 1 → 9999 + 1 = 10000 = 2's port; 3 is shared memory; 4 → 10003.
        assert_eq!(udp_port_clashes(&cfg), vec!["sensors 1 and 2 both use UDP port 10000"]);
        assert!(udp_port_clashes(&cfg[2..]).is_empty());
    }

    #[test]
    fn frame_bounds_follow_the_configured_size() {
        let cfg = parse_config(
            r#"{"VisionSensors":[
                {"SeqID":1,"TypeID":1,"DataWidth":640,"DataHeight":480,"SendProtocol":[2,0,0,0,0,0,0,0]},
                {"SeqID":2,"TypeID":1,"DataWidth":640,"DataHeight":480,"SendProtocol":[1,0,0,0,0,0,0,0]},
                {"SeqID":3,"TypeID":20,"DataWidth":100,"DataHeight":16,"SendProtocol":[1,0,0,0,0,0,0,0]},
                {"SeqID":4,"TypeID":9,"DataWidth":640,"DataHeight":480,"SendProtocol":[2,0,0,0,0,0,0,0]},
                {"SeqID":5,"TypeID":5,"SendProtocol":[1,0,0,0,0,0,0,0]}]}"#,
            AngleUnit::Auto,
        )
        .unwrap();
        let bounds: Vec<Option<usize>> = cfg.iter().map(SensorConfig::max_frame_len).collect();
        assert_eq!(
            bounds,
            vec![
                Some(640 * 480 * 3),
                Some((64 << 10) + 640 * 480 * 6),
                Some(36 + 16 * 1600),
                None,
                Some(56)
            ]
        );
        assert_eq!(cfg[0].max_image_pixels(), Some(4 * 640 * 480));
        assert_eq!(cfg[3].max_image_pixels(), None);
    }
}
