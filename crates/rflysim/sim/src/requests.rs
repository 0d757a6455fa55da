//! RflySim3D's request port: console commands (`RflyReqObjData`,
//! `RflyClearCapture`), gimbal control requests, and `VisionSensorReq`s that
//! start (or reconfigure) a sensor's stream.

use std::net::UdpSocket;
use std::sync::{Arc, Mutex};

use rflysim_proto::request::{decode_console_command, ConsoleRequest, RequestForm, VisionSensorReq};

use crate::log::line as log;
use crate::shared::Running;
use crate::stream::Streams;

pub(crate) fn request_loop(sock: UdpSocket, streams: Arc<Mutex<Streams>>, run: Running) {
    let mut buf = vec![0u8; 65_536];
    let bits = streams.lock().unwrap().options.gimbal_bits;
    let shared = &run.shared;
    while !run.stopping() {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        let d = &buf[..n];
        if let Ok(text) = decode_console_command(d) {
            log(&format!("console command from {from}: {text}"));
            match ConsoleRequest::parse(&text) {
                Some(ConsoleRequest::CameraData(seq)) => shared.camera_data.lock().unwrap().push(seq),
                Some(ConsoleRequest::ClearCapture) => shared.camera_data.lock().unwrap().clear(),
                _ => {}
            }
            continue;
        }
        match VisionSensorReq::decode(d) {
            Ok((req, RequestForm::Gimbal148, _)) => {
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
                        "request from {from}: starting sensor {} (TypeID {})",
                        cfg.seq_id, cfg.type_id
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
