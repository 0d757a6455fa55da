//! What the parameters of RflySim's executables say, read once at start and
//! composed by concern: the config file, the link to the simulator, the time
//! base, how streams publish, and the settings of each kind of node. Every
//! parameter is declared once in [`param`] (name, default, range); a value
//! out of range or of the wrong type stops the executable with an error that
//! names the parameter (the policy of `ros_common::params`).

use std::path::PathBuf;
use std::time::Duration;

use r2r::{Node, QosProfile};

use rflysim_proto::config::AngleUnit;
use rflysim_proto::gimbal::GimbalBitTable;
use ros_common::msgs::{Covariances, Variance};
use ros_common::net::SenderFilter;
use ros_common::params::{self, invalid, Renamed};
use ros_common::sim_host::SimHost;
use ros_common::time::StampSource;

/// Every parameter of RflySim's executables, with its default and range.
pub mod param {
    use rflysim_proto::config::AngleUnit;
    use rflysim_proto::gimbal::{GimbalBitTable, PROTOCOL_BITS, SDK_BITS};
    use rflysim_proto::ports;
    use rflysim_proto::request::REQUEST_CHECKSUM as REQUEST_CHECKSUM_VALUE;
    use ros_common::params::{
        BoolParam, ChoiceParam, FloatParam, IntListParam, IntParam, StringListParam, StringParam,
    };

    use super::TfSource;
    /// Gimbal rates: `cmd_timeout_s` of silence after the last rate command stops the motion.
    pub use ros_common::params::shared::{
        CMD_TIMEOUT, DECODE_IMAGES_ALWAYS, DIAGNOSTICS_PERIOD, PUBLISH_TF, QOS_DEPTH, USE_SIM_TIME,
    };
    pub use ros_common::time::STAMP_SOURCE;

