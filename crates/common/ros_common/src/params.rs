//! ROS 2 parameters (`--ros-args -p name:=value`, launch files, YAML) with
//! defaults. One policy for every parameter: a value of the wrong type, out
//! of its range or not one of its choices is an error that names the
//! parameter, at start; nothing is clamped or replaced by the default.
//!
//! A parameter is declared once, as a constant holding its name, default,
//! range and a one-line description ([`IntParam`], [`FloatParam`],
//! [`BoolParam`], [`StringParam`], [`ChoiceParam`], [`IntListParam`],
//! [`StringListParam`]), so that the code that reads it, a `Default`, the
//! example YAML and the documentation's tables all say the same. Names carry
//! their unit (`_s`, `_ms`, `_hz`, `_deg`, `_m`, `_bytes`).
//!
//! Every parameter read is noted: with `RFLYSIM_BRIDGE_WRITE_PARAMETERS=<file>`
//! in its environment an executable writes them, at their defaults, as a
//! ROS 2 parameters file once it has read them, and with
//! `RFLYSIM_BRIDGE_WRITE_PARAMETER_TABLE=<file>` as a Markdown table, then
//! exits (what `config/<bridge>.yaml` and `docs/parameters.md` are checked
//! against).
//!
//! A renamed parameter keeps working under its former name ([`Renamed`],
//! [`apply_renamed`]): its value is read under the new name, with a warning.
//!
//! r2r's `RosParams` derive (0.9.7) is not used: it has no array parameters
//! (`vehicle_ids`, `allowed_senders`), no ranges (its `Parameter` has a TODO
//! for min and max), refuses `-p x:=1` for a float, names nested fields with
//! dots (which would rename parameters users set today), and keeps the struct
//! writable at run time through `ros2 param set` although the bridges read
//! their settings once, at start.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::ops::RangeInclusive;
use std::sync::Mutex;

use r2r::{Error, Node, ParameterValue, WrongParameterType};

/// The environment variable naming the file an executable writes its parameters to.
pub const WRITE_PARAMETERS_ENV: &str = "RFLYSIM_BRIDGE_WRITE_PARAMETERS";
/// The environment variable naming the file an executable writes its parameter table to.
pub const WRITE_PARAMETER_TABLE_ENV: &str = "RFLYSIM_BRIDGE_WRITE_PARAMETER_TABLE";

/// One parameter read, as the parameters file and the table show it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Noted {
    /// The default as YAML.
    default: String,
    kind: &'static str,
    /// The values accepted, for the table ("" when any value of the type is).
    accepted: String,
    description: &'static str,
}

/// Every parameter read so far.
static READ: Mutex<BTreeMap<String, Noted>> = Mutex::new(BTreeMap::new());
/// Every former name of a parameter this executable knows: old → (new, conversion).
static FORMER: Mutex<BTreeMap<&'static str, (&'static str, Conversion)>> = Mutex::new(BTreeMap::new());

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

fn note(name: &str, default: &impl YamlDefault, kind: &'static str, accepted: String, description: &'static str) {
    if let Ok(mut read) = READ.lock() {
        read.entry(name.to_string()).or_insert_with(|| Noted {
            default: default.yaml(),
            kind,
            accepted,
            description,
        });
    }
}

/// The parameters read so far, with their defaults, as a ROS 2 parameters file.
pub fn parameters_file(node_name: &str) -> String {
    let read = READ.lock().map(|r| r.clone()).unwrap_or_default();
    let mut out = format!("# Every parameter of {node_name}, at its default.\n/**:\n  ros__parameters:\n");
    for (name, noted) in read {
        // An empty list has no type a parameters file can say: shown, commented out.
        let comment = if noted.default == "[]" { "# " } else { "" };
        out.push_str(&format!("    {comment}{name}: {}\n", noted.default));
    }
    out
}

