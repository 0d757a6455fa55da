//! The executables' common body, in named steps: read the parameters and
//! the config, then start what the role serves (gimbal control, static TF,
//! one r2r node per sensor and per vehicle, the heartbeat, diagnostics,
//! sensor requests) on one tokio runtime, spin the nodes, and stop cleanly
//! on SIGINT / SIGTERM.

use std::sync::Arc;

use r2r::tf2_msgs::msg::TFMessage;
use r2r::{Context, Node, Publisher};
use tokio::runtime::Runtime;

use rflysim_proto::config::{load_config_report, udp_port_clashes, SensorConfig, SensorDefaults};
use rflysim_proto::sensor::SensorClass;

use crate::coptersim::{run_heartbeat, CopterBridge};
use crate::names::diagnostic_name;
use crate::sensor::SensorPipeline;
use crate::settings::{ConfigChoice, Settings};
use ros_common::diagnostics::Watched;
use ros_common::lifecycle::StopSignal;
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
    /// Sensor streams, CopterSim's time base and static TF: every role but the gimbal's.
    fn streams(self) -> bool {
        self != Role::Gimbal
    }
    fn copters(self) -> bool {
        matches!(self, Role::Bridge | Role::Imu)
    }
}

/// The sensors `role` serves, and the fields the config left out for them.
pub fn sensors_for(config: &ConfigChoice, role: Role) -> Result<(Vec<SensorConfig>, Vec<SensorDefaults>), String> {
    if role == Role::Imu {
        return Ok(Default::default());
    }
    let path = config.path.as_ref().ok_or_else(|| {
        ros_common::params::invalid(
            crate::settings::param::RFLYSIM_CONFIG,
            "the path of a RflySim Config.json is needed",
        )
    })?;
    let report = load_config_report(path, config.angle_unit).map_err(|e| e.to_string())?;
    let clashes = udp_port_clashes(&report.sensors);
    if !clashes.is_empty() {
        return Err(format!("{}: {}", path.display(), clashes.join("; ")));
    }
    let mut chosen: Vec<SensorConfig> = report.sensors.into_iter().filter(|c| role.wants(c)).collect();
    if role != Role::Bridge {
        chosen = match config.seq_id {
            Some(id) => chosen.into_iter().filter(|c| c.seq_id == id).collect(),
            None => chosen.into_iter().take(1).collect(),
        };
        if chosen.is_empty() {
            return Err(format!(
                "no {role:?} sensor{} in {}",
                config.seq_id.map(|i| format!(" with SeqID {i}")).unwrap_or_default(),
                path.display()
            ));
        }
    }
    let defaulted = report
        .defaulted
        .into_iter()
        .filter(|d| chosen.iter().any(|c| c.seq_id == d.seq_id))
        .collect();
    Ok((chosen, defaulted))
}

/// Builds the nodes of `role` and runs them until SIGINT / SIGTERM.
pub fn main(role: Role) -> std::process::ExitCode {
    ros_common::lifecycle::exit_code(role.node_name(), run(role))
}

fn run(role: Role) -> Result<(), String> {
    ros_common::memory::keep_frame_buffers();
    let (ctx, dds_profile) = ros_common::dds::context()?;
    let mut main_node = Node::create(ctx.clone(), role.node_name(), "").map_err(|e| e.to_string())?;
    ros_common::dds::log_profile(main_node.logger(), dds_profile.as_deref());
    let settings = Settings::from_node(&main_node)?;
    let (sensors, defaulted) = sensors_for(&settings.config, role)?;
    let runtime = ros_common::lifecycle::runtime()?;
    let (stop_tx, stop) = ros_common::lifecycle::stop_channel();
    let mut start = Startup::new(ctx, &mut main_node, settings, stop)?;
    for d in &defaulted {
        r2r::log_warn!(
            &start.logger,
            "{d} (RflySim's Python SDK needs these fields in Config.json)"
        );
    }
    let guard = runtime.enter();
    if role == Role::Gimbal {
        start.gimbal(&mut main_node, &sensors)?;
    }
    // Held to the end: dropping it would withdraw the latched mounts.
    let _static_tf = if role.streams() {
        start.static_tf(&mut main_node, &sensors)?
    } else {
        None
    };
    if role.streams() {
        start.sensors(&runtime, &sensors)?;
    }
    if role.copters() && start.settings.copters.imu {
        start.copters(&runtime)?;
    }
    if role.streams() && !start.settings.time.use_sim_time {
        start.heartbeat(&runtime);
    }
    start.diagnostics(&runtime, &mut main_node)?;
    start.requests(&runtime);
    drop(guard);
    let Startup {
        mut nodes,
        logger,
        settings,
        ..
    } = start;
    nodes.insert(0, main_node);
    r2r::log_info!(
        &logger,
        "running with {} node(s); time base: {}",
        nodes.len(),
        if settings.time.use_sim_time {
            "sim time (/clock)"
        } else {
            "wall clock"
        }
    );
    ros_common::lifecycle::run_until_signalled(runtime, nodes, stop_tx, Vec::new(), &logger);
    Ok(())
}

/// What start-up has built so far: the nodes to spin, the streams
/// `/diagnostics` reports on, the sensors to request.
struct Startup {
    ctx: Context,
    settings: Settings,
    logger: String,
    stop: StopSignal,
    time: Arc<TimeBase>,
    /// With `use_sim_time`: `/clock`, advanced by every stream's sim time.
    clock: Option<Arc<ClockPublisher>>,
    nodes: Vec<Node>,
    watched: Vec<Watched>,
    requested: Vec<(SensorConfig, Arc<StreamStats>)>,
}

