//! The executables' common body: read parameters, build one r2r node per
//! sensor (and per vehicle), run every stream on one tokio runtime, spin the
//! nodes, stop cleanly on SIGINT / SIGTERM.

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use r2r::{Node, QosProfile};

use rflysim_proto::config::{load_config_report, udp_port_clashes, AngleUnit, SensorConfig, SensorDefaults};
use rflysim_proto::sensor::SensorClass;

use crate::coptersim::{run_heartbeat, CopterBridge, CopterSettings};
use crate::sensor::{SensorPipeline, SensorSettings};
use ros_common::msgs::Covariances;
use ros_common::net::SenderFilter;
use ros_common::params;
use ros_common::stats::StreamStats;
use ros_common::time::{ClockPublisher, TimeBase};

/// Which part of RflySim an executable bridges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Every sensor of the config, the IMUs and true state of `copter_ids`.
    Bridge,
    /// One LiDAR / depth-cloud sensor (`seq_id`, or the config's first).
    Lidar,
    /// One camera (`seq_id`, or the config's first).
    Camera,
    /// The IMUs and true state of `copter_ids`.
    Imu,
    /// Control and status of the gimbal cameras (TypeID 9) of the config.
    Gimbal,
}

impl Role {
    fn node_name(self) -> &'static str {
        match self {
            Role::Bridge => "rflysim_bridge",
            Role::Lidar => "rflysim_lidar",
            Role::Camera => "rflysim_camera",
            Role::Imu => "rflysim_imu",
            Role::Gimbal => "rflysim_gimbal",
        }
    }
    fn wants(self, cfg: &SensorConfig) -> bool {
        let class = cfg.kind().map(|k| k.class);
        match self {
            Role::Bridge => true,
            Role::Lidar => matches!(class, Some(SensorClass::Lidar | SensorClass::DepthCloud)),
            Role::Camera => matches!(class, Some(SensorClass::Camera(_))),
            Role::Imu => false,
            Role::Gimbal => cfg.is_gimbal(),
        }
    }
}