/// `16777216` as `16 MiB`: sizes in bytes read at a glance.
fn binary_size(bytes: i64) -> Option<String> {
    let units = [("GiB", 1i64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    units
        .iter()
        .find(|(_, size)| bytes >= *size && bytes % size == 0)
        .map(|(unit, size)| format!("{} {unit}", bytes / size))
}

/// A value of a `_bytes` parameter as the table shows it.
fn shown_int(name: &str, value: i64) -> String {
    match binary_size(value) {
        Some(size) if name.ends_with("_bytes") => size,
        _ => value.to_string(),
    }
}

/// A table cell: `|` would end it.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The parameters read so far as a Markdown table (name, type, default, the
/// values accepted, what it does), then the former names still read.
pub fn parameter_table() -> String {
    let read = READ.lock().map(|r| r.clone()).unwrap_or_default();
    let mut out = String::from("| parameter | type | default | accepted | description |\n|---|---|---|---|---|\n");
    for (name, noted) in &read {
        let default = match noted.default.parse::<i64>() {
            Ok(v) if name.ends_with("_bytes") => shown_int(name, v),
            _ => noted.default.clone(),
        };
        out.push_str(&format!(
            "| `{name}` | {} | `{}` | {} | {} |\n",
            noted.kind,
            cell(&default),
            cell(&noted.accepted),
            cell(noted.description)
        ));
    }
    let former = FORMER.lock().map(|f| f.clone()).unwrap_or_default();
    let former: Vec<_> = former.iter().filter(|(_, (new, _))| read.contains_key(*new)).collect();
    if !former.is_empty() {
        out.push_str("\nFormer names, still read (with a warning):\n\n| former name | now |\n|---|---|\n");
        for (old, (new, conversion)) in former {
            let now = match conversion {
                Conversion::Same => format!("`{new}`"),
                Conversion::RadiansToDegrees => format!("`{new}` (the value in radians, converted)"),
                Conversion::HostAndPort { port } => format!("`{new}` and `{port}` (`host:port` split)"),
            };
            out.push_str(&format!("| `{old}` | {now} |\n"));
        }
    }
    out
}

/// With [`WRITE_PARAMETERS_ENV`] or [`WRITE_PARAMETER_TABLE_ENV`] set: writes
/// [`parameters_file`] or [`parameter_table`] there; true when the process
/// should stop now.
pub fn write_parameters_if_asked(node_name: &str) -> Result<bool, String> {
    let mut asked = false;
    for (env, text) in [
        (WRITE_PARAMETERS_ENV, parameters_file as fn(&str) -> String),
        (WRITE_PARAMETER_TABLE_ENV, |_: &str| parameter_table()),
    ] {
        if let Some(path) = std::env::var_os(env) {
            std::fs::write(&path, text(node_name)).map_err(|e| format!("{env}={}: {e}", path.to_string_lossy()))?;
            asked = true;
        }
    }
    Ok(asked)
}

fn get<T>(node: &Node, name: &str, default: T) -> Result<T, Error>
where
    ParameterValue: TryInto<Option<T>, Error = WrongParameterType>,
{
    Ok(node.get_parameter::<Option<T>>(name)?.unwrap_or(default))
}

fn get_float(node: &Node, name: &str, default: f64) -> Result<f64, Error> {
    // `-p x:=1` arrives as an integer; accept it where a float is wanted.
    match node.get_parameter::<Option<i64>>(name) {
        Ok(Some(v)) => Ok(v as f64),
        _ => get(node, name, default),
    }
}

/// The error of a parameter: `parameter <name>: <why>`.
pub fn invalid(name: &str, why: impl Display) -> String {
    format!("parameter {name}: {why}")
}

/// An r2r error (wrong type) as a parameter error.
fn named(name: &str) -> impl Fn(Error) -> String + '_ {
    move |e| invalid(name, e)
}

/// A bound of a float range as the table shows it.
fn bound(v: f64) -> String {
    if v.abs() >= 1e5 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// An integer parameter: its name, default, the values accepted and what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntParam {
    pub name: &'static str,
    pub default: i64,
    pub range: RangeInclusive<i64>,
    pub description: &'static str,
}

impl IntParam {
    pub const fn new(name: &'static str, default: i64, range: RangeInclusive<i64>, description: &'static str) -> Self {
        Self {
            name,
            default,
            range,
            description,
        }
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
        let accepted = format!(
            "{} – {}",
            shown_int(self.name, *self.range.start()),
            shown_int(self.name, *self.range.end())
        );
        note(self.name, &self.default, "int", accepted, self.description);
        self.check(get(node, self.name, self.default).map_err(named(self.name))?)
    }
}

/// A floating-point parameter: its name, default, the values accepted (NaN
/// never is) and what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct FloatParam {
    pub name: &'static str,
    pub default: f64,
    pub range: RangeInclusive<f64>,
    pub description: &'static str,
}

