//! `auv_bridge`: reads its parameters, connects to the simulator's three
//! sockets, creates every AUV's topics on one node, runs until SIGINT /
//! SIGTERM, then sends all-zero to every AUV.

use std::collections::HashMap;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use auv_proto::image::{Camera, ImageLimits};
use r2r::{Node, QosProfile};
use ros_common::camera::{CameraPublisher, CameraTopics};
use ros_common::diagnostics::Watched;
use ros_common::lifecycle::StopSignal;
use ros_common::msgs::JpegFormatName;
use ros_common::stats::StreamStats;
use ros_common::time::{to_ros_time, wall_now};

use crate::images::AuvImages;
use crate::link;
use crate::names;
use crate::settings::Settings;
use crate::telemetry::{AuvTelemetry, TelemetrySettings};
use crate::thrusters::{cmd_vel_loop, thrusters_loop, Thrusters};

const NODE_NAME: &str = "auv_bridge";

pub fn main() -> std::process::ExitCode {
    ros_common::lifecycle::exit_code(NODE_NAME, run())
}

fn spawn(name: &str, body: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, String> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(body)
        .map_err(|e| format!("thread {name}: {e}"))
}

/// The streams of one AUV, for `/diagnostics`.
struct AuvStats {
    images: Arc<AuvImages>,
    telemetry: Arc<StreamStats>,
    thrusters: Arc<StreamStats>,
}