    pub const RFLYSIM_CONFIG: StringParam = StringParam::new(
        "rflysim_config",
        "",
        "path of the RflySim `Config.json` whose sensors are bridged (read as RflySim reads it: comments, 8 or 16 `otherParams`, SeqID 0 = previous + 1)",
    );
    pub const SEQ_ID: IntParam = IntParam::new(
        "seq_id",
        -1,
        -1..=65_535,
        "the sensor (`SeqID`) of `camera_node` / `lidar_node`; −1: the first of its kind",
    );
    pub const VEHICLE_IDS: IntListParam = IntListParam::new(
        "vehicle_ids",
        &[1],
        "vehicles (1–65535) whose IMU and true state are bridged (and MAVROS started)",
    );
    pub const SIM_HOST: StringParam = StringParam::new(
        "sim_host",
        "127.0.0.1",
        "RflySim3D / CopterSim's host, an IPv4 address or a host name (looked up at start and again while the simulator is silent): requests go there; only it, loopback and `allowed_senders` may send",
    );
    pub const ALLOWED_SENDERS: StringListParam = StringListParam::new(
        "allowed_senders",
        &[],
        "more hosts that may send to the bridge: addresses, networks (`192.168.1.0/24`) or `any`; others are dropped and counted",
    );
    pub const WINDOW_ID: IntParam = IntParam::new(
        "window_id",
        0,
        0..=19,
        "RflySim3D window: requests go to UDP 20010 + `window_id`",
    );
    pub const SEND_REQUESTS: BoolParam = BoolParam::new(
        "send_requests",
        true,
        "ask RflySim3D and CopterSim for each stream every second until its data flows, and again if it stops",
    );
    pub const IMU: BoolParam = BoolParam::new("imu", true, "bridge the IMU and true state of `vehicle_ids`");
    pub const IMU_RATE_HZ: IntParam = IntParam::new("imu_rate_hz", 200, 1..=1000, "the IMU rate asked of CopterSim");
    pub const HEARTBEAT_PORT: IntParam = IntParam::new(
        "heartbeat_port",
        ports::HEARTBEAT_PORT as i64,
        1..=65_535,
        "CopterSim's heartbeat, which tells the RflySim PC's clock offset",
    );
    pub const HEARTBEAT_MULTICAST: BoolParam = BoolParam::new(
        "heartbeat_multicast",
        true,
        "join the heartbeat's multicast group 224.0.0.10 towards `sim_host` and `allowed_senders`",
    );
    pub const ANGLE_UNIT: ChoiceParam<AngleUnit> = ChoiceParam::new(
        "angle_unit",
        "auto",
        &[
            ("auto", AngleUnit::Auto),
            ("rad", AngleUnit::Radians),
            ("deg", AngleUnit::Degrees),
        ],
        "the unit of the mount angles (`SensorAngEular`) in the config; `auto`: degrees if one exceeds 2π",
    )
    .with_former(&[("radians", "rad"), ("degrees", "deg")]);
    pub const RCVBUF_BYTES: IntParam = IntParam::new(
        "rcvbuf_bytes",
        32 << 20,
        1 << 16..=1 << 30,
        "UDP receive buffer asked for (the kernel grants at most `net.core.rmem_max`; the granted size is logged)",
    );
    pub const MAX_MESSAGE_BYTES: IntParam = IntParam::new(
        "max_message_bytes",
        64 << 20,
        1 << 10..=1 << 30,
        "the largest frame accepted; each sensor is bounded further by its configured size ([RflySim](rflysim.md#parameters))",
    );
    pub const TF_SOURCE: ChoiceParam<TfSource> = ChoiceParam::new(
        "tf_source",
        "lidar",
        &[("lidar", TfSource::Lidar), ("state", TfSource::State)],
        "where odom → base_link on `/tf` comes from: the LiDAR frames' pose (`lidar`) or CopterSim's true state (`state`)",
    );
    pub const GIMBAL_BITS: ChoiceParam<GimbalBitTable> = ChoiceParam::new(
        "gimbal_bits",
        PROTOCOL_BITS.name,
        &[(PROTOCOL_BITS.name, PROTOCOL_BITS), (SDK_BITS.name, SDK_BITS)],
        "gimbal control bit numbering: the RflySim vision protocol's (`protocol`) or the SDK's `CameraCtrlApi.py` (`sdk`)",
    );
    pub const REQUEST_CHECKSUM: IntParam = IntParam::new(
        "request_checksum",
        REQUEST_CHECKSUM_VALUE as i64,
        0..=65_535,
        "checksum of the 148-byte gimbal request (RflySim3D's echo uses 12346)",
    );
    pub const STATUS_PORT: IntParam = IntParam::new(
        "status_port",
        ports::CAMERA_STATUS_PORT as i64,
        1..=65_535,
        "RflySim3D's status port: gimbal echoes and the scene's postback",
    );
    pub const STATUS_MULTICAST: BoolParam = BoolParam::new(
        "status_multicast",
        true,
        "join the status port's multicast group 224.0.0.10 when possible",
    );
    pub const CAMERA_INFO_UNDER_IMAGE: BoolParam = BoolParam::new(
        "camera_info_under_image",
        false,
        "also publish each camera's info on `<image>/camera_info`, where earlier releases put it (beside the image it always is)",
    );
    pub const FIRST_SPAWN_ID: IntParam = IntParam::new(
        "first_spawn_id",
        1000,
        1..=65_535,
        "the scene: spawned vehicles get CopterIDs from here up (skipping those in use)",
    );
    pub const SCENE_TIMEOUT: FloatParam = FloatParam::new(
        "scene_timeout_s",
        1.0,
        0.05..=30.0,
        "the scene: seconds a call waits for RflySim3D's answer",
    );
    pub const MAX_SCENE_ENTITIES: IntParam = IntParam::new(
        "max_scene_entities",
        10_000,
        10..=100_000,
        "the scene: entities known at most (vehicles reported, objects asked for, vehicles spawned); a spawn beyond it is refused",
    );
    pub const MAX_SPAWNED_VEHICLE_TOPICS: IntParam = IntParam::new(
        "max_spawned_vehicle_topics",
        100,
        0..=10_000,
        "the scene: spawned vehicles at most that have topics of their own (`collision`, `scene/odom`, `scene/rays`, `label`: four DDS endpoints each, which every participant discovers); one spawned beyond it is in the scene without them",
    );
    pub const WORLD_NAME: StringParam = StringParam::new(
        "world_name",
        "",
        "the scene: the map RflySim3D started with, for `get_current_world` and the terrain (unknown until `load_world` otherwise)",
    );
    pub const MAP_DIR: StringParam = StringParam::new(
        "map_dir",
        "~/PX4PSP/CopterSim/external/map",
        "the scene: the folder of RflySim's map files (`<map>.png`, `<map>.txt`), RflySim's own `C:\\PX4PSP\\CopterSim\\external\\map` copied to this PC; `~` is the home folder",
    );
    pub const TERRAIN_CLOUD_POINTS: IntParam = IntParam::new(
        "terrain_cloud_points",
        262_144,
        4..=16_777_216,
        "the scene: the most points of `rflysim/scene/terrain`; a larger map is thinned evenly (every n-th row and column)",
    );