impl FloatParam {
    pub const fn new(name: &'static str, default: f64, range: RangeInclusive<f64>, description: &'static str) -> Self {
        Self {
            name,
            default,
            range,
            description,
        }
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
        let (start, end) = (*self.range.start(), *self.range.end());
        let accepted = if end == f64::MAX {
            format!("≥ {}", bound(start))
        } else {
            format!("{} – {}", bound(start), bound(end))
        };
        note(self.name, &self.default, "float", accepted, self.description);
        self.check(get_float(node, self.name, self.default).map_err(named(self.name))?)
    }

    /// A duration in seconds.
    pub fn read_duration(&self, node: &Node) -> Result<std::time::Duration, String> {
        Ok(std::time::Duration::from_secs_f64(self.read(node)?))
    }
}

/// A boolean parameter, its default and what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoolParam {
    pub name: &'static str,
    pub default: bool,
    pub description: &'static str,
}

impl BoolParam {
    pub const fn new(name: &'static str, default: bool, description: &'static str) -> Self {
        Self {
            name,
            default,
            description,
        }
    }

    pub fn read(&self, node: &Node) -> Result<bool, String> {
        note(self.name, &self.default, "bool", String::new(), self.description);
        get(node, self.name, self.default).map_err(named(self.name))
    }
}

/// A string parameter, its default and what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StringParam {
    pub name: &'static str,
    pub default: &'static str,
    pub description: &'static str,
}

impl StringParam {
    pub const fn new(name: &'static str, default: &'static str, description: &'static str) -> Self {
        Self {
            name,
            default,
            description,
        }
    }

    pub fn read(&self, node: &Node) -> Result<String, String> {
        note(
            self.name,
            &self.default.to_string(),
            "string",
            String::new(),
            self.description,
        );
        get(node, self.name, self.default.to_string()).map_err(named(self.name))
    }
}

/// A list of integers, its default and what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntListParam {
    pub name: &'static str,
    pub default: &'static [i64],
    pub description: &'static str,
}

impl IntListParam {
    pub const fn new(name: &'static str, default: &'static [i64], description: &'static str) -> Self {
        Self {
            name,
            default,
            description,
        }
    }

    pub fn read(&self, node: &Node) -> Result<Vec<i64>, String> {
        note(
            self.name,
            &self.default.to_vec(),
            "int[]",
            String::new(),
            self.description,
        );
        get(node, self.name, self.default.to_vec()).map_err(named(self.name))
    }
}

/// A list of strings, its default and what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StringListParam {
    pub name: &'static str,
    pub default: &'static [&'static str],
    pub description: &'static str,
}

impl StringListParam {
    pub const fn new(name: &'static str, default: &'static [&'static str], description: &'static str) -> Self {
        Self {
            name,
            default,
            description,
        }
    }

    pub fn read(&self, node: &Node) -> Result<Vec<String>, String> {
        let default: Vec<String> = self.default.iter().map(|s| s.to_string()).collect();
        note(self.name, &default, "string[]", String::new(), self.description);
        get(node, self.name, default).map_err(named(self.name))
    }
}

/// A port: 1..=65535.
pub const fn port(name: &'static str, default: u16, description: &'static str) -> IntParam {
    IntParam::new(name, default as i64, 1..=65_535, description)
}

/// A string parameter naming one of a few choices; `former` spellings
/// (old → current) are still read, with a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChoiceParam<T: 'static> {
    pub name: &'static str,
    pub default: &'static str,
    pub choices: &'static [(&'static str, T)],
    pub former: &'static [(&'static str, &'static str)],
    pub description: &'static str,
}

