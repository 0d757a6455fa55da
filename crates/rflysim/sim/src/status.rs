//! RflySim3D's status port (RflySim's vision protocol (rflysim.com/doc/en/4.DevRef/vis-comm.html), section 2.2), unicast
//! and/or multicast: every gimbal's echo (148 bytes) and, for the cameras
//! asked for, `CameraData` (72 bytes), at 10 Hz; and the scene's datagrams
//! (`rflysim_proto::scene`) as the console commands ask for them.

use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::time::Duration;

use frames::Vec3;
use rflysim_proto::ports::{CAMERA_STATUS_PORT, MULTICAST_GROUP};
use rflysim_proto::telemetry::CameraData;

use crate::dump::append_line;
use crate::faults::SceneFaultInjector;
use crate::log::line as log;
use crate::options::Options;
use crate::render::{self, Mount};
use crate::shared::Running;
use crate::transport::{send_all, udp_sender};

/// Where the status port's datagrams go.
fn destinations(o: &Options) -> Vec<SocketAddrV4> {
    let mut dests: Vec<SocketAddrV4> = o.gimbal_unicast.into_iter().collect();
    if o.gimbal_multicast {
        dests.push(SocketAddrV4::new(MULTICAST_GROUP, CAMERA_STATUS_PORT));
    }
    dests
}

pub(crate) fn gimbal_status_loop(o: Options, run: Running) {
    let Ok(sock) = udp_sender(Some(1)) else {
        return;
    };
    let dests = destinations(&o);
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
                let scene = shared
                    .scene
                    .lock()
                    .unwrap()
                    .world_at(t, Some(i32::from(cfg.target_copter)));
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
                    pos_ue: origin.map(|c| c as f32),
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

/// The scene's datagrams every 50 ms, through the scene's faults: the
/// replies the console commands asked for and, while the postback is on,
/// every vehicle's `reqVeCrashData` (`SceneState::tick`). With `--dump`,
/// `scene.txt` gets "t id x y z" for each vehicle that moved or appeared.
pub(crate) fn scene_status_loop(o: Options, run: Running) {
    let sock = match udp_sender(Some(1)) {
        Ok(s) => s,
        Err(e) => return log(&format!("scene: no socket to send from: {e}")),
    };
    let dests = destinations(&o);
    let mut faults = SceneFaultInjector::new(o.scene_faults);
    let mut dumped: HashMap<i32, Vec3> = HashMap::new();
    while !run.stopping() {
        std::thread::sleep(Duration::from_millis(50));
        if o.silent_while_paused && run.clock.paused() {
            continue;
        }
        let t = run.clock.now();
        let (outbox, now) = {
            let mut scene = run.shared.scene.lock().unwrap();
            scene.tick(t);
            let now: HashMap<i32, Vec3> = match o.dump_dir {
                Some(_) => scene.vehicles().map(|v| (v.id, v.pos)).collect(),
                None => HashMap::new(),
            };
            (scene.take_outbox(), now)
        };
        if let Some(dir) = &o.dump_dir {
            let path = dir.join("scene.txt");
            for (id, p) in &now {
                if dumped.get(id) != Some(p) {
                    let _ = append_line(&path, &format!("{t:.6} {id} {} {} {}", p[0], p[1], p[2]));
                }
            }
            dumped = now;
        }
        for d in outbox {
            for out in faults.apply(d.encode()) {
                for dest in &dests {
                    let _ = send_all(&sock, *dest, &out);
                }
            }
        }
        *run.shared.scene_faults.lock().unwrap() += faults.take_counts();
    }
}
