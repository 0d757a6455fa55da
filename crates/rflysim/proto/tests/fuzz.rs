//! A bounded, deterministic in-process fuzz run of every decoder and of the
//! reassembler (CI runs it with the other tests; `RFLYSIM_FUZZ_ITERS` makes
//! it longer). Inputs are valid encodings mutated by bit flips, truncation,
//! extension, splicing and overwriting with extreme values.
//!
//! Checked: no panic, no single allocation above a bound a hostile input
//! could otherwise push up (a counting global allocator), and, for every
//! decoder that keeps state between inputs, recovery: a known-good input
//! after each mutated one decodes exactly (surviving is not recovering).

use fuzz_harness::{iterations, measured, mutate_bytes, one_at_a_time, CountingAlloc, Mutations, Overwrite, Rng};
use std::time::Duration;

use bytes::Bytes;
use image_codec::{decode_png, encode, JpegDecoder};
use rflysim_proto::config::{parse_config, AngleUnit};
use rflysim_proto::console::{
    console_command, decode_console_command, ClearScope, ConsoleCommand, ConsoleRequest, SceneItem,
};
use rflysim_proto::gimbal::GimbalEcho;
use rflysim_proto::header::{split_frame, HeaderKind};
use rflysim_proto::image::raw_image;
use rflysim_proto::label::{CopterMsg, LabelKind, MessageLine, VehicleLabel};
use rflysim_proto::lidar::{self, decode_depth_cloud, decode_depth_cloud_region, decode_lidar, decode_lidar_region};
use rflysim_proto::reassembly::{Reassembler, ReassemblerConfig};
use rflysim_proto::request::{ImuRequest, RequestForm, VisionSensorReq};
use rflysim_proto::scene::{
    CopterData, CopterSimCrash, CrashType, MultiVehicleUpdate, ObjectData, PlacedVehicle, Placement, PoseAndBox,
    PoseDatagram, SilIntFloat, SimpleVehicleUpdate, StatusDatagram, VehicleCrashData, VehicleUpdate,
};
use rflysim_proto::sensor::Encoding;
use rflysim_proto::shm::{ShmReader, ShmWriter};
use rflysim_proto::telemetry::{decode_detections, CameraData, Heartbeat, ImuSample, LaserDistance, TrueState};
use rflysim_proto::terrain::{self, HeightMap, MAX_PIXELS};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

const EXTREMES: [[u8; 4]; 6] = [
    [0, 0, 0, 0],
    [0xFF, 0xFF, 0xFF, 0x7F],
    [0, 0, 0, 0x80],
    [0xFF, 0xFF, 0xFF, 0xFF],
    [0, 0, 0xC0, 0x7F], // NaN
    [0xD5, 0x02, 0x96, 0x49],
];

fn mutate(rng: &mut Rng, sample: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    let m = Mutations {
        overwrite: Overwrite::Extremes(&EXTREMES),
        max_rounds: 4,
        max_garbage: 200,
    };
    mutate_bytes(rng, sample, others, &m)
}

/// Runs `target` on mutations of `corpus`, and checks the allocation bound.
fn fuzz(name: &str, corpus: Vec<Vec<u8>>, max_alloc: usize, target: impl FnMut(&[u8])) {
    fuzz_recovering(name, corpus, max_alloc, target, |_| {});
}

/// Like `fuzz`, and after each mutated input `good(i)` feeds the stateful
/// decoder its i-th known-good input and asserts it decodes exactly.
fn fuzz_recovering(
    name: &str,
    corpus: Vec<Vec<u8>>,
    max_alloc: usize,
    mut target: impl FnMut(&[u8]),
    mut good: impl FnMut(usize),
) {
    let mut rng = Rng::from_state(0x9E37_79B9_7F4A_7C15 ^ name.len() as u64);
    for s in &corpus {
        target(s);
    }
    fuzz_harness::reset_largest();
    for i in 0..iterations("RFLYSIM_FUZZ_ITERS") {
        let sample = &corpus[rng.below(corpus.len())];
        let input = mutate(&mut rng, sample, &corpus);
        measured(|| target(&input));
        good(i);
    }
    let largest = fuzz_harness::largest();
    assert!(
        largest <= max_alloc,
        "{name}: an allocation of {largest} bytes (bound {max_alloc})"
    );
}

