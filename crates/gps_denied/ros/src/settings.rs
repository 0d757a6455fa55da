//! The node's parameters (docs/gps-denied.md), read once at start.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, ToSocketAddrs};
use std::ops::RangeInclusive;
use std::time::Duration;

use gps_denied_proto::wire::{
    COMMAND_TOPIC, DEFAULT_LOCAL_PORT, DEFAULT_SIM_PORT, MAX_DATAGRAM_BYTES, TELEMETRY_TOPIC,
};
use gps_denied_proto::{Limits, TwistGains};
use r2r::Node;
use ros_common::msgs::{Covariances, Variance};
use ros_common::net::SenderFilter;
use ros_common::params::{self, FloatParam};
use ros_common::time::{StampSource, STAMP_SOURCE};

use crate::convert::{AltimeterModel, FrameIds};

/// Where telemetry comes from and commands go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// JSON datagrams: one socket bound to `bind`, commands to `sim`,
    /// telemetry accepted from the hosts `senders` allows (the simulator's,
    /// loopback, and `allowed_senders`).
    Udp {
        bind: SocketAddrV4,
        sim: SocketAddrV4,
        senders: SenderFilter,
        rcvbuf: usize,
    },
    /// JSON in `std_msgs/String` on `telemetry_topic`, commands out on `command_topic`.
    Ros {
        telemetry_topic: String,
        command_topic: String,
    },
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
    /// Silence on `cmd` and `cmd_vel` after which the neutral command is sent.
    pub cmd_timeout: Duration,
    pub stamp_source: StampSource,
}

fn bad(name: &str, msg: impl std::fmt::Display) -> String {
    format!("parameter {name}: {msg}")
}

/// A float parameter, refused unless in `range` (NaN never is).
fn float_in(node: &Node, name: &'static str, default: f64, range: RangeInclusive<f64>) -> Result<f64, String> {
    FloatParam::new(name, default, range).read(node)
}

fn port(node: &Node, name: &str, default: u16) -> Result<u16, String> {
    let p = params::int(node, name, i64::from(default)).map_err(|e| e.to_string())?;
    u16::try_from(p)
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| bad(name, format!("{p} is not a port")))
}

/// `host:port` → its IPv4 address (the simulator's sockets are IPv4).
fn resolve(host: &str, port: u16) -> Result<SocketAddrV4, String> {
    (host, port)
        .to_socket_addrs()
        .map_err(|e| bad("sim_host", format!("{host:?}: {e}")))?
        .find_map(|a| match a {
            SocketAddr::V4(a) => Some(a),
            SocketAddr::V6(_) => None,
        })
        .ok_or_else(|| bad("sim_host", format!("{host:?} has no IPv4 address")))
}

impl Settings {
    pub fn from_node(node: &Node) -> Result<Self, String> {
        let e = |err: r2r::Error| err.to_string();
        let source = match params::string(node, "source", "udp").map_err(e)?.as_str() {
            "udp" => {
                let host = params::string(node, "sim_host", "127.0.0.1").map_err(e)?;
                let bind_ip = params::string(node, "bind_address", "0.0.0.0").map_err(e)?;
                let bind_ip: Ipv4Addr = bind_ip
                    .parse()
                    .map_err(|_| bad("bind_address", format!("{bind_ip:?} is not an IPv4 address")))?;
                let sim = resolve(&host, port(node, "sim_port", DEFAULT_SIM_PORT)?)?;
                let extra = params::string_array(node, "allowed_senders", &[]).map_err(e)?;
                Source::Udp {
                    bind: SocketAddrV4::new(bind_ip, port(node, "local_port", DEFAULT_LOCAL_PORT)?),
                    sim,
                    senders: SenderFilter::new(*sim.ip(), &extra).map_err(|m| bad("allowed_senders", m))?,
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
        let gain = |name: &'static str| float_in(node, name, 1.0, -1e6..=1e6);
        let length = |name: &'static str, default: f32| float_in(node, name, f64::from(default), 0.0..=1e6);
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
            covariances: Covariances::from_params(node, d, &[Variance::IMU, Variance::POSE].concat())?,
            altimeter: AltimeterModel {
                field_of_view: float_in(
                    node,
                    "altimeter_fov",
                    f64::from(a.field_of_view),
                    0.0..=std::f64::consts::PI,
                )? as f32,
                min_range: length("altimeter_min_range", a.min_range)? as f32,
                max_range: length("altimeter_max_range", a.max_range)? as f32,
            },
            publish_tf: params::boolean(node, "publish_tf", true).map_err(e)?,
            diagnostics_period: Duration::from_secs_f64(float_in(node, "diagnostics_period", 1.0, 0.05..=60.0)?),
            cmd_timeout: Duration::from_secs_f64(float_in(
                node,
                "cmd_timeout",
                ros_common::command::DEFAULT_TIMEOUT_S,
                0.01..=60.0,
            )?),
            stamp_source: STAMP_SOURCE.read(node)?,
        })
    }
}
