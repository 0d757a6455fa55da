//! `auv_bridge`: reads its parameters, connects to the simulator's three
//! sockets, creates every AUV's topics on one node, runs until SIGINT /
//! SIGTERM, then sends all-zero to every AUV. One step per stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use auv_proto::image::{Camera, ImageLimits};
use r2r::tf2_msgs::msg::TFMessage;
use r2r::QosProfile;
use ros_common::bridge::BridgeProcess;
use ros_common::camera::{CameraPublisher, CameraTopics};
use ros_common::diagnostics::{Simulator, StatusId};
use ros_common::msgs::JpegFormatName;
use ros_common::serialized::SerializedPublisher;
use ros_common::stats::StreamStats;
use ros_common::time::ArrivalStamps;

use crate::images::{AuvCameras, AuvImages, Cameras};
use crate::link;
use crate::names;
use crate::settings::Settings;
use crate::telemetry::{AuvTelemetry, TelemetrySettings};
use crate::thrusters::{cmd_vel_loop, thrusters_loop, Thrusters};

const NODE_NAME: &str = "auv_bridge";
/// Relative topics land here unless the launch or `__ns` says otherwise.
pub const DEFAULT_NAMESPACE: &str = "auv";

pub fn main() -> std::process::ExitCode {
    ros_common::lifecycle::exit_code(NODE_NAME, run())
}

/// The streams of one AUV, for `/diagnostics`.
#[derive(Default)]
struct AuvStats {
    images: Arc<AuvImages>,
    telemetry: Arc<StreamStats>,
    thrusters: Arc<StreamStats>,
}

fn run() -> Result<(), String> {
    let mut bridge = BridgeProcess::start(NODE_NAME, DEFAULT_NAMESPACE)?;
    let s = Settings::from_node(&bridge.node)?;
    let handle = bridge.handle();
    let _in_runtime = handle.enter();
    let stats: Vec<(u8, AuvStats)> = s.auv_ids.iter().map(|&id| (id, AuvStats::default())).collect();
    let stamps = ArrivalStamps::for_node(&mut bridge.node, s.use_sim_time)?;
    let tf = if s.publish_tf {
        bridge.static_tf(
            s.use_sim_time,
            &crate::convert::camera_mounts(&s.frame_prefix, &s.auv_ids),
        )?;
        Some(SerializedPublisher::new(&mut bridge.node, "/tf", ros_common::qos::tf()).map_err(|e| e.to_string())?)
    } else {
        None
    };
    let zmq_ctx = zmq::Context::new();
    images(&mut bridge, &s, &stats, stamps.clone())?;
    telemetry(&mut bridge, &s, &stats, tf, stamps.clone())?;
    thrusters(&mut bridge, &zmq_ctx, &s, &stats, stamps)?;
    for (id, st) in &stats {
        for (what, stream) in [
            ("images", st.images.stats.clone()),
            ("telemetry", st.telemetry.clone()),
            ("thrusters", st.thrusters.clone()),
        ] {
            let status = StatusId::of(NODE_NAME, Simulator::Auv, &names::auv_prefix(*id), what);
            bridge.watch(status, stream);
        }
    }
    r2r::log_info!(
        &bridge.logger,
        "AUVs {:?}: SUB {} and {}, PUSH {} (sim_host {} at {}; world {:?}, angles {:?})",
        s.auv_ids,
        auv_proto::tcp_endpoint(&s.sim_host, s.image_port),
        auv_proto::tcp_endpoint(&s.sim_host, s.telemetry_port),
        auv_proto::tcp_endpoint(&s.sim_host, s.thruster_port),
        s.sim_host,
        s.sim_addr,
        s.convention.world_frame,
        s.convention.angle_unit,
    );
    bridge.run(s.diagnostics_period)?;
    // Dropping the context waits (≤ the PUSH linger) for the neutral commands to leave.
    drop(zmq_ctx);
    Ok(())
}

