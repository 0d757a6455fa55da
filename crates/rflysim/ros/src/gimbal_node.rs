//! The gimbals: for every gimbal camera (TypeID 9) of the config,
//! `camera/ctrl` and `camera/ai_ctrl` in, 148-byte requests out to
//! RflySim3D through the shared command path (a gimbal slewing at a rate
//! is a command in force: `cmd_timeout_s` after the last one, its rates are
//! set to zero, and again at the stop); RflySim3D's echoes from the status
//! port (`status_port`) in, `camera/status` out.
//!
//! A command is checked when it comes and changes the gimbal's remembered
//! state only when its request leaves: one the command path refuses
//! changes nothing. The neutral (both rates 0) counts as delivered once an
//! echo shows both rates 0; until then it is sent again.

use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use r2r::rflysim_bridge::msg::{CameraAICtrl, CameraCtrl, CameraParams, CameraStatus};
use r2r::{Node, Publisher};
use tokio::sync::watch;

use rflysim_proto::config::SensorConfig;
use rflysim_proto::console::{camera_data_command, console_command};
use rflysim_proto::gimbal::{GimbalBitTable, GimbalEcho};
use rflysim_proto::scene::StatusDatagram;

use crate::gimbal::{ai_change, ctrl_change, status_from_echo, Ctrl, GimbalChange, GimbalCommandState};
use crate::gimbal_requests::{EchoBook, GimbalCommand, GimbalLink, GimbalRequests};
use crate::names;
use crate::settings::Settings;
use crate::status_port::StatusHandler;
use r2r::builtin_interfaces::msg::Time;
use ros_common::command::{CommandInbox, CommandSender};
use ros_common::sim_host::SimEndpoint;
use ros_common::stats::{RateLimitedLog, StreamStats};
use ros_common::time::ArrivalStamps;

/// What `start` made: the gimbals' count and, when there are any, their
/// command sender for the process to run, their side of the status port,
/// and when the status port may stop reading after the stop (the stop's
/// neutrals confirmed, or given up).
#[derive(Debug)]
pub struct Started {
    pub count: usize,
    pub sender: Option<CommandSender<GimbalRequests>>,
    pub status: Option<GimbalStatus>,
    pub settled: Option<watch::Receiver<bool>>,
}

/// Creates the subscriptions and publishers on `node` and spawns the command
/// tasks. Echoes published are counted in `status_stats`, each gimbal's
/// commands in `command_stats` (one per gimbal, by the name given).
/// `clock` is the node's: a status is stamped on it, and a command's stamp
/// judged against it (the wall clock, or `/clock` with use_sim_time).
pub fn start(
    node: &mut Node,
    sensors: &[SensorConfig],
    settings: &Settings,
    clock: ArrivalStamps,
    status_stats: Arc<StreamStats>,
    mut command_stats: impl FnMut(u16) -> Arc<StreamStats>,
    shutdown: watch::Receiver<bool>,
) -> Result<Started, String> {
    let s = settings.gimbal;
    let logger = node.logger().to_string();
    let sock = ros_common::net::udp_sender().map_err(|e| format!("UDP: {e}"))?;
    let sock = Arc::new(sock);
    let to = SimEndpoint::new(
        &settings.link.sim_host,
        crate::requests::request_port(settings.link.window_id),
    );
    let this_host = ros_common::net::local_ip_towards(settings.link.sim_host.ip());
    let gimbals: Vec<&SensorConfig> = sensors.iter().filter(|c| c.is_gimbal()).collect();
    if gimbals.is_empty() {
        return Ok(Started {
            count: 0,
            sender: None,
            status: None,
            settled: None,
        });
    }
    let states: Vec<Arc<Mutex<GimbalCommandState>>> = gimbals
        .iter()
        .map(|cfg| {
            let asked = crate::requests::as_asked_of(cfg, settings.link.sim_host.ip(), this_host);
            Arc::new(Mutex::new(GimbalCommandState::new(&asked)))
        })
        .collect();
    let stats: Vec<Arc<StreamStats>> = gimbals.iter().map(|c| command_stats(c.seq_id)).collect();
    let echoes = Arc::new(EchoBook::default());
    let (settled_tx, settled) = watch::channel(false);
    let transport = GimbalRequests {
        sock: sock.clone(),
        to: to.clone(),
        bits: s.bits,
        checksum: s.checksum,
        gimbals: gimbals
            .iter()
            .zip(&states)
            .zip(&stats)
            .map(|((cfg, state), stats)| GimbalLink {
                seq: cfg.seq_id,
                state: state.clone(),
                stats: stats.clone(),
                neutral: None,
            })
            .collect(),
        echoes: echoes.clone(),
        stop: shutdown.clone(),
        settled: settled_tx,
        status_port: format!("UDP {} (status_multicast {})", s.status_port, s.status_multicast),
        logger: logger.clone(),
        log: RateLimitedLog::new(Duration::from_secs(5)),
    };
    let names = gimbals
        .iter()
        .map(|c| format!("gimbal of sensor {}", c.seq_id))
        .collect();
    let (inbox, sender) = ros_common::command::command_path(transport, s.cmd_timeout, names, stats, &logger);
    let mut status_pubs: StatusOutputs = HashMap::new();
    for (index, (cfg, state)) in gimbals.into_iter().zip(states).enumerate() {
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
            index,
            state,
            bits: s.bits,
            inbox: inbox.clone(),
            clock: clock.clone(),
        };
        tokio::spawn(command_loop(
            ctrl,
            "CameraCtrl",
            link.clone(),
            ctrl_to_change,
            shutdown.clone(),
        ));
        tokio::spawn(command_loop(ai, "CameraAICtrl", link, ai_to_change, shutdown.clone()));
    }
    let count = status_pubs.len();
    let status = GimbalStatus {
        heard: status_pubs.keys().map(|k| (*k, false)).collect(),
        outputs: status_pubs,
        echoes,
        stats: status_stats,
        stamps: clock,
        sock,
        to,
        logger,
    };
    Ok(Started {
        count,
        sender: Some(sender),
        status: Some(status),
        settled: Some(settled),
    })
}

