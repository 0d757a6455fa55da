//! The emulator, run as a real process, against `gps_denied_proto` over real
//! UDP: telemetry frame by frame (images every fifth frame, the pad where
//! `landing_pad` says), commands that move the drone, every fault kind
//! showing in the parser, restarts, rover telemetry, and a prompt stop on
//! SIGTERM / SIGINT even after its stdout reader has gone.

use std::io::Read;
use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gps_denied_proto::camera::CameraModel;
use gps_denied_proto::{
    parse_telemetry, Command as DroneCommand, DroneTelemetry, Fault, Limits, PadReport, Parsed, Part, Telemetry,
};
use image_codec::{Encoding, JpegDecoder};

struct Sim(Child);

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A socket for the telemetry, and the emulator sending to it from a port of
/// its own choosing (`--bind 127.0.0.1:0`): commands go to where telemetry
/// comes from.
fn start(args: &[&str]) -> (Sim, UdpSocket) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let target = socket.local_addr().unwrap().to_string();
    let child = Command::new(env!("CARGO_BIN_EXE_gps_denied_sim"))
        .args(["--bind", "127.0.0.1:0", "--target", &target, "--quiet"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("gps_denied_sim runs");
    (Sim(child), socket)
}

fn receive(socket: &UdpSocket) -> (Vec<u8>, SocketAddr) {
    let mut buf = vec![0u8; 65_536];
    let (n, from) = socket.recv_from(&mut buf).expect("a datagram within 5 s");
    buf.truncate(n);
    (buf, from)
}

fn drone(p: Parsed) -> DroneTelemetry {
    match p.telemetry {
        Telemetry::Drone(d) => d,
        other => panic!("not a drone frame: {other:?}"),
    }
}

fn next_drone_frame(socket: &UdpSocket) -> (DroneTelemetry, SocketAddr) {
    loop {
        let (d, from) = receive(socket);
        if let Ok(p) = parse_telemetry(&d, &Limits::default()) {
            if matches!(p.telemetry, Telemetry::Drone(_)) {
                return (drone(p), from);
            }
        }
    }
}

/// Centroid of the pad's red pixels in a decoded bgr8 image.
fn red_centroid(bgr: &[u8], width: usize) -> Option<(f64, f64)> {
    let (mut su, mut sv, mut n) = (0.0, 0.0, 0usize);
    for (i, px) in bgr.chunks_exact(3).enumerate() {
        if px[2] > 150 && px[1] < 90 && px[0] < 90 {
            su += (i % width) as f64;
            sv += (i / width) as f64;
            n += 1;
        }
    }
    (n > 20).then(|| (su / n as f64, sv / n as f64))
}

#[test]
fn telemetry_frames_carry_an_image_every_fifth_frame_showing_the_pad() {
    let (_sim, socket) = start(&["--rate", "50", "--frames", "30"]);
    let camera = CameraModel::default();
    let mut decoder = JpegDecoder::new(320 * 240).unwrap();
    let mut images = 0;
    for k in 0..30u32 {
        let (d, _) = receive(&socket);
        let p = parse_telemetry(&d, &Limits::default()).unwrap();
        assert!(p.faults.is_empty(), "frame {k}: {:?}", p.faults);
        let t = drone(p);
        assert!((t.timestamp.unwrap() - f64::from(k) / 50.0).abs() < 1e-9, "frame {k}");
        assert_eq!(t.camera.map(|c| (c.width, c.height, c.fov_deg)), Some((320, 240, 60.0)));
        assert_eq!(t.landed, Some(false));
        assert_eq!(t.image.is_some(), k % 5 == 0, "frame {k}");
        let Some(jpeg) = t.image else { continue };
        images += 1;
        let image = decoder.decode(&jpeg, Encoding::Bgr8).unwrap();
        assert_eq!((image.width, image.height), (320, 240));
        let Some(PadReport::Detected(pad)) = t.landing_pad else {
            panic!("frame {k}: the pad is below the drone at start")
        };
        let (u, v) = camera
            .project_body([pad.relative_x, pad.relative_y, -pad.distance])
            .unwrap();
        let (cu, cv) = red_centroid(&image.data, 320).expect("red pad pixels");
        assert!(
            (cu - u).abs() < 2.0 && (cv - v).abs() < 2.0,
            "({cu}, {cv}) vs ({u}, {v})"
        );
    }
    assert_eq!(images, 6);
}

#[test]
fn commands_move_the_drone_and_bad_commands_change_nothing() {
    let (_sim, socket) = start(&["--rate", "100"]);
    let (first, sim) = next_drone_frame(&socket);
    let start_altitude = first.altitude.unwrap();
    let climb = DroneCommand::new(0.8, 0.0, 0.0, 0.0).unwrap().encode();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut climbed = false;
    while Instant::now() < deadline {
        socket
            .send_to(b"{\"thrust\": 5, \"pitch\": 0, \"roll\": 0, \"yaw\": 0}", sim)
            .unwrap();
        socket.send_to(&climb, sim).unwrap();
        let (t, _) = next_drone_frame(&socket);
        if t.altitude.unwrap() > start_altitude + 1.0 {
            assert!(t.vertical_velocity.unwrap() > 0.5 && t.velocity.unwrap().z > 0.5);
            climbed = true;
            break;
        }
    }
    assert!(climbed, "thrust 0.8 never lifted the drone by 1 m");
    // Forward: pitch set-point 0.3 rad, so the body velocity grows along x.
    let forward = DroneCommand::new(0.0, 0.3, 0.0, 0.0).unwrap().encode();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(Instant::now() < deadline, "pitch never moved the drone forward");
        socket.send_to(&forward, sim).unwrap();
        socket.send_to(b"not json", sim).unwrap();
        let (t, _) = next_drone_frame(&socket);
        if t.velocity.unwrap().x > 1.0 {
            assert!((t.orientation.unwrap().pitch - 0.3).abs() < 0.05);
            break;
        }
    }
}

