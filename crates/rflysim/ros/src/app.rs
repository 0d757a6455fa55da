//! The executables' common body, in named steps: read the parameters and
//! the config, then start what the role serves (gimbal control, static TF,
//! one r2r node per sensor and per vehicle, the heartbeat, diagnostics,
//! sensor requests) on one tokio runtime, spin the nodes, and stop cleanly
//! on SIGINT / SIGTERM.

use std::sync::Arc;

use rflysim_proto::config::{load_config_report, udp_port_clashes, SensorConfig, SensorDefaults};
use rflysim_proto::sensor::SensorClass;

use crate::coptersim::{run_heartbeat, CopterBridge};
use crate::names::{bridge_diagnostics_id, diagnostics_id};
use crate::sensor::SensorPipeline;
use crate::settings::{ConfigChoice, Settings};
use ros_common::bridge::BridgeProcess;
use ros_common::stats::StreamStats;
use ros_common::time::{ArrivalStamps, ClockPublisher, TimeBases};

use crate::status_port::{StatusHandler, StatusInput};

/// Which part of RflySim an executable bridges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Every sensor of the config, the IMUs and true state of `vehicle_ids`.
    Bridge,
    /// One LiDAR / depth-cloud sensor (`seq_id`, or the config's first).
    Lidar,
    /// One camera (`seq_id`, or the config's first).
    Camera,
    /// The IMUs and true state of `vehicle_ids`.
    Imu,
    /// Control and status of the gimbal cameras (TypeID 9) of the config.
    Gimbal,
    /// RflySim3D's scene (Simulation Interfaces, console, bulk poses,
    /// collisions), and the gimbals: both read the one status port.
    Scene,
}

impl Role {
    fn node_name(self) -> &'static str {
        match self {
            Role::Bridge => "rflysim_bridge",
            Role::Lidar => "rflysim_lidar",
            Role::Camera => "rflysim_camera",
            Role::Imu => "rflysim_imu",
            Role::Gimbal => "rflysim_gimbal",
            Role::Scene => "rflysim_scene",
        }
    }
    fn wants(self, cfg: &SensorConfig) -> bool {
        let class = cfg.kind().map(|k| k.class);
        match self {
            Role::Bridge => true,
            Role::Lidar => matches!(class, Some(SensorClass::Lidar | SensorClass::DepthCloud)),
            Role::Camera => matches!(class, Some(SensorClass::Camera(_))),
            Role::Imu => false,
            Role::Gimbal | Role::Scene => cfg.is_gimbal(),
        }
    }
    /// Sensor streams, CopterSim's time base and static TF: every role but
    /// the control plane's.
    fn streams(self) -> bool {
        !matches!(self, Role::Gimbal | Role::Scene)
    }
    fn copters(self) -> bool {
        matches!(self, Role::Bridge | Role::Imu)
    }
}

/// What the config asks of RflySim3D, as the bridge asks it.
#[derive(Debug, Default)]
pub struct ChosenSensors {
    pub sensors: Vec<SensorConfig>,
    /// The fields the config left out for them.
    pub defaulted: Vec<SensorDefaults>,
    /// The SeqIDs written as shared memory and asked over UDP instead.
    pub over_udp: Vec<u16>,
}