impl Startup {
    fn new(ctx: Context, main_node: &mut Node, settings: Settings, stop: StopSignal) -> Result<Self, String> {
        let use_sim_time = settings.time.use_sim_time;
        let time = Arc::new(TimeBase::with_source(use_sim_time, settings.time.stamp_source));
        let clock = if use_sim_time {
            Some(Arc::new(ClockPublisher::new(main_node).map_err(|e| e.to_string())?))
        } else {
            None
        };
        Ok(Self {
            ctx,
            settings,
            logger: main_node.logger().to_string(),
            stop,
            time,
            clock,
            nodes: Vec::new(),
            watched: Vec::new(),
            requested: Vec::new(),
        })
    }

    fn watch(&mut self, what: &str, hardware_id: String, stats: Arc<StreamStats>) {
        self.watched.push(Watched {
            name: diagnostic_name(what),
            hardware_id,
            stats,
        });
    }

    /// Gimbal control and status, on the main node.
    fn gimbal(&mut self, main_node: &mut Node, sensors: &[SensorConfig]) -> Result<(), String> {
        let stats = Arc::new(StreamStats::default());
        self.watch("gimbal status", "rflysim/gimbal".into(), stats.clone());
        let n = crate::gimbal_node::start(main_node, sensors, &self.settings, stats, self.stop.clone())?;
        if n == 0 {
            r2r::log_warn!(
                &self.logger,
                "no gimbal camera (TypeID 9) in the config: nothing to control"
            );
        }
        Ok(())
    }

    /// Mounts never change: one latched message on `/tf_static`.
    fn static_tf(
        &self,
        main_node: &mut Node,
        sensors: &[SensorConfig],
    ) -> Result<Option<Publisher<TFMessage>>, String> {
        if !self.settings.output.publish_tf() || sensors.is_empty() {
            return Ok(None);
        }
        let p = main_node
            .create_publisher::<TFMessage>("/tf_static", ros_common::qos::latched())
            .map_err(|e| e.to_string())?;
        let stamp = ros_common::time::to_ros_time(if self.settings.time.use_sim_time {
            0.0
        } else {
            ros_common::time::wall_now()
        });
        p.publish(&crate::tf::static_tf(sensors, stamp))
            .map_err(|e| e.to_string())?;
        Ok(Some(p))
    }

    /// One node and one task per sensor; a sensor that cannot be bridged is
    /// logged and left out.
    fn sensors(&mut self, runtime: &Runtime, sensors: &[SensorConfig]) -> Result<(), String> {
        for cfg in sensors {
            let mut node = Node::create(self.ctx.clone(), &format!("rflysim_sensor{}", cfg.seq_id), "")
                .map_err(|e| e.to_string())?;
            match SensorPipeline::new(&mut node, cfg.clone(), self.time.clone(), &self.settings) {
                Ok(p) => {
                    self.watch(
                        &format!("sensor{} {}", cfg.seq_id, p.topic()),
                        format!("rflysim/sensor{}", cfg.seq_id),
                        p.stats.clone(),
                    );
                    self.requested.push((cfg.clone(), p.stats.clone()));
                    runtime.spawn(p.with_clock(self.clock.clone()).run(self.stop.clone()));
                    self.nodes.push(node);
                }
                Err(e) => r2r::log_warn!(&self.logger, "{e}"),
            }
        }
        Ok(())
    }

    /// One node per vehicle of `copter_ids`: its IMU and true state.
    fn copters(&mut self, runtime: &Runtime) -> Result<(), String> {
        for id in self.settings.copters.ids.clone() {
            let mut node =
                Node::create(self.ctx.clone(), &format!("rflysim_uav{id}"), "").map_err(|e| e.to_string())?;
            let copter =
                CopterBridge::new(&mut node, id, self.time.clone(), &self.settings).map_err(|e| e.to_string())?;
            let hardware_id = format!("rflysim/uav{id}");
            self.watch(&format!("uav{id} imu"), hardware_id.clone(), copter.imu_stats.clone());
            self.watch(&format!("uav{id} true state"), hardware_id, copter.state_stats.clone());
            runtime.spawn(copter.with_clock(self.clock.clone()).run(self.stop.clone()));
            self.nodes.push(node);
        }
        Ok(())
    }

    /// CopterSim's heartbeat anchors wall-clock stamps.
    fn heartbeat(&mut self, runtime: &Runtime) {
        let stats = Arc::new(StreamStats::default());
        self.watch("CopterSim heartbeat", "rflysim/coptersim".into(), stats.clone());
        runtime.spawn(run_heartbeat(
            self.settings.time.heartbeat_port,
            self.settings.time.heartbeat_multicast,
            self.settings.link.senders.clone(),
            self.time.clone(),
            stats,
            self.logger.clone(),
            self.stop.clone(),
        ));
    }

    /// `/diagnostics` of every stream started, on the main node.
    fn diagnostics(&mut self, runtime: &Runtime, main_node: &mut Node) -> Result<(), String> {
        if self.watched.is_empty() {
            return Ok(());
        }
        let p = ros_common::diagnostics::publisher(main_node).map_err(|e| e.to_string())?;
        runtime.spawn(ros_common::diagnostics::run(
            p,
            std::mem::take(&mut self.watched),
            self.settings.output.diagnostics_period,
            self.stop.clone(),
        ));
        Ok(())
    }

    /// `VisionSensorReq`s for every sensor started, until its data flows.
    fn requests(&mut self, runtime: &Runtime) {
        if !self.settings.link.send_requests || self.requested.is_empty() {
            return;
        }
        runtime.spawn(crate::requests::run_requests(
            std::mem::take(&mut self.requested),
            self.settings.link.sim_ip,
            self.settings.link.window_id,
            self.logger.clone(),
            self.stop.clone(),
        ));
    }
}
