//! The node's parameters (README, "GPS-denied drone"), read once at start.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

use gps_denied_proto::wire::{
    COMMAND_TOPIC, DEFAULT_LOCAL_PORT, DEFAULT_SIM_PORT, MAX_DATAGRAM_BYTES, TELEMETRY_TOPIC,
};
use gps_denied_proto::{Limits, TwistGains};
use r2r::Node;
use ros_common::msgs::Covariances;
use ros_common::params;

use crate::convert::{AltimeterModel, FrameIds};

/// Where telemetry comes from and commands go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// JSON datagrams: one socket bound to `bind`, commands to `sim`,
    /// telemetry accepted from `sim`'s host only unless `any_host`.
    Udp {
        bind: SocketAddr,
        sim: SocketAddr,
        any_host: bool,
        rcvbuf: usize,
    },
    /// JSON in `std_msgs/String` on `telemetry_topic`, commands out on `command_topic`.
    Ros {
        telemetry_topic: String,
        command_topic: String,
    },
}

impl Source {
    pub fn accepts(&self, from: IpAddr) -> bool {
        match self {
            Source::Udp { sim, any_host, .. } => *any_host || from == sim.ip(),
            Source::Ros { .. } => true,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Settings {
    pub source: Source,
    pub frames: FrameIds,
    /// Overrides `camera.fov` when set.
    pub camera_fov_deg: Option<f64>,
    pub use_sim_time: bool,
    pub qos_depth: usize,
    pub decode_jpeg_always: bool,
    pub limits: Limits,
    pub gains: TwistGains,
    pub covariances: Covariances,
    pub altimeter: AltimeterModel,
    pub publish_tf: bool,
    pub diagnostics_period: Duration,
}

fn bad(name: &str, msg: impl std::fmt::Display) -> String {
    format!("parameter {name}: {msg}")
}

fn port(node: &Node, name: &str, default: u16) -> Result<u16, String> {
    let p = params::int(node, name, i64::from(default)).map_err(|e| e.to_string())?;
    u16::try_from(p)
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| bad(name, format!("{p} is not a port")))
}

/// `host:port` → an address, IPv4 first (what the simulator binds).
fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    let all: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| bad("sim_host", format!("{host:?}: {e}")))?
        .collect();
    all.iter()
        .find(|a| a.is_ipv4())
        .or(all.first())
        .copied()
        .ok_or_else(|| bad("sim_host", format!("{host:?} has no address")))
}

impl Settings {
    pub fn from_node(node: &Node) -> Result<Self, String> {
        let e = |err: r2r::Error| err.to_string();
        let source = match params::string(node, "source", "udp").map_err(e)?.as_str() {
            "udp" => {
                let host = params::string(node, "sim_host", "127.0.0.1").map_err(e)?;
                let bind_ip = params::string(node, "bind_address", "0.0.0.0").map_err(e)?;
                let bind_ip: IpAddr = bind_ip
                    .parse()
                    .map_err(|_| bad("bind_address", format!("{bind_ip:?} is not an IP address")))?;
                Source::Udp {
                    bind: SocketAddr::new(bind_ip, port(node, "local_port", DEFAULT_LOCAL_PORT)?),
                    sim: resolve(&host, port(node, "sim_port", DEFAULT_SIM_PORT)?)?,
                    any_host: params::boolean(node, "accept_any_host", false).map_err(e)?,
                    rcvbuf: params::int(node, "rcvbuf_bytes", 4 << 20)
                        .map_err(e)?
                        .clamp(1 << 16, 1 << 30) as usize,
                }
            }
            "ros" => Source::Ros {
                telemetry_topic: params::string(node, "telemetry_topic", TELEMETRY_TOPIC).map_err(e)?,
                command_topic: params::string(node, "command_topic", COMMAND_TOPIC).map_err(e)?,
            },
            other => return Err(bad("source", format!("{other:?} is not udp or ros"))),
        };
        let fov = params::float(node, "camera_fov_deg", 0.0).map_err(e)?;
        if !(0.0..180.0).contains(&fov) {
            return Err(bad(
                "camera_fov_deg",
                format!("{fov} is not in (0, 180) (0: from the telemetry)"),
            ));
        }
        let max_message = params::int(node, "max_message_bytes", MAX_DATAGRAM_BYTES as i64)
            .map_err(e)?
            .clamp(1 << 10, 64 << 20) as usize;
        let d = Covariances::default();
        let gain = |name: &str| params::float(node, name, 1.0).map_err(e);
        let a = AltimeterModel::default();
        Ok(Self {
            source,
            frames: FrameIds::new(&params::string(node, "frame_prefix", "").map_err(e)?),
            camera_fov_deg: (fov > 0.0).then_some(fov),
            use_sim_time: params::boolean(node, "use_sim_time", false).map_err(e)?,
            qos_depth: params::int(node, "qos_depth", ros_common::qos::DEFAULT_SENSOR_DEPTH as i64)
                .map_err(e)?
                .clamp(1, 1000) as usize,
            decode_jpeg_always: params::boolean(node, "decode_jpeg_always", false).map_err(e)?,
            limits: Limits {
                max_message_bytes: max_message,
                max_image_base64_bytes: max_message,
            },
            gains: TwistGains {
                thrust: gain("thrust_gain")?,
                roll: gain("roll_gain")?,
                pitch: gain("pitch_gain")?,
                yaw: gain("yaw_gain")?,
            },
            covariances: Covariances {
                imu_gyro: params::float(node, "imu_gyro_variance", d.imu_gyro).map_err(e)?,
                imu_accel: params::float(node, "imu_accel_variance", d.imu_accel).map_err(e)?,
                imu_orientation: params::float(node, "imu_orientation_variance", d.imu_orientation).map_err(e)?,
                pose_position: params::float(node, "pose_position_variance", d.pose_position).map_err(e)?,
                pose_orientation: params::float(node, "pose_orientation_variance", d.pose_orientation).map_err(e)?,
                ..d
            },
            altimeter: AltimeterModel {
                field_of_view: params::float(node, "altimeter_fov", f64::from(a.field_of_view)).map_err(e)? as f32,
                min_range: params::float(node, "altimeter_min_range", f64::from(a.min_range)).map_err(e)? as f32,
                max_range: params::float(node, "altimeter_max_range", f64::from(a.max_range)).map_err(e)? as f32,
            },
            publish_tf: params::boolean(node, "publish_tf", true).map_err(e)?,
            diagnostics_period: Duration::from_secs_f64(
                params::float(node, "diagnostics_period", 1.0)
                    .map_err(e)?
                    .clamp(0.05, 60.0),
            ),
        })
    }
}
