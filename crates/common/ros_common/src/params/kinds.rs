//! The parameter kinds: each checks its value against its range or choices
//! and notes itself in the table as it is read.

use std::fmt::Display;
use std::ops::RangeInclusive;

use r2r::{Error, Node, ParameterValue, WrongParameterType};

use super::table::{bound, note, shown_int};

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
}
