//! The emulator, run as a real process, against `rflysim_proto` over real UDP
//! sockets and real shared memory: frame for frame, what arrives is what the
//! world says a sensor sees at the frame's time stamp, and every injected
//! fault shows in the decoder's counters.

use std::net::{Ipv4Addr, UdpSocket};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use image_codec::{decode_png, JpegDecoder};
use rflysim_proto::config::{parse_config, AngleUnit};
use rflysim_proto::gimbal::{GimbalControl, GimbalEcho, PROTOCOL_BITS};
use rflysim_proto::image::raw_image;
use rflysim_proto::lidar::{decode_depth_cloud, decode_lidar, CloudLayout};
use rflysim_proto::reassembly::{Reassembler, ReassemblerConfig};
use rflysim_proto::request::{RequestForm, VisionSensorReq};
use rflysim_proto::sensor::Encoding;
use rflysim_proto::shm::ShmReader;
use rflysim_proto::telemetry::{Heartbeat, LaserDistance, TrueState};
use rflysim_sim::render::{self, Mount};
use rflysim_sim::world::{Scene, Trajectory};

mod support;

use support::*;

#[test]
fn camera_frames_are_the_world_seen_at_their_time_stamp() {
    let text = config(&[
        camera_json(1, 1, 2, 41001, 64, 48, 20),
        camera_json(2, 2, 3, 41002, 64, 48, 20),
        camera_json(3, 3, 1, 41003, 64, 48, 20),
        camera_json(4, 4, 2, 41004, 64, 48, 20),
    ]);
    let socks: Vec<UdpSocket> = (41001..=41004).map(listener).collect();
    let (_sim, cfgs) = start(
        &text,
        &[
            "--window-id",
            "11",
            "--copters",
            "",
            "--header",
            "alternate",
            "--gimbal-target",
            "none",
        ],
    );
    let mut jpeg = JpegDecoder::new(1 << 20).unwrap();
    for (i, sock) in socks.iter().enumerate() {
        let mut r = Reassembler::new(ReassemblerConfig::default());
        let got = frames(sock, &mut r, 4, Duration::from_secs(10));
        assert_eq!(got.len(), 4, "sensor {}: {:?}", i + 1, r.stats());
        let cfg = &cfgs[i];
        let enc = cfg.kind().unwrap().encoding().unwrap();
        for f in &got {
            let want = rendered(cfg, enc, f.time_stamp);
            match cfg.seq_id {
                1 | 4 => {
                    let img = raw_image(Bytes::from(f.payload.clone()), 64, 48, enc).unwrap();
                    assert_eq!(&img.data[..], &want[..], "raw frame at t = {}", f.time_stamp);
                }
                2 => {
                    let img = decode_png(&f.payload, Encoding::DepthMm16, 1 << 20).unwrap();
                    assert_eq!((img.width, img.height, img.encoding), (64, 48, Encoding::DepthMm16));
                    assert_eq!(&img.data[..], &want[..], "PNG depth is lossless");
                }
                3 => {
                    let img = jpeg.decode(&f.payload, Encoding::Mono8).unwrap();
                    assert_eq!((img.width, img.height), (64, 48));
                    let err: f64 = img
                        .data
                        .iter()
                        .zip(&want)
                        .map(|(a, b)| (f64::from(*a) - f64::from(*b)).abs())
                        .sum::<f64>()
                        / want.len() as f64;
                    assert!(err < 6.0, "JPEG gray mean error {err}");
                }
                _ => unreachable!(),
            }
        }
        // --header alternate: both header kinds arrived and were told apart per datagram.
        let kinds: std::collections::HashSet<_> = got.iter().map(|f| f.header_kind).collect();
        assert_eq!(kinds.len(), 2, "sensor {}", i + 1);
        assert_eq!(r.stats().frames_lost() + r.stats().garbage, 0);
    }
}

fn lidar_json(seq: u16, type_id: u16, port: u16) -> String {
    format!(
        r#"{{"SeqID": {seq}, "TypeID": {type_id}, "TargetCopter": 1, "DataWidth": 90, "DataHeight": 8, "DataCheckFreq": 20,
            "SendProtocol": [1, 127, 0, 0, 1, {port}, 0, 0], "SensorPosXYZ": [0, 0, -0.1],
            "otherParams": [60, 0, 0, 0, 0, 0, 0, 0]}}"#
    )
}