/// Everything the parameters say.
#[derive(Debug, Clone)]
pub struct Settings {
    pub config_path: Option<PathBuf>,
    pub seq_id: Option<u16>,
    pub copter_ids: Vec<u16>,
    pub sim_ip: Ipv4Addr,
    pub window_id: u16,
    pub send_requests: bool,
    pub use_sim_time: bool,
    pub imu: bool,
    pub imu_rate_hz: u16,
    pub heartbeat_port: u16,
    pub heartbeat_multicast: bool,
    pub angle_unit: AngleUnit,
    pub sensor: SensorSettings,
    pub publish_tf: bool,
    /// Where odom → base_link comes from: the LiDAR pose or CopterSim's true state.
    pub tf_source: TfSource,
    pub diagnostics_period: Duration,
    pub gimbal_bits: rflysim_proto::gimbal::GimbalBitTable,
    pub request_checksum: u16,
    pub status_port: u16,
    pub status_multicast: bool,
    /// Who may send to the bridge's sockets (`sim_ip`, loopback, `allowed_senders`).
    pub senders: SenderFilter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TfSource {
    Lidar,
    State,
    None,
}

fn bad(name: &str, msg: impl std::fmt::Display) -> String {
    format!("parameter {name}: {msg}")
}

impl Settings {
    pub fn from_node(node: &Node) -> Result<Settings, String> {
        let e = |err: r2r::Error| err.to_string();
        let path = params::string(node, "rflysim_config", "").map_err(e)?;
        let seq = params::int(node, "seq_id", -1).map_err(e)?;
        let ids = params::int_array(node, "copter_ids", &[1]).map_err(e)?;
        let copter_ids = ids
            .iter()
            .map(|&i| {
                u16::try_from(i)
                    .ok()
                    .filter(|&i| i > 0)
                    .ok_or_else(|| bad("copter_ids", format!("{i} is not a vehicle id")))
            })
            .collect::<Result<Vec<u16>, String>>()?;
        let ip = params::string(node, "sim_ip", "127.0.0.1").map_err(e)?;
        let sim_ip: Ipv4Addr = ip
            .parse()
            .map_err(|_| bad("sim_ip", format!("{ip:?} is not an IPv4 address")))?;
        let window = params::int(node, "window_id", 0).map_err(e)?;
        let window_id = u16::try_from(window)
            .ok()
            .filter(|w| *w < 20)
            .ok_or_else(|| bad("window_id", "expected 0..19"))?;
        let depth = params::int(node, "qos_depth", ros_common::qos::DEFAULT_SENSOR_DEPTH as i64).map_err(e)?;
        let unit = params::string(node, "angle_unit", "auto").map_err(e)?;
        let angle_unit = match unit.as_str() {
            "auto" => AngleUnit::Auto,
            "rad" | "radians" => AngleUnit::Radians,
            "deg" | "degrees" => AngleUnit::Degrees,
            other => return Err(bad("angle_unit", format!("{other:?} is not auto, rad or deg"))),
        };
        let d = Covariances::default();
        let covariances = Covariances {
            imu_gyro: params::float(node, "imu_gyro_variance", d.imu_gyro).map_err(e)?,
            imu_accel: params::float(node, "imu_accel_variance", d.imu_accel).map_err(e)?,
            imu_orientation: params::float(node, "imu_orientation_variance", d.imu_orientation).map_err(e)?,
            pose_position: params::float(node, "pose_position_variance", d.pose_position).map_err(e)?,
            pose_orientation: params::float(node, "pose_orientation_variance", d.pose_orientation).map_err(e)?,
            ..d
        };
        let publish_tf = params::boolean(node, "publish_tf", true).map_err(e)?;
        let tf_source = match params::string(node, "tf_source", "lidar").map_err(e)?.as_str() {
            _ if !publish_tf => TfSource::None,
            "lidar" => TfSource::Lidar,
            "state" => TfSource::State,
            other => return Err(bad("tf_source", format!("{other:?} is not lidar or state"))),
        };
        let bits_name = params::string(node, "gimbal_bits", "seed000").map_err(e)?;
        let gimbal_bits = rflysim_proto::gimbal::GimbalBitTable::by_name(&bits_name)
            .ok_or_else(|| bad("gimbal_bits", format!("{bits_name:?} is not seed000 or sdk")))?;
        let checksum = params::int(
            node,
            "request_checksum",
            i64::from(rflysim_proto::request::REQUEST_CHECKSUM),
        )
        .map_err(e)?;
        let extra_senders = params::string_array(node, "allowed_senders", &[]).map_err(e)?;
        let senders = SenderFilter::new(sim_ip, &extra_senders).map_err(|m| bad("allowed_senders", m))?;
        Ok(Settings {
            senders: senders.clone(),
            publish_tf,
            tf_source,
            diagnostics_period: Duration::from_secs_f64(
                params::float(node, "diagnostics_period", 1.0)
                    .map_err(e)?
                    .clamp(0.05, 60.0),
            ),
            gimbal_bits,
            request_checksum: u16::try_from(checksum).map_err(|_| bad("request_checksum", "expected 0..65535"))?,
            status_port: params::int(node, "status_port", i64::from(rflysim_proto::ports::CAMERA_STATUS_PORT))
                .map_err(e)?
                .clamp(1, 65535) as u16,
            status_multicast: params::boolean(node, "status_multicast", true).map_err(e)?,
            config_path: (!path.is_empty()).then(|| PathBuf::from(path)),
            seq_id: u16::try_from(seq).ok(),
            copter_ids,
            sim_ip,
            window_id,
            send_requests: params::boolean(node, "send_requests", true).map_err(e)?,
            use_sim_time: params::boolean(node, "use_sim_time", false).map_err(e)?,
            imu: params::boolean(node, "imu", true).map_err(e)?,
            imu_rate_hz: params::int(node, "imu_rate_hz", 200).map_err(e)?.clamp(1, 1000) as u16,
            heartbeat_port: params::int(node, "heartbeat_port", i64::from(rflysim_proto::ports::HEARTBEAT_PORT))
                .map_err(e)?
                .clamp(1, 65535) as u16,
            heartbeat_multicast: params::boolean(node, "heartbeat_multicast", true).map_err(e)?,
            angle_unit,
            sensor: SensorSettings {
                qos: ros_common::qos::sensor_publisher(depth.clamp(1, 1000) as usize),
                rcvbuf: params::int(node, "rcvbuf_bytes", 32 << 20)
                    .map_err(e)?
                    .clamp(1 << 16, 1 << 30) as usize,
                max_frame_bytes: params::int(node, "max_frame_bytes", 64 << 20)
                    .map_err(e)?
                    .clamp(1 << 10, 1 << 30) as usize,
                covariances,
                always_decode: params::boolean(node, "decode_jpeg_always", false).map_err(e)?,
                tf_from_lidar: publish_tf && tf_source == TfSource::Lidar,
                senders,
                ..SensorSettings::default()
            },
        })
    }

