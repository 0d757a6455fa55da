//! The node's parameters (documented in docs/auv.md).

use std::time::Duration;

use auv_proto::mixing::MixGains;
use auv_proto::pose::{AngleUnit, PoseConvention, WorldFrame};
use r2r::Node;
use ros_common::params::{self, shared, ChoiceParam, FloatParam, IntListParam, IntParam, Renamed, StringParam};

use crate::convert::default_covariances;
use ros_common::msgs::{Covariances, Variance};
use ros_common::time::{StampSource, STAMP_SOURCE};

#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub sim_host: String,
    /// The address `sim_host` had at start, for the log: each connection
    /// attempt looks the name up again (a reconnect follows a new address).
    pub sim_addr: std::net::IpAddr,
    pub image_port: u16,
    pub thruster_port: u16,
    pub telemetry_port: u16,
    pub auv_ids: Vec<u8>,
    pub convention: PoseConvention,
    /// The world's frame id, `frame_prefix` included.
    pub world_frame_id: String,
    /// In front of every frame id: `auv/` by default.
    pub frame_prefix: String,
    /// Stamps follow `/clock` (whatever publishes it): the simulator's messages carry no time.
    pub use_sim_time: bool,
    pub cmd_timeout: Duration,
    pub camera_fov_deg: f64,
    pub qos_depth: usize,
    pub max_jpeg_bytes: usize,
    pub decode_images_always: bool,
    pub publish_tf: bool,
    pub diagnostics_period: Duration,
    pub variances: Covariances,
    pub gains: MixGains,
    /// How often a disconnected socket tries the simulator again.
    pub reconnect_interval: Duration,
}

/// The shared `use_sim_time`, described as it works here: the simulator
/// sends no time, so this bridge follows a `/clock` it does not publish.
const USE_SIM_TIME: params::BoolParam = params::BoolParam {
    description: "stamps are the arrival on the simulated time of the `/clock` another node publishes (the AUV simulator sends no time, so the bridge publishes no `/clock`; [stamps](auv.md))",
    ..shared::USE_SIM_TIME
};

fn bad(name: &str, msg: impl std::fmt::Display) -> String {
    params::invalid(name, msg)
}

const SIM_HOST: StringParam = StringParam::new(
    "sim_host",
    "127.0.0.1",
    "the simulator's host, an address or a host name (the bridge connects to its three ZeroMQ sockets; the name is looked up at start and at each connection attempt)",
);
const IMAGE_PORT: IntParam = params::port(
    "image_port",
    auv_proto::IMAGE_PORT,
    "the simulator's image socket (PUB)",
);
const THRUSTER_PORT: IntParam = params::port(
    "thruster_port",
    auv_proto::THRUSTER_PORT,
    "the simulator's thruster socket (PULL)",
);
const TELEMETRY_PORT: IntParam = params::port(
    "telemetry_port",
    auv_proto::TELEMETRY_PORT,
    "the simulator's telemetry socket (PUB)",
);
const ANGLE_UNIT: ChoiceParam<AngleUnit> = ChoiceParam::new(
    "angle_unit",
    "rad",
    &[("rad", AngleUnit::Rad), ("deg", AngleUnit::Deg)],
    "the unit of the telemetry's angles",
);
const SIM_AXES: ChoiceParam<WorldFrame> = ChoiceParam::new(
    "sim_axes",
    "ned",
    &[("ned", WorldFrame::Ned), ("enu", WorldFrame::Enu)],
    "the telemetry's axes: `ned` (NED world, FRD body) or `enu` (ENU world, FLU body)",
);
const FRAME_PREFIX: StringParam = shared::frame_prefix("auv/");
const CAMERA_FOV_DEG: FloatParam = FloatParam::new(
    "camera_fov_deg",
    90.0,
    1.0..=179.0,
    "horizontal field of view of both cameras (camera info)",
);
const MAX_MESSAGE_BYTES: IntParam = IntParam::new(
    "max_message_bytes",
    auv_proto::DEFAULT_MAX_JPEG_BYTES as i64,
    1 << 10..=1 << 30,
    "the largest image message accepted (libzmq refuses a larger one before allocating)",
);
const RECONNECT_INTERVAL: FloatParam = FloatParam::new(
    "reconnect_interval_s",
    0.1,
    0.01..=10.0,
    "seconds between attempts to reach the simulator again",
);
const VEHICLE_IDS: IntListParam = IntListParam::new(
    "vehicle_ids",
    &[0],
    "the AUVs bridged, 0–255 (the sockets subscribe to their one-byte prefixes)",
);

/// The former names of the AUV bridge's parameters.
pub const RENAMED: &[Renamed] = &[
    Renamed::new("auv_ids", "vehicle_ids"),
    Renamed::new("world_frame", "sim_axes"),
    Renamed::new("max_jpeg_bytes", "max_message_bytes"),
    Renamed::new("reconnect_interval", "reconnect_interval_s"),
];

