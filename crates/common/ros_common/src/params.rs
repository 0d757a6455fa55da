//! ROS 2 parameters (`--ros-args -p name:=value`, launch files, YAML) with
//! defaults. One policy for every parameter: a value of the wrong type, out
//! of its range or not one of its choices is an error that names the
//! parameter, at start; nothing is clamped or replaced by the default.
//!
//! A parameter is declared once, as a constant holding its name, default and
//! range ([`IntParam`], [`FloatParam`], [`BoolParam`], [`ChoiceParam`]), so
//! that the code that reads it, a `Default` and a check of the example YAML
//! all use the same default.
//!
//! Every parameter read is noted with its default: with
//! `RFLYSIM_BRIDGE_WRITE_PARAMETERS=<file>` in its environment, a bridge
//! writes them as a ROS 2 parameters file once it has read them and exits
//! (what `config/<bridge>.yaml` is checked against).
//!
//! r2r's `RosParams` derive (0.9.7) is not used: it has no array parameters
//! (`copter_ids`, `allowed_senders`), no ranges (its `Parameter` has a TODO for
//! min and max), refuses `-p x:=1` for a float, names nested fields with dots
//! (which would rename parameters users set today), and keeps the struct
//! writable at run time through `ros2 param set` although the bridges read
//! their settings once, at start.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::ops::RangeInclusive;
use std::sync::Mutex;

use r2r::{Error, Node, ParameterValue, WrongParameterType};

/// The environment variable naming the file a bridge writes its parameters to.
pub const WRITE_PARAMETERS_ENV: &str = "RFLYSIM_BRIDGE_WRITE_PARAMETERS";

/// Every parameter read so far and its default, as YAML.
static READ: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

/// A default as a YAML value of the type `-p`/YAML gives the parameter.
pub trait YamlDefault {
    fn yaml(&self) -> String;
}

impl YamlDefault for i64 {
    fn yaml(&self) -> String {
        self.to_string()
    }
}

impl YamlDefault for f64 {
    fn yaml(&self) -> String {
        // A float must read back as one: 1.0, not 1; 1.0e-6, not 1e-6.
        let s = format!("{self:?}");
        match s.split_once('e') {
            Some((m, e)) if !m.contains('.') => format!("{m}.0e{e}"),
            _ => s,
        }
    }
}

impl YamlDefault for bool {
    fn yaml(&self) -> String {
        self.to_string()
    }
}

impl YamlDefault for String {
    fn yaml(&self) -> String {
        format!("{self:?}")
    }
}

impl<T: YamlDefault> YamlDefault for Vec<T> {
    fn yaml(&self) -> String {
        format!("[{}]", self.iter().map(T::yaml).collect::<Vec<_>>().join(", "))
    }
}

fn note(name: &str, default: &impl YamlDefault) {
    if let Ok(mut read) = READ.lock() {
        read.entry(name.to_string()).or_insert_with(|| default.yaml());
    }
}

/// The parameters read so far, with their defaults, as a ROS 2 parameters file.
pub fn parameters_file(node_name: &str) -> String {
    let read = READ.lock().map(|r| r.clone()).unwrap_or_default();
    let mut out = format!("# Every parameter of {node_name}, at its default.\n/**:\n  ros__parameters:\n");
    for (name, value) in read {
        // An empty list has no type a parameters file can say: shown, commented out.
        let comment = if value == "[]" { "# " } else { "" };
        out.push_str(&format!("    {comment}{name}: {value}\n"));
    }
    out
}

/// With [`WRITE_PARAMETERS_ENV`] set: writes [`parameters_file`] there; true
/// when the process should stop now.
pub fn write_parameters_if_asked(node_name: &str) -> Result<bool, String> {
    let Some(path) = std::env::var_os(WRITE_PARAMETERS_ENV) else {
        return Ok(false);
    };
    std::fs::write(&path, parameters_file(node_name))
        .map_err(|e| format!("{WRITE_PARAMETERS_ENV}={}: {e}", path.to_string_lossy()))?;
    Ok(true)
}

fn get<T: YamlDefault>(node: &Node, name: &str, default: T) -> Result<T, Error>
where
    ParameterValue: TryInto<Option<T>, Error = WrongParameterType>,
{
    note(name, &default);
    Ok(node.get_parameter::<Option<T>>(name)?.unwrap_or(default))
}

pub fn int(node: &Node, name: &str, default: i64) -> Result<i64, Error> {
    get(node, name, default)
}

pub fn float(node: &Node, name: &str, default: f64) -> Result<f64, Error> {
    note(name, &default);
    // `-p x:=1` arrives as an integer; accept it where a float is wanted.
    match node.get_parameter::<Option<i64>>(name) {
        Ok(Some(v)) => Ok(v as f64),
        _ => get(node, name, default),
    }
}