impl<T: Copy> ChoiceParam<T> {
    pub const fn new(
        name: &'static str,
        default: &'static str,
        choices: &'static [(&'static str, T)],
        description: &'static str,
    ) -> Self {
        Self {
            name,
            default,
            choices,
            former: &[],
            description,
        }
    }

    /// The same, reading `former` spellings (old → current) with a warning.
    pub const fn with_former(self, former: &'static [(&'static str, &'static str)]) -> Self {
        Self { former, ..self }
    }

    pub fn check(&self, value: &str) -> Result<T, String> {
        self.choices
            .iter()
            .find(|(n, _)| *n == value)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                invalid(
                    self.name,
                    format!("{value:?} is not one of {}", self.names().join(", ")),
                )
            })
    }

    fn names(&self) -> Vec<&'static str> {
        self.choices.iter().map(|(n, _)| *n).collect()
    }

    /// `value`'s current spelling, and the warning a former spelling earns.
    pub fn current<'a>(&self, value: &'a str) -> (&'a str, Option<String>) {
        match self.former.iter().find(|(old, _)| *old == value) {
            Some((old, new)) => (
                new,
                Some(format!(
                    "parameter `{}`: `{old}` is now spelled `{new}`; the old spelling still works",
                    self.name
                )),
            ),
            None => (value, None),
        }
    }

    pub fn read(&self, node: &Node) -> Result<T, String> {
        let accepted = self
            .names()
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        note(
            self.name,
            &self.default.to_string(),
            "string",
            accepted,
            self.description,
        );
        let value = get(node, self.name, self.default.to_string()).map_err(named(self.name))?;
        let (value, warning) = self.current(&value);
        if let Some(warning) = warning {
            r2r::log_warn!(node.logger(), "{warning}");
        }
        self.check(value)
    }
}

/// How a renamed parameter's old value reads under its new name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conversion {
    /// As it is.
    Same,
    /// Radians then, degrees now.
    RadiansToDegrees,
    /// `host:port[,host:port…]` then; the hosts (comma-separated) under the
    /// new name now, and their one port under this parameter.
    HostAndPort { port: &'static str },
}

/// A parameter's former name: a value given under it is read under the new
/// one, with a warning at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Renamed {
    pub old: &'static str,
    pub new: &'static str,
    pub conversion: Conversion,
}

impl Renamed {
    pub const fn new(old: &'static str, new: &'static str) -> Self {
        Self {
            old,
            new,
            conversion: Conversion::Same,
        }
    }

    /// `host:port` list that is now a host (list) and a port parameter.
    pub const fn host_and_port(old: &'static str, host: &'static str, port: &'static str) -> Self {
        Self {
            old,
            new: host,
            conversion: Conversion::HostAndPort { port },
        }
    }

    /// An angle that was in radians and is now in degrees.
    pub const fn radians_to_degrees(old: &'static str, new: &'static str) -> Self {
        Self {
            old,
            new,
            conversion: Conversion::RadiansToDegrees,
        }
    }

    /// What a value given under the old name (`NotSet`: none) does, with the
    /// new name given too or not.
    pub fn outcome(&self, old: &ParameterValue, new_given: bool) -> Result<RenameOutcome, String> {
        let said = match self.conversion {
            Conversion::HostAndPort { port } => format!("parameter `{}` is now `{}` and `{port}`", self.old, self.new),
            _ => format!("parameter `{}` is now `{}`", self.old, self.new),
        };
        if matches!(old, ParameterValue::NotSet) {
            return Ok(RenameOutcome::NotGiven);
        }
        if new_given {
            return Ok(RenameOutcome::Ignored {
                warning: format!("{said}; both are given: `{}` wins, `{}` is ignored", self.new, self.old),
            });
        }
        let still = format!("{said}; the old name still works");
        let (values, warning) = match (self.conversion, old) {
            (Conversion::Same, v) => (vec![(self.new, v.clone())], still),
            (Conversion::RadiansToDegrees, v) => {
                let rad = match v {
                    ParameterValue::Double(r) => *r,
                    ParameterValue::Integer(r) => *r as f64,
                    _ => return Err(invalid(self.old, "an angle in radians is a number")),
                };
                let deg = rad.to_degrees();
                let warning = format!("{still}: {rad} rad read as {deg} deg");
                (vec![(self.new, ParameterValue::Double(deg))], warning)
            }
            (Conversion::HostAndPort { port }, ParameterValue::String(servers)) => {
                let (hosts, number) = split_host_port(self.old, servers)?;
                let warning = format!("{still}: read as {} `{hosts}` and {port} `{number}`", self.new);
                let values = vec![
                    (self.new, ParameterValue::String(hosts)),
                    (port, ParameterValue::Integer(number.into())),
                ];
                (values, warning)
            }
            (Conversion::HostAndPort { .. }, _) => return Err(invalid(self.old, "`host:port` is a string")),
        };
        Ok(RenameOutcome::Taken { values, warning })
    }
}

