//! The node's parameters (docs/aerosim.md), read once at start.

use std::time::Duration;

use aerosim_link::StartFrom;
use r2r::Node;
use ros_common::msgs::{Covariances, Variance};
use ros_common::params::{self, shared, ChoiceParam, FloatParam, IntParam, Renamed, StringListParam, StringParam};
use ros_common::time::{StampSource, STAMP_SOURCE};

use crate::convert::{Origin, TwistGains};

/// What the bridge leaves an aircraft on when its controller goes silent or
/// the bridge stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failsafe {
    /// One autopilot command holding the altitude, heading and airspeed of
    /// the last vehicle state.
    Hold,
    /// Nothing: flight-control commands stop, the aircraft keeps AeroSim's
    /// latched command.
    None,
}

pub const FAILSAFE: ChoiceParam<Failsafe> = ChoiceParam::new(
    "failsafe",
    "hold",
    &[("hold", Failsafe::Hold), ("none", Failsafe::None)],
    "after `cmd_timeout_s` of silence and at the stop: `hold` altitude, heading and airspeed (and centre the sticks), or `none`: commands just stop",
);
pub const START_FROM: ChoiceParam<StartFrom> = ChoiceParam::new(
    "start_from",
    "latest",
    &[("latest", StartFrom::Latest), ("earliest", StartFrom::Earliest)],
    "`latest`: only records written after the bridge started; `earliest`: the topics' history first",
);
const FETCH_WAIT_MS: IntParam = IntParam::new(
    "fetch_wait_ms",
    2,
    0..=1000,
    "how long the broker may hold a fetch open while nothing is there (with Apache Kafka `100` costs no latency: [AeroSim](aerosim.md#parameters))",
);
const FETCH_WAIT_MAX_MS: IntParam = IntParam::new(
    "fetch_wait_max_ms",
    100,
    0..=1000,
    "after this long with no record, the fetch wait doubles each empty fetch up to this; back to `fetch_wait_ms` with the next record (at or below `fetch_wait_ms`: the wait never grows)",
);
const MAX_MESSAGE_BYTES: IntParam = IntParam::new(
    "max_message_bytes",
    16 << 20,
    1 << 10..=256 << 20,
    "the largest record taken (camera images too); a larger one is skipped unread and counted",
);
const ACK_TIMEOUT: FloatParam = FloatParam::new(
    "ack_timeout_s",
    1.0,
    0.01..=30.0,
    "seconds the broker may take to acknowledge a command, connecting included; an unacknowledged command is counted and logged",
);
const CAMERA_FOV_DEG: FloatParam = FloatParam::new(
    "camera_fov_deg",
    90.0,
    1.0..=179.0,
    "horizontal field of view for the camera info when the simulator's does not say",
);
const VEHICLE_IDS: StringListParam = StringListParam::new(
    "vehicle_ids",
    &["actor1"],
    "the AeroSim actors bridged (letters, digits and `_`)",
);
const SIM_HOST: StringParam = StringParam::new(
    "sim_host",
    "127.0.0.1",
    "the host of AeroSim's Kafka broker (several: comma-separated, each on `sim_port`)",
);
const SIM_PORT: IntParam = params::port("sim_port", 9092, "the port of AeroSim's Kafka broker");
const TOPIC_PREFIX: StringParam = StringParam::new("topic_prefix", "aerosim", "the first part of every Kafka topic");
const CAMERA_TOPICS: StringListParam = StringListParam::new(
    "camera_topics",
    &["aerosim.renderer.responses"],
    "the Kafka topics of rendered images (cameras are mounted on the first actor)",
);
const CAMERA_NAMES: StringListParam = StringListParam::new(
    "camera_names",
    &["camera"],
    "the ROS name of each camera of `camera_topics`",
);
const WORLD_FRAME_ID: StringParam = StringParam {
    description: "the ENU world frame at AeroSim's origin, after `frame_prefix` ([names](names.md))",
    ..shared::WORLD_FRAME_ID
};
const FRAME_PREFIX: StringParam = shared::frame_prefix("aerosim/");
const ORIGIN_LATITUDE_DEG: FloatParam = FloatParam::new(
    "origin_latitude_deg",
    0.0,
    -90.0..=90.0,
    "AeroSim's `world.origin`, for `gnss`",
);
const ORIGIN_LONGITUDE_DEG: FloatParam = FloatParam::new(
    "origin_longitude_deg",
    0.0,
    -180.0..=180.0,
    "AeroSim's `world.origin`, for `gnss`",
);
const ORIGIN_ALTITUDE_M: FloatParam = FloatParam::new(
    "origin_altitude_m",
    0.0,
    -1e4..=1e5,
    "AeroSim's `world.origin`, for `gnss`",
);

#[derive(Debug, Clone)]
pub struct Settings {
    pub bootstrap_servers: String,
    pub actors: Vec<String>,
    pub topic_prefix: String,
    pub start_from: StartFrom,
    pub fetch_wait: Duration,
    /// The ceiling of the fetch wait while no record comes.
    pub fetch_wait_max: Duration,
    pub max_record_bytes: usize,
    /// `world`-like fixed frame and the prefix of each actor's frames.
    pub world_frame: String,
    pub frame_prefix: String,
    pub use_sim_time: bool,
    pub stamp_source: StampSource,
    pub qos_depth: usize,
    pub publish_tf: bool,
    pub diagnostics_period: Duration,
    pub cmd_timeout: Duration,
    /// The longest the broker may take to acknowledge a command.
    pub ack_timeout: Duration,
    pub failsafe: Failsafe,
    pub gains: TwistGains,
    pub covariances: Covariances,
    /// When the simulator's camera info does not say.
    pub camera_fov_deg: f64,
    pub decode_images_always: bool,
    /// The Kafka topics of rendered images and the ROS name of each.
    pub cameras: Vec<(String, String)>,
    pub origin: Origin,
}

