//! The emulator's scene, run as a real process, over real UDP: pose structs
//! sent to the request port place vehicles, the console verbs ask about
//! them, and what comes back on the status port is what RflySim3D sends.

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, UdpSocket};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rflysim_proto::console::ConsoleRequest;
use rflysim_proto::error::DecodeError;
use rflysim_proto::image::raw_image;
use rflysim_proto::reassembly::{Reassembler, ReassemblerConfig};
use rflysim_proto::scene::{
    CrashType, MultiVehicleUpdate, PlacedVehicle, Placement, PoseDatagram, SimpleVehicleUpdate, StatusDatagram,
    VehicleUpdate,
};
use rflysim_proto::sensor::Encoding;
use rflysim_sim::render::{self, Mount};
use rflysim_sim::scene::{SceneState, VEHICLE_HALF_EXTENT};
use rflysim_sim::world::Trajectory;

// Shared with tests/wire.rs, which uses the rest of it.
#[allow(dead_code)]
mod support;

use support::*;

/// An emulator on window `window` with no CopterSim, its status datagrams
/// sent to `status_port`, which the returned socket listens on.
fn scene_sim(window: u16, status_port: u16, extra: &[&str]) -> (Sim, UdpSocket) {
    let sock = listener(status_port);
    let window = window.to_string();
    let target = format!("127.0.0.1:{status_port}");
    let mut args = vec!["--window-id", &window, "--copters", "", "--gimbal-target", &target];
    args.extend_from_slice(extra);
    let (sim, _) = start(&config(&[]), &args);
    (sim, sock)
}

/// Sends datagrams to the request port of `window`.
struct Requests {
    sock: UdpSocket,
    port: u16,
}

impl Requests {
    fn new(window: u16) -> Self {
        Self {
            sock: UdpSocket::bind("127.0.0.1:0").unwrap(),
            // The spec's number, not the crate's: 20010 + window.
            port: 20010 + window,
        }
    }

    fn send(&self, d: &[u8]) {
        self.sock.send_to(d, (Ipv4Addr::LOCALHOST, self.port)).unwrap();
    }

    fn command(&self, request: ConsoleRequest) {
        for c in request.commands().unwrap() {
            self.send(&c.encode());
        }
    }
}

/// Calls `ask` every 300 ms (the emulator may not listen yet) until a
/// status datagram `want` takes comes, or 10 s.
fn ask_until<T>(
    status: &UdpSocket,
    mut ask: impl FnMut(),
    mut want: impl FnMut(StatusDatagram) -> Option<T>,
) -> Option<T> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut next_ask = Instant::now();
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline {
        if Instant::now() >= next_ask {
            ask();
            next_ask = Instant::now() + Duration::from_millis(300);
        }
        if let Ok(n) = status.recv(&mut buf) {
            if let Some(t) = StatusDatagram::decode(&buf[..n]).ok().and_then(&mut want) {
                return Some(t);
            }
        }
    }
    None
}

/// Every status datagram that came within `span`.
fn collect_raw(status: &UdpSocket, span: Duration) -> Vec<Vec<u8>> {
    let deadline = Instant::now() + span;
    let mut buf = [0u8; 4096];
    let mut out = Vec::new();
    while Instant::now() < deadline {
        if let Ok(n) = status.recv(&mut buf) {
            out.push(buf[..n].to_vec());
        }
    }
    out
}

/// Every status datagram that came within `span`, decoded.
fn collect(status: &UdpSocket, span: Duration) -> Vec<Result<StatusDatagram, DecodeError>> {
    collect_raw(status, span)
        .iter()
        .map(|d| StatusDatagram::decode(d))
        .collect()
}

/// The ids of the vehicles whose `reqVeCrashData` came within `span`.
fn reported(status: &UdpSocket, span: Duration) -> BTreeSet<i32> {
    collect(status, span)
        .into_iter()
        .filter_map(|d| match d {
            Ok(StatusDatagram::VehicleCrashData(c)) => Some(c.copter_id),
            _ => None,
        })
        .collect()
}