fn send(sock: &std::net::UdpSocket, to: SocketAddrV4, bytes: &[u8], logger: &str) {
    if let Err(e) = sock.send_to(bytes, to) {
        r2r::log_warn!(logger, "cannot send to {to}: {e}");
    }
}

/// What a command task needs to turn messages into changes for one gimbal.
#[derive(Clone)]
struct CommandLink {
    index: usize,
    state: Arc<Mutex<GimbalCommandState>>,
    bits: GimbalBitTable,
    inbox: CommandInbox<GimbalCommand>,
    clock: ArrivalStamps,
}

/// A message's header stamp, in seconds.
trait Stamped {
    fn stamp_s(&self) -> f64;
}

impl Stamped for CameraCtrl {
    fn stamp_s(&self) -> f64 {
        ros_common::time::from_ros_time(&self.header.stamp)
    }
}

impl Stamped for CameraAICtrl {
    fn stamp_s(&self) -> f64 {
        ros_common::time::from_ros_time(&self.header.stamp)
    }
}

/// Turns each message of `stream` into a change with `to_change` (which
/// reads the gimbal's state, never writes it: a change takes effect when its
/// request leaves) and hands it to the command path, or says why not. A
/// change that sets a rate arms the watchdog.
async fn command_loop<T: Stamped>(
    mut stream: impl futures::Stream<Item = T> + Unpin,
    what: &'static str,
    link: CommandLink,
    to_change: impl Fn(&GimbalCommandState, &T, &GimbalBitTable) -> Result<GimbalChange, String>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let msg = tokio::select! {
            m = stream.next() => match m { Some(m) => m, None => break },
            _ = shutdown.changed() => break,
        };
        let result = to_change(&link.state.lock().unwrap_or_else(|e| e.into_inner()), &msg, &link.bits);
        match result {
            Ok(change) => {
                let moving = change.moves(&link.bits);
                link.inbox.submit(
                    link.index,
                    GimbalCommand::Change(change),
                    msg.stamp_s(),
                    link.clock.now_s(),
                    moving,
                );
            }
            Err(e) => link.inbox.refuse(link.index, "invalid", &format!("{what}: {e}")),
        }
    }
}

fn ctrl_to_change(_: &GimbalCommandState, msg: &CameraCtrl, bits: &GimbalBitTable) -> Result<GimbalChange, String> {
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
    ctrl_change(&c, bits)
}

fn ai_to_change(state: &GimbalCommandState, msg: &CameraAICtrl, bits: &GimbalBitTable) -> Result<GimbalChange, String> {
    ai_change(state, msg.ctrl_id, &msg.pixel_pos, bits)
}

fn camera_status(e: &GimbalEcho, cfg: &SensorConfig, zoom: f64, stamp: Time) -> CameraStatus {
    let st = status_from_echo(e, cfg);
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

/// The gimbals' side of the status port: each echo → `camera/status`; the
/// status of a gimbal not heard from yet is asked for every tick.
pub struct GimbalStatus {
    outputs: StatusOutputs,
    heard: HashMap<u16, bool>,
    echoes: Arc<EchoBook>,
    stats: Arc<StreamStats>,
    stamps: ArrivalStamps,
    sock: Arc<std::net::UdpSocket>,
    to: SimEndpoint,
    logger: String,
}

impl std::fmt::Debug for GimbalStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GimbalStatus")
            .field("heard", &self.heard)
            .finish_non_exhaustive()
    }
}

impl StatusHandler for GimbalStatus {
    fn on_datagram(&mut self, d: &StatusDatagram) {
        let StatusDatagram::GimbalEcho(e) = d else { return };
        if let Some((publisher, cfg, state)) = self.outputs.get(&e.seq_id) {
            self.echoes.heard(e.seq_id, e);
            let zoom = state.lock().unwrap_or_else(|e| e.into_inner()).zoom;
            match publisher.publish(&camera_status(e, cfg, zoom, self.stamps.now())) {
                Ok(()) => self.stats.published(GimbalEcho::LEN),
                Err(_) => self.stats.drop_frame("publish_failed"),
            }
            self.heard.insert(e.seq_id, true);
        }
    }

    fn tick(&mut self) {
        for (seq, ok) in &self.heard {
            if !ok {
                if let Some(cmd) = console_command(&camera_data_command(*seq)) {
                    send(&self.sock, self.to.addr(), &cmd, &self.logger);
                }
            }
        }
    }
}
