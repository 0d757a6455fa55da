//! The gimbal node: for every gimbal camera (TypeID 9) of the config,
//! `camera/ctrl` and `camera/ai_ctrl` in, 148-byte requests out to
//! RflySim3D; RflySim3D's echoes on port 20006 in, `camera/status` out.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use r2r::rflysim_bridge::msg::{CameraAICtrl, CameraCtrl, CameraParams, CameraStatus};
use r2r::{Node, Publisher};
use tokio::sync::watch;

use rflysim_proto::config::SensorConfig;
use rflysim_proto::gimbal::{GimbalBitTable, GimbalEcho};
use rflysim_proto::request::{camera_data_command, console_command, RequestForm, VisionSensorReq};

use crate::gimbal::{ai_request, ctrl_request, status_from_echo, Ctrl, GimbalCommandState};
use crate::names;
use crate::settings::Settings;
use ros_common::net::{FilteredUdp, SenderFilter, SenderGate};
use ros_common::stats::{RateLimitedLog, StreamStats};

/// Where the echoes come in, who may send them, and their counts.
#[derive(Debug, Clone)]
struct StatusInput {
    status_port: u16,
    status_multicast: bool,
    senders: SenderFilter,
    status_stats: Arc<StreamStats>,
}

/// Creates the subscriptions and publishers on `node` and spawns the tasks.
/// Echoes published and dropped are counted in `status_stats`.
pub fn start(
    node: &mut Node,
    sensors: &[SensorConfig],
    settings: &Settings,
    status_stats: Arc<StreamStats>,
    shutdown: watch::Receiver<bool>,
) -> Result<usize, String> {
    let s = settings.gimbal;
    let logger = node.logger().to_string();
    let sock = ros_common::net::udp_sender().map_err(|e| format!("UDP: {e}"))?;
    let sock = Arc::new(sock);
    let to = SocketAddrV4::new(
        settings.link.sim_ip,
        crate::requests::request_port(settings.link.window_id),
    );
    let this_host = crate::coptersim::local_ip_towards(settings.link.sim_ip);
    let mut status_pubs: StatusOutputs = HashMap::new();
    let mut count = 0;
    for cfg in sensors.iter().filter(|c| c.is_gimbal()) {
        let asked = crate::requests::as_asked_of(cfg, settings.link.sim_ip, this_host);
        let state = Arc::new(Mutex::new(GimbalCommandState::new(&asked)));
        let seq = cfg.seq_id;
        let ctrl = node
            .subscribe::<CameraCtrl>(&names::sensor_topic(seq, "camera/ctrl"), ros_common::qos::commands())
            .map_err(|e| e.to_string())?;
        let ai = node
            .subscribe::<CameraAICtrl>(&names::sensor_topic(seq, "camera/ai_ctrl"), ros_common::qos::commands())
            .map_err(|e| e.to_string())?;
        let status = node
            .create_publisher::<CameraStatus>(&names::sensor_topic(seq, "camera/status"), settings.output.qos.clone())
            .map_err(|e| e.to_string())?;
        status_pubs.insert(seq, (status, cfg.clone(), state.clone()));
        r2r::log_info!(
            &logger,
            "gimbal of sensor {seq}: {} and {} → UDP {to}",
            names::sensor_topic(seq, "camera/ctrl"),
            names::sensor_topic(seq, "camera/ai_ctrl")
        );
        let link = CommandLink {
            seq,
            state: state.clone(),
            bits: s.bits,
            checksum: s.checksum,
            sock: sock.clone(),
            to,
            logger: logger.clone(),
        };
        tokio::spawn(command_loop(
            ctrl,
            "CameraCtrl",
            link.clone(),
            ctrl_to_request,
            shutdown.clone(),
        ));
        tokio::spawn(command_loop(ai, "CameraAICtrl", link, ai_to_request, shutdown.clone()));
        count += 1;
    }
    if count > 0 {
        let input = StatusInput {
            status_port: s.status_port,
            status_multicast: s.status_multicast,
            senders: settings.link.senders.clone(),
            status_stats,
        };
        tokio::spawn(status_loop(status_pubs, input, sock, to, logger, shutdown));
    }
    Ok(count)
}

fn send(sock: &std::net::UdpSocket, to: SocketAddrV4, bytes: &[u8], logger: &str) {
    if let Err(e) = sock.send_to(bytes, to) {
        r2r::log_warn!(logger, "cannot send to {to}: {e}");
    }
}

/// What a command task needs to turn messages into requests for one gimbal.
#[derive(Clone)]
struct CommandLink {
    seq: u16,
    state: Arc<Mutex<GimbalCommandState>>,
    bits: GimbalBitTable,
    checksum: u16,
    sock: Arc<std::net::UdpSocket>,
    to: SocketAddrV4,
    logger: String,
}

/// Turns each message of `stream` into a request with `to_request` (which
/// may update the gimbal's state) and sends it, or logs why not.
async fn command_loop<T>(
    mut stream: impl futures::Stream<Item = T> + Unpin,
    what: &'static str,
    link: CommandLink,
    to_request: impl Fn(&mut GimbalCommandState, &T, &GimbalBitTable) -> Result<VisionSensorReq, String>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let msg = tokio::select! {
            m = stream.next() => match m { Some(m) => m, None => break },
            _ = shutdown.changed() => break,
        };
        let result = to_request(&mut link.state.lock().unwrap(), &msg, &link.bits);
        match result {
            Ok(req) => send(
                &link.sock,
                link.to,
                &req.encode(RequestForm::Gimbal148, link.checksum),
                &link.logger,
            ),
            Err(e) => r2r::log_warn!(&link.logger, "sensor {}: {what} rejected, nothing sent: {e}", link.seq),
        }
    }
}

