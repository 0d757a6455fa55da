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
//! r2r's `RosParams` derive (0.9.7) is not used: it has no array parameters
//! (`copter_ids`, `allowed_senders`), no ranges (its `Parameter` has a TODO for
//! min and max), refuses `-p x:=1` for a float, names nested fields with dots
//! (which would rename parameters users set today), and keeps the struct
//! writable at run time through `ros2 param set` although the bridges read
//! their settings once, at start.

use std::fmt::Display;
use std::ops::RangeInclusive;

use r2r::{Error, Node, ParameterValue, WrongParameterType};

fn get<T>(node: &Node, name: &str, default: T) -> Result<T, Error>
where
    ParameterValue: TryInto<Option<T>, Error = WrongParameterType>,
{
    Ok(node.get_parameter::<Option<T>>(name)?.unwrap_or(default))
}

pub fn int(node: &Node, name: &str, default: i64) -> Result<i64, Error> {
    get(node, name, default)
}

pub fn float(node: &Node, name: &str, default: f64) -> Result<f64, Error> {
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