pub fn boolean(node: &Node, name: &str, default: bool) -> Result<bool, Error> {
    get(node, name, default)
}

pub fn string(node: &Node, name: &str, default: &str) -> Result<String, Error> {
    get(node, name, default.to_string())
}

pub fn int_array(node: &Node, name: &str, default: &[i64]) -> Result<Vec<i64>, Error> {
    get(node, name, default.to_vec())
}

pub fn string_array(node: &Node, name: &str, default: &[&str]) -> Result<Vec<String>, Error> {
    get(node, name, default.iter().map(|s| s.to_string()).collect())
}

/// The error of a parameter: `parameter <name>: <why>`.
pub fn invalid(name: &str, why: impl Display) -> String {
    format!("parameter {name}: {why}")
}

/// An r2r error (wrong type) as a parameter error.
fn named(name: &str) -> impl Fn(Error) -> String + '_ {
    move |e| invalid(name, e)
}

/// An integer parameter: its name, default and the values accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntParam {
    pub name: &'static str,
    pub default: i64,
    pub range: RangeInclusive<i64>,
}

impl IntParam {
    pub const fn new(name: &'static str, default: i64, range: RangeInclusive<i64>) -> Self {
        Self { name, default, range }
    }

    /// `value` if it is in range and fits `T`, else an error naming the parameter.
    pub fn check<T: TryFrom<i64>>(&self, value: i64) -> Result<T, String> {
        if !self.range.contains(&value) {
            return Err(invalid(
                self.name,
                format!("{value} is outside {}..={}", self.range.start(), self.range.end()),
            ));
        }
        T::try_from(value).map_err(|_| invalid(self.name, format!("{value} does not fit")))
    }

    /// The default, as `T` (a default outside its own range is a programming error).
    pub fn default_as<T: TryFrom<i64>>(&self) -> T {
        self.check(self.default).unwrap_or_else(|e| panic!("default of {e}"))
    }

    pub fn read<T: TryFrom<i64>>(&self, node: &Node) -> Result<T, String> {
        self.check(int(node, self.name, self.default).map_err(named(self.name))?)
    }
}

/// A floating-point parameter: its name, default and the values accepted
/// (NaN never is).
#[derive(Debug, Clone, PartialEq)]
pub struct FloatParam {
    pub name: &'static str,
    pub default: f64,
    pub range: RangeInclusive<f64>,
}

impl FloatParam {
    pub const fn new(name: &'static str, default: f64, range: RangeInclusive<f64>) -> Self {
        Self { name, default, range }
    }

    pub fn check(&self, value: f64) -> Result<f64, String> {
        let (start, end) = (*self.range.start(), *self.range.end());
        if self.range.contains(&value) {
            Ok(value)
        } else if end == f64::MAX {
            Err(invalid(self.name, format!("{value} is not a finite number ≥ {start}")))
        } else {
            Err(invalid(self.name, format!("{value} is outside {start}..={end}")))
        }
    }

    pub fn read(&self, node: &Node) -> Result<f64, String> {
        self.check(float(node, self.name, self.default).map_err(named(self.name))?)
    }
}

/// A boolean parameter and its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoolParam {
    pub name: &'static str,
    pub default: bool,
}

impl BoolParam {
    pub const fn new(name: &'static str, default: bool) -> Self {
        Self { name, default }
    }

    pub fn read(&self, node: &Node) -> Result<bool, String> {
        boolean(node, self.name, self.default).map_err(named(self.name))
    }
}

/// A string parameter and its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StringParam {
    pub name: &'static str,
    pub default: &'static str,
}

impl StringParam {
    pub const fn new(name: &'static str, default: &'static str) -> Self {
        Self { name, default }
    }

    pub fn read(&self, node: &Node) -> Result<String, String> {
        string(node, self.name, self.default).map_err(named(self.name))
    }
}

/// A port: 1..=65535.
pub const fn port(name: &'static str, default: u16) -> IntParam {
    IntParam::new(name, default as i64, 1..=65_535)
}

/// A duration in seconds, in `range`.
impl FloatParam {
    pub fn read_duration(&self, node: &Node) -> Result<std::time::Duration, String> {
        Ok(std::time::Duration::from_secs_f64(self.read(node)?))
    }
}

/// The parameters every bridge that has them reads alike: one name, one
/// meaning, one default, one range.
pub mod shared {
    use super::{invalid, BoolParam, FloatParam, IntParam};