fn pts(n: usize) -> Vec<[f32; 4]> {
    (0..n).map(|i| [i as f32, -(i as f32), 0.5, 1.0]).collect()
}

#[test]
fn lidar_and_depth_cloud_decoders() {
    let _one = one_at_a_time();
    let corpus = vec![
        lidar::encode::protocol_float(1, 0, [1.0; 3], [0.1; 3], &pts(20)),
        lidar::encode::sdk_int16([0.0; 3], [0.0; 3], &pts(20), 50.0),
        lidar::encode::sdk_int16_xyz([0.0; 3], [0.0; 3], &[[1.0, 2.0, 3.0]; 20], 10.0),
    ];
    fuzz("lidar", corpus, 1 << 16, |d| {
        let b = Bytes::copy_from_slice(d);
        if let Ok(c) = decode_lidar(b.clone(), 50.0) {
            assert_eq!(c.data.len(), c.points * 16);
        }
        // The protocol layout read in place is the protocol layout decoded.
        if let Some((pose, n)) = lidar::protocol_float_frame(d) {
            assert_eq!(d.len(), lidar::FLOAT_HEADER_LEN + n * 16);
            let c = decode_lidar(b.clone(), 50.0).expect("a protocol-layout frame decodes");
            // Debug, not ==: a mutated pose may hold NaN.
            assert_eq!(format!("{:?}", c.pose), format!("{pose:?}"));
            assert_eq!((c.points, &c.data[..]), (n, &d[lidar::FLOAT_HEADER_LEN..]));
        }
        if let Ok(c) = decode_depth_cloud(b, 10.0) {
            assert_eq!(c.data.len(), c.points * 16);
        }
        if let Ok(c) = decode_lidar_region(d, 50.0) {
            assert!(c.data.len() == c.points * 16 && 28 + c.points * 8 <= d.len());
        }
        if let Ok(c) = decode_depth_cloud_region(d, 10.0) {
            assert!(c.data.len() == c.points * 16 && 28 + c.points * 6 <= d.len());
        }
    });
}

#[test]
fn fixed_structs_and_requests() {
    let _one = one_at_a_time();
    let req = VisionSensorReq::decode(&[0u8; 144]).err();
    assert!(req.is_some());
    let sample_req = {
        let mut b = vec![0u8; 144];
        b[..2].copy_from_slice(&12345u16.to_le_bytes());
        VisionSensorReq::decode(&b).unwrap().0
    };
    let corpus = vec![
        ImuSample {
            seq: 1,
            time_stamp: 1.0,
            acc: [0.0, 0.0, -9.81],
            gyro: [0.0; 3],
        }
        .encode(),
        CameraData {
            seq_id: 1,
            type_id: 9,
            data_height: 1,
            data_width: 1,
            camera_fov: 90.0,
            pos_ue: [0.0; 3],
            ang_euler: [0.0; 3],
            ang_quat: Some([1.0, 0.0, 0.0, 0.0]),
            time_stamp: 0.0,
        }
        .encode(),
        Heartbeat {
            copter_id: 1,
            start_time_ms: 1,
            current_time_ms: 2,
            count: 0,
        }
        .encode(),
        LaserDistance {
            distance: 1.0,
            copter_id: 1,
            ray_start: [0.0; 3],
            ang_euler: [0.0; 3],
            impact_point: [0.0; 3],
            box_origin: [0.0; 3],
        }
        .encode(),
        sample_req.encode(RequestForm::Gimbal148, 12346),
        sample_req.encode(RequestForm::Legacy92, 12345),
        sample_req.encode(RequestForm::Current144, 12345),
        console_command("RflyReqObjData 0 2 0").unwrap(),
        ImuRequest::for_copter(1, std::net::Ipv4Addr::LOCALHOST, 200).encode(),
        vec![
            2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x3F, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ],
    ];
    let mut true_state = vec![0u8; 168];
    true_state[..4].copy_from_slice(&123_456_789i32.to_le_bytes());
    let mut corpus = corpus;
    corpus.push(true_state);
    fuzz("structs", corpus, 4096, |d| {
        let _ = ImuSample::decode(d);
        let _ = CameraData::decode(d);
        let _ = Heartbeat::decode(d);
        let _ = LaserDistance::decode(d);
        let _ = TrueState::decode(d);
        let _ = VisionSensorReq::decode(d);
        if let Ok(echo) = GimbalEcho::decode(d) {
            // The emulator's encoder writes back exactly what the bridge's decoder read.
            assert_eq!(echo.encode(u16::from_le_bytes([d[0], d[1]])), d);
        }
        if let Ok(text) = decode_console_command(d) {
            let _ = ConsoleRequest::parse(&text);
        }
        let _ = ImuRequest::decode(d);
        if let Ok(dets) = decode_detections(d) {
            assert!(dets.len() * 16 <= d.len());
        }
    });
}