/// The former names of the AeroSim bridge's parameters.
pub const RENAMED: &[Renamed] = &[
    Renamed::host_and_port("bootstrap_servers", "sim_host", "sim_port"),
    Renamed::new("actors", "vehicle_ids"),
    Renamed::new("world_frame", "world_frame_id"),
    Renamed::new("max_record_bytes", "max_message_bytes"),
    Renamed::new("ack_timeout", "ack_timeout_s"),
];

/// `host[,host…]` on `port` as Kafka's bootstrap list.
fn bootstrap_servers(hosts: &str, port: u16) -> Result<String, String> {
    let hosts: Vec<&str> = hosts.split(',').map(str::trim).filter(|h| !h.is_empty()).collect();
    if hosts.is_empty() {
        return Err(params::invalid(SIM_HOST.name, "is empty"));
    }
    Ok(hosts
        .iter()
        .map(|h| format!("{h}:{port}"))
        .collect::<Vec<_>>()
        .join(","))
}

fn gain(node: &Node, name: &'static str, default: f64, description: &'static str) -> Result<f64, String> {
    shared::gain(name, default, description).read(node)
}

impl Settings {
    pub fn from_node(node: &Node) -> Result<Self, String> {
        params::apply_renamed(node, &[shared::RENAMED, RENAMED])?;
        let actors = VEHICLE_IDS.read(node)?;
        if actors.is_empty() {
            return Err(params::invalid(VEHICLE_IDS.name, "names no actor"));
        }
        for a in &actors {
            if a.is_empty() || !a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(params::invalid(
                    VEHICLE_IDS.name,
                    format!("{a:?}: an actor is named with letters, digits and _"),
                ));
            }
        }
        let bootstrap_servers = bootstrap_servers(&SIM_HOST.read(node)?, SIM_PORT.read(node)?)?;
        let camera_topics = CAMERA_TOPICS.read(node)?;
        let camera_names = CAMERA_NAMES.read(node)?;
        if camera_names.len() != camera_topics.len() {
            return Err(params::invalid(
                CAMERA_NAMES.name,
                format!("{} names for {} camera_topics", camera_names.len(), camera_topics.len()),
            ));
        }
        let d = Covariances::default();
        Ok(Self {
            bootstrap_servers,
            actors,
            topic_prefix: TOPIC_PREFIX.read(node)?,
            start_from: START_FROM.read(node)?,
            fetch_wait: Duration::from_millis(FETCH_WAIT_MS.read(node)?),
            fetch_wait_max: Duration::from_millis(FETCH_WAIT_MAX_MS.read(node)?),
            max_record_bytes: MAX_MESSAGE_BYTES.read(node)?,
            world_frame: WORLD_FRAME_ID.read(node)?,
            frame_prefix: FRAME_PREFIX.read(node)?,
            use_sim_time: shared::USE_SIM_TIME.read(node)?,
            stamp_source: STAMP_SOURCE.read(node)?,
            qos_depth: shared::QOS_DEPTH.read(node)?,
            publish_tf: shared::PUBLISH_TF.read(node)?,
            diagnostics_period: shared::DIAGNOSTICS_PERIOD.read_duration(node)?,
            cmd_timeout: shared::CMD_TIMEOUT.read_duration(node)?,
            ack_timeout: Duration::from_secs_f64(ACK_TIMEOUT.read(node)?),
            failsafe: FAILSAFE.read(node)?,
            gains: TwistGains {
                power: gain(
                    node,
                    "power_gain",
                    0.02,
                    "`cmd_vel` linear.x (m/s) → power, clamped to its range",
                )?,
                pitch: gain(
                    node,
                    "pitch_gain",
                    0.1,
                    "`cmd_vel` linear.z (m/s) → −pitch command (JSBSim's elevator: negative lifts the nose), clamped",
                )?,
                roll: gain(
                    node,
                    "roll_gain",
                    1.0,
                    "`cmd_vel` angular.z (rad/s) → −roll command (right-positive), clamped",
                )?,
                yaw: gain(
                    node,
                    "yaw_gain",
                    0.5,
                    "`cmd_vel` angular.z (rad/s) → −yaw command (right-positive), clamped",
                )?,
            },
            covariances: Covariances::from_params(node, d, &[Variance::POSE, Variance::TWIST, Variance::IMU].concat())?,
            camera_fov_deg: CAMERA_FOV_DEG.read(node)?,
            decode_images_always: shared::DECODE_IMAGES_ALWAYS.read(node)?,
            cameras: camera_topics.into_iter().zip(camera_names).collect(),
            origin: Origin {
                latitude_deg: ORIGIN_LATITUDE_DEG.read(node)?,
                longitude_deg: ORIGIN_LONGITUDE_DEG.read(node)?,
                altitude_m: ORIGIN_ALTITUDE_M.read(node)?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_is_on_the_one_port() {
        assert_eq!(bootstrap_servers("127.0.0.1", 9092), Ok("127.0.0.1:9092".into()));
        assert_eq!(bootstrap_servers("a, b", 9093), Ok("a:9093,b:9093".into()));
        assert_eq!(
            bootstrap_servers(" ,", 9092),
            Err("parameter sim_host: is empty".into())
        );
    }
}
