//! The node's parameters (docs/gps-denied.md), read once at start.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use gps_denied_proto::wire::{
    COMMAND_TOPIC, DEFAULT_LOCAL_PORT, DEFAULT_SIM_PORT, MAX_DATAGRAM_BYTES, TELEMETRY_TOPIC,
};
use gps_denied_proto::{Limits, TwistGains};
use r2r::Node;
use ros_common::msgs::{Covariances, Variance};
use ros_common::net::SenderFilter;
use ros_common::params::{self, shared, ChoiceParam, FloatParam, IntParam, Renamed, StringListParam, StringParam};
use ros_common::sim_host::{SimEndpoint, SimHost};
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
        sim: SimEndpoint,
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
    pub decode_images_always: bool,
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
    params::invalid(name, msg)
}

const SOURCE: ChoiceParam<SourceKind> = ChoiceParam::new(
    "source",
    "udp",
    &[("udp", SourceKind::Udp), ("ros", SourceKind::Ros)],
    "`udp`: JSON datagrams from the simulator; `ros`: JSON in `std_msgs/String` on `telemetry_topic`, commands on `command_topic`",
);
const SIM_HOST: StringParam = StringParam::new(
    "sim_host",
    "127.0.0.1",
    "the simulator's host, an IPv4 address or a host name (looked up at start and again while the simulator is silent): commands go there, telemetry is taken from there (and loopback, and `allowed_senders`)",
);
const BIND_ADDRESS: StringParam =
    StringParam::new("bind_address", "0.0.0.0", "the IPv4 address of the bridge's UDP socket");
const SIM_PORT: IntParam = params::port(
    "sim_port",
    DEFAULT_SIM_PORT,
    "the simulator's UDP port, where commands go",
);
const LOCAL_PORT: IntParam = params::port(
    "local_port",
    DEFAULT_LOCAL_PORT,
    "the bridge's UDP port, where telemetry arrives",
);
const RCVBUF_BYTES: IntParam = IntParam::new(
    "rcvbuf_bytes",
    4 << 20,
    1 << 16..=1 << 30,
    "UDP receive buffer asked for (the kernel grants at most `net.core.rmem_max`)",
);
const ALLOWED_SENDERS: StringListParam = StringListParam::new(
    "allowed_senders",
    &[],
    "more hosts that may send telemetry: addresses, networks (`10.0.0.0/24`) or `any`; others are dropped and counted",
);
const TELEMETRY: StringParam = StringParam::new(
    "telemetry_topic",
    TELEMETRY_TOPIC,
    "with `source:=ros`: where the JSON telemetry arrives",
);
const COMMAND: StringParam = StringParam::new(
    "command_topic",
    COMMAND_TOPIC,
    "with `source:=ros`: where JSON commands go",
);
const CAMERA_FOV_DEG: FloatParam = FloatParam::new(
    "camera_fov_deg",
    0.0,
    0.0..=179.0,
    "horizontal field of view for the camera info; 0: the telemetry's `camera.fov` (60 when absent)",
);
const MAX_MESSAGE_BYTES: IntParam = IntParam::new(
    "max_message_bytes",
    MAX_DATAGRAM_BYTES as i64,
    1 << 10..=64 << 20,
    "the largest telemetry message (or base64 image) taken; a longer one is refused unread",
);
const FRAME_PREFIX: StringParam = shared::frame_prefix("gps_denied/");