/// One of each struct RflySim3D sends to its status port.
fn status_datagrams() -> Vec<StatusDatagram> {
    let pose = PoseAndBox {
        pos: [1.0, 2.0, -3.0],
        euler: [0.0, 0.1, 0.2],
        quat: Some([1.0, 0.0, 0.0, 0.0]),
        box_origin: [1.0, 2.0, -3.0],
        box_extent: [0.275, 0.275, 0.15],
        time_stamp: 4.5,
    };
    let echo = GimbalEcho::decode(&VisionSensorReq::default().encode(RequestForm::Gimbal148, 12346)).unwrap();
    vec![
        StatusDatagram::VehicleCrashData(VehicleCrashData {
            copter_id: 1,
            vehicle_type: 3,
            crash: CrashType::Vehicle(2),
            runned_time: 1.5,
            vel_ned: [1.0, 0.0, 0.0],
            pos_ned: [1.0, 2.0, -3.0],
            crash_pos: [1.2, 2.0, -3.0],
            target_pos: [1.5, 2.0, -3.0],
            euler: [0.0; 3],
            motor_rpm: [1000.0; 8],
            rays: [100.0, 0.3, 100.0, 100.0, 100.0, 3.0],
            crashed_name: "Building_1".into(),
        }),
        StatusDatagram::CopterData(CopterData { copter_id: 7, pose }),
        StatusDatagram::CopterData(CopterData {
            copter_id: 7,
            pose: PoseAndBox { quat: None, ..pose },
        }),
        StatusDatagram::ObjectData(ObjectData {
            seq_id: 0,
            pose,
            name: "Landscape_1".into(),
        }),
        StatusDatagram::ObjectData(ObjectData {
            seq_id: 0,
            pose: PoseAndBox { quat: None, ..pose },
            name: "Tree_2".into(),
        }),
        StatusDatagram::CameraData(CameraData {
            seq_id: 1,
            type_id: 1,
            data_height: 480,
            data_width: 640,
            camera_fov: 90.0,
            pos_ue: [0.0; 3],
            ang_euler: [0.0; 3],
            ang_quat: None,
            time_stamp: 0.5,
        }),
        StatusDatagram::CopterSimCrash(CopterSimCrash {
            copter_id: 1,
            target_id: 2,
        }),
        StatusDatagram::SilIntFloat(SilIntFloat {
            copter_id: 1,
            ints: [1; 8],
            floats: [0.5; 20],
        }),
        StatusDatagram::GimbalEcho(echo),
    ]
}

/// Whatever arrives on the status port, the dispatcher returns a struct of
/// the datagram's own form or says why not, and the next good datagram
/// decodes exactly.
#[test]
fn status_port_dispatcher() {
    let _one = one_at_a_time();
    let good = status_datagrams();
    let corpus: Vec<Vec<u8>> = good.iter().map(StatusDatagram::encode).collect();
    fuzz_recovering(
        "status",
        corpus,
        4096,
        |d| {
            if let Ok(s) = StatusDatagram::decode(d) {
                assert_eq!(s.encode().len(), d.len(), "{s:?}");
            }
        },
        |i| {
            let want = &good[i % good.len()];
            let got = StatusDatagram::decode(&want.encode());
            assert_eq!(got.as_ref(), Ok(want), "good datagram after bad input {i}");
        },
    );
}

