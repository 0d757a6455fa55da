//! The node's parameters (documented in docs/auv.md).

use std::time::Duration;

use auv_proto::mixing::MixGains;
use auv_proto::pose::{AngleUnit, PoseConvention, WorldFrame};
use r2r::Node;
use ros_common::params;

use crate::convert::default_covariances;
use ros_common::msgs::{Covariances, Variance};

#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub sim_host: String,
    pub image_port: u16,
    pub thruster_port: u16,
    pub telemetry_port: u16,
    pub auv_ids: Vec<u8>,
    pub convention: PoseConvention,
    pub world_frame_id: String,
    pub cmd_timeout: Duration,
    pub camera_fov_deg: f64,
    pub qos_depth: usize,
    pub max_jpeg_bytes: usize,
    pub decode_jpeg_always: bool,
    pub publish_tf: bool,
    pub diagnostics_period: Duration,
    pub variances: Covariances,
    pub gains: MixGains,
    /// How often a disconnected socket tries the simulator again.
    pub reconnect_interval: Duration,
}

fn bad(name: &str, msg: impl std::fmt::Display) -> String {
    format!("parameter {name}: {msg}")
}

/// `auv_ids`: distinct ids, each 0..=255, at least one.
pub fn auv_ids(values: &[i64]) -> Result<Vec<u8>, String> {
    let mut ids = Vec::with_capacity(values.len());
    for &v in values {
        let id = u8::try_from(v).map_err(|_| bad("auv_ids", format!("{v} is not an id in 0..=255")))?;
        if ids.contains(&id) {
            return Err(bad("auv_ids", format!("{id} is listed twice")));
        }
        ids.push(id);
    }
    if ids.is_empty() {
        return Err(bad("auv_ids", "at least one id is needed"));
    }
    Ok(ids)
}

fn port(name: &str, v: i64) -> Result<u16, String> {
    u16::try_from(v)
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| bad(name, format!("{v} is not a port")))
}

fn seconds(name: &str, v: f64, range: std::ops::RangeInclusive<f64>) -> Result<Duration, String> {
    if range.contains(&v) {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(bad(
            name,
            format!("{v} s is outside {}..={} s", range.start(), range.end()),
        ))
    }
}

fn finite(name: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(bad(name, "not a finite number"))
    }
}

impl Settings {
    pub fn from_node(node: &Node) -> Result<Settings, String> {
        let e = |err: r2r::Error| err.to_string();
        let f = |name: &str, default: f64| {
            params::float(node, name, default)
                .map_err(e)
                .and_then(|v| finite(name, v))
        };
        let sim_host = params::string(node, "sim_host", "127.0.0.1").map_err(e)?;
        if sim_host.is_empty() {
            return Err(bad("sim_host", "empty"));
        }
        let angle_unit = params::string(node, "angle_unit", "rad")
            .map_err(e)?
            .parse::<AngleUnit>()
            .map_err(|m| bad("angle_unit", m))?;
        let world_frame = params::string(node, "world_frame", "ned")
            .map_err(e)?
            .parse::<WorldFrame>()
            .map_err(|m| bad("world_frame", m))?;
        let fov = f("camera_fov_deg", 90.0)?;
        if !(1.0..=179.0).contains(&fov) {
            return Err(bad("camera_fov_deg", format!("{fov} is outside 1..=179")));
        }
        let published = [Variance::POSE, Variance::TWIST].concat();
        let variances = Covariances::from_params(node, default_covariances(), &published)?;
        let g = MixGains::default();
        Ok(Settings {
            sim_host,
            image_port: port(
                "image_port",
                params::int(node, "image_port", i64::from(auv_proto::IMAGE_PORT)).map_err(e)?,
            )?,
            thruster_port: port(
                "thruster_port",
                params::int(node, "thruster_port", i64::from(auv_proto::THRUSTER_PORT)).map_err(e)?,
            )?,
            telemetry_port: port(
                "telemetry_port",
                params::int(node, "telemetry_port", i64::from(auv_proto::TELEMETRY_PORT)).map_err(e)?,
            )?,
            auv_ids: auv_ids(&params::int_array(node, "auv_ids", &[0]).map_err(e)?)?,
            convention: PoseConvention {
                angle_unit,
                world_frame,
            },
            world_frame_id: params::string(node, "world_frame_id", "world").map_err(e)?,
            cmd_timeout: seconds("cmd_timeout", f("cmd_timeout", 0.5)?, 0.01..=60.0)?,
            camera_fov_deg: fov,
            qos_depth: params::int(node, "qos_depth", ros_common::qos::DEFAULT_SENSOR_DEPTH as i64)
                .map_err(e)?
                .clamp(1, 1000) as usize,
            max_jpeg_bytes: params::int(node, "max_jpeg_bytes", auv_proto::DEFAULT_MAX_JPEG_BYTES as i64)
                .map_err(e)?
                .clamp(1 << 10, 1 << 30) as usize,
            decode_jpeg_always: params::boolean(node, "decode_jpeg_always", false).map_err(e)?,
            publish_tf: params::boolean(node, "publish_tf", true).map_err(e)?,
            diagnostics_period: seconds("diagnostics_period", f("diagnostics_period", 1.0)?, 0.05..=60.0)?,
            variances,
            gains: MixGains {
                surge: f("surge_gain", g.surge)?,
                yaw: f("yaw_gain", g.yaw)?,
                sway: f("sway_gain", g.sway)?,
                heave: f("heave_gain", g.heave)?,
            },
            reconnect_interval: seconds("reconnect_interval", f("reconnect_interval", 0.1)?, 0.01..=10.0)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auv_ids_are_checked() {
        assert_eq!(auv_ids(&[0, 255, 7]), Ok(vec![0, 255, 7]));
        assert!(auv_ids(&[256]).is_err());
        assert!(auv_ids(&[-1]).is_err());
        assert!(auv_ids(&[1, 1]).is_err());
        assert!(auv_ids(&[]).is_err());
        assert!(port("p", 0).is_err() && port("p", 65536).is_err() && port("p", 5555).is_ok());
        assert!(seconds("t", -1.0, 0.0..=1.0).is_err());
        assert!(finite("x", f64::NAN).is_err());
    }
}
