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

use r2r::{Node, QosProfile};
use ros_common::diagnostics::Watched;
use ros_common::stats::StreamStats;
use ros_common::time::{to_ros_time, wall_now, ClockPublisher, TimeBase};

use crate::commands::{CommandInputs, CommandSink};
use crate::settings::{Settings, Source};
use crate::telemetry::{Outputs, TelemetryBridge, TelemetryInput};

pub const NODE_NAME: &str = "gps_denied_bridge";
/// Relative topics land here unless the launch or `__ns` says otherwise.
pub const DEFAULT_NAMESPACE: &str = "drone";

/// The bridge's one UDP socket: telemetry in (on the runtime), commands out
/// (a clone, for the command sender's thread).
fn udp_socket(
    bind: SocketAddrV4,
    rcvbuf: usize,
    logger: &str,
) -> Result<(Arc<tokio::net::UdpSocket>, std::net::UdpSocket), String> {
    let (s, granted) =
        ros_common::net::udp_receiver(*bind.ip(), bind.port(), rcvbuf, None).map_err(|e| format!("UDP {bind}: {e}"))?;
    if granted < rcvbuf {
        r2r::log_info!(
            logger,
            "UDP receive buffer: {granted} bytes granted of {rcvbuf} (net.core.rmem_max)"
        );
    }
    let commands = s.try_clone().map_err(|e| format!("UDP {bind}: {e}"))?;
    Ok((
        Arc::new(tokio::net::UdpSocket::from_std(s).map_err(|e| e.to_string())?),
        commands,
    ))
}

pub fn main() -> ExitCode {
    ros_common::lifecycle::exit_code(NODE_NAME, run())
}

fn run() -> Result<(), String> {
    ros_common::memory::keep_frame_buffers();
    let (ctx, dds_profile) = ros_common::dds::context()?;
    let mut node = Node::create(ctx, NODE_NAME, DEFAULT_NAMESPACE).map_err(|e| e.to_string())?;
    let logger = node.logger().to_string();
    ros_common::dds::log_profile(&logger, dds_profile.as_deref());
    let settings = Settings::from_node(&node)?;
    let runtime = ros_common::lifecycle::runtime()?;
    let (stop_tx, stop_rx) = ros_common::lifecycle::stop_channel();
    let guard = runtime.enter();

    let qos = ros_common::qos::sensor_publisher(settings.qos_depth);
    let outputs = Outputs::new(&mut node, &settings, &qos)?;
    let (input, sink, described) = match &settings.source {
        Source::Udp {
            bind,
            sim,
            rcvbuf,
            senders,
        } => {
            let (socket, commands) = udp_socket(*bind, *rcvbuf, &logger)?;
            (
                TelemetryInput::Udp(socket),
                CommandSink::Udp {
                    socket: commands,
                    to: (*sim).into(),
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
    };
    // The mounts never change: one latched message, kept for late subscribers.
    let _static_tf = if settings.publish_tf {
        let p = node
            .create_publisher::<r2r::tf2_msgs::msg::TFMessage>("/tf_static", ros_common::qos::latched())
            .map_err(|e| e.to_string())?;
        let stamp = to_ros_time(if settings.use_sim_time { 0.0 } else { wall_now() });
        p.publish(&convert::static_transforms(&settings.frames, stamp))
            .map_err(|e| e.to_string())?;
        Some(p)
    } else {
        None
    };
    let clock = if settings.use_sim_time {
        Some(ClockPublisher::new(&mut node).map_err(|e| e.to_string())?)
    } else {
        None
    };
    let time = Arc::new(TimeBase::with_source(settings.use_sim_time, settings.stamp_source));
    let command_stats = Arc::new(StreamStats::default());
    let (inbox, sender) = ros_common::command::command_path(
        sink,
        settings.cmd_timeout,
        vec![DEFAULT_NAMESPACE.into()],
        vec![command_stats.clone()],
        &logger,
    );
    let commands = CommandInputs::new(&mut node, inbox, settings.gains, time.clone())?;
    let diagnostics_period = settings.diagnostics_period;
    let use_sim_time = settings.use_sim_time;
    let telemetry = TelemetryBridge::new(input, outputs, settings, time, clock, logger.clone());
    let watched = |name: &str, stats| Watched {
        name: format!("{NODE_NAME}: {name}"),
        hardware_id: "gps_denied_drone".into(),
        stats,
    };
    let watched = vec![
        watched("telemetry", telemetry.stats.telemetry.clone()),
        watched("camera", telemetry.stats.camera.clone()),
        watched("rover", telemetry.stats.rover.clone()),
        watched("commands", command_stats),
    ];
    let diagnostics = ros_common::diagnostics::publisher(&mut node).map_err(|e| e.to_string())?;
    runtime.spawn(ros_common::diagnostics::run(
        diagnostics,
        watched,
        diagnostics_period,
        stop_rx.clone(),
    ));
    runtime.spawn(telemetry.run(stop_rx.clone()));
    runtime.spawn(commands.run(stop_rx.clone()));
    let sender = std::thread::Builder::new()
        .name("commands".into())
        .spawn(move || sender.run(move || *stop_rx.borrow()))
        .map_err(|e| format!("command thread: {e}"))?;
    r2r::log_info!(
        &logger,
        "{described}; stamps: {}",
        if use_sim_time {
            "sim time (/clock)"
        } else {
            "receipt time"
        }
    );
    drop(guard);
    ros_common::lifecycle::run_until_signalled(runtime, vec![node], stop_tx, vec![sender], &logger);
    Ok(())
}
