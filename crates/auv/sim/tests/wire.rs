//! The emulator over real ZeroMQ sockets, with a libzmq client on the other
//! side: the protocol's message layouts, motion driven by thruster commands,
//! faults that a receiver detects, restarts, and a prompt stop.

use std::time::{Duration, Instant};

use auv_proto::image::{jpeg_comment, ImageLimits, ImageMessage};
use auv_proto::telemetry::Telemetry;
use auv_proto::thruster::ThrusterCommand;
use auv_sim::faults::AuvFault;
use auv_sim::options::Options;
use auv_sim::sim::Simulator;

fn options(ids: &[u8]) -> Options {
    Options {
        image_port: 0,
        thruster_port: 0,
        telemetry_port: 0,
        auv_ids: ids.to_vec(),
        width: 160,
        height: 120,
        stats_interval: None,
        ..Options::default()
    }
}

struct Client {
    _ctx: zmq::Context,
    images: zmq::Socket,
    telemetry: zmq::Socket,
    thrusters: zmq::Socket,
}

impl Client {
    /// Connects like the protocol's snippets: SUB with a one-byte id prefix (or
    /// everything), PUSH for thrusters.
    fn connect(sim: &Simulator, prefix: &[u8]) -> Client {
        let ctx = zmq::Context::new();
        let p = sim.ports();
        let sub = |port: u16| {
            let s = ctx.socket(zmq::SUB).unwrap();
            s.set_linger(0).unwrap();
            s.set_rcvtimeo(3000).unwrap();
            s.set_reconnect_ivl(100).unwrap();
            s.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
            s.set_subscribe(prefix).unwrap();
            s
        };
        let images = sub(p.image);
        let telemetry = sub(p.telemetry);
        let thrusters = ctx.socket(zmq::PUSH).unwrap();
        thrusters.set_linger(0).unwrap();
        thrusters.set_sndtimeo(1000).unwrap();
        thrusters.connect(&format!("tcp://127.0.0.1:{}", p.thruster)).unwrap();
        Client {
            _ctx: ctx,
            images,
            telemetry,
            thrusters,
        }
    }

    fn telemetry(&self) -> Telemetry {
        let parts = self.telemetry.recv_multipart(0).expect("telemetry within 3 s");
        Telemetry::parse(&parts).expect("a valid telemetry message")
    }

    /// The newest telemetry of `id` (drops what was queued before).
    fn latest_telemetry(&self, id: u8) -> Telemetry {
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline {
            if self.telemetry.recv_multipart(zmq::DONTWAIT).is_err() {
                break;
            }
        }
        loop {
            let t = self.telemetry();
            if t.auv_id == id {
                return t;
            }
        }
    }

    fn push(&self, c: ThrusterCommand) {
        self.thrusters.send(&c.encode()[..], 0).unwrap();
    }
}

#[test]
fn images_and_telemetry_have_the_protocol_layout() {
    let sim = Simulator::start(options(&[0, 1, 200])).unwrap();
    let c = Client::connect(&sim, &[200]);
    let mut decoder = image_codec::JpegDecoder::new(1 << 20).unwrap();
    for _ in 0..3 {
        let parts = c.images.recv_multipart(0).expect("images within 3 s");
        assert_eq!(parts.len(), 3);
        let m = ImageMessage::parse(parts, &ImageLimits::default()).unwrap();
        assert_eq!(m.auv_id, 200, "the one-byte prefix selects one AUV");
        for jpeg in [&m.front, &m.bottom] {
            let img = decoder.decode(jpeg, image_codec::Encoding::Bgr8).unwrap();
            assert_eq!((img.width, img.height), (160, 120));
            let tag = String::from_utf8(jpeg_comment(jpeg).unwrap().to_vec()).unwrap();
            assert!(tag.starts_with("auv_sim auv=200 seq="), "{tag}");
        }
        let t = c.telemetry();
        assert_eq!(t.auv_id, 200);
        // The third AUV starts 6 m east, 2 m deep, heading north, at rest.
        assert_eq!((t.x, t.y, t.z, t.yaw, t.pitch, t.roll), (0.0, 6.0, 2.0, 0.0, 0.0, 0.0));
    }
}

#[test]
fn telemetry_and_images_come_at_their_rates() {
    let sim = Simulator::start(Options {
        telemetry_rate: 100.0,
        image_rate: 20.0,
        ..options(&[3])
    })
    .unwrap();
    let c = Client::connect(&sim, &[]);
    c.telemetry();
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed() < Duration::from_secs(1) {
        c.telemetry();
        n += 1;
    }
    assert!((60..=140).contains(&n), "{n} telemetry messages in 1 s at 100 Hz");
    let r = sim.report();
    assert!(r.image_messages >= 15, "{r:?}");
}