    /// History of the publishers.
    pub const QOS_DEPTH: IntParam = IntParam::new("qos_depth", crate::qos::DEFAULT_SENSOR_DEPTH as i64, 1..=1000);
    pub const DIAGNOSTICS_PERIOD: FloatParam = FloatParam::new("diagnostics_period", 1.0, 0.05..=60.0);
    pub const PUBLISH_TF: BoolParam = BoolParam::new("publish_tf", true);
    pub const USE_SIM_TIME: BoolParam = BoolParam::new("use_sim_time", false);
    /// Silence after which the neutral command is sent.
    pub const CMD_TIMEOUT: FloatParam = FloatParam::new("cmd_timeout", crate::command::DEFAULT_TIMEOUT_S, 0.01..=60.0);
    /// Decode compressed images (JPEG, PNG) while nobody subscribes to the raw topic too.
    pub const DECODE_IMAGES_ALWAYS: BoolParam = BoolParam::new("decode_images_always", false);
    /// Its former name, still read, with a warning.
    pub const DECODE_IMAGES_ALWAYS_FORMER: &str = "decode_jpeg_always";
    /// A `cmd_vel` gain.
    pub const fn gain(name: &'static str, default: f64) -> FloatParam {
        FloatParam::new(name, default, -1e6..=1e6)
    }

    /// `decode_images_always`, or its former name with a warning in the log;
    /// both, disagreeing: an error.
    pub fn decode_images_always(node: &r2r::Node) -> Result<bool, String> {
        let former = node
            .get_parameter::<Option<bool>>(DECODE_IMAGES_ALWAYS_FORMER)
            .map_err(|e| invalid(DECODE_IMAGES_ALWAYS_FORMER, e))?;
        let set = node
            .get_parameter::<Option<bool>>(DECODE_IMAGES_ALWAYS.name)
            .map_err(|e| invalid(DECODE_IMAGES_ALWAYS.name, e))?;
        let value = DECODE_IMAGES_ALWAYS.read(node)?;
        match (set, former) {
            (Some(new), Some(old)) if new != old => Err(invalid(
                DECODE_IMAGES_ALWAYS_FORMER,
                format!(
                    "{old} contradicts {} {new}; set only the latter",
                    DECODE_IMAGES_ALWAYS.name
                ),
            )),
            (None, Some(old)) => {
                r2r::log_warn!(
                    node.logger(),
                    "parameter {DECODE_IMAGES_ALWAYS_FORMER} is deprecated: it is now {}",
                    DECODE_IMAGES_ALWAYS.name
                );
                Ok(old)
            }
            _ => Ok(value),
        }
    }
}

/// A string parameter naming one of a few choices (the first name of a
/// choice is the one the documentation uses; the others are synonyms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChoiceParam<T: 'static> {
    pub name: &'static str,
    pub default: &'static str,
    pub choices: &'static [(&'static str, T)],
}

impl<T: Copy> ChoiceParam<T> {
    pub const fn new(name: &'static str, default: &'static str, choices: &'static [(&'static str, T)]) -> Self {
        Self { name, default, choices }
    }

    pub fn check(&self, value: &str) -> Result<T, String> {
        self.choices
            .iter()
            .find(|(n, _)| *n == value)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                let names: Vec<&str> = self.choices.iter().map(|(n, _)| *n).collect();
                invalid(self.name, format!("{value:?} is not one of {}", names.join(", ")))
            })
    }

    pub fn read(&self, node: &Node) -> Result<T, String> {
        self.check(&string(node, self.name, self.default).map_err(named(self.name))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_is_an_error_naming_the_parameter() {
        let p = IntParam::new("imu_rate_hz", 200, 1..=1000);
        assert_eq!(p.check::<u16>(1000), Ok(1000));
        assert_eq!(
            p.check::<u16>(0),
            Err("parameter imu_rate_hz: 0 is outside 1..=1000".into())
        );
        assert_eq!(p.default_as::<u16>(), 200);
        let wide = IntParam::new("window", 0, -1..=70_000);
        assert_eq!(wide.check::<u16>(-1), Err("parameter window: -1 does not fit".into()));
        let f = FloatParam::new("diagnostics_period", 1.0, 0.05..=60.0);
        assert_eq!(f.check(0.05), Ok(0.05));
        assert!(f
            .check(f64::NAN)
            .unwrap_err()
            .starts_with("parameter diagnostics_period: NaN"));
        assert!(f.check(61.0).is_err());
        let variance = FloatParam::new("v", 1e-6, 0.0..=f64::MAX);
        assert_eq!(
            variance.check(-1.0),
            Err("parameter v: -1 is not a finite number ≥ 0".into())
        );
        assert!(variance.check(f64::INFINITY).is_err());
    }

    #[test]
    fn a_choice_is_one_of_its_names() {
        const UNITS: ChoiceParam<u8> = ChoiceParam::new("unit", "rad", &[("rad", 0), ("radians", 0), ("deg", 1)]);
        assert_eq!(UNITS.check("radians"), Ok(0));
        assert_eq!(UNITS.check("deg"), Ok(1));
        assert_eq!(
            UNITS.check("grad"),
            Err("parameter unit: \"grad\" is not one of rad, radians, deg".into())
        );
    }
}
