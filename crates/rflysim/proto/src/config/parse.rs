//! Reading `Config.json` as RflySim users write it: comments stripped,
//! numbers read leniently, SeqID and port defaults applied, and the fields the
//! SDK would have refused for being absent defaulted and reported.

use std::fmt;
use std::path::Path;

use serde_json::Value;

use super::{err, AngleUnit, ConfigError, SensorConfig};
use crate::sensor::{SensorKind, Transport};

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

pub(super) fn format_number(v: f64) -> String {
    format!("{v}")
}

/// `[0;8]` for a list of one repeated value, `[1, 0, 0, 0]` otherwise.
pub(super) fn format_list(values: &[f64]) -> String {
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