/// Images: one receiving (and publishing) thread, one decoding thread per AUV.
fn images(
    bridge: &mut BridgeProcess,
    s: &Settings,
    stats: &[(u8, AuvStats)],
    stamps: ArrivalStamps,
) -> Result<(), String> {
    let max_pixels = 8192 * 8192;
    let sensor_qos = ros_common::qos::sensor_publisher(s.qos_depth);
    let socket = crate::images::subscriber(
        &s.sim_host,
        s.image_port,
        &s.auv_ids,
        s.max_jpeg_bytes,
        s.reconnect_interval,
    );
    let mut auvs: HashMap<u8, Arc<AuvCameras>> = HashMap::new();
    for (id, st) in stats {
        let [front, bottom] = Camera::ALL.map(|camera| CameraTopics::beside(&names::image_topic(*id, camera), true));
        // Format `jpeg`; the RflySim and GPS-denied cameras keep image_transport's form.
        let mut camera = |topics| {
            CameraPublisher::new(
                &mut bridge.node,
                topics,
                &sensor_qos,
                max_pixels,
                s.decode_images_always,
            )
            .map(|c| c.with_jpeg_format_name(JpegFormatName::Plain))
        };
        let auv = Arc::new(AuvCameras {
            id: *id,
            images: st.images.clone(),
            cameras: Mutex::new(Cameras {
                publishers: [camera(&front)?, camera(&bottom)?],
                last: None,
            }),
            fov_deg: s.camera_fov_deg,
            optical_frames: Camera::ALL.map(|camera| names::optical_frame(&s.frame_prefix, *id, camera)),
        });
        auvs.insert(*id, auv.clone());
        let (log, stop) = (bridge.logger.clone(), bridge.stop_signal());
        bridge.thread(&format!("images auv{id}"), move || {
            crate::images::publish_decoded(auv, log, stop)
        })?;
    }
    let limits = ImageLimits {
        max_jpeg_bytes: s.max_jpeg_bytes,
    };
    let (log, stop) = (bridge.logger.clone(), bridge.stop_signal());
    bridge.thread("images rx", move || {
        crate::images::receive(socket, auvs, limits, stamps, log, stop)
    })
}

/// Telemetry: pose, odometry and `/tf` of every AUV, from one receiving thread.
fn telemetry(
    bridge: &mut BridgeProcess,
    s: &Settings,
    stats: &[(u8, AuvStats)],
    tf: Option<SerializedPublisher<TFMessage>>,
    stamps: ArrivalStamps,
) -> Result<(), String> {
    let sensor_qos = ros_common::qos::sensor_publisher(s.qos_depth);
    let socket = crate::telemetry::subscriber(&s.sim_host, s.telemetry_port, &s.auv_ids, s.reconnect_interval);
    let e = |err: r2r::Error| err.to_string();
    let mut auvs = HashMap::new();
    for (id, st) in stats {
        let pose =
            SerializedPublisher::new(&mut bridge.node, &names::pose_topic(*id), sensor_qos.clone()).map_err(e)?;
        let odom =
            SerializedPublisher::new(&mut bridge.node, &names::odom_topic(*id), sensor_qos.clone()).map_err(e)?;
        let base_link = names::base_link(&s.frame_prefix, *id);
        auvs.insert(*id, AuvTelemetry::new(pose, odom, st.telemetry.clone(), base_link));
    }
    let ts = TelemetrySettings {
        convention: s.convention,
        world_frame_id: s.world_frame_id.clone(),
        variances: s.variances,
        stamps,
    };
    let (log, stop) = (bridge.logger.clone(), bridge.stop_signal());
    bridge.thread("telemetry rx", move || {
        crate::telemetry::receive(socket, auvs, tf, ts, log, stop)
    })
}

/// Thrusters: the shared command path, one PUSH socket per AUV.
fn thrusters(
    bridge: &mut BridgeProcess,
    zmq_ctx: &zmq::Context,
    s: &Settings,
    stats: &[(u8, AuvStats)],
    stamps: ArrivalStamps,
) -> Result<(), String> {
    let pushers = s
        .auv_ids
        .iter()
        .map(|&id| {
            Ok((
                id,
                link::pusher(zmq_ctx, &s.sim_host, s.thruster_port, s.reconnect_interval)?,
            ))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let (inbox, sender) = ros_common::command::command_path(
        Thrusters::new(pushers),
        s.cmd_timeout,
        s.auv_ids.iter().map(|&id| names::auv_prefix(id)).collect(),
        stats.iter().map(|(_, st)| st.thrusters.clone()).collect(),
        &bridge.logger,
    );
    let qos = QosProfile::default().keep_last(10).reliable();
    let e = |err: r2r::Error| err.to_string();
    let handle = bridge.handle();
    for (vehicle, (id, _)) in stats.iter().enumerate() {
        let commands = bridge
            .node
            .subscribe::<r2r::rflysim_bridge::msg::ThrusterCommand>(&names::thrusters_topic(*id), qos.clone())
            .map_err(e)?;
        let cmd_vel = bridge
            .node
            .subscribe::<r2r::geometry_msgs::msg::Twist>(&names::cmd_vel_topic(*id), qos.clone())
            .map_err(e)?;
        let stop = bridge.stop_signal();
        handle.spawn(thrusters_loop(
            Box::pin(commands),
            inbox.clone(),
            (vehicle, *id),
            stamps.clone(),
            stop.clone(),
        ));
        handle.spawn(cmd_vel_loop(
            Box::pin(cmd_vel),
            inbox.clone(),
            (vehicle, *id),
            s.gains,
            stop,
        ));
    }
    bridge.command_sender(sender)
}