#[test]
fn thruster_commands_move_the_auv_the_expected_way() {
    let sim = Simulator::start(options(&[0, 1])).unwrap();
    let c = Client::connect(&sim, &[1]);
    let start = c.latest_telemetry(1);
    // Full ahead on AUV 1 only; side and vertical kept (−127).
    c.push(ThrusterCommand::new(1, [Some(100), Some(100), None, None]).unwrap());
    std::thread::sleep(Duration::from_millis(1500));
    let ahead = c.latest_telemetry(1);
    assert!(ahead.x > start.x + 0.4, "north: {start:?} → {ahead:?}");
    assert!((ahead.y - start.y).abs() < 1e-3 && ahead.yaw.abs() < 1e-3);
    assert_eq!(sim.world().auvs[0].north, 0.0, "AUV 0 got no command");
    // Left ahead of right turns right (yaw grows); vertical up rises (z shrinks).
    c.push(ThrusterCommand::new(1, [Some(60), Some(-60), Some(0), Some(100)]).unwrap());
    std::thread::sleep(Duration::from_millis(1500));
    let turned = c.latest_telemetry(1);
    assert!(turned.yaw > ahead.yaw + 0.2, "{ahead:?} → {turned:?}");
    assert!(turned.z < ahead.z - 0.2, "{ahead:?} → {turned:?}");
    assert!(turned.pitch > 0.0, "nose up while climbing: {turned:?}");
    // Only the side thruster changes; the others keep their levels.
    c.push(ThrusterCommand::new(1, [None, None, Some(50), None]).unwrap());
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(sim.world().auvs[1].levels, [60, -60, 50, 100]);
    assert_eq!(sim.report().thrusters.good, 3);
}

#[test]
fn bad_thruster_messages_are_counted_and_the_next_good_one_applies() {
    let sim = Simulator::start(options(&[0])).unwrap();
    let c = Client::connect(&sim, &[0]);
    c.thrusters.send(&[0u8, 1, 2, 3][..], 0).unwrap();
    c.thrusters.send(&[0u8, 101, 0, 0, 0][..], 0).unwrap();
    c.thrusters.send_multipart([&[0u8][..], &[1, 2, 3, 4][..]], 0).unwrap();
    c.thrusters.send(&[9u8, 10, 10, 10, 10][..], 0).unwrap();
    c.push(ThrusterCommand::new(0, [Some(10), Some(20), Some(30), Some(40)]).unwrap());
    let deadline = Instant::now() + Duration::from_secs(3);
    while sim.report().thrusters.good == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let counts = sim.report().thrusters;
    assert_eq!(counts.good, 1);
    assert_eq!(counts.bad("wrong_length"), 1);
    assert_eq!(counts.bad("out_of_range"), 1);
    assert_eq!(counts.bad("wrong_part_count"), 1);
    assert_eq!(counts.bad("unknown_id"), 1);
    assert_eq!(sim.world().auvs[0].levels, [10, 20, 30, 40]);
}