    pub const INTS: &[IntParam] = &[
        SEQ_ID,
        WINDOW_ID,
        QOS_DEPTH,
        IMU_RATE_HZ,
        HEARTBEAT_PORT,
        RCVBUF_BYTES,
        MAX_MESSAGE_BYTES,
        REQUEST_CHECKSUM,
        STATUS_PORT,
        FIRST_SPAWN_ID,
        MAX_SCENE_ENTITIES,
        MAX_SPAWNED_VEHICLE_TOPICS,
        TERRAIN_CLOUD_POINTS,
    ];
    pub const FLOATS: &[FloatParam] = &[DIAGNOSTICS_PERIOD, CMD_TIMEOUT, SCENE_TIMEOUT];
}

/// Where odom → base_link on `/tf` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TfSource {
    /// The pose that comes with LiDAR frames.
    Lidar,
    /// CopterSim's true state.
    State,
    /// `publish_tf` is off.
    None,
}

/// Which sensors of which file.
#[derive(Debug, Clone)]
pub struct ConfigChoice {
    pub path: Option<PathBuf>,
    /// The one sensor of `camera_node` / `lidar_node`; `None`: the first of its kind.
    pub seq_id: Option<u16>,
    pub angle_unit: AngleUnit,
}

/// Where the simulator is, and who may send to the bridge.
#[derive(Debug, Clone)]
pub struct SimLink {
    /// RflySim3D / CopterSim host, where requests go.
    pub sim_host: SimHost,
    /// RflySim3D window: requests go to its port.
    pub window_id: u16,
    /// Ask RflySim3D and CopterSim for the data until it flows.
    pub send_requests: bool,
    /// Who may send to the bridge's sockets (`sim_host`, loopback, `allowed_senders`).
    pub senders: SenderFilter,
}

/// How stamps are made.
#[derive(Debug, Clone, Copy)]
pub struct TimeSettings {
    pub use_sim_time: bool,
    pub stamp_source: StampSource,
    pub heartbeat_port: u16,
    pub heartbeat_multicast: bool,
}

/// How every stream publishes.
#[derive(Debug, Clone)]
pub struct OutputSettings {
    pub qos: QosProfile,
    pub covariances: Covariances,
    pub tf_source: TfSource,
    pub diagnostics_period: Duration,
}

impl OutputSettings {
    /// Static TF of the mounts on `/tf_static`, and odom → base_link on `/tf`.
    pub fn publish_tf(&self) -> bool {
        self.tf_source != TfSource::None
    }
}

/// What the sensors of a process share.
#[derive(Debug, Clone)]
pub struct SensorSettings {
    pub rcvbuf: usize,
    pub max_frame_bytes: usize,
    /// Always decode JPEG, even while nobody subscribes to the raw topic.
    pub always_decode: bool,
    /// Each camera's info also on `<image>/camera_info`, besides `<ns>/camera_info`.
    pub camera_info_under_image: bool,
    /// Shared-memory poll period.
    pub shm_poll: Duration,
}

impl Default for SensorSettings {
    fn default() -> Self {
        Self {
            rcvbuf: param::RCVBUF_BYTES.default_as(),
            max_frame_bytes: param::MAX_MESSAGE_BYTES.default_as(),
            always_decode: param::DECODE_IMAGES_ALWAYS.default,
            camera_info_under_image: param::CAMERA_INFO_UNDER_IMAGE.default,
            shm_poll: Duration::from_millis(1),
        }
    }
}

/// The vehicles whose IMU and true state are bridged.
#[derive(Debug, Clone)]
pub struct CopterSettings {
    pub ids: Vec<u16>,
    /// Bridge the IMU (and true state) at all.
    pub imu: bool,
    /// IMU rate asked of CopterSim.
    pub rate_hz: u16,
}

impl CopterSettings {
    /// Several vehicles: IMU topics under `/uav<id>/`.
    pub fn several(&self) -> bool {
        self.ids.len() > 1
    }
}

