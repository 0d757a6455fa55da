//! RflySim3D's status port (RflySim wire protocol: gimbal status): every gimbal's echo (148 bytes) and,
//! for the cameras asked for, `CameraData` (72 bytes), at 10 Hz, unicast
//! and/or multicast.

use std::net::SocketAddrV4;
use std::time::Duration;

use rflysim_proto::ports::{CAMERA_STATUS_PORT, MULTICAST_GROUP};
use rflysim_proto::telemetry::CameraData;

use crate::options::Options;
use crate::render::{self, Mount};
use crate::shared::Running;
use crate::transport::{send_all, udp_sender};
use crate::world::Scene;

pub(crate) fn gimbal_status_loop(o: Options, run: Running) {
    let Ok(sock) = udp_sender(Some(1)) else {
        return;
    };
    let mut dests: Vec<SocketAddrV4> = o.gimbal_unicast.into_iter().collect();
    if o.gimbal_multicast {
        dests.push(SocketAddrV4::new(MULTICAST_GROUP, CAMERA_STATUS_PORT));
    }
    let scene = Scene::default();
    let shared = &run.shared;
    while !run.stopping() {
        std::thread::sleep(Duration::from_millis(100));
        let t = run.clock.now();
        let v = o.trajectory.state(t);
        let sensors = shared.sensors.lock().unwrap().clone();
        let wanted = shared.camera_data.lock().unwrap().clone();
        let mut packets = Vec::new();
        for (seq, g) in shared.gimbals.lock().unwrap().iter_mut() {
            g.advance(t);
            let Some(cfg) = sensors.get(seq) else {
                continue;
            };
            let range = if g.ranging {
                let mount = Mount {
                    position: cfg.sensor_pos_xyz.map(f64::from),
                    rotation: g.attitude(),
                };
                render::laser(&scene, &v, &mount, 1, [0.0; 3], 1000.0).distance
            } else {
                0.0
            };
            packets.push(g.echo(cfg, range).encode(o.echo_checksum));
        }
        for (seq, cfg) in &sensors {
            if !cfg.kind().is_some_and(|k| k.is_camera()) || !(o.camera_data_always || wanted.contains(seq)) {
                continue;
            }
            let (origin, rot) = Mount::of(cfg).pose_in_world(&v);
            packets.push(
                CameraData {
                    seq_id: i32::from(*seq),
                    type_id: i32::from(cfg.type_id),
                    data_height: i32::from(cfg.data_height),
                    data_width: i32::from(cfg.data_width),
                    camera_fov: cfg.camera_fov_deg,
                    pos_ue: origin.map(|c| (c * 100.0) as f32),
                    ang_euler: frames::quat_to_euler(rot).map(|c| c as f32),
                    ang_quat: Some(rot.map(|c| c as f32)),
                    time_stamp: t,
                }
                .encode(),
            );
        }
        for p in &packets {
            for d in &dests {
                let _ = send_all(&sock, *d, p);
            }
        }
    }
}