#[test]
fn lidar_frames_carry_the_trajectory_pose_in_both_layouts() {
    for (layout, port, window) in [("protocol", 41101u16, "12"), ("sdk", 41102, "13")] {
        let sock = listener(port);
        let text = config(&[lidar_json(1, 20, port)]);
        let (_sim, cfgs) = start(
            &text,
            &[
                "--window-id",
                window,
                "--copters",
                "",
                "--lidar-layout",
                layout,
                "--gimbal-target",
                "none",
            ],
        );
        let mut r = Reassembler::new(ReassemblerConfig::default());
        let got = frames(&sock, &mut r, 3, Duration::from_secs(10));
        assert_eq!(got.len(), 3, "{layout}: {:?}", r.stats());
        for f in got {
            let cloud = decode_lidar(Bytes::from(f.payload), 60.0).unwrap();
            let s = Trajectory::default().state(f.time_stamp);
            assert_eq!(cloud.pose.position, s.position.map(|v| v as f32));
            assert_eq!(cloud.pose.euler, s.euler.map(|v| v as f32));
            let rays = render::lidar_rays(20, 90, 8);
            let want = render::scan_lidar(&Scene::default(), &s, &Mount::of(&cfgs[0]), 20, &rays, 60.0);
            assert_eq!(cloud.points, want.len());
            match layout {
                "protocol" => {
                    assert_eq!(cloud.layout, CloudLayout::ProtocolFloat);
                    assert_eq!((cloud.pose.copter_id, cloud.pose.axis_type), (Some(1), Some(0)));
                    let bytes: Vec<u8> = want.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
                    assert_eq!(&cloud.data[..], &bytes[..]);
                }
                _ => {
                    assert_eq!(cloud.layout, CloudLayout::SdkInt16);
                    for (got, w) in cloud.data.chunks_exact(16).zip(&want) {
                        for k in 0..3 {
                            let g = f32::from_le_bytes(got[4 * k..4 * k + 4].try_into().unwrap());
                            assert!((g - w[k]).abs() <= 60.0 / 32767.0 + 1e-6);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn depth_cloud_and_laser_range() {
    let text = config(&[
        r#"{"SeqID": 1, "TypeID": 7, "DataWidth": 16, "DataHeight": 12, "DataCheckFreq": 20, "CameraFOV": 90,
            "SendProtocol": [1, 127, 0, 0, 1, 41201, 0, 0], "SensorAngEular": [0, -0.5, 0], "otherParams": [50, 0, 0, 0, 0, 0, 0, 0]}"#.to_string(),
        r#"{"SeqID": 2, "TypeID": 5, "DataCheckFreq": 20, "TargetCopter": 3,
            "SendProtocol": [1, 127, 0, 0, 1, 41202, 0, 0], "SensorAngEular": [0, -0.5, 0], "otherParams": [200, 0, 0, 0, 0, 0, 0, 0]}"#.to_string(),
    ]);
    let (cloud_sock, laser_sock) = (listener(41201), listener(41202));
    let (_sim, cfgs) = start(
        &text,
        &["--window-id", "14", "--copters", "", "--gimbal-target", "none"],
    );
    let mut r = Reassembler::new(ReassemblerConfig::default());
    for f in frames(&cloud_sock, &mut r, 2, Duration::from_secs(10)) {
        let c = decode_depth_cloud(Bytes::from(f.payload), 50.0).unwrap();
        let want = render::depth_cloud(
            &Scene::default(),
            &Trajectory::default().state(f.time_stamp),
            &Mount::of(&cfgs[0]),
            16,
            12,
            90.0,
            50.0,
        );
        assert_eq!(c.points, want.len());
        assert!(c.points > 100, "a camera pitched down sees the ground");
    }
    let mut r = Reassembler::new(ReassemblerConfig::default());
    let got = frames(&laser_sock, &mut r, 2, Duration::from_secs(10));
    assert_eq!(got.len(), 2);
    for f in got {
        let l = LaserDistance::decode(&f.payload).unwrap();
        let want = render::laser(
            &Scene::default(),
            &Trajectory::default().state(f.time_stamp),
            &Mount::of(&cfgs[1]),
            3,
            [0.0, -0.5, 0.0],
            200.0,
        );
        assert_eq!(l, want);
        assert!(l.distance > 5.0 && l.copter_id == 3);
    }
}

#[test]
fn shared_memory_frames_are_whole_and_match_the_world() {
    let text = config(&[camera_json(61, 1, 0, 0, 48, 32, 30)]);
    let (_sim, cfgs) = start(
        &text,
        &["--window-id", "15", "--copters", "", "--gimbal-target", "none"],
    );
    let name = "RflySim3DImg_61";
    let deadline = Instant::now() + Duration::from_secs(10);
    let shmem = loop {
        if let Ok(s) = shared_memory::ShmemConf::new().os_id(name).open() {
            break s;
        }
        assert!(Instant::now() < deadline, "/dev/shm/{name} never appeared");
        std::thread::sleep(Duration::from_millis(20));
    };
    // SAFETY: the mapping outlives `region` within this test.
    let mut region = unsafe { rflysim_proto::shm::RawRegion::new(shmem.as_ptr(), shmem.len()) };
    let mut reader = ShmReader::new();
    let mut out = Vec::new();
    let mut seen = 0;
    while seen < 5 && Instant::now() < deadline {
        if let Some(t) = reader.poll(&mut region, 48 * 32 * 3, &mut out, Duration::ZERO) {
            assert_eq!(out, rendered(&cfgs[0], Encoding::Bgr8, t), "frame at t = {t}");
            seen += 1;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(seen, 5, "{:?}", reader.stats());
}

#[test]
fn imu_true_state_and_heartbeat_follow_the_trajectory() {
    let copter: u16 = 7;
    let imu_port = 41300;
    let imu_sock = listener(imu_port);
    // The wire protocol's number (vehicle state), not the crate's: a wrong port on both sides must fail here.
    let state_port = 30101 + 2 * (copter - 1);
    let state_sock = listener(state_port);
    let text = config(&[]);
    let (_sim, _) = start(
        &text,
        &["--window-id", "16", "--copters", "7", "--gimbal-target", "none"],
    );
    let samples = imu_samples(copter, &imu_sock, imu_port, 400, Instant::now);
    let mut buf = [0u8; 512];
    assert_eq!(samples.len(), 400);
    for (_, s) in &samples {
        let w = Trajectory::default().state(s.time_stamp);
        for k in 0..3 {
            assert!(
                (f64::from(s.acc[k]) - w.specific_force[k]).abs() < 1e-4,
                "{s:?} vs {:?}",
                w.specific_force
            );
            assert!((f64::from(s.gyro[k]) - w.body_rates[k]).abs() < 1e-4);
        }
        // About 9.81 m/s², mostly along FRD −z.
        assert!(s.acc[2] < -9.0);
    }
    let span = samples.last().unwrap().0 - samples[100].0;
    let rate = 299.0 / span.as_secs_f64();
    assert!((150.0..260.0).contains(&rate), "IMU at {rate:.0} Hz");
    assert!(samples
        .windows(2)
        .all(|w| w[1].1.seq == w[0].1.seq + 1 || w[0].1.seq == i32::MAX));
    let deadline = Instant::now() + Duration::from_secs(10);
    let ts = loop {
        assert!(Instant::now() < deadline, "no true state within 10 s");
        if let Ok(n) = state_sock.recv(&mut buf) {
            break TrueState::decode(&buf[..n]).unwrap();
        }
    };
    let w = Trajectory::default().state(ts.runned_time);
    assert_eq!(ts.copter_id, 7);
    assert_eq!(ts.pos_ned, w.position);
}

#[test]
fn heartbeat_maps_sim_time_to_wall_time() {
    let sock = listener(20005);
    let child = Command::new(env!("CARGO_BIN_EXE_rflysim_sim"))
        .args([
            "--config",
            "/dev/null",
            "--stats",
            "0",
            "--window-id",
            "17",
            "--copters",
            "9",
            "--gimbal-target",
            "none",
        ])
        .stderr(Stdio::null())
        .spawn();
    // /dev/null is not a config: the emulator refuses it with a clear error...
    let status = child.unwrap().wait().unwrap();
    assert_eq!(status.code(), Some(2));
    // ...so run it on a real one.
    let _sim = start_with_heartbeat(
        &config(&[]),
        &[
            "--window-id",
            "17",
            "--copters",
            "9",
            "--gimbal-target",
            "none",
            "--start-time",
            "100",
        ],
    );
    let mut buf = [0u8; 64];
    let deadline = Instant::now() + Duration::from_secs(5);
    let beat = loop {
        assert!(Instant::now() < deadline, "no heartbeat");
        if let Ok(n) = sock.recv(&mut buf) {
            if let Ok(b) = Heartbeat::decode(&buf[..n]) {
                if b.copter_id == 9 {
                    break b;
                }
            }
        }
    };
    let now_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64;
    // Unix milliseconds, as RflySim's SDK reads them: the beat's own time,
    // and sim time 0 (the run started at sim time 100 s) 100 s before the start.
    assert!((beat.current_time_ms - now_us / 1000).abs() < 500, "{beat:?}");
    let sim_now_ms = beat.current_time_ms - beat.start_time_ms;
    assert!((100_000..105_000).contains(&sim_now_ms), "{beat:?}");
    assert!(beat.count >= 1, "{beat:?}");
}

#[test]
fn requested_sensors_start_streaming() {
    let port = 41401;
    let sock = listener(port);
    let (_sim, _) = start(
        &config(&[]),
        &[
            "--window-id",
            "18",
            "--copters",
            "",
            "--requested-only",
            "--gimbal-target",
            "none",
        ],
    );
    let cfg = parse_config(&config(&[camera_json(5, 3, 2, port, 32, 24, 20)]), AngleUnit::Auto)
        .unwrap()
        .remove(0);
    let req = VisionSensorReq::from(&cfg).encode(RequestForm::Current144, 12345);
    let send = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut r = Reassembler::new(ReassemblerConfig::default());
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while got.len() < 2 && Instant::now() < deadline {
        send.send_to(&req, (Ipv4Addr::LOCALHOST, 20010 + 18)).unwrap();
        got.extend(frames(&sock, &mut r, 2, Duration::from_millis(300)));
    }
    assert!(got.len() >= 2);
    assert_eq!(got[0].payload, rendered(&cfg, Encoding::Mono8, got[0].time_stamp));
}

#[test]
fn gimbal_control_changes_the_echo() {
    let echo_port = 41501;
    let sock = listener(echo_port);
    let text = config(&[camera_json(6, 9, 2, 41502, 64, 36, 10)]);
    let target = format!("127.0.0.1:{echo_port}");
    let (_sim, cfgs) = start(
        &text,
        &["--window-id", "19", "--copters", "", "--gimbal-target", &target],
    );
    let mut buf = [0u8; 256];
    // The newest echo: what queued up before is dropped first.
    let next_echo = |buf: &mut [u8; 256]| {
        sock.set_nonblocking(true).unwrap();
        while sock.recv(buf).is_ok() {}
        sock.set_nonblocking(false).unwrap();
        // Echoes come every 100 ms once the emulator runs; a loaded machine may take longer to start it.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            assert!(Instant::now() < deadline, "no gimbal echo within 10 s");
            let Ok(n) = sock.recv(buf) else { continue };
            if let Ok(e) = GimbalEcho::decode(&buf[..n]) {
                return e;
            }
        }
    };
    let first = next_echo(&mut buf);
    assert_eq!((first.seq_id, first.width, first.height), (6, 64, 36));
    assert!((first.euler[1] + 0.3).abs() < 1e-6);
    assert!((first.camera_fov_deg - 80.0).abs() < 1e-4);
    // Rates, optical zoom ×3 and ranging, angles set in the request's own fields.
    let mut req = VisionSensorReq::from(&cfgs[0]);
    let bit = |c| PROTOCOL_BITS.bit(c).unwrap();
    req.bitmask = bit(GimbalControl::Rates) | bit(GimbalControl::OpticalZoom) | bit(GimbalControl::Ranging);
    req.sensor_ang_eular = [0.0, -0.5, 0.0];
    req.other_params[2] = 0.0; // pitch rate
    req.other_params[3] = 0.5; // yaw rate, rad/s
    req.other_params[4] = 2.0; // two steps above the base: ×3
    req.other_params[6] = 1.0;
    let send = UdpSocket::bind("127.0.0.1:0").unwrap();
    send.send_to(
        &req.encode(RequestForm::Gimbal148, 12345),
        (Ipv4Addr::LOCALHOST, 20010 + 19),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(600));
    let e = next_echo(&mut buf);
    assert!((e.euler[1] + 0.5).abs() < 1e-5, "{e:?}");
    assert!(e.euler[2] > 0.2, "yaw moves at 0.5 rad/s: {:?}", e.euler);
    assert!((e.camera_fov_deg - 80.0 / 3.0).abs() < 1e-3, "{}", e.camera_fov_deg);
    assert_eq!(e.rates, [0.0, 0.5]);
    assert!(e.laser_range > 0.0, "ranging on");
    assert!((e.focal_px[0] - (32.0 / (e.camera_fov_deg.to_radians() / 2.0).tan())).abs() < 0.01);
    // Centre: back to the mount's angles, rates stopped.
    req.bitmask = bit(GimbalControl::Centre);
    req.other_params[1] = 1.0;
    send.send_to(
        &req.encode(RequestForm::Gimbal148, 12345),
        (Ipv4Addr::LOCALHOST, 20010 + 19),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let e = next_echo(&mut buf);
    assert_eq!(e.rates, [0.0, 0.0]);
    assert!(
        (e.euler[1] + 0.3).abs() < 1e-5 && (e.euler[2] - 0.2).abs() < 1e-5,
        "{:?}",
        e.euler
    );
}

#[test]
fn every_fault_shows_in_the_decoder_counters() {
    type Counter = fn(&rflysim_proto::reassembly::ReassemblyStats) -> u64;
    let cases: &[(&str, &str, Counter)] = &[
        ("--loss", "0.05", |s| s.frames_lost() + s.frames_missing),
        ("--duplicate", "0.2", |s| s.duplicates),
        ("--garbage", "0.2", |s| s.garbage),
        ("--truncate", "0.1", |s| s.bad_length + s.inconsistent + s.garbage),
        ("--corrupt", "0.1", |s| {
            s.garbage + s.bad_length + s.inconsistent + s.oversize + s.late + s.frames_lost()
        }),
        ("--reorder", "0.3", |s| s.frames),
        ("--restart-every", "1.0", |s| s.restarts),
    ];
    for (i, (flag, value, counter)) in cases.iter().enumerate() {
        let port = 41601 + i as u16;
        let sock = listener(port);
        // 320 × 240 bgr8: four datagrams a frame.
        let text = config(&[camera_json(1, 1, 2, port, 320, 240, 30)]);
        let window = (20 + i).to_string();
        let (_sim, cfgs) = start(
            &text,
            &[
                "--window-id",
                &window,
                "--copters",
                "",
                "--gimbal-target",
                "none",
                "--seed",
                "7",
                flag,
                value,
            ],
        );
        let mut r = Reassembler::new(ReassemblerConfig::default());
        let got = frames(&sock, &mut r, 60, Duration::from_secs(4));
        assert!(counter(r.stats()) > 0, "{flag} {value}: {:?}", r.stats());
        // Whatever was injected, every delivered frame is whole.
        let mut intact = 0;
        for f in &got {
            if f.payload == rendered(&cfgs[0], Encoding::Bgr8, f.time_stamp) {
                intact += 1;
            }
        }
        assert_eq!(intact, got.len(), "{flag}: a delivered frame differs from the world");
        if *flag == "--reorder" {
            // Reordering within a frame costs nothing.
            assert_eq!((got.len(), r.stats().frames_lost()), (60, 0), "{:?}", r.stats());
        }
    }
}

#[test]
fn cycled_frames_come_in_turn_and_differ_in_every_datagram() {
    // 320 × 240 bgr8, raw (four datagrams a frame) and JPEG, three frames in turn.
    let text = config(&[
        camera_json(1, 1, 2, 41801, 320, 240, 30),
        camera_json(2, 1, 1, 41802, 320, 240, 30),
    ]);
    let socks = [listener(41801), listener(41802)];
    let dump = std::env::temp_dir().join(format!("rflysim_sim_cycle_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dump);
    let dir = dump.to_str().unwrap();
    let (_sim, _) = start(
        &text,
        &[
            "--window-id",
            "30",
            "--copters",
            "",
            "--gimbal-target",
            "none",
            "--cycle-frames",
            "3",
            "--dump",
            dir,
        ],
    );
    for (seq, sock) in [1, 2].into_iter().zip(&socks) {
        let mut r = Reassembler::new(ReassemblerConfig::default());
        let got = frames(sock, &mut r, 7, Duration::from_secs(10));
        assert_eq!(got.len(), 7, "sensor {seq}: {:?}", r.stats());
        let cycle: Vec<Vec<u8>> = (0..3)
            .map(|k| std::fs::read(dump.join(format!("sensor{seq}_cycle{k}.bin"))).unwrap())
            .collect();
        for f in &got {
            let id = f.frame_id.unwrap() as usize;
            assert!(
                f.payload == cycle[id % 3],
                "sensor {seq}: frame {id} is not cycle frame {}",
                id % 3
            );
        }
        assert!(
            got.windows(2).all(|w| w[0].time_stamp < w[1].time_stamp),
            "each frame a stamp of its own"
        );
        // Any two differ in every datagram's payload, the sky's rows included.
        for (a, b) in [(0, 1), (0, 2), (1, 2)] {
            let chunks = |v: &[u8]| v.chunks(60_000).map(<[u8]>::to_vec).collect::<Vec<_>>();
            let same = chunks(&cycle[a]).iter().zip(chunks(&cycle[b])).any(|(x, y)| *x == y);
            assert!(!same, "sensor {seq}: cycle frames {a} and {b} share a datagram");
        }
        // Only the cycle's frames are written, not every frame.
        assert!(!dump.join(format!("sensor{seq}.index")).exists());
    }
    let _ = std::fs::remove_dir_all(&dump);
}