/// `host:port[,host:port…]` → (`host[,host…]`, port): one port for every host.
fn split_host_port(name: &str, servers: &str) -> Result<(String, u16), String> {
    let mut hosts = Vec::new();
    let mut port = None;
    for server in servers.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (host, number) = server
            .rsplit_once(':')
            .ok_or_else(|| invalid(name, format!("{server:?} is not host:port")))?;
        let number: u16 = number
            .parse()
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| invalid(name, format!("{server:?}: {number:?} is not a port")))?;
        if port.is_some_and(|p| p != number) {
            return Err(invalid(
                name,
                "the servers' ports differ: give `sim_host` and `sim_port`",
            ));
        }
        port = Some(number);
        hosts.push(host);
    }
    let port = port.ok_or_else(|| invalid(name, "is empty"))?;
    Ok((hosts.join(","), port))
}

/// What the values given make of one renamed parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum RenameOutcome {
    /// The old name is not given.
    NotGiven,
    /// Only the old name is given: its value, converted, under the new name
    /// (and a second one where it splits in two).
    Taken {
        values: Vec<(&'static str, ParameterValue)>,
        warning: String,
    },
    /// Both are given: the new one wins.
    Ignored { warning: String },
}

/// Reads every value given under a former name of `tables` under its new
/// name (converted), the old name then forgotten, each with a warning in the
/// log; where both are given, the new name's value stands. Once per node,
/// before its parameters are read.
pub fn apply_renamed(node: &Node, tables: &[&[Renamed]]) -> Result<(), String> {
    let mut warnings = Vec::new();
    {
        let mut params = node
            .params
            .lock()
            .map_err(|_| "parameters: lock poisoned".to_string())?;
        for r in tables.iter().flat_map(|t| t.iter()) {
            if let Ok(mut former) = FORMER.lock() {
                former.insert(r.old, (r.new, r.conversion));
            }
            let old = params.get(r.old).map_or(ParameterValue::NotSet, |p| p.value.clone());
            let new_given = params
                .get(r.new)
                .is_some_and(|p| !matches!(p.value, ParameterValue::NotSet));
            match r.outcome(&old, new_given)? {
                RenameOutcome::NotGiven => continue,
                RenameOutcome::Taken { values, warning } => {
                    for (name, value) in values {
                        params.insert(name.to_string(), r2r::Parameter::new(value));
                    }
                    warnings.push(warning);
                }
                RenameOutcome::Ignored { warning } => warnings.push(warning),
            }
            params.shift_remove(r.old);
        }
    }
    for w in warnings {
        r2r::log_warn!(node.logger(), "{w}");
    }
    Ok(())
}

/// The parameters every bridge that has them reads alike: one name, one
/// meaning, one default, one range.
pub mod shared {
    use super::{BoolParam, FloatParam, IntParam, Renamed, StringParam};