fn run() -> Result<(), String> {
    ros_common::memory::keep_frame_buffers();
    let (ctx, dds_profile) = ros_common::dds::context()?;
    let mut node = Node::create(ctx, NODE_NAME, "").map_err(|e| e.to_string())?;
    let logger = node.logger().to_string();
    ros_common::dds::log_profile(&logger, dds_profile.as_deref());
    let s = Settings::from_node(&node)?;
    let runtime = ros_common::lifecycle::runtime()?;
    let (stop_tx, stop) = ros_common::lifecycle::stop_channel();
    let _guard = runtime.enter();
    let e = |err: r2r::Error| err.to_string();
    let sensor_qos = ros_common::qos::sensor_publisher(s.qos_depth);
    let command_qos = QosProfile::default().keep_last(10).reliable();

    let stats: Vec<(u8, AuvStats)> = s
        .auv_ids
        .iter()
        .map(|&id| {
            (
                id,
                AuvStats {
                    images: Arc::default(),
                    telemetry: Arc::default(),
                    thrusters: Arc::default(),
                },
            )
        })
        .collect();

    let _static_tf = if s.publish_tf {
        let p = node
            .create_publisher::<r2r::tf2_msgs::msg::TFMessage>("/tf_static", ros_common::qos::latched())
            .map_err(e)?;
        p.publish(&crate::convert::static_tf(&s.auv_ids, &to_ros_time(wall_now())))
            .map_err(e)?;
        Some(p)
    } else {
        None
    };
    let tf = if s.publish_tf {
        Some(node.create_publisher("/tf", ros_common::qos::tf()).map_err(e)?)
    } else {
        None
    };

    let zmq_ctx = zmq::Context::new();
    let mut threads = Vec::new();

    // Images: one receiver, one publisher per AUV.
    let max_pixels = 8192 * 8192;
    let image_socket = link::subscriber(
        &zmq_ctx,
        &s.sim_host,
        s.image_port,
        &s.auv_ids,
        // A few messages: the receiver keeps up; anything older is stale anyway.
        8,
        (2 * s.max_jpeg_bytes + 64) as i64,
        s.reconnect_interval,
    )?;
    for (id, st) in &stats {
        let cameras = Camera::ALL.map(|camera| CameraTopics {
            image: names::image_topic(*id, camera),
            info: names::camera_info_topic(*id, camera),
            compressed: Some(names::compressed_topic(*id, camera)),
        });
        let [front, bottom] = cameras;
        // The issue's `format: jpeg`; the RflySim and GPS-denied cameras keep image_transport's form.
        let mut camera = |topics| {
            CameraPublisher::new(&mut node, topics, &sensor_qos, max_pixels, s.decode_jpeg_always)
                .map(|c| c.with_jpeg_format_name(JpegFormatName::Plain))
        };
        let publishers = [camera(&front)?, camera(&bottom)?];
        let (auv, fov, log, stop, id) = (st.images.clone(), s.camera_fov_deg, logger.clone(), stop.clone(), *id);
        threads.push(spawn(&format!("images auv{id}"), move || {
            crate::images::publish(id, auv, publishers, fov, log, stop)
        })?);
    }
    let image_auvs: HashMap<u8, Arc<AuvImages>> = stats.iter().map(|(id, st)| (*id, st.images.clone())).collect();
    let limits = ImageLimits {
        max_jpeg_bytes: s.max_jpeg_bytes,
    };
    let (log, stop_images) = (logger.clone(), stop.clone());
    threads.push(spawn("images rx", move || {
        crate::images::receive(image_socket, image_auvs, limits, log, stop_images)
    })?);

    // Telemetry.
    let telemetry_socket = link::subscriber(
        &zmq_ctx,
        &s.sim_host,
        s.telemetry_port,
        &s.auv_ids,
        1000,
        1024,
        s.reconnect_interval,
    )?;
    let mut telemetry_auvs = HashMap::new();
    for (id, st) in &stats {
        let pose = node
            .create_publisher(&names::pose_topic(*id), sensor_qos.clone())
            .map_err(e)?;
        let odom = node
            .create_publisher(&names::odom_topic(*id), sensor_qos.clone())
            .map_err(e)?;
        telemetry_auvs.insert(*id, AuvTelemetry::new(pose, odom, st.telemetry.clone()));
    }
    let ts = TelemetrySettings {
        convention: s.convention,
        world_frame_id: s.world_frame_id.clone(),
        variances: s.variances,
    };
    let (log, stop_telemetry) = (logger.clone(), stop.clone());
    threads.push(spawn("telemetry rx", move || {
        crate::telemetry::receive(telemetry_socket, telemetry_auvs, tf, ts, log, stop_telemetry)
    })?);

    // Thrusters: the shared command path, one PUSH socket per AUV.
    let pushers = s
        .auv_ids
        .iter()
        .map(|&id| {
            Ok((
                id,
                link::pusher(&zmq_ctx, &s.sim_host, s.thruster_port, s.reconnect_interval)?,
            ))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let (inbox, sender) = ros_common::command::command_path(
        Thrusters::new(pushers),
        s.cmd_timeout,
        s.auv_ids.iter().map(|&id| names::auv_prefix(id)).collect(),
        stats.iter().map(|(_, st)| st.thrusters.clone()).collect(),
        &logger,
    );
    for (vehicle, (id, _)) in stats.iter().enumerate() {
        let thrusters = node
            .subscribe::<r2r::rflysim_bridge::msg::ThrusterCommand>(&names::thrusters_topic(*id), command_qos.clone())
            .map_err(e)?;
        let cmd_vel = node
            .subscribe::<r2r::geometry_msgs::msg::Twist>(&names::cmd_vel_topic(*id), command_qos.clone())
            .map_err(e)?;
        runtime.spawn(thrusters_loop(
            Box::pin(thrusters),
            inbox.clone(),
            (vehicle, *id),
            stop.clone(),
        ));
        runtime.spawn(cmd_vel_loop(
            Box::pin(cmd_vel),
            inbox.clone(),
            (vehicle, *id),
            s.gains,
            stop.clone(),
        ));
    }
    let stop_sender = stop.clone();
    threads.push(spawn("thrusters", move || {
        sender.run(move || link::stopping(&stop_sender))
    })?);

    spawn_diagnostics(&mut node, &runtime, &stats, s.diagnostics_period, stop.clone())?;
    r2r::log_info!(
        &logger,
        "AUVs {:?}: SUB {} and {}, PUSH {} (world {:?}, angles {:?})",
        s.auv_ids,
        auv_proto::tcp_endpoint(&s.sim_host, s.image_port),
        auv_proto::tcp_endpoint(&s.sim_host, s.telemetry_port),
        auv_proto::tcp_endpoint(&s.sim_host, s.thruster_port),
        s.convention.world_frame,
        s.convention.angle_unit,
    );
    drop(_guard);
    ros_common::lifecycle::run_until_signalled(runtime, vec![node], stop_tx, threads, &logger);
    // Dropping the context waits (≤ the PUSH linger) for the neutral commands to leave.
    drop(zmq_ctx);
    Ok(())
}

fn spawn_diagnostics(
    node: &mut Node,
    runtime: &tokio::runtime::Runtime,
    stats: &[(u8, AuvStats)],
    period: Duration,
    stop: StopSignal,
) -> Result<(), String> {
    let watched = stats
        .iter()
        .flat_map(|(id, st)| {
            [
                ("images", st.images.stats.clone()),
                ("telemetry", st.telemetry.clone()),
                ("thrusters", st.thrusters.clone()),
            ]
            .map(|(what, stats)| Watched {
                name: format!("{NODE_NAME}: {} {what}", names::auv_prefix(*id)),
                hardware_id: names::auv_prefix(*id),
                stats,
            })
        })
        .collect();
    let p = ros_common::diagnostics::publisher(node).map_err(|e| e.to_string())?;
    runtime.spawn(ros_common::diagnostics::run(p, watched, period, stop));
    Ok(())
}