/// Gimbal control and status.
#[derive(Debug, Clone, Copy)]
pub struct GimbalSettings {
    pub bits: GimbalBitTable,
    pub checksum: u16,
    pub status_port: u16,
    pub status_multicast: bool,
    /// After the last rate command, the rates are set to zero.
    pub cmd_timeout: Duration,
}

/// Everything the parameters say.
#[derive(Debug, Clone)]
pub struct Settings {
    pub config: ConfigChoice,
    pub link: SimLink,
    pub time: TimeSettings,
    pub output: OutputSettings,
    pub sensor: SensorSettings,
    pub copters: CopterSettings,
    pub gimbal: GimbalSettings,
    pub scene: SceneSettings,
}

/// The scene node's parameters.
#[derive(Debug, Clone)]
pub struct SceneSettings {
    /// Spawned vehicles get CopterIDs from here up.
    pub first_spawn_id: u16,
    /// How long a call waits for RflySim3D's answer.
    pub reply_timeout: Duration,
    /// Entities known at most (vehicles RflySim3D reports, objects asked for).
    pub max_entities: usize,
    /// Spawned vehicles at most with topics of their own: each costs four
    /// DDS endpoints, which every participant of the domain discovers.
    pub max_spawned_topics: usize,
    /// The map RflySim3D started with, if known ("": unknown until `load_world`).
    pub world: String,
    /// RflySim's map files (`<world>.png`, `<world>.txt`).
    pub map_dir: PathBuf,
    /// The most points of the terrain's cloud.
    pub terrain_cloud_points: usize,
}

/// The former names of RflySim's parameters.
pub const RENAMED: &[Renamed] = &[
    Renamed::new("copter_ids", "vehicle_ids"),
    Renamed::new("sim_ip", "sim_host"),
    Renamed::new("max_frame_bytes", "max_message_bytes"),
    Renamed::new("scene_timeout", "scene_timeout_s"),
    Renamed::new("world", "world_name"),
];

/// Reads every value given under a former name under its new one (with a
/// warning): the first thing every RflySim executable does with its parameters.
pub fn take_former_names(node: &Node) -> Result<(), String> {
    params::apply_renamed(node, &[params::shared::RENAMED, RENAMED])
}

/// `vehicle_ids`: a non-empty list of vehicle ids, 1..=65535. Read here for
/// every executable that takes it (the bridges and the MAVROS launcher).
pub fn copter_ids(node: &Node) -> Result<Vec<u16>, String> {
    check_copter_ids(&param::VEHICLE_IDS.read(node)?)
}

fn check_copter_ids(ids: &[i64]) -> Result<Vec<u16>, String> {
    if ids.is_empty() {
        return Err(invalid(param::VEHICLE_IDS.name, "no vehicle id"));
    }
    ids.iter()
        .map(|&i| {
            u16::try_from(i)
                .ok()
                .filter(|&i| i > 0)
                .ok_or_else(|| invalid(param::VEHICLE_IDS.name, format!("{i} is not a vehicle id (1..=65535)")))
        })
        .collect()
}

/// `sim_host`: the simulator's host, its name looked up.
pub fn sim_host(node: &Node) -> Result<SimHost, String> {
    SimHost::resolve(&param::SIM_HOST.read(node)?).map_err(|why| invalid(param::SIM_HOST.name, why))
}

/// `world_name`: empty (unknown), or a map's name, a file name in `map_dir`.
fn world_name(node: &Node) -> Result<String, String> {
    let world = param::WORLD_NAME.read(node)?;
    if world.is_empty() {
        return Ok(world);
    }
    crate::maps::map_of(&world).map_err(|why| invalid(param::WORLD_NAME.name, why))
}

impl ConfigChoice {
    fn from_node(node: &Node) -> Result<Self, String> {
        let path = param::RFLYSIM_CONFIG.read(node)?;
        let seq_id: i64 = param::SEQ_ID.read(node)?;
        Ok(Self {
            path: (!path.is_empty()).then(|| PathBuf::from(path)),
            seq_id: u16::try_from(seq_id).ok(),
            angle_unit: param::ANGLE_UNIT.read(node)?,
        })
    }
}