/// `vehicle_ids`: distinct ids, each 0..=255, at least one.
pub fn auv_ids(values: &[i64]) -> Result<Vec<u8>, String> {
    let mut ids = Vec::with_capacity(values.len());
    for &v in values {
        let id = u8::try_from(v).map_err(|_| bad(VEHICLE_IDS.name, format!("{v} is not an id in 0..=255")))?;
        if ids.contains(&id) {
            return Err(bad(VEHICLE_IDS.name, format!("{id} is listed twice")));
        }
        ids.push(id);
    }
    if ids.is_empty() {
        return Err(bad(VEHICLE_IDS.name, "at least one id is needed"));
    }
    Ok(ids)
}

/// `host`'s address (IPv4 or IPv6, as ZeroMQ's TCP takes both): itself, or
/// the first the system's resolver gives for the name.
fn look_up(host: &str) -> Result<std::net::IpAddr, String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse() {
        return Ok(ip);
    }
    std::net::ToSocketAddrs::to_socket_addrs(&(bare, 0))
        .map_err(|e| format!("host name {host:?} does not resolve ({e})"))?
        .next()
        .map(|a| a.ip())
        .ok_or_else(|| format!("host name {host:?} has no address"))
}

impl Settings {
    pub fn from_node(node: &Node) -> Result<Settings, String> {
        params::apply_renamed(node, &[shared::RENAMED, RENAMED])?;
        let sim_host = SIM_HOST.read(node)?;
        // The simulator's messages carry no time: every stamp is the arrival's.
        if STAMP_SOURCE.read(node)? == StampSource::Sim {
            return Err(bad(
                STAMP_SOURCE.name,
                "`sim` would drop every message: the AUV simulator's messages carry no time (`auto` and `arrival` stamp them on arrival)",
            ));
        }
        if sim_host.is_empty() {
            return Err(bad(SIM_HOST.name, "empty"));
        }
        let sim_addr = look_up(&sim_host).map_err(|why| bad(SIM_HOST.name, why))?;
        let published = [Variance::POSE, Variance::TWIST].concat();
        let variances = Covariances::from_params(node, default_covariances(), &published)?;
        let g = MixGains::default();
        let frame_prefix = FRAME_PREFIX.read(node)?;
        Ok(Settings {
            sim_host,
            sim_addr,
            image_port: IMAGE_PORT.read(node)?,
            thruster_port: THRUSTER_PORT.read(node)?,
            telemetry_port: TELEMETRY_PORT.read(node)?,
            auv_ids: auv_ids(&VEHICLE_IDS.read(node)?)?,
            convention: PoseConvention {
                angle_unit: ANGLE_UNIT.read(node)?,
                world_frame: SIM_AXES.read(node)?,
            },
            world_frame_id: frames::ids::world(&frame_prefix, &shared::WORLD_FRAME_ID.read(node)?),
            frame_prefix,
            use_sim_time: USE_SIM_TIME.read(node)?,
            cmd_timeout: shared::CMD_TIMEOUT.read_duration(node)?,
            camera_fov_deg: CAMERA_FOV_DEG.read(node)?,
            qos_depth: shared::QOS_DEPTH.read(node)?,
            max_jpeg_bytes: MAX_MESSAGE_BYTES.read(node)?,
            decode_images_always: shared::DECODE_IMAGES_ALWAYS.read(node)?,
            publish_tf: shared::PUBLISH_TF.read(node)?,
            diagnostics_period: shared::DIAGNOSTICS_PERIOD.read_duration(node)?,
            variances,
            gains: MixGains {
                surge: shared::gain(
                    "surge_gain",
                    g.surge,
                    "`cmd_vel` linear.x (m/s) → left and right thrusters",
                )
                .read(node)?,
                yaw: shared::gain(
                    "yaw_gain",
                    g.yaw,
                    "`cmd_vel` angular.z (rad/s) → right − left thrusters",
                )
                .read(node)?,
                sway: shared::gain(
                    "sway_gain",
                    g.sway,
                    "`cmd_vel` linear.y (m/s) → side thruster (negated)",
                )
                .read(node)?,
                heave: shared::gain("heave_gain", g.heave, "`cmd_vel` linear.z (m/s) → vertical thruster")
                    .read(node)?,
            },
            reconnect_interval: RECONNECT_INTERVAL.read_duration(node)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simulator_s_host_is_an_address_or_a_name_that_resolves() {
        assert_eq!(look_up("10.0.0.2"), Ok("10.0.0.2".parse().unwrap()));
        assert_eq!(look_up("[::1]"), Ok("::1".parse().unwrap()));
        assert!(look_up("localhost").is_ok_and(|ip| ip.is_loopback()));
        let why = look_up("no-such-simulator.invalid").unwrap_err();
        assert!(why.contains("\"no-such-simulator.invalid\" does not resolve"), "{why}");
    }

    #[test]
    fn auv_ids_are_checked() {
        assert_eq!(auv_ids(&[0, 255, 7]), Ok(vec![0, 255, 7]));
        assert!(auv_ids(&[256]).is_err());
        assert!(auv_ids(&[-1]).is_err());
        assert!(auv_ids(&[1, 1]).is_err());
        assert!(auv_ids(&[]).is_err());
        assert!(IMAGE_PORT.check::<u16>(0).is_err() && IMAGE_PORT.check::<u16>(65536).is_err());
        assert!(RECONNECT_INTERVAL.check(f64::NAN).is_err());
    }
}
