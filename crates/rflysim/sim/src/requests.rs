//! RflySim3D's request port: console commands, split into commands as
//! Unreal's console splits a line (the cameras' `RflyReqObjData` and
//! `RflyClearCapture`; the scene's verbs, for [`crate::scene`]), the labels
//! over vehicles, the pose structs that place vehicles in the scene, gimbal
//! control requests (a neutral one dropped on demand:
//! `--drop-gimbal-neutrals`, `--gimbal-neutral-loss`), and
//! `VisionSensorReq`s that start (or reconfigure) a sensor's stream.

use std::net::UdpSocket;
use std::sync::{Arc, Mutex};

use rflysim_proto::console::{console_lines, decode_console_command, ConsoleRequest, SceneItem};
use rflysim_proto::error::DecodeError;
use rflysim_proto::gimbal::stops_rates_only;
use rflysim_proto::label::{CopterMsg, VehicleLabel};
use rflysim_proto::request::{RequestForm, VisionSensorReq};
use rflysim_proto::scene::PoseDatagram;

use crate::faults::NeutralDropper;
use crate::log::line as log;
use crate::shared::Running;
use crate::stream::Streams;

pub(crate) fn request_loop(sock: UdpSocket, streams: Arc<Mutex<Streams>>, run: Running) {
    let mut buf = vec![0u8; 65_536];
    let (bits, neutral_drops) = {
        let o = &streams.lock().unwrap().options;
        (o.gimbal_bits, o.gimbal_neutral_drops)
    };
    let mut neutral_dropper = NeutralDropper::new(neutral_drops);
    let shared = &run.shared;
    while !run.stopping() {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        let d = &buf[..n];
        if let Ok(text) = decode_console_command(d) {
            // As RflySim3D's (Unreal's) console: each command of the text in turn.
            for command in console_lines(&text) {
                log(&format!("console command from {from}: {command}"));
                let Some(request) = ConsoleRequest::parse(&command) else {
                    continue;
                };
                let mut cameras = shared.camera_data.lock().unwrap();
                match &request {
                    ConsoleRequest::CameraData(seq) => cameras.push(*seq),
                    ConsoleRequest::ClearCapture => cameras.clear(),
                    ConsoleRequest::Delete(SceneItem::Camera(seq)) => cameras.retain(|s| s != seq),
                    ConsoleRequest::Clear(scope) if scope.cameras() => cameras.clear(),
                    _ => {}
                }
                drop(cameras);
                shared.scene.lock().unwrap().apply_console(&request, run.clock.now());
            }
            continue;
        }
        if let Ok(m) = CopterMsg::decode(d) {
            log(&format!(
                "label from {from}: CopterID {} dispFlag {} RGB {:?} dispTime {} fontSize {} text {:?}",
                m.copter_id, m.disp_flag, m.rgb, m.disp_time, m.font_size, m.text
            ));
            shared.scene.lock().unwrap().apply_label(VehicleLabel::from_message(&m));
            continue;
        }
        match PoseDatagram::decode(d) {
            Ok(poses) => {
                let t = run.clock.now();
                let mut scene = shared.scene.lock().unwrap();
                for pose in poses.poses() {
                    if scene.apply_pose(&pose, t) {
                        log(&format!(
                            "vehicle {} (type {}) placed in the scene by {from}",
                            pose.copter_id, pose.vehicle_type
                        ));
                    }
                }
                continue;
            }
            // Not a pose struct's length: a VisionSensorReq's, maybe.
            Err(DecodeError::Length { .. }) => {}
            Err(e) => {
                log(&format!("ignored a datagram from {from} on the request port: {e}"));
                continue;
            }
        }
        match VisionSensorReq::decode(d) {
            Ok((req, RequestForm::Gimbal148, _)) => {
                if stops_rates_only(&req, &bits) && neutral_dropper.drops() {
                    log(&format!(
                        "gimbal of sensor {}: neutral request (both rates 0) dropped, as asked",
                        req.seq_id
                    ));
                    continue;
                }
                let t = run.clock.now();
                let mut gimbals = shared.gimbals.lock().unwrap();
                match gimbals.get_mut(&req.seq_id) {
                    Some(g) => g.apply(&req, &bits, t),
                    None => log(&format!(
                        "gimbal request for sensor {} which is not a running gimbal",
                        req.seq_id
                    )),
                }
            }
            Ok((req, form, _)) => {
                let cfg = req.sensor_config(form);
                let known = shared.sensors.lock().unwrap().get(&cfg.seq_id) == Some(&cfg);
                if !known {
                    log(&format!(
                        "request from {from}: starting sensor {} (TypeID {}), SendProtocol {:?}",
                        cfg.seq_id, cfg.type_id, cfg.send_protocol
                    ));
                    if let Err(e) = streams.lock().unwrap().start(cfg, &run) {
                        log(&format!("cannot start the requested sensor: {e}"));
                    }
                }
            }
            Err(e) => log(&format!("ignored a datagram from {from} on the request port: {e}")),
        }
    }
}
