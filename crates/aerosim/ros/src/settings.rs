//! The node's parameters (docs/aerosim.md), read once at start.

use std::time::Duration;

use aerosim_link::StartFrom;
use r2r::Node;
use ros_common::msgs::{Covariances, Variance};
use ros_common::params::{self, shared, ChoiceParam, FloatParam, IntParam};
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
);
pub const START_FROM: ChoiceParam<StartFrom> = ChoiceParam::new(
    "start_from",
    "latest",
    &[("latest", StartFrom::Latest), ("earliest", StartFrom::Earliest)],
);
const FETCH_WAIT_MS: IntParam = IntParam::new("fetch_wait_ms", 2, 0..=1000);
const MAX_RECORD_BYTES: IntParam = IntParam::new("max_record_bytes", 16 << 20, 1 << 10..=256 << 20);
const ACK_TIMEOUT: FloatParam = FloatParam::new("ack_timeout", 1.0, 0.01..=30.0);
const CAMERA_FOV_DEG: FloatParam = FloatParam::new("camera_fov_deg", 90.0, 1.0..=179.0);

#[derive(Debug, Clone)]
pub struct Settings {
    pub bootstrap_servers: String,
    pub actors: Vec<String>,
    pub topic_prefix: String,
    pub start_from: StartFrom,
    pub fetch_wait: Duration,
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

fn gain(node: &Node, name: &'static str, default: f64) -> Result<f64, String> {
    shared::gain(name, default).read(node)
}

impl Settings {
    pub fn from_node(node: &Node) -> Result<Self, String> {
        let e = |err: r2r::Error| err.to_string();
        let actors = params::string_array(node, "actors", &["actor1"]).map_err(e)?;
        if actors.is_empty() {
            return Err(params::invalid("actors", "names no actor"));
        }
        for a in &actors {
            if a.is_empty() || !a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(params::invalid(
                    "actors",
                    format!("{a:?}: an actor is named with letters, digits and _"),
                ));
            }
        }
        let bootstrap_servers = params::string(node, "bootstrap_servers", "127.0.0.1:9092").map_err(e)?;
        if bootstrap_servers.trim().is_empty() {
            return Err(params::invalid("bootstrap_servers", "is empty"));
        }
        let camera_topics = params::string_array(node, "camera_topics", &["aerosim.renderer.responses"]).map_err(e)?;
        let camera_names = params::string_array(node, "camera_names", &["camera"]).map_err(e)?;
        if camera_names.len() != camera_topics.len() {
            return Err(params::invalid(
                "camera_names",
                format!("{} names for {} camera_topics", camera_names.len(), camera_topics.len()),
            ));
        }
        let d = Covariances::default();
        Ok(Self {
            bootstrap_servers,
            actors,
            topic_prefix: params::string(node, "topic_prefix", "aerosim").map_err(e)?,
            start_from: START_FROM.read(node)?,
            fetch_wait: Duration::from_millis(FETCH_WAIT_MS.read(node)?),
            max_record_bytes: MAX_RECORD_BYTES.read(node)?,
            world_frame: params::string(node, "world_frame", "world").map_err(e)?,
            frame_prefix: params::string(node, "frame_prefix", "").map_err(e)?,
            use_sim_time: shared::USE_SIM_TIME.read(node)?,
            stamp_source: STAMP_SOURCE.read(node)?,
            qos_depth: shared::QOS_DEPTH.read(node)?,
            publish_tf: shared::PUBLISH_TF.read(node)?,
            diagnostics_period: shared::DIAGNOSTICS_PERIOD.read_duration(node)?,
            cmd_timeout: shared::CMD_TIMEOUT.read_duration(node)?,
            ack_timeout: Duration::from_secs_f64(ACK_TIMEOUT.read(node)?),
            failsafe: FAILSAFE.read(node)?,
            gains: TwistGains {
                power: gain(node, "power_gain", 0.02)?,
                pitch: gain(node, "pitch_gain", 0.1)?,
                roll: gain(node, "roll_gain", 1.0)?,
                yaw: gain(node, "yaw_gain", 0.5)?,
            },
            covariances: Covariances::from_params(node, d, &[Variance::POSE, Variance::TWIST, Variance::IMU].concat())?,
            camera_fov_deg: CAMERA_FOV_DEG.read(node)?,
            decode_images_always: shared::decode_images_always(node)?,
            cameras: camera_topics.into_iter().zip(camera_names).collect(),
            origin: Origin {
                latitude_deg: FloatParam::new("origin_latitude_deg", 0.0, -90.0..=90.0).read(node)?,
                longitude_deg: FloatParam::new("origin_longitude_deg", 0.0, -180.0..=180.0).read(node)?,
                altitude_m: FloatParam::new("origin_altitude_m", 0.0, -1e4..=1e5).read(node)?,
            },
        })
    }
}
