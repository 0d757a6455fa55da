//! ROS 2 parameters (`--ros-args -p name:=value`, launch files, YAML) with
//! defaults. A parameter of the wrong type is an error that names it, rather
//! than a silent fallback to the default.

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