/// What the request port takes besides `VisionSensorReq`: the pose structs
/// and console commands, whose text parses into a request that builds the
/// same text back.
#[test]
fn pose_datagrams_and_console_commands() {
    let _one = one_at_a_time();
    let update = VehicleUpdate {
        placement: Placement::AsSent,
        copter_id: 1,
        vehicle_type: 3,
        pwms: [1000.0; 8],
        vel_ned: [0.0; 3],
        euler: [0.0, 0.0, 1.0],
        pos_ned: [1.0, 2.0, -3.0],
        runned_time: VehicleUpdate::UNSET_TIME,
    };
    let simple = SimpleVehicleUpdate {
        placement: Placement::OnGround,
        copter_id: 2,
        vehicle_type: 3,
        motor_rpm_mean: 1000.0,
        pos_ned: [1.0, 2.0, -3.0],
        euler: [0.0; 3],
        scale: Some([2.0; 3]),
    };
    let placed: Vec<PlacedVehicle> = (1..=3u16)
        .map(|id| PlacedVehicle {
            id,
            vehicle_type: 3,
            pos_ned: [f32::from(id), 0.0, -1.0],
            scale: [1.0; 3],
            ..Default::default()
        })
        .collect();
    let mut multi = [0u8; MultiVehicleUpdate::LEN];
    MultiVehicleUpdate::encode_into(Placement::AsSent, &placed, &mut multi);
    let good_poses = [
        PoseDatagram::Single(update),
        PoseDatagram::Simple(simple),
        PoseDatagram::Simple(SimpleVehicleUpdate { scale: None, ..simple }),
        PoseDatagram::decode(&multi).unwrap(),
    ];
    let requests = [
        ConsoleRequest::VehicleDataPostback(true),
        ConsoleRequest::VehicleData(12),
        ConsoleRequest::ObjectData("Building_1".into()),
        ConsoleRequest::Delete(SceneItem::Vehicle(3)),
        ConsoleRequest::Clear(ClearScope::VehiclesAndObjects),
        ConsoleRequest::DelVehicles(vec![1, 2, 300]),
        ConsoleRequest::ChangeMapById(5),
        ConsoleRequest::ChangeMapByName("Grasslands".into()),
        ConsoleRequest::SetPosScale(100.0),
        ConsoleRequest::ShowTextTime {
            text: "a".repeat(120),
            seconds: 2.5,
        },
    ];
    let mut corpus: Vec<Vec<u8>> = good_poses.iter().map(PoseDatagram::encode).collect();
    corpus.extend(requests.iter().flat_map(|r| r.commands().unwrap()).map(|c| c.encode()));
    fuzz_recovering(
        "poses and console",
        corpus,
        8192,
        |d| {
            if let Ok(p) = PoseDatagram::decode(d) {
                // A single vehicle's update is always sent in the SDK's form.
                if !matches!(p, PoseDatagram::Single(_)) {
                    assert_eq!(p.encode().len(), d.len(), "{p:?}");
                }
                assert!(p.poses().count() <= MultiVehicleUpdate::SLOTS);
            }
            let Ok(text) = decode_console_command(d) else {
                return;
            };
            let Some(request) = ConsoleRequest::parse(&text) else {
                return;
            };
            // A request that builds its text builds one that reads back as itself.
            if let Ok(commands) = request.commands() {
                let back: Vec<_> = commands
                    .iter()
                    .map(|c| ConsoleRequest::parse(c.text()).expect("a built command parses"))
                    .collect();
                match (&request, back.as_slice()) {
                    (ConsoleRequest::DelVehicles(ids), _) => {
                        let all: Vec<i32> = back
                            .iter()
                            .flat_map(|b| match b {
                                ConsoleRequest::DelVehicles(ids) => ids.clone(),
                                other => panic!("{other:?}"),
                            })
                            .collect();
                        assert_eq!(&all, ids);
                    }
                    (_, [one]) => assert_eq!(format!("{one:?}"), format!("{request:?}")),
                    (_, more) => panic!("{request:?} built {} commands", more.len()),
                }
            }
        },
        |i| {
            let want = &good_poses[i % good_poses.len()];
            assert_eq!(
                PoseDatagram::decode(&want.encode()).as_ref(),
                Ok(want),
                "good pose after bad input {i}"
            );
            let request = &requests[i % requests.len()];
            let text = request.commands().unwrap()[0].encode();
            let text = decode_console_command(&text).unwrap();
            assert_eq!(
                ConsoleRequest::parse(&text).as_ref(),
                Some(request),
                "good command after bad input {i}"
            );
            assert!(ConsoleCommand::new(text).is_ok());
        },
    );
}