    /// The sensors this role serves, and the fields the config left out for them.
    pub fn sensors(&self, role: Role) -> Result<(Vec<SensorConfig>, Vec<SensorDefaults>), String> {
        if role == Role::Imu {
            return Ok(Default::default());
        }
        let path = self
            .config_path
            .as_ref()
            .ok_or("parameter rflysim_config: the path of a RflySim Config.json is needed")?;
        let report = load_config_report(path, self.angle_unit).map_err(|e| e.to_string())?;
        let clashes = udp_port_clashes(&report.sensors);
        if !clashes.is_empty() {
            return Err(format!("{}: {}", path.display(), clashes.join("; ")));
        }
        let mut chosen: Vec<SensorConfig> = report.sensors.into_iter().filter(|c| role.wants(c)).collect();
        if role != Role::Bridge {
            chosen = match self.seq_id {
                Some(id) => chosen.into_iter().filter(|c| c.seq_id == id).collect(),
                None => chosen.into_iter().take(1).collect(),
            };
            if chosen.is_empty() {
                return Err(format!(
                    "no {role:?} sensor{} in {}",
                    self.seq_id.map(|i| format!(" with SeqID {i}")).unwrap_or_default(),
                    path.display()
                ));
            }
        }
        let defaulted = report
            .defaulted
            .into_iter()
            .filter(|d| chosen.iter().any(|c| c.seq_id == d.seq_id));
        let defaulted = defaulted.collect();
        Ok((chosen, defaulted))
    }
}

/// Builds the nodes of `role` and runs them until SIGINT / SIGTERM.
pub fn main(role: Role) -> std::process::ExitCode {
    match run(role) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("[{}] error: {e}", role.node_name());
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(role: Role) -> Result<(), String> {
    let (ctx, dds_profile) = ros_common::dds::context()?;
    let mut main_node = Node::create(ctx.clone(), role.node_name(), "").map_err(|e| e.to_string())?;
    let logger = main_node.logger().to_string();
    ros_common::dds::log_profile(&logger, dds_profile.as_deref());
    let settings = Settings::from_node(&main_node)?;
    let (sensors, defaulted) = settings.sensors(role)?;
    for d in &defaulted {
        r2r::log_warn!(&logger, "{d} (RflySim's Python SDK needs these fields in Config.json)");
    }
    let runtime = ros_common::lifecycle::runtime()?;
    let (stop_tx, stop_rx) = ros_common::lifecycle::stop_channel();

    let time = Arc::new(TimeBase::new(settings.use_sim_time));
    let clock = if settings.use_sim_time {
        Some(Arc::new(
            ClockPublisher::new(&mut main_node).map_err(|e| e.to_string())?,
        ))
    } else {
        None
    };
    let mut nodes = vec![];
    let mut request_list: Vec<(SensorConfig, Arc<StreamStats>)> = Vec::new();
    let mut watched: Vec<ros_common::diagnostics::Watched> = Vec::new();
    let _guard = runtime.enter();

    if role == Role::Gimbal {
        let gs = crate::gimbal_node::GimbalSettings {
            sim_ip: settings.sim_ip,
            window_id: settings.window_id,
            bits: settings.gimbal_bits,
            checksum: settings.request_checksum,
            status_port: settings.status_port,
            status_multicast: settings.status_multicast,
            qos: settings.sensor.qos.clone(),
            senders: settings.senders.clone(),
            status_stats: Arc::new(StreamStats::default()),
        };
        watched.push(ros_common::diagnostics::Watched {
            name: "rflysim_bridge: gimbal status".into(),
            hardware_id: "rflysim/gimbal".into(),
            stats: gs.status_stats.clone(),
        });
        let n = crate::gimbal_node::start(&mut main_node, &sensors, gs, stop_rx.clone())?;
        if n == 0 {
            r2r::log_warn!(&logger, "no gimbal camera (TypeID 9) in the config: nothing to control");
        }
    }
    // Mounts never change: one latched message on /tf_static.
    let _static_tf = if settings.publish_tf && role != Role::Gimbal && !sensors.is_empty() {
        let p = main_node
            .create_publisher::<r2r::tf2_msgs::msg::TFMessage>("/tf_static", ros_common::qos::latched())
            .map_err(|e| e.to_string())?;
        let stamp = ros_common::time::to_ros_time(if settings.use_sim_time {
            0.0
        } else {
            ros_common::time::wall_now()
        });
        p.publish(&crate::tf::static_tf(&sensors, stamp))
            .map_err(|e| e.to_string())?;
        Some(p)
    } else {
        None
    };

    for cfg in sensors.iter().filter(|_| role != Role::Gimbal).cloned() {
        let mut node =
            Node::create(ctx.clone(), &format!("rflysim_sensor{}", cfg.seq_id), "").map_err(|e| e.to_string())?;
        match SensorPipeline::new(&mut node, cfg.clone(), time.clone(), settings.sensor.clone()) {
            Ok(p) => {
                watched.push(ros_common::diagnostics::Watched {
                    name: format!("rflysim_bridge: sensor{} {}", cfg.seq_id, p.topic()),
                    hardware_id: format!("rflysim/sensor{}", cfg.seq_id),
                    stats: p.stats.clone(),
                });
                request_list.push((cfg, p.stats.clone()));
                runtime.spawn(p.with_clock(clock.clone()).run(stop_rx.clone()));
                nodes.push(node);
            }
            Err(e) => r2r::log_warn!(&logger, "{e}"),
        }
    }
    if matches!(role, Role::Bridge | Role::Imu) && settings.imu {
        let copter_settings = CopterSettings {
            sim_ip: settings.sim_ip,
            rate_hz: settings.imu_rate_hz,
            send_requests: settings.send_requests,
            several: settings.copter_ids.len() > 1,
            qos: settings.sensor.qos.clone(),
            covariances: settings.sensor.covariances,
            tf: settings.tf_source == TfSource::State,
            senders: settings.senders.clone(),
        };
        for &id in &settings.copter_ids {
            let mut node = Node::create(ctx.clone(), &format!("rflysim_uav{id}"), "").map_err(|e| e.to_string())?;
            let copter = CopterBridge::new(&mut node, id, time.clone(), &copter_settings).map_err(|e| e.to_string())?;
            watched.push(ros_common::diagnostics::Watched {
                name: format!("rflysim_bridge: uav{id} imu"),
                hardware_id: format!("rflysim/uav{id}"),
                stats: copter.imu_stats.clone(),
            });
            watched.push(ros_common::diagnostics::Watched {
                name: format!("rflysim_bridge: uav{id} true state"),
                hardware_id: format!("rflysim/uav{id}"),
                stats: copter.state_stats.clone(),
            });
            runtime.spawn(copter.with_clock(clock.clone()).run(stop_rx.clone()));
            nodes.push(node);
        }
    }
    if !settings.use_sim_time && role != Role::Gimbal {
        let heartbeat_stats = Arc::new(StreamStats::default());
        watched.push(ros_common::diagnostics::Watched {
            name: "rflysim_bridge: CopterSim heartbeat".into(),
            hardware_id: "rflysim/coptersim".into(),
            stats: heartbeat_stats.clone(),
        });
        runtime.spawn(run_heartbeat(
            settings.heartbeat_port,
            settings.heartbeat_multicast,
            settings.senders.clone(),
            time.clone(),
            heartbeat_stats,
            logger.clone(),
            stop_rx.clone(),
        ));
    }
    if !watched.is_empty() {
        let p = main_node
            .create_publisher("/diagnostics", QosProfile::default().keep_last(10).reliable())
            .map_err(|e| e.to_string())?;
        runtime.spawn(ros_common::diagnostics::run(
            p,
            watched,
            settings.diagnostics_period,
            stop_rx.clone(),
        ));
    }
    if settings.send_requests && !request_list.is_empty() {
        runtime.spawn(crate::requests::run_requests(
            request_list,
            settings.sim_ip,
            settings.window_id,
            logger.clone(),
            stop_rx.clone(),
        ));
    }
    nodes.insert(0, main_node);
    r2r::log_info!(
        &logger,
        "running with {} node(s); time base: {}",
        nodes.len(),
        if settings.use_sim_time {
            "sim time (/clock)"
        } else {
            "wall clock"
        }
    );

    drop(_guard);
    ros_common::lifecycle::run_until_signalled(runtime, nodes, stop_tx, &logger);
    Ok(())
}
