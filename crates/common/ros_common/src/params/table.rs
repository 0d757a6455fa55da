//! The parameters an executable has read and the former names it knows,
//! written on request as a ROS 2 parameters file or a Markdown table.

use std::collections::BTreeMap;
use std::sync::Mutex;

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
pub(super) static FORMER: Mutex<BTreeMap<&'static str, (&'static str, Conversion)>> = Mutex::new(BTreeMap::new());

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

pub(super) fn note(
    name: &str,
    default: &impl YamlDefault,
    kind: &'static str,
    accepted: String,
    description: &'static str,
) {
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
pub(super) fn shown_int(name: &str, value: i64) -> String {
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

/// A bound of a float range as the table shows it.
pub(super) fn bound(v: f64) -> String {
    if v.abs() >= 1e5 {
        format!("{v:e}")
    } else {
        format!("{v}")
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

#[cfg(test)]
mod tests {
    use super::*;

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