fn ctrl_to_request(
    state: &mut GimbalCommandState,
    msg: &CameraCtrl,
    bits: &GimbalBitTable,
) -> Result<VisionSensorReq, String> {
    let c = Ctrl {
        ctrl_type: msg.ctrl_type,
        height: msg.height,
        width: msg.width,
        fov: msg.fov,
        roll: msg.roll,
        pitch: msg.pitch,
        yaw: msg.yaw,
        optics_multiply: msg.optics_multiply,
        base_optics: msg.base_optics,
        others: msg.others.clone(),
    };
    let (req, next) = ctrl_request(state, &c, bits)?;
    *state = next;
    Ok(req)
}

fn ai_to_request(
    state: &mut GimbalCommandState,
    msg: &CameraAICtrl,
    bits: &GimbalBitTable,
) -> Result<VisionSensorReq, String> {
    ai_request(state, msg.ctrl_id, &msg.pixel_pos, bits)
}

fn camera_status(e: &GimbalEcho, cfg: &SensorConfig, zoom: f64) -> CameraStatus {
    let st = status_from_echo(e, cfg);
    let stamp = ros_common::time::to_ros_time(ros_common::time::wall_now());
    CameraStatus {
        header: ros_common::msgs::header(stamp, &names::optical_frame(cfg)),
        id: cfg.seq_id.min(255) as u8,
        frame_rate: cfg.rate_hz() as f32,
        capture_max_sec: 0.0,
        capture_min_sec: 0.0,
        capture_cur_sec: 0.0,
        height: st.height,
        width: st.width,
        fov: st.fov,
        type_: 2, // angles relative to the aircraft
        roll: st.attitude[0],
        pitch: st.attitude[1],
        yaw: st.attitude[2],
        optics_multiply: (zoom - 1.0).round() as i32,
        others: st.others,
        camera_params: CameraParams {
            fx: st.intrinsics[0],
            fy: st.intrinsics[1],
            cx: st.intrinsics[2],
            cy: st.intrinsics[3],
            att_type_valid_mask: CameraParams::PLANE_TO_CAM_VALID as u8,
            p2c_roll_deg: st.p2c_deg[0],
            p2c_pitch_deg: st.p2c_deg[1],
            p2c_yaw_deg: st.p2c_deg[2],
            p2c_front_m: st.offset_frd[0],
            p2c_right_m: st.offset_frd[1],
            p2c_down_m: st.offset_frd[2],
            ..Default::default()
        },
    }
}

type StatusOutputs = HashMap<u16, (Publisher<CameraStatus>, SensorConfig, Arc<Mutex<GimbalCommandState>>)>;

async fn status_loop(
    outputs: StatusOutputs,
    s: StatusInput,
    sock: Arc<std::net::UdpSocket>,
    to: SocketAddrV4,
    logger: String,
    mut shutdown: watch::Receiver<bool>,
) {
    let group = s.status_multicast.then_some(rflysim_proto::ports::MULTICAST_GROUP);
    let gate = SenderGate::new(s.senders.clone(), s.status_stats.clone(), &logger);
    let bound = ros_common::net::udp_receiver(Ipv4Addr::UNSPECIFIED, s.status_port, 1 << 20, group)
        .or_else(|e| {
            r2r::log_warn!(
                &logger,
                "status port {}: multicast {} not joined ({e}); unicast only",
                s.status_port,
                rflysim_proto::ports::MULTICAST_GROUP
            );
            ros_common::net::udp_receiver(Ipv4Addr::UNSPECIFIED, s.status_port, 1 << 20, None)
        })
        .and_then(|(sock, _)| FilteredUdp::new(sock, gate));
    let mut rx = match bound {
        Ok(r) => r,
        Err(e) => return r2r::log_error!(&logger, "no gimbal status: cannot bind UDP {}: {e}", s.status_port),
    };
    r2r::log_info!(&logger, "gimbal status from UDP {}", s.status_port);
    let mut heard: HashMap<u16, bool> = outputs.keys().map(|k| (*k, false)).collect();
    let mut warn = RateLimitedLog::new(Duration::from_secs(5));
    let mut buf = [0u8; 2048];
    let mut ask = tokio::time::interval(Duration::from_secs(2));
    loop {
        tokio::select! {
            n = rx.recv(&mut buf) => {
                let d = &buf[..n];
                // The port carries other structs too (CameraData, crash and object data): only 148-byte echoes matter here.
                if n != GimbalEcho::LEN {
                    continue;
                }
                match GimbalEcho::decode(d) {
                    Ok(e) => {
                        if let Some((publisher, cfg, state)) = outputs.get(&e.seq_id) {
                            let zoom = state.lock().unwrap().zoom;
                            match publisher.publish(&camera_status(&e, cfg, zoom)) {
                                Ok(()) => s.status_stats.published(n),
                                Err(_) => s.status_stats.drop_frame("publish_failed"),
                            }
                            heard.insert(e.seq_id, true);
                        }
                    }
                    Err(err) => {
                        s.status_stats.drop_frame(err.reason());
                        if let Some(held) = warn.allow() {
                            r2r::log_warn!(&logger, "gimbal status datagram ignored: {err} ({held} more held back)");
                        }
                    }
                }
            }
            _ = ask.tick() => {
                // Ask RflySim3D for the status of gimbals not heard from yet.
                for (seq, ok) in &heard {
                    if !ok {
                        if let Some(cmd) = console_command(&camera_data_command(*seq)) {
                            send(&sock, to, &cmd, &logger);
                        }
                    }
                }
            }
            _ = shutdown.changed() => break,
        }
    }
}