    pub const QOS_DEPTH: IntParam = IntParam::new(
        "qos_depth",
        crate::qos::DEFAULT_SENSOR_DEPTH as i64,
        1..=1000,
        "history depth of the publishers (reliable, volatile: reliable and best-effort subscribers receive)",
    );
    pub const DIAGNOSTICS_PERIOD: FloatParam = FloatParam::new(
        "diagnostics_period_s",
        1.0,
        0.05..=60.0,
        "seconds between `/diagnostics` messages (per stream: rate, drops by reason, latency, age of the last message; per process: memory)",
    );
    pub const PUBLISH_TF: BoolParam = BoolParam::new("publish_tf", true, "publish `/tf` and `/tf_static`");
    pub const USE_SIM_TIME: BoolParam = BoolParam::new(
        "use_sim_time",
        false,
        "stamps are the simulator's time, which the bridge publishes on `/clock` ([stamps](commands-and-time.md))",
    );
    pub const CMD_TIMEOUT: FloatParam = FloatParam::new(
        "cmd_timeout_s",
        crate::command::DEFAULT_TIMEOUT_S,
        0.01..=60.0,
        "seconds of silence after which the neutral command is sent, and the age beyond which a command is dropped ([the command rule](commands-and-time.md))",
    );
    pub const DECODE_IMAGES_ALWAYS: BoolParam = BoolParam::new(
        "decode_images_always",
        false,
        "decode compressed images (JPEG, PNG) even while nobody subscribes to the raw topic",
    );

    /// The former names of the shared parameters.
    pub const RENAMED: &[Renamed] = &[
        Renamed::new("decode_jpeg_always", "decode_images_always"),
        Renamed::new("cmd_timeout", "cmd_timeout_s"),
        Renamed::new("diagnostics_period", "diagnostics_period_s"),
    ];

    /// `frame_prefix`, `<simulator>/` by default: frame ids are
    /// `<simulator>/<vehicle>/<frame>` (docs/names.md).
    pub const fn frame_prefix(simulator: &'static str) -> StringParam {
        StringParam::new(
            "frame_prefix",
            simulator,
            "put in front of every frame id: the `<simulator>/` of `<simulator>/<vehicle>/<frame>` ([names](names.md)); empty: none",
        )
    }
    pub const WORLD_FRAME_ID: StringParam = StringParam::new(
        "world_frame_id",
        frames::ids::MAP,
        "the ENU world frame of poses, odometry and `/tf`, after `frame_prefix` ([names](names.md))",
    );