#[test]
fn every_fault_reaches_the_client_as_its_kind_and_good_messages_keep_coming() {
    let mut o = options(&[4]);
    for kind in [
        AuvFault::Junk,
        AuvFault::WrongParts,
        AuvFault::WrongLength,
        AuvFault::CorruptJpeg,
    ] {
        o.faults.set(kind, 0.2);
    }
    o.faults.seed = 11;
    o.image_rate = 50.0;
    o.telemetry_rate = 200.0;
    let sim = Simulator::start(o).unwrap();
    let c = Client::connect(&sim, &[4]);
    let mut images = auv_proto::counts::InputCounts::default();
    let mut telemetry = auv_proto::counts::InputCounts::default();
    // Until every fault kind and enough good messages arrived: a loaded machine is slower, not wrong.
    let image_kinds = ["wrong_part_count", "wrong_id_length", "corrupt_jpeg"];
    let telemetry_kinds = ["wrong_part_count", "wrong_length"];
    let enough = |images: &auv_proto::counts::InputCounts, telemetry: &auv_proto::counts::InputCounts| {
        image_kinds.iter().all(|k| images.bad(k) > 0)
            && telemetry_kinds.iter().all(|k| telemetry.bad(k) > 0)
            && images.good > 20
            && telemetry.good > 100
    };
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) && !enough(&images, &telemetry) {
        if let Ok(parts) = c.images.recv_multipart(zmq::DONTWAIT) {
            images.record(&ImageMessage::parse(parts, &ImageLimits::default()));
        }
        if let Ok(parts) = c.telemetry.recv_multipart(zmq::DONTWAIT) {
            telemetry.record(&Telemetry::parse(&parts));
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    for kind in image_kinds {
        assert!(images.bad(kind) > 0, "{kind}: {images:?}");
    }
    for kind in telemetry_kinds {
        assert!(telemetry.bad(kind) > 0, "{kind}: {telemetry:?}");
    }
    assert!(images.good > 20 && telemetry.good > 100, "{images:?} {telemetry:?}");
    let r = sim.report();
    assert!(r.image_faults.total() >= images.bad_total(), "{r:?} vs {images:?}");
}

#[test]
fn a_restart_resets_the_auvs_and_clients_reconnect_by_themselves() {
    let sim = Simulator::start(Options {
        restart_every: Some(Duration::from_millis(1500)),
        restart_down: Duration::from_millis(300),
        ..options(&[0])
    })
    .unwrap();
    let c = Client::connect(&sim, &[0]);
    c.push(ThrusterCommand::new(0, [Some(100), Some(100), None, None]).unwrap());
    std::thread::sleep(Duration::from_millis(1200));
    assert!(c.latest_telemetry(0).x > 0.3);
    // Across the restart: the telemetry stops, resumes at the start position.
    let deadline = Instant::now() + Duration::from_secs(4);
    while sim.report().restarts == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(sim.report().restarts, 1);
    let back = Instant::now();
    let t = c.latest_telemetry(0);
    assert!(t.x < 0.3, "the state was reset: {t:?}");
    assert!(
        back.elapsed() < Duration::from_secs(2),
        "resumed in {:?}",
        back.elapsed()
    );
    // The same PUSH socket reaches the new simulator.
    c.push(ThrusterCommand::new(0, [Some(-100), Some(-100), None, None]).unwrap());
    std::thread::sleep(Duration::from_millis(800));
    assert!(sim.world().auvs[0].north < -0.1, "{:?}", sim.world());
}

#[test]
fn stops_within_a_second() {
    let sim = Simulator::start(Options {
        telemetry_rate: 1000.0,
        ..options(&[0, 1, 2, 3])
    })
    .unwrap();
    let c = Client::connect(&sim, &[]);
    c.telemetry();
    let t = Instant::now();
    sim.request_stop();
    sim.wait();
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    // The ports are free again.
    let again = Simulator::start(Options {
        image_port: sim.ports().image,
        thruster_port: sim.ports().thruster,
        telemetry_port: sim.ports().telemetry,
        ..options(&[0])
    });
    assert!(again.is_ok(), "{again:?}");
}

#[test]
fn a_port_in_use_is_an_error_at_start() {
    let first = Simulator::start(options(&[0])).unwrap();
    let p = first.ports();
    let clash = Simulator::start(Options {
        image_port: p.image,
        ..options(&[0])
    });
    assert!(clash.is_err());
}

/// A controller flooding thruster commands starves neither the telemetry
/// nor the stop: the drain of the PULL socket is bounded per turn.
#[test]
fn a_flood_of_thruster_commands_keeps_telemetry_and_the_stop() {
    let sim = Simulator::start(options(&[0])).unwrap();
    let c = Client::connect(&sim, &[0]);
    c.telemetry();
    let flooding = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let flooders: Vec<_> = (0..3)
        .map(|_| {
            let (flag, port) = (flooding.clone(), sim.ports().thruster);
            std::thread::spawn(move || {
                let ctx = zmq::Context::new();
                let push = ctx.socket(zmq::PUSH).unwrap();
                push.set_linger(0).unwrap();
                push.set_sndhwm(100_000).unwrap();
                push.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
                let msg = ThrusterCommand::new(0, [Some(1), None, None, None]).unwrap().encode();
                while flag.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = push.send(&msg[..], zmq::DONTWAIT);
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    let mut got = 0;
    while start.elapsed() < Duration::from_millis(500) {
        if c.telemetry.recv_multipart(zmq::DONTWAIT).is_ok() {
            got += 1;
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let t = Instant::now();
    sim.request_stop();
    sim.wait();
    let stopped_in = t.elapsed();
    flooding.store(false, std::sync::atomic::Ordering::Relaxed);
    for f in flooders {
        f.join().unwrap();
    }
    assert!(got >= 5, "telemetry under a flood: {got} messages in 0.5 s");
    assert!(stopped_in < Duration::from_secs(1), "{stopped_in:?}");
}