/// The former names of the GPS-denied bridge's parameters.
pub const RENAMED: &[Renamed] = &[
    Renamed::radians_to_degrees("altimeter_fov", "altimeter_fov_deg"),
    Renamed::new("altimeter_min_range", "altimeter_min_range_m"),
    Renamed::new("altimeter_max_range", "altimeter_max_range_m"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SourceKind {
    Udp,
    Ros,
}

/// An f32 default as the f64 its decimal spelling reads as (0.05, not 0.0500000007).
fn decimal(v: f32) -> f64 {
    v.to_string().parse().unwrap_or(f64::from(v))
}

impl Settings {
    pub fn from_node(node: &Node) -> Result<Self, String> {
        // Every parameter is read whatever the source, so that each is checked (and listed) alike.
        params::apply_renamed(node, &[shared::RENAMED, RENAMED])?;
        let host = SIM_HOST.read(node)?;
        let bind_ip = BIND_ADDRESS.read(node)?;
        let sim_port = SIM_PORT.read(node)?;
        let local_port = LOCAL_PORT.read(node)?;
        let extra = ALLOWED_SENDERS.read(node)?;
        let rcvbuf = RCVBUF_BYTES.read(node)?;
        let telemetry_topic = TELEMETRY.read(node)?;
        let command_topic = COMMAND.read(node)?;
        let source = match SOURCE.read(node)? {
            SourceKind::Udp => {
                let bind_ip: Ipv4Addr = bind_ip
                    .parse()
                    .map_err(|_| bad(BIND_ADDRESS.name, format!("{bind_ip:?} is not an IPv4 address")))?;
                let sim_host = SimHost::resolve(&host).map_err(|why| bad(SIM_HOST.name, why))?;
                Source::Udp {
                    bind: SocketAddrV4::new(bind_ip, local_port),
                    sim: SimEndpoint::new(&sim_host, sim_port),
                    senders: SenderFilter::new(sim_host, &extra).map_err(|m| bad(ALLOWED_SENDERS.name, m))?,
                    rcvbuf,
                }
            }
            SourceKind::Ros => Source::Ros {
                telemetry_topic,
                command_topic,
            },
        };
        let fov = CAMERA_FOV_DEG.read(node)?;
        let max_message = MAX_MESSAGE_BYTES.read(node)?;
        let d = Covariances::default();
        let length = |name: &'static str, default: f32, description: &'static str| {
            FloatParam::new(name, decimal(default), 0.0..=1e6, description).read(node)
        };
        let a = AltimeterModel::default();
        Ok(Self {
            source,
            frames: FrameIds::new(&FRAME_PREFIX.read(node)?),
            camera_fov_deg: (fov > 0.0).then_some(fov),
            use_sim_time: shared::USE_SIM_TIME.read(node)?,
            qos_depth: shared::QOS_DEPTH.read(node)?,
            decode_images_always: shared::DECODE_IMAGES_ALWAYS.read(node)?,
            limits: Limits {
                max_message_bytes: max_message,
                max_image_base64_bytes: max_message,
            },
            gains: TwistGains {
                thrust: shared::gain("thrust_gain", 1.0, "`cmd_vel` linear.z → thrust, then clamped").read(node)?,
                roll: shared::gain("roll_gain", 1.0, "`cmd_vel` angular.x → roll, then clamped").read(node)?,
                pitch: shared::gain("pitch_gain", 1.0, "`cmd_vel` angular.y → pitch, then clamped").read(node)?,
                yaw: shared::gain("yaw_gain", 1.0, "`cmd_vel` angular.z → yaw, then clamped").read(node)?,
            },
            covariances: Covariances::from_params(node, d, &[Variance::IMU, Variance::POSE].concat())?,
            altimeter: AltimeterModel {
                field_of_view: FloatParam::new(
                    "altimeter_fov_deg",
                    decimal(a.field_of_view).to_degrees(),
                    0.0..=180.0,
                    "the altimeter's field of view in degrees (`sensor_msgs/Range` carries it in radians)",
                )
                .read(node)?
                .to_radians() as f32,
                min_range: length(
                    "altimeter_min_range_m",
                    a.min_range,
                    "the altimeter's least range in metres (`sensor_msgs/Range`)",
                )? as f32,
                max_range: length(
                    "altimeter_max_range_m",
                    a.max_range,
                    "the altimeter's greatest range in metres (`sensor_msgs/Range`)",
                )? as f32,
            },
            publish_tf: shared::PUBLISH_TF.read(node)?,
            diagnostics_period: shared::DIAGNOSTICS_PERIOD.read_duration(node)?,
            cmd_timeout: shared::CMD_TIMEOUT.read_duration(node)?,
            stamp_source: STAMP_SOURCE.read(node)?,
        })
    }
}