#[test]
fn every_fault_kind_shows_and_good_frames_still_parse() {
    let frames = 400u32;
    let (_sim, socket) = start(&[
        "--rate",
        "400",
        "--frames",
        "400",
        "--seed",
        "3",
        "--junk",
        "0.1",
        "--truncate",
        "0.1",
        "--wrong-types",
        "0.2",
        "--missing-fields",
        "0.2",
        "--bad-base64",
        "0.3",
        "--corrupt-jpeg",
        "0.3",
    ]);
    socket.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut buf = vec![0u8; 65_536];
    let (mut errors, mut parsed, mut part_faults) = (0, 0, std::collections::BTreeMap::new());
    while let Ok(n) = socket.recv(&mut buf) {
        match parse_telemetry(&buf[..n], &Limits::default()) {
            Ok(p) => {
                parsed += 1;
                for (part, fault) in p.faults.iter() {
                    *part_faults.entry((part, fault)).or_insert(0) += 1;
                }
            }
            Err(_) => errors += 1,
        }
    }
    assert!(errors > 40, "junk and truncated frames: {errors}");
    assert!(parsed > frames * 3 / 4 && parsed < frames, "{parsed}");
    let count = |f: Fault| {
        part_faults
            .iter()
            .filter(|((_, g), _)| *g == f)
            .map(|(_, n)| n)
            .sum::<u32>()
    };
    assert!(count(Fault::Invalid) > 20, "{part_faults:?}");
    assert!(count(Fault::Missing) > 20, "{part_faults:?}");
    assert!(
        part_faults
            .get(&(Part::Image, Fault::BadBase64))
            .is_some_and(|&n| n > 3),
        "{part_faults:?}"
    );
    assert!(
        part_faults.get(&(Part::Image, Fault::NotJpeg)).is_some_and(|&n| n > 3),
        "{part_faults:?}"
    );
}

#[test]
fn restart_sends_time_back_to_zero_and_resets_the_drone() {
    let (_sim, socket) = start(&["--rate", "100", "--restart-every", "0.3", "--frames", "80"]);
    let mut times = Vec::new();
    let climb = DroneCommand::new(1.0, 0.0, 0.0, 0.0).unwrap().encode();
    let mut after_restart = None;
    for _ in 0..80 {
        let (t, sim) = next_drone_frame(&socket);
        socket.send_to(&climb, sim).unwrap();
        let now = t.timestamp.unwrap();
        if times.last().is_some_and(|&last| now < last) && after_restart.is_none() {
            after_restart = Some(t.altitude.unwrap());
        }
        times.push(now);
    }
    let restarts = times.windows(2).filter(|w| w[1] < w[0]).count();
    assert!(restarts >= 2, "{times:?}");
    assert!(times.contains(&0.0));
    assert_eq!(after_restart, Some(5.0), "the drone starts over at its start altitude");
}

#[test]
fn rover_telemetry_follows_each_frame_when_asked() {
    let (_sim, socket) = start(&[
        "--rate",
        "100",
        "--frames",
        "10",
        "--rover-telemetry",
        "--pattern",
        "figure8",
    ]);
    let mut rovers = 0;
    for _ in 0..20 {
        let (d, _) = receive(&socket);
        let p = parse_telemetry(&d, &Limits::default()).unwrap();
        assert!(p.faults.is_empty());
        if let Telemetry::Rover(r) = p.telemetry {
            assert_eq!(r.pattern.as_deref(), Some("figure8"));
            assert!(r.position.is_some() && r.velocity.is_some() && r.timestamp.is_some());
            rovers += 1;
        }
    }
    assert_eq!(rovers, 10);
}

fn stops_promptly_after_its_reader_left(signal: libc::c_int) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let target = socket.local_addr().unwrap().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gps_denied_sim"))
        .args([
            "--bind",
            "127.0.0.1:0",
            "--target",
            &target,
            "--stats",
            "0.05",
            "--flat-out",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    // Several stats lines now meet a closed pipe.
    std::thread::sleep(Duration::from_millis(400));
    assert!(child.try_wait().unwrap().is_none(), "a closed stdout must not end it");
    let sent = Instant::now();
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(1),
            "still running 1 s after the signal"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn sigterm_stops_it_within_a_second_after_its_reader_left() {
    stops_promptly_after_its_reader_left(libc::SIGTERM);
}

#[test]
fn sigint_stops_it_within_a_second_after_its_reader_left() {
    stops_promptly_after_its_reader_left(libc::SIGINT);
}