/// The sensors `role` serves. With RflySim3D on another machine
/// (`sim_here` false), shared memory is asked over UDP, as the SDK does on
/// Linux: RflySim3D writes its shared memory where nothing here can read it.
pub fn sensors_for(config: &ConfigChoice, role: Role, sim_here: bool) -> Result<ChosenSensors, String> {
    // The IMU needs no sensor list; the scene alone needs none either, and
    // serves the gimbals of a config only when it is given one.
    if role == Role::Imu || (role == Role::Scene && config.path.is_none()) {
        return Ok(Default::default());
    }
    let path = config.path.as_ref().ok_or_else(|| {
        ros_common::params::invalid(
            crate::settings::param::RFLYSIM_CONFIG.name,
            "the path of a RflySim Config.json is needed",
        )
    })?;
    let mut report = load_config_report(path, config.angle_unit).map_err(|e| e.to_string())?;
    let mut over_udp = Vec::new();
    if !sim_here {
        for cfg in &mut report.sensors {
            if let Some(udp) = cfg.over_udp_instead_of_shared_memory() {
                *cfg = udp;
                over_udp.push(cfg.seq_id);
            }
        }
    }
    let clashes = udp_port_clashes(&report.sensors);
    if !clashes.is_empty() {
        return Err(format!("{}: {}", path.display(), clashes.join("; ")));
    }
    let mut chosen: Vec<SensorConfig> = report.sensors.into_iter().filter(|c| role.wants(c)).collect();
    // The bridge takes every sensor, the scene node every gimbal (none is fine).
    if !matches!(role, Role::Bridge | Role::Scene) {
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
    over_udp.retain(|seq| chosen.iter().any(|c| c.seq_id == *seq));
    Ok(ChosenSensors {
        sensors: chosen,
        defaulted,
        over_udp,
    })
}

/// Builds the nodes of `role` and runs them until SIGINT / SIGTERM.
pub fn main(role: Role) -> std::process::ExitCode {
    ros_common::lifecycle::exit_code(role.node_name(), run(role))
}

fn run(role: Role) -> Result<(), String> {
    let bridge = BridgeProcess::start(role.node_name(), "")?;
    let settings = Settings::from_node(&bridge.node)?;
    // The address found at start: a RflySim3D that moves to another PC later keeps its sensors' transport.
    let sim_host = settings.link.sim_host.describe();
    let ChosenSensors {
        sensors,
        defaulted,
        over_udp,
    } = sensors_for(
        &settings.config,
        role,
        ros_common::net::is_this_host(settings.link.sim_host.ip()),
    )?;
    let mut start = Startup::new(bridge, settings)?;
    for d in &defaulted {
        r2r::log_warn!(
            &start.bridge.logger,
            "{d} (RflySim's Python SDK needs these fields in Config.json)"
        );
    }
    if !over_udp.is_empty() {
        r2r::log_warn!(
            &start.bridge.logger,
            "sensor(s) {over_udp:?} asked over UDP (SendProtocol[0] 1) instead of shared memory: RflySim3D at \
             {sim_host} is not on this machine and writes its shared memory there (RflySim's Python SDK does the \
             same on Linux)"
        );
    }
    let handle = start.bridge.handle();
    let guard = handle.enter();
    if matches!(role, Role::Gimbal | Role::Scene) {
        start.control_plane(&sensors, role == Role::Scene)?;
    }
    if role.streams() {
        start.static_tf(&sensors)?;
        start.sensors(&sensors)?;
    }
    if role.copters() && start.settings.copters.imu {
        start.copters()?;
    }
    if role.streams() {
        start.heartbeat();
    }
    start.requests();
    let Startup {
        bridge,
        settings,
        from_sim,
        ..
    } = start;
    bridge.handle().spawn(ros_common::sim_host::follow(
        settings.link.sim_host.clone(),
        from_sim,
        bridge.logger.clone(),
        bridge.stop_signal(),
    ));
    drop(guard);
    r2r::log_info!(
        &bridge.logger,
        "running with {} node(s); simulator at {}; time base: {}",
        bridge.node_count(),
        settings.link.sim_host.describe(),
        if settings.time.use_sim_time {
            "sim time (/clock)"
        } else {
            "wall clock"
        }
    );
    bridge.run(settings.output.diagnostics_period)
}

/// What start-up has built so far: the process (its nodes, the streams
/// `/diagnostics` reports on), and the sensors to request.
struct Startup {
    bridge: BridgeProcess,
    settings: Settings,
    /// One base per CopterSim: a swarm's simulators start apart.
    time: Arc<TimeBases>,
    /// With `use_sim_time`: `/clock`, advanced by every stream's sim time.
    clock: Option<Arc<ClockPublisher>>,
    requested: Vec<(SensorConfig, Arc<StreamStats>)>,
    /// What comes from the simulator: its silence has `sim_host` looked up again.
    from_sim: Vec<Arc<StreamStats>>,
}

impl Startup {
    fn new(mut bridge: BridgeProcess, settings: Settings) -> Result<Self, String> {
        let use_sim_time = settings.time.use_sim_time;
        let (time, clock) = bridge.time_bases(use_sim_time, settings.time.stamp_source)?;
        Ok(Self {
            bridge,
            settings,
            time,
            clock,
            requested: Vec::new(),
            from_sim: Vec::new(),
        })
    }

    /// CopterSim `id`'s time base, reported in `/diagnostics` from its first use.
    fn time_base(&mut self, id: u16) -> Arc<ros_common::time::TimeBase> {
        let known = self.time.existing(i64::from(id)).is_some();
        let base = self.time.instance(i64::from(id));
        if !known {
            self.bridge
                .watch_time_base(diagnostics_id(&format!("uav{id}"), "time base"), base.clone());
        }
        base
    }

    /// Gimbal control and status, and with `scene` the scene, on the main
    /// node; the gimbals' command sender on a thread of its own; one
    /// receiver of the status port for both, on another.
    fn control_plane(&mut self, sensors: &[SensorConfig], scene: bool) -> Result<(), String> {
        let stats = Arc::new(StreamStats::default());
        self.bridge.watch(diagnostics_id("gimbal", "status"), stats.clone());
        self.from_sim.push(stats.clone());
        let stop = self.bridge.stop_signal();
        let mut command_stats = Vec::new();
        // A scene or gimbal process has no simulator time of its own: what
        // RflySim3D answers is stamped on arrival, and a command judged
        // against now, on `/clock` with use_sim_time.
        let clock = ArrivalStamps::for_node(&mut self.bridge.node, self.settings.time.use_sim_time)?;
        let started = crate::gimbal_node::start(
            &mut self.bridge.node,
            sensors,
            &self.settings,
            clock.clone(),
            stats,
            |seq| {
                let s = Arc::new(StreamStats::default());
                command_stats.push((seq, s.clone()));
                s
            },
            stop.clone(),
        )?;
        for (seq, s) in command_stats {
            self.bridge
                .watch(diagnostics_id(&format!("sensor{seq}"), "gimbal commands"), s);
        }
        let mut handlers: Vec<Box<dyn StatusHandler>> = Vec::new();
        let read_after_stop = started.settled;
        match (started.sender, started.status) {
            (Some(sender), Some(status)) => {
                self.bridge.command_sender(sender)?;
                handlers.push(Box::new(status));
            }
            _ if !scene => r2r::log_warn!(
                &self.bridge.logger,
                "no gimbal camera (TypeID 9) in the config: nothing to control"
            ),
            _ => {}
        }
        if scene {
            let stats = Arc::new(StreamStats::default());
            self.bridge
                .watch(bridge_diagnostics_id("scene", "scene"), stats.clone());
            self.from_sim.push(stats.clone());
            // Bulk poses on a node of their own: its spinner wakes for them
            // alone, with no services to wait on, and sends them itself.
            let mut poses_node = self.bridge.create_node("rflysim_scene_poses")?;
            let spawned_node = self.bridge.create_node("rflysim_scene_spawned")?;
            let (feed, bulk) = crate::scene::start(
                &mut self.bridge.node,
                &mut poses_node,
                spawned_node,
                &self.settings,
                clock,
                stats,
                stop.clone(),
            )?;
            self.bridge.add_node_with_task(poses_node, bulk);
            handlers.push(Box::new(feed));
        }
        if !handlers.is_empty() {
            let stats = Arc::new(StreamStats::default());
            self.bridge
                .watch(bridge_diagnostics_id("status", "status port"), stats.clone());
            self.from_sim.push(stats.clone());
            let g = &self.settings.gimbal;
            let input = StatusInput {
                port: g.status_port,
                multicast: g.status_multicast,
                senders: self.settings.link.senders.clone(),
                stats,
                read_after_stop,
            };
            let logger = self.bridge.logger.clone();
            // A thread of its own: it reads on after the stop, while the
            // gimbals' neutrals await their echo and the shared runtime is gone.
            self.bridge
                .loop_thread("status_port", crate::status_port::run(handlers, input, logger, stop))?;
        }
        Ok(())
    }

    /// Mounts never change: one latched message on `/tf_static`.
    fn static_tf(&mut self, sensors: &[SensorConfig]) -> Result<(), String> {
        if !self.settings.output.publish_tf() || sensors.is_empty() {
            return Ok(());
        }
        let use_sim_time = self.settings.time.use_sim_time;
        let mounts: Vec<_> = sensors.iter().flat_map(crate::tf::sensor_mounts).collect();
        self.bridge.static_tf(use_sim_time, &mounts)
    }

    /// One node and one task per sensor; a sensor that cannot be bridged is
    /// logged and left out. RflySim3D stamps a sensor's data with the sim
    /// time of the vehicle it is mounted on: the sensor is on that
    /// vehicle's time base.
    fn sensors(&mut self, sensors: &[SensorConfig]) -> Result<(), String> {
        for cfg in sensors {
            let mut node = self.bridge.create_node(&format!("rflysim_sensor{}", cfg.seq_id))?;
            match SensorPipeline::new(
                &mut node,
                cfg.clone(),
                self.time_base(cfg.target_copter),
                &self.settings,
            ) {
                Ok(p) => {
                    self.bridge.watch(
                        diagnostics_id(&format!("sensor{}", cfg.seq_id), &p.topic()),
                        p.stats.clone(),
                    );
                    self.requested.push((cfg.clone(), p.stats.clone()));
                    self.from_sim.push(p.stats.clone());
                    self.bridge
                        .handle()
                        .spawn(p.with_clock(self.clock.clone()).run(self.bridge.stop_signal()));
                    self.bridge.add_node(node);
                }
                Err(e) => r2r::log_warn!(&self.bridge.logger, "{e}"),
            }
        }
        Ok(())
    }

    /// One node per vehicle of `vehicle_ids`: its IMU and true state.
    fn copters(&mut self) -> Result<(), String> {
        for id in self.settings.copters.ids.clone() {
            let mut node = self.bridge.create_node(&format!("rflysim_uav{id}"))?;
            let base = self.time_base(id);
            let copter = CopterBridge::new(&mut node, id, base, &self.settings).map_err(|e| e.to_string())?;
            let subject = format!("uav{id}");
            self.bridge
                .watch(diagnostics_id(&subject, "imu"), copter.imu_stats.clone());
            self.bridge
                .watch(diagnostics_id(&subject, "true state"), copter.state_stats.clone());
            self.from_sim
                .extend([copter.imu_stats.clone(), copter.state_stats.clone()]);
            self.bridge
                .handle()
                .spawn(copter.with_clock(self.clock.clone()).run(self.bridge.stop_signal()));
            self.bridge.add_node(node);
        }
        Ok(())
    }

    /// Each CopterSim's heartbeat anchors its vehicle's time base.
    fn heartbeat(&mut self) {
        let stats = Arc::new(StreamStats::default());
        self.bridge
            .watch(bridge_diagnostics_id("coptersim", "CopterSim heartbeat"), stats.clone());
        self.from_sim.push(stats.clone());
        self.bridge.handle().spawn(run_heartbeat(
            self.settings.time.heartbeat_port,
            self.settings.time.heartbeat_multicast,
            self.settings.link.senders.clone(),
            self.time.clone(),
            stats,
            self.bridge.logger.clone(),
            self.bridge.stop_signal(),
        ));
    }

    /// `VisionSensorReq`s for every sensor started, until its data flows.
    fn requests(&mut self) {
        if !self.settings.link.send_requests || self.requested.is_empty() {
            return;
        }
        self.bridge.handle().spawn(crate::requests::run_requests(
            std::mem::take(&mut self.requested),
            self.settings.link.sim_host.clone(),
            self.settings.link.window_id,
            self.bridge.logger.clone(),
            self.bridge.stop_signal(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rflysim_proto::sensor::Transport;

    #[test]
    fn shared_memory_is_asked_over_udp_only_of_a_simulator_elsewhere() {
        let path = std::env::temp_dir().join(format!("rflysim_app_test_{}.json", std::process::id()));
        std::fs::write(
            &path,
            r#"{"VisionSensors": [
                {"SeqID": 1, "TypeID": 1, "SendProtocol": [0, 0, 0, 0, 0, 0, 0, 0]},
                {"SeqID": 2, "TypeID": 1, "SendProtocol": [2, 127, 0, 0, 1, 0, 0, 0]}]}"#,
        )
        .unwrap();
        let config = ConfigChoice {
            path: Some(path.clone()),
            seq_id: None,
            angle_unit: Default::default(),
        };
        let here = sensors_for(&config, Role::Bridge, true).unwrap();
        let elsewhere = sensors_for(&config, Role::Bridge, false).unwrap();
        std::fs::remove_file(&path).unwrap();
        let transports = |c: &ChosenSensors| c.sensors.iter().map(|s| s.transport()).collect::<Vec<_>>();
        assert_eq!(
            transports(&here),
            [Some(Transport::SharedMemory), Some(Transport::UdpRaw)]
        );
        assert!(here.over_udp.is_empty());
        assert_eq!(
            transports(&elsewhere),
            [Some(Transport::UdpCompressed), Some(Transport::UdpRaw)]
        );
        assert_eq!(elsewhere.over_udp, [1]);
    }
}