    /// A `cmd_vel` gain.
    pub const fn gain(name: &'static str, default: f64, description: &'static str) -> FloatParam {
        FloatParam::new(name, default, -1e6..=1e6, description)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_is_an_error_naming_the_parameter() {
        let p = IntParam::new("imu_rate_hz", 200, 1..=1000, "");
        assert_eq!(p.check::<u16>(1000), Ok(1000));
        assert_eq!(
            p.check::<u16>(0),
            Err("parameter imu_rate_hz: 0 is outside 1..=1000".into())
        );
        assert_eq!(p.default_as::<u16>(), 200);
        let wide = IntParam::new("window", 0, -1..=70_000, "");
        assert_eq!(wide.check::<u16>(-1), Err("parameter window: -1 does not fit".into()));
        let f = FloatParam::new("diagnostics_period_s", 1.0, 0.05..=60.0, "");
        assert_eq!(f.check(0.05), Ok(0.05));
        assert!(f
            .check(f64::NAN)
            .unwrap_err()
            .starts_with("parameter diagnostics_period_s: NaN"));
        assert!(f.check(61.0).is_err());
        let variance = FloatParam::new("v", 1e-6, 0.0..=f64::MAX, "");
        assert_eq!(
            variance.check(-1.0),
            Err("parameter v: -1 is not a finite number ≥ 0".into())
        );
        assert!(variance.check(f64::INFINITY).is_err());
    }

    #[test]
    fn a_choice_is_one_of_its_names_and_a_former_spelling_reads_as_the_current_one() {
        const UNITS: ChoiceParam<u8> =
            ChoiceParam::new("unit", "rad", &[("rad", 0), ("deg", 1)], "").with_former(&[("radians", "rad")]);
        assert_eq!(UNITS.check("deg"), Ok(1));
        assert_eq!(
            UNITS.check("grad"),
            Err("parameter unit: \"grad\" is not one of rad, deg".into())
        );
        assert_eq!(UNITS.current("deg"), ("deg", None));
        let (current, warning) = UNITS.current("radians");
        assert_eq!(UNITS.check(current), Ok(0));
        assert_eq!(
            warning.as_deref(),
            Some("parameter `unit`: `radians` is now spelled `rad`; the old spelling still works")
        );
    }

    #[test]
    fn an_old_name_is_read_under_the_new_one_with_a_warning_and_loses_to_the_new_one() {
        let r = Renamed::new("cmd_timeout", "cmd_timeout_s");
        assert_eq!(r.outcome(&ParameterValue::NotSet, true), Ok(RenameOutcome::NotGiven));
        assert_eq!(
            r.outcome(&ParameterValue::Double(0.2), false),
            Ok(RenameOutcome::Taken {
                values: vec![("cmd_timeout_s", ParameterValue::Double(0.2))],
                warning: "parameter `cmd_timeout` is now `cmd_timeout_s`; the old name still works".into()
            })
        );
        assert_eq!(
            r.outcome(&ParameterValue::Double(0.2), true),
            Ok(RenameOutcome::Ignored {
                warning: "parameter `cmd_timeout` is now `cmd_timeout_s`; both are given: `cmd_timeout_s` wins, \
                          `cmd_timeout` is ignored"
                    .into()
            })
        );
    }

    #[test]
    fn a_unit_change_converts_the_old_value() {
        let r = Renamed::radians_to_degrees("fov", "fov_deg");
        let RenameOutcome::Taken { values, warning } = r.outcome(&ParameterValue::Double(0.5), false).unwrap() else {
            panic!("not taken");
        };
        assert_eq!(values, vec![("fov_deg", ParameterValue::Double(0.5f64.to_degrees()))]);
        assert!(warning.contains("0.5 rad read as 28.6"), "{warning}");
        let RenameOutcome::Taken { values, .. } = r.outcome(&ParameterValue::Integer(1), false).unwrap() else {
            panic!("not taken");
        };
        assert_eq!(values, vec![("fov_deg", ParameterValue::Double(1f64.to_degrees()))]);
        assert!(r.outcome(&ParameterValue::String("x".into()), false).is_err());
    }

    #[test]
    fn a_host_port_list_splits_into_its_hosts_and_their_one_port() {
        let r = Renamed::host_and_port("bootstrap_servers", "sim_host", "sim_port");
        let given = |s: &str| r.outcome(&ParameterValue::String(s.into()), false);
        let RenameOutcome::Taken { values, warning } = given("10.0.0.2:9093").unwrap() else {
            panic!("not taken");
        };
        assert_eq!(
            values,
            vec![
                ("sim_host", ParameterValue::String("10.0.0.2".into())),
                ("sim_port", ParameterValue::Integer(9093))
            ]
        );
        assert_eq!(
            warning,
            "parameter `bootstrap_servers` is now `sim_host` and `sim_port`; the old name still works: \
             read as sim_host `10.0.0.2` and sim_port `9093`"
        );
        let RenameOutcome::Taken { values, .. } = given("a:9092, b:9092").unwrap() else {
            panic!("not taken");
        };
        assert_eq!(values[0], ("sim_host", ParameterValue::String("a,b".into())));
        for bad in ["a:9092,b:9093", "a", "a:0", "a:x", " "] {
            let e = given(bad).unwrap_err();
            assert!(e.starts_with("parameter bootstrap_servers: "), "{bad}: {e}");
        }
    }

    #[test]
    fn sizes_in_bytes_show_in_binary_units() {
        assert_eq!(shown_int("max_message_bytes", 16 << 20), "16 MiB");
        assert_eq!(shown_int("max_message_bytes", 65_536), "64 KiB");
        assert_eq!(shown_int("max_message_bytes", 1000), "1000");
        assert_eq!(shown_int("window_id", 1 << 20), "1048576");
        assert_eq!(bound(-1e6), "-1e6");
        assert_eq!(bound(0.05), "0.05");
    }
}
