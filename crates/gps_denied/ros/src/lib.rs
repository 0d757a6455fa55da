//! The `gps_denied_bridge` node: the GPS-denied landing drone simulator on
//! ROS 2. Its JSON telemetry (UDP, or `std_msgs/String`)
//! becomes typed topics — IMU, altitude, velocity, landing pad, camera,
//! landed, the rover's odometry — and typed commands become its JSON
//! commands. The wire is `gps_denied_proto`'s; the ROS plumbing is
//! `ros_common`'s; this crate maps one onto the other.

pub mod commands;
pub mod convert;
pub mod settings;
pub mod telemetry;

use std::net::SocketAddrV4;
use std::process::ExitCode;
use std::sync::Arc;

use r2r::QosProfile;
use ros_common::bridge::BridgeProcess;
use ros_common::diagnostics::{Simulator, StatusId};
use ros_common::net::{BlockingUdp, SenderFilter, SenderGate};
use ros_common::stats::StreamStats;

use crate::commands::{CommandInputs, CommandSink};
use crate::settings::{Settings, Source};
use crate::telemetry::{Outputs, TelemetryBridge, TelemetryInput};

pub const NODE_NAME: &str = "gps_denied_bridge";
/// Relative topics land here unless the launch or `__ns` says otherwise.
pub const DEFAULT_NAMESPACE: &str = "gps_denied";

/// The bridge's one UDP socket: telemetry in (on a thread of its own),
/// commands out (a clone, for the command sender's thread).
fn udp_socket(bind: SocketAddrV4, rcvbuf: usize, logger: &str) -> Result<(BlockingUdp, std::net::UdpSocket), String> {
    let (s, granted) =
        ros_common::net::udp_receiver(*bind.ip(), bind.port(), rcvbuf).map_err(|e| format!("UDP {bind}: {e}"))?;
    if granted < rcvbuf {
        r2r::log_info!(
            logger,
            "UDP receive buffer: {granted} bytes granted of {rcvbuf} (net.core.rmem_max)"
        );
    }
    let commands = s.try_clone().map_err(|e| format!("UDP {bind}: {e}"))?;
    // Every sender's datagram is handed out: the bridge counts foreign senders itself.
    let gate = SenderGate::new(SenderFilter::any(), Arc::default(), logger);
    let telemetry = BlockingUdp::new(s, gate).map_err(|e| format!("UDP {bind}: {e}"))?;
    Ok((telemetry, commands))
}

/// The simulator's side: telemetry in and commands out, over UDP or ROS
/// topics; and how to say so in the start-up line.
fn wire(node: &mut r2r::Node, source: &Source, logger: &str) -> Result<(TelemetryInput, CommandSink, String), String> {
    Ok(match source {
        Source::Udp {
            bind,
            sim,
            rcvbuf,
            senders,
        } => {
            let (socket, commands) = udp_socket(*bind, *rcvbuf, logger)?;
            (
                TelemetryInput::Udp(socket),
                CommandSink::Udp {
                    socket: commands,
                    to: sim.clone(),
                },
                format!("telemetry on UDP {bind} from {}, commands to {sim}", senders.describe()),
            )
        }
        Source::Ros {
            telemetry_topic,
            command_topic,
        } => {
            let stream = node
                .subscribe::<r2r::std_msgs::msg::String>(
                    telemetry_topic,
                    QosProfile::default().keep_last(100).reliable(),
                )
                .map_err(|e| format!("{telemetry_topic}: {e}"))?;
            let publisher = node
                .create_publisher(command_topic, QosProfile::default().keep_last(10).reliable())
                .map_err(|e| format!("{command_topic}: {e}"))?;
            (
                TelemetryInput::Ros(futures::StreamExt::boxed(stream)),
                CommandSink::Ros(publisher),
                format!("telemetry from {telemetry_topic}, commands to {command_topic}"),
            )
        }
    })
}

pub fn main() -> ExitCode {
    ros_common::lifecycle::exit_code(NODE_NAME, run())
}

fn run() -> Result<(), String> {
    let mut bridge = BridgeProcess::start(NODE_NAME, DEFAULT_NAMESPACE)?;
    let logger = bridge.logger.clone();
    let settings = Settings::from_node(&bridge.node)?;
    let handle = bridge.handle();
    let _in_runtime = handle.enter();
    let (time, clock) = bridge.time_base(settings.use_sim_time, settings.stamp_source)?;
    let time_base = StatusId::bridge_wide(NODE_NAME, Simulator::GpsDenied, "simulator", "time base");
    bridge.watch_time_base(time_base, time.clone());
    let node = &mut bridge.node;
    let qos = ros_common::qos::sensor_publisher(settings.qos_depth);
    let outputs = Outputs::new(node, &settings, &qos)?;
    let (input, sink, described) = wire(node, &settings.source, &logger)?;
    let sim_link = settings.source.clone();
    let command_stats = Arc::new(StreamStats::default());
    let (inbox, sender) = ros_common::command::command_path(
        sink,
        settings.cmd_timeout,
        vec!["drone".into()],
        vec![command_stats.clone()],
        &logger,
    );
    let commands = CommandInputs::new(node, inbox, settings.gains, time.clone())?;
    if settings.publish_tf {
        bridge.static_tf(settings.use_sim_time, &convert::mounts(&settings.frames))?;
    }
    let diagnostics_period = settings.diagnostics_period;
    let use_sim_time = settings.use_sim_time;
    let telemetry = TelemetryBridge::new(outputs, settings, time, clock, logger.clone());
    let from_sim = [
        &telemetry.stats.telemetry,
        &telemetry.stats.camera,
        &telemetry.stats.rover,
    ];
    let from_sim: Vec<_> = from_sim.into_iter().cloned().collect();
    for (subject, stream, stats) in [
        ("drone", "telemetry", telemetry.stats.telemetry.clone()),
        ("drone", "camera", telemetry.stats.camera.clone()),
        ("rover", "telemetry", telemetry.stats.rover.clone()),
        ("drone", "commands", command_stats),
    ] {
        bridge.watch(StatusId::of(NODE_NAME, Simulator::GpsDenied, subject, stream), stats);
    }
    if let Source::Udp { sim, .. } = &sim_link {
        handle.spawn(ros_common::sim_host::follow(
            sim.host.clone(),
            from_sim,
            logger.clone(),
            bridge.stop_signal(),
        ));
    }
    match input {
        TelemetryInput::Udp(socket) => {
            let closer = socket.closer();
            bridge.at_stop("telemetry_stop", move || closer.close())?;
            bridge.thread("telemetry", move || telemetry.receive_datagrams(socket))?;
        }
        TelemetryInput::Ros(stream) => {
            handle.spawn(telemetry.run(stream, bridge.stop_signal()));
        }
    }
    handle.spawn(commands.run(bridge.stop_signal()));
    bridge.command_sender(sender)?;
    let stamps = if use_sim_time {
        "sim time (/clock)"
    } else {
        "the simulator's time on the wall clock"
    };
    r2r::log_info!(&logger, "{described}; stamps: {stamps}");
    bridge.run(diagnostics_period)
}
