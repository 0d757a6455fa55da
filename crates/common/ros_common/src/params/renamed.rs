//! Former parameter names: a value given under one is read under its new
//! name, converted, with a warning.

use r2r::{Node, ParameterValue};

use super::kinds::invalid;
use super::table::{Conversion, FORMER};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