#[test]
fn a_placed_vehicle_is_reported_where_it_was_placed() {
    let dump = std::env::temp_dir().join(format!("rflysim_scene_dump_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dump);
    let (_sim, status) = scene_sim(40, 41701, &["--dump", dump.to_str().unwrap()]);
    let requests = Requests::new(40);
    let update = VehicleUpdate {
        placement: Placement::AsSent,
        copter_id: 7,
        vehicle_type: 3,
        pwms: [1000.0; 8],
        vel_ned: [0.0; 3],
        euler: [0.0, 0.0, 0.5],
        pos_ned: [3.5, -2.0, -4.0],
        runned_time: VehicleUpdate::UNSET_TIME,
    };
    let copter = ask_until(
        &status,
        || {
            requests.send(&update.encode());
            requests.command(ConsoleRequest::VehicleData(7));
        },
        |d| match d {
            StatusDatagram::CopterData(c) if c.copter_id == 7 => Some(c),
            _ => None,
        },
    )
    .expect("CoptReqData of vehicle 7");
    let p = copter.pose;
    assert_eq!(
        (p.pos, p.euler, p.box_origin),
        ([3.5, -2.0, -4.0], [0.0, 0.0, 0.5], [3.5, -2.0, -4.0])
    );
    assert_eq!(p.box_extent, VEHICLE_HALF_EXTENT.map(|v| v as f32));
    let q = p.quat.expect("the 80-byte form");
    assert!(
        (q[0] - 0.25f32.cos()).abs() < 1e-6 && (q[3] - 0.25f32.sin()).abs() < 1e-6,
        "{q:?}"
    );
    let object = ask_until(
        &status,
        || requests.command(ConsoleRequest::ObjectData("Building_1".into())),
        |d| match d {
            StatusDatagram::ObjectData(o) => Some(o),
            _ => None,
        },
    )
    .expect("ObjReqData of Building_1");
    assert_eq!(
        (object.name.as_str(), object.pose.box_origin, object.pose.box_extent),
        ("Building_1", [16.0, 0.0, -3.0], [1.5, 1.5, 3.0])
    );
    // What is not in the scene gets no reply (once the replies to repeated asks are in).
    std::thread::sleep(Duration::from_millis(300));
    let _ = collect(&status, Duration::from_millis(100));
    requests.command(ConsoleRequest::VehicleData(99));
    requests.command(ConsoleRequest::ObjectData("Nothing_9".into()));
    let replies = collect(&status, Duration::from_millis(500));
    assert!(replies.is_empty(), "{replies:?}");
    let moves = std::fs::read_to_string(dump.join("scene.txt")).expect("--dump writes scene.txt");
    assert!(
        moves
            .lines()
            .any(|l| l.split_whitespace().skip(1).eq(["7", "3.5", "-2", "-4"])),
        "{moves}"
    );
    let _ = std::fs::remove_dir_all(&dump);
}

#[test]
fn a_line_of_chained_commands_runs_each_as_unreal_s_console_does() {
    let (_sim, status) = scene_sim(47, 41707, &[]);
    let requests = Requests::new(47);
    // Not a `ConsoleCommand` (which refuses a chain): the bytes a careless sender would send.
    let line = |text: &str| {
        let mut d = rflysim_proto::console::CONSOLE_CHECKSUM.to_le_bytes().to_vec();
        d.extend_from_slice(text.as_bytes());
        d.resize(rflysim_proto::console::ConsoleCommand::LONG_LEN, 0);
        d
    };
    let names = ask_until(
        &status,
        || requests.send(&line("RflyReqObjData 2 Tree_2 0|RflyReqObjData 2 Building_1 0")),
        |d| match d {
            StatusDatagram::ObjectData(o) if o.name == "Building_1" => Some(o.name),
            _ => None,
        },
    );
    assert_eq!(names.as_deref(), Some("Building_1"), "the second command ran");
    // A comment drops the rest of its command, not the next one.
    std::thread::sleep(Duration::from_millis(300));
    let _ = collect(&status, Duration::from_millis(100));
    requests.send(&line("RflyReqObjData 2 Nothing_9 0 // |RflyReqObjData 2 Tree_2 0"));
    let replies: Vec<String> = collect(&status, Duration::from_millis(500))
        .into_iter()
        .filter_map(|d| match d {
            Ok(StatusDatagram::ObjectData(o)) => Some(o.name),
            _ => None,
        })
        .collect();
    assert_eq!(replies, ["Tree_2"]);
}

#[test]
fn a_vehicle_below_the_ground_crashes_into_it() {
    let (_sim, status) = scene_sim(41, 41702, &[]);
    let requests = Requests::new(41);
    let sunk = SimpleVehicleUpdate {
        placement: Placement::AsSent,
        copter_id: 3,
        vehicle_type: 3,
        motor_rpm_mean: 1000.0,
        pos_ned: [5.0, 6.0, 1.0],
        euler: [0.0; 3],
        scale: None,
    };
    let crash = ask_until(
        &status,
        || {
            requests.send(&sunk.encode());
            requests.command(ConsoleRequest::VehicleDataPostback(true));
        },
        |d| match d {
            StatusDatagram::VehicleCrashData(c) if c.copter_id == 3 => Some(c),
            _ => None,
        },
    )
    .expect("reqVeCrashData of vehicle 3");
    assert_eq!(
        (crash.crash, crash.crash_pos, crash.crashed_name.as_str()),
        (CrashType::Ground, [5.0, 6.0, 0.0], "Landscape_1")
    );
    assert_eq!((crash.pos_ned, crash.motor_rpm), ([5.0, 6.0, 1.0], [1000.0; 8]));
    // Nothing changes: at least once a second all the same.
    assert!(reported(&status, Duration::from_millis(2200)).contains(&3));
    requests.command(ConsoleRequest::VehicleDataPostback(false));
    std::thread::sleep(Duration::from_millis(300));
    assert!(reported(&status, Duration::from_millis(1500)).is_empty());
}

#[test]
fn a_multi_update_places_three_vehicles_and_del_vehicles_removes_one() {
    let (_sim, status) = scene_sim(42, 41703, &[]);
    let requests = Requests::new(42);
    let three: Vec<PlacedVehicle> = (1..=3u16)
        .map(|id| PlacedVehicle {
            id,
            vehicle_type: 3,
            pos_ned: [30.0 + 5.0 * f32::from(id), 30.0, -5.0],
            euler: [0.0; 3],
            scale: [1.0; 3],
            motor_rpm_mean: 1000.0,
        })
        .collect();
    let mut multi = [0u8; MultiVehicleUpdate::LEN];
    MultiVehicleUpdate::encode_into(Placement::AsSent, &three, &mut multi);
    let mut seen = BTreeSet::new();
    ask_until(
        &status,
        || {
            requests.send(&multi);
            requests.command(ConsoleRequest::VehicleDataPostback(true));
        },
        |d| match d {
            StatusDatagram::VehicleCrashData(c) => {
                assert_eq!(c.crash, CrashType::None, "{c:?}");
                seen.insert(c.copter_id);
                (seen.len() == 3).then_some(())
            }
            _ => None,
        },
    )
    .unwrap_or_else(|| panic!("three vehicles, seen {seen:?}"));
    assert_eq!(seen, BTreeSet::from([1, 2, 3]));
    requests.command(ConsoleRequest::DelVehicles(vec![2]));
    std::thread::sleep(Duration::from_millis(300));
    let _ = collect(&status, Duration::from_millis(100));
    assert_eq!(reported(&status, Duration::from_millis(1500)), BTreeSet::from([1, 3]));
    // Its data again: it is back.
    requests.send(&multi);
    assert_eq!(
        reported(&status, Duration::from_millis(1500)),
        BTreeSet::from([1, 2, 3])
    );
}

#[test]
fn a_placed_vehicle_appears_in_the_camera_image() {
    let port = 41711;
    let sock = listener(port);
    let text = config(&[camera_json(1, 1, 2, port, 64, 48, 20)]);
    let (_sim, cfgs) = start(
        &text,
        &["--window-id", "43", "--copters", "", "--gimbal-target", "none"],
    );
    let cfg = &cfgs[0];
    // A thin slab 33 m square over the ground in the middle: whatever the
    // camera's place on its circle, the ground it looks down at is under it.
    let slab = SimpleVehicleUpdate {
        placement: Placement::AsSent,
        copter_id: 9,
        vehicle_type: 3,
        motor_rpm_mean: 0.0,
        pos_ned: [0.0, 0.0, -0.02],
        euler: [0.0; 3],
        scale: Some([60.0, 60.0, 0.1]),
    };
    let requests = Requests::new(43);
    let mut with_slab = SceneState::default();
    for pose in PoseDatagram::Simple(slab).poses() {
        with_slab.apply_pose(&pose, 0.0);
    }
    let render_at = |scene: &SceneState, t: f64| {
        let world = scene.world_at(t, Some(i32::from(cfg.target_copter)));
        let view = render::CameraView::of(cfg).unwrap();
        render::render_camera(&world, &Trajectory::default().state(t), &Mount::of(cfg), &view)
    };
    let mut r = Reassembler::new(ReassemblerConfig::default());
    let (mut seen, mut frames_before) = (0, 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    while seen < 3 && Instant::now() < deadline {
        requests.send(&slab.encode());
        for f in frames(&sock, &mut r, 2, Duration::from_millis(300)) {
            let img = raw_image(Bytes::from(f.payload), 64, 48, Encoding::Bgr8).unwrap();
            let magenta = img
                .data
                .chunks_exact(3)
                .filter(|p| p[1] == 0 && p[0] > 100 && p[2] > 100)
                .count();
            if magenta == 0 {
                // A frame from before the slab arrived: the world without it.
                assert_eq!(&img.data[..], &rendered(cfg, Encoding::Bgr8, f.time_stamp)[..]);
                frames_before += 1;
            } else {
                assert_eq!(&img.data[..], &render_at(&with_slab, f.time_stamp)[..]);
                assert!(magenta > 64 * 48 / 10, "{magenta} magenta pixels");
                seen += 1;
            }
        }
    }
    assert!(seen >= 3, "{seen} frames with the vehicle ({frames_before} without)");
}

#[test]
fn scene_faults_break_scene_datagrams_as_asked() {
    let placed = |copter_id| SimpleVehicleUpdate {
        placement: Placement::OnGround,
        copter_id,
        vehicle_type: 3,
        motor_rpm_mean: 0.0,
        pos_ned: [30.0, 30.0, 0.0],
        euler: [0.0; 3],
        scale: None,
    };
    for (window, status_port, flag) in [(44, 41704, "--scene-bad-checksum"), (45, 41705, "--scene-truncate")] {
        let (_sim, status) = scene_sim(window, status_port, &[flag, "1"]);
        let requests = Requests::new(window);
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        while got.len() < 5 && Instant::now() < deadline {
            requests.send(&placed(1).encode());
            requests.command(ConsoleRequest::VehicleDataPostback(true));
            got.extend(collect_raw(&status, Duration::from_millis(300)));
        }
        assert!(got.len() >= 5, "{flag}: {} datagrams", got.len());
        for d in &got {
            if flag == "--scene-bad-checksum" {
                assert!(matches!(StatusDatagram::decode(d), Err(DecodeError::Checksum { .. })));
            } else {
                // Cut short, it may still pass for a shorter struct (the
                // port has no length field), never for itself.
                assert!(d.len() < 160, "{} bytes", d.len());
            }
        }
    }
    // Garbage comes before the datagram, which stays whole.
    let (_sim, status) = scene_sim(46, 41706, &["--scene-garbage", "1"]);
    let requests = Requests::new(46);
    let good = ask_until(
        &status,
        || {
            requests.send(&placed(2).encode());
            requests.command(ConsoleRequest::VehicleData(2));
        },
        |d| match d {
            StatusDatagram::CopterData(c) => Some(c),
            _ => None,
        },
    );
    assert_eq!(
        good.map(|c| c.pose.pos),
        Some([30.0, 30.0, -0.15]),
        "placed on the ground"
    );
}