impl SimLink {
    fn from_node(node: &Node) -> Result<Self, String> {
        let sim_host = sim_host(node)?;
        let extra = param::ALLOWED_SENDERS.read(node)?;
        Ok(Self {
            sim_host: sim_host.clone(),
            window_id: param::WINDOW_ID.read(node)?,
            send_requests: param::SEND_REQUESTS.read(node)?,
            senders: SenderFilter::new(sim_host, &extra).map_err(|m| invalid(param::ALLOWED_SENDERS.name, m))?,
        })
    }
}

impl OutputSettings {
    fn from_node(node: &Node) -> Result<Self, String> {
        let depth: usize = param::QOS_DEPTH.read(node)?;
        // The defaults are the package's own, kept in `Covariances::default` (REP-145 says how
        // unknown data is marked, not what a variance is); a variance is finite and ≥ 0.
        let published = [Variance::IMU, Variance::POSE].concat();
        let covariances = Covariances::from_params(node, Covariances::default(), &published)?;
        let publish_tf = param::PUBLISH_TF.read(node)?;
        let tf_source = param::TF_SOURCE.read(node)?;
        Ok(Self {
            qos: ros_common::qos::sensor_publisher(depth),
            covariances,
            tf_source: if publish_tf { tf_source } else { TfSource::None },
            diagnostics_period: Duration::from_secs_f64(param::DIAGNOSTICS_PERIOD.read(node)?),
        })
    }
}

impl Settings {
    pub fn from_node(node: &Node) -> Result<Settings, String> {
        take_former_names(node)?;
        Ok(Settings {
            config: ConfigChoice::from_node(node)?,
            link: SimLink::from_node(node)?,
            time: TimeSettings {
                use_sim_time: param::USE_SIM_TIME.read(node)?,
                stamp_source: param::STAMP_SOURCE.read(node)?,
                heartbeat_port: param::HEARTBEAT_PORT.read(node)?,
                heartbeat_multicast: param::HEARTBEAT_MULTICAST.read(node)?,
            },
            output: OutputSettings::from_node(node)?,
            sensor: SensorSettings {
                rcvbuf: param::RCVBUF_BYTES.read(node)?,
                max_frame_bytes: param::MAX_MESSAGE_BYTES.read(node)?,
                always_decode: param::DECODE_IMAGES_ALWAYS.read(node)?,
                camera_info_under_image: param::CAMERA_INFO_UNDER_IMAGE.read(node)?,
                ..SensorSettings::default()
            },
            copters: CopterSettings {
                ids: copter_ids(node)?,
                imu: param::IMU.read(node)?,
                rate_hz: param::IMU_RATE_HZ.read(node)?,
            },
            gimbal: GimbalSettings {
                bits: param::GIMBAL_BITS.read(node)?,
                checksum: param::REQUEST_CHECKSUM.read(node)?,
                status_port: param::STATUS_PORT.read(node)?,
                status_multicast: param::STATUS_MULTICAST.read(node)?,
                cmd_timeout: Duration::from_secs_f64(param::CMD_TIMEOUT.read(node)?),
            },
            scene: SceneSettings {
                first_spawn_id: param::FIRST_SPAWN_ID.read(node)?,
                reply_timeout: Duration::from_secs_f64(param::SCENE_TIMEOUT.read(node)?),
                max_entities: param::MAX_SCENE_ENTITIES.read(node)?,
                max_spawned_topics: param::MAX_SPAWNED_VEHICLE_TOPICS.read(node)?,
                world: world_name(node)?,
                map_dir: crate::maps::expand_home(&param::MAP_DIR.read(node)?),
                terrain_cloud_points: param::TERRAIN_CLOUD_POINTS.read(node)?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copter_ids_are_vehicle_ids() {
        assert_eq!(check_copter_ids(&[1, 2, 65_535]), Ok(vec![1, 2, 65_535]));
        for bad in [&[0][..], &[1, -1], &[65_536], &[]] {
            let e = check_copter_ids(bad).unwrap_err();
            assert!(e.starts_with("parameter vehicle_ids: "), "{e}");
        }
    }

    #[test]
    fn every_default_is_in_its_range() {
        for p in param::INTS {
            p.check::<i64>(p.default).unwrap();
        }
        for p in param::FLOATS {
            p.check(p.default).unwrap();
        }
        param::ANGLE_UNIT.check(param::ANGLE_UNIT.default).unwrap();
        param::TF_SOURCE.check(param::TF_SOURCE.default).unwrap();
        param::GIMBAL_BITS.check(param::GIMBAL_BITS.default).unwrap();
    }
}