#[test]
fn images() {
    let _one = one_at_a_time();
    let px: Vec<u8> = (0..32 * 24 * 3).map(|i| (i % 251) as u8).collect();
    let gray: Vec<u8> = (0..32 * 24 * 2).map(|i| (i % 253) as u8).collect();
    let corpus = vec![
        encode::jpeg(&px, 32, 24, Encoding::Bgr8, 80).unwrap(),
        encode::png(&px, 32, 24, Encoding::Bgr8).unwrap(),
        encode::png(&gray, 32, 24, Encoding::DepthMm16).unwrap(),
        px.clone(),
    ];
    let good_jpeg = corpus[0].clone();
    let good_png = corpus[1].clone();
    let jpeg = std::cell::RefCell::new(JpegDecoder::new(4096 * 4096).unwrap());
    let expected_jpeg = jpeg.borrow_mut().decode(&good_jpeg, Encoding::Bgr8).unwrap().data;
    // The JPEG decoder may allocate up to its pixel bound × 3 for a lying header.
    fuzz_recovering(
        "images",
        corpus,
        4096 * 4096 * 3 + 4096,
        |d| {
            let mut jpeg = jpeg.borrow_mut();
            let _ = jpeg.size(d);
            let _ = jpeg.decode(d, Encoding::Bgr8);
            let _ = jpeg.decode(d, Encoding::Mono8);
            let _ = decode_png(d, Encoding::Bgr8, 1 << 22);
            let _ = decode_png(d, Encoding::DepthMm16, 1 << 22);
            let _ = raw_image(Bytes::copy_from_slice(d), 32, 24, Encoding::Bgr8);
        },
        |i| {
            let mut jpeg = jpeg.borrow_mut();
            assert_eq!(
                jpeg.size(&good_jpeg).unwrap(),
                (32, 24),
                "JPEG header after bad input {i}"
            );
            let img = jpeg.decode(&good_jpeg, Encoding::Bgr8).unwrap();
            assert_eq!(img.data, expected_jpeg, "JPEG after bad input {i}");
            assert_eq!(
                &decode_png(&good_png, Encoding::Bgr8, 1 << 22).unwrap().data[..],
                &px[..]
            );
        },
    );
}

#[test]
fn config_reader() {
    let _one = one_at_a_time();
    let corpus = vec![
        br#"{"VisionSensors":[{"SeqID":1,"TypeID":1,"DataWidth":640,"DataHeight":480,"SendProtocol":[2,0,0,0,0,0,0,0],"otherParams":[0,0,0,0,0,0,0,0]}]} // c"#.to_vec(),
        b"{\"VisionSensors\":[{\"TypeID\":20,\"SensorAngEular\":[0,90,0]},{\"SeqID\":0,\"TypeID\":2}]} /* x */ # y".to_vec(),
    ];
    fuzz("config", corpus, 1 << 16, |d| {
        if let Ok(text) = std::str::from_utf8(d) {
            let _ = parse_config(text, AngleUnit::Auto);
        }
    });
}

#[test]
fn reassembler_under_hostile_streams() {
    let _one = one_at_a_time();
    let cfg = ReassemblerConfig {
        max_frame_bytes: 1 << 20,
        ..Default::default()
    };
    let max_frame = cfg.max_frame_bytes;
    let r = Reassembler::new(cfg);
    let mut datagrams = Vec::new();
    for (i, kind) in [HeaderKind::Image24, HeaderKind::Frame32].into_iter().enumerate() {
        let payload: Vec<u8> = (0..3000).map(|b| (b as u8).wrapping_add(i as u8)).collect();
        datagrams.extend(split_frame(kind, i as i32, i as f64, &payload, 1000));
    }
    let r = std::cell::RefCell::new(r);
    let t = std::cell::Cell::new(Duration::ZERO);
    let tick = || {
        t.set(t.get() + Duration::from_micros(300));
        t.get()
    };
    fuzz_recovering(
        "reassembler",
        datagrams,
        max_frame + 65_536,
        |d| {
            let mut r = r.borrow_mut();
            if let Some(f) = r.push(d, tick()) {
                assert!(f.payload.len() <= max_frame);
            }
            assert!(r.partial_frames() <= r.config().max_partial_frames);
            assert!(r.buffered_bytes() <= r.config().max_partial_frames * (max_frame + 65_536));
        },
        |i| {
            // A frame of the real stream, in order: it comes out whole and alone.
            let kind = [HeaderKind::Image24, HeaderKind::Frame32][i % 2];
            let payload: Vec<u8> = (0..2500).map(|b| (b + i) as u8).collect();
            let stamp = 1000.0 + i as f64 * 0.01;
            let mut out = None;
            for d in split_frame(kind, 100_000 + i as i32, stamp, &payload, 1000) {
                if let Some(f) = r.borrow_mut().push(&d, tick()) {
                    assert!(out.is_none(), "good frame {i}: two frames out of one");
                    out = Some(f);
                }
            }
            let f = out.unwrap_or_else(|| panic!("good frame {i} after a bad datagram was not delivered"));
            assert_eq!((f.time_stamp, &f.payload), (stamp, &payload), "good frame {i}");
        },
    );
    assert!(r.borrow().stats().datagrams > 0);
}

/// Datagrams received through a [`Slot`](rflysim_proto::reassembly::Slot)
/// (into their frame's buffer when it expects them) make exactly what
/// `push` makes of them, hostile or good, and so do slots dropped unused
/// (a receive cancelled): the same frames, counts and frames in flight.
#[test]
fn slots_take_what_push_takes() {
    let _one = one_at_a_time();
    // Room for a datagram a little over a packet: the early packets of a
    // ten-packet frame are received in place, the last ones copied.
    let cfg = ReassemblerConfig {
        max_frame_bytes: 1 << 20,
        max_datagram: 1100,
        ..Default::default()
    }
    .with_headroom(7)
    .with_tailroom(1);
    let max_datagram = cfg.max_datagram;
    let plain = std::cell::RefCell::new(Reassembler::new(cfg.clone()));
    let slotted = std::cell::RefCell::new(Reassembler::new(cfg));
    let in_place = std::cell::Cell::new(0u64);
    let t = std::cell::Cell::new(Duration::ZERO);
    let both = |d: &[u8], cancel_first: bool| {
        let d = &d[..d.len().min(max_datagram)];
        t.set(t.get() + Duration::from_micros(300));
        let a = plain.borrow_mut().push(d, t.get());
        let mut slotted = slotted.borrow_mut();
        if cancel_first {
            // A datagram refused (a foreign sender) is taken back, then the receive is cancelled.
            let mut slot = slotted.slot();
            let buf = slot.buf();
            let kept = buf.len();
            buf.extend_from_slice(&d[..d.len() / 2]);
            buf.truncate(kept);
        }
        let mut slot = slotted.slot();
        if !slot.buf().is_empty() {
            in_place.set(in_place.get() + 1);
        }
        slot.buf().extend_from_slice(d);
        let b = slot.push(t.get());
        assert_eq!(a, b);
        let plain = plain.borrow();
        assert_eq!(plain.stats(), slotted.stats());
        assert_eq!(plain.partial_frames(), slotted.partial_frames());
        b
    };
    let mut datagrams = Vec::new();
    for (i, kind) in [HeaderKind::Image24, HeaderKind::Frame32].into_iter().enumerate() {
        let payload: Vec<u8> = (0..9500).map(|b| (b as u8).wrapping_add(i as u8)).collect();
        datagrams.extend(split_frame(kind, i as i32, i as f64, &payload, 1000));
    }
    let count = std::cell::Cell::new(0usize);
    fuzz_recovering(
        "slots",
        datagrams,
        (1 << 20) + 65_536,
        |d| {
            count.set(count.get() + 1);
            both(d, count.get() % 7 == 0);
        },
        |i| {
            let kind = [HeaderKind::Image24, HeaderKind::Frame32][i % 2];
            let payload: Vec<u8> = (0..9000 + i % 1000).map(|b| (b + i) as u8).collect();
            let stamp = 1000.0 + i as f64 * 0.01;
            let frames: Vec<_> = split_frame(kind, 100_000 + i as i32, stamp, &payload, 1000)
                .iter()
                .enumerate()
                .filter_map(|(k, d)| both(d, k % 3 == 1))
                .collect();
            assert_eq!(frames.len(), 1, "good frame {i}");
            assert_eq!(
                (frames[0].time_stamp, &frames[0].payload[7..]),
                (stamp, &payload[..]),
                "good frame {i}"
            );
        },
    );
    assert!(
        in_place.get() > iterations("RFLYSIM_FUZZ_ITERS") as u64,
        "received in place only {} times",
        in_place.get()
    );
}

#[test]
fn shm_reader_on_garbage_regions() {
    let _one = one_at_a_time();
    let mut good = vec![0u8; 9 + 64];
    ShmWriter::new().write(&mut good[..], 1.0, &[7; 64], Duration::ZERO);
    let reader = std::cell::RefCell::new(ShmReader::new());
    let writer = std::cell::RefCell::new(ShmWriter::new());
    let out = std::cell::RefCell::new(Vec::new());
    let mut region = [0u8; 9 + 64];
    fuzz_recovering(
        "shm",
        vec![good],
        1 << 12,
        |d| {
            let mut bad = d.to_vec();
            let mut out = out.borrow_mut();
            if reader
                .borrow_mut()
                .poll(&mut bad[..], 64, &mut out, Duration::ZERO)
                .is_some()
            {
                assert!(out.len() <= 64 && out.len() + 9 <= bad.len());
            }
        },
        |i| {
            let frame = [i as u8; 64];
            let stamp = 1e6 + i as f64;
            assert!(writer
                .borrow_mut()
                .write(&mut region[..], stamp, &frame, Duration::ZERO));
            let mut out = out.borrow_mut();
            assert_eq!(
                reader.borrow_mut().poll(&mut region[..], 64, &mut out, Duration::ZERO),
                Some(stamp),
                "frame {i}"
            );
            assert_eq!(&out[..], &frame[..]);
        },
    );
}

#[test]
fn terrain_files_and_labels() {
    let _one = one_at_a_time();
    let raw: Vec<u16> = (0..64).map(|i| 32_768 + i * 13).collect();
    let png = terrain::encode::heights_png(&raw, 8, 8).unwrap();
    let txt = "700,700,900,0,0,0,300,400,500\n";
    let good = HeightMap::from_files(&png, txt).unwrap();
    let label = |kind| VehicleLabel {
        copter_id: 1,
        kind,
        text: "a b".into(),
        rgb: [255, 0, 255],
        size: 20.0,
    };
    let message = LabelKind::Message {
        seconds: 5.0,
        line: MessageLine::New,
    };
    let corpus = vec![
        png.clone(),
        txt.as_bytes().to_vec(),
        b"1,1,0,0,0,0,0,0,0,40.1,116.3,50".to_vec(),
        label(message).message().unwrap().encode(),
        label(LabelKind::Id).message().unwrap().encode(),
    ];
    let heights_finite = |m: &HeightMap| {
        for (x, y) in [(0.0, 0.0), (3.5, 2.25), (-1e9, 1e9), (f64::MAX, f64::MIN)] {
            assert!(m.terrain_alt(x, y).is_finite(), "{m:?} at ({x}, {y})");
        }
    };
    // A claimed size is refused past MAX_PIXELS; up to it the decoder may set aside its buffer.
    fuzz_recovering(
        "terrain files and labels",
        corpus,
        2 * MAX_PIXELS + (1 << 16),
        |d| {
            if let Ok(m) = HeightMap::from_files(d, txt) {
                assert!(m.rows() * m.columns() <= MAX_PIXELS);
                heights_finite(&m);
            }
            if let Ok(text) = std::str::from_utf8(d) {
                if let Ok(m) = HeightMap::from_files(&png, text) {
                    heights_finite(&m);
                }
            }
            // A label read back builds the same message, or is refused.
            if let Ok(m) = CopterMsg::decode(d) {
                let l = VehicleLabel::from_message(&m);
                if let Ok(again) = l.message() {
                    assert_eq!(VehicleLabel::from_message(&again), l);
                    assert_eq!(CopterMsg::decode(&again.encode()), Ok(again));
                }
            }
        },
        |_| assert_eq!(HeightMap::from_files(&png, txt).as_ref(), Ok(&good)),
    );
}
