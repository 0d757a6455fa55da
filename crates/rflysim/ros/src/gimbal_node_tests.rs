//! The gimbals' command path with its real transport: requests over a real
//! UDP socket to one the test reads, the shared rule's sender on its thread.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use super::*;
use crate::gimbal::ctrl_type;
use rflysim_proto::config::{parse_config, AngleUnit};
use rflysim_proto::gimbal::{stops_rates_only, PROTOCOL_BITS};
use rflysim_proto::request::VisionSensorReq;
use ros_common::command::command_path;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_millis(300);

fn gimbal_config() -> SensorConfig {
    parse_config(
        r#"{"VisionSensors":[{"SeqID":6,"TypeID":9,"DataWidth":640,"DataHeight":360,"CameraFOV":60,"SensorAngEular":[0,-0.5,0.2]}]}"#,
        AngleUnit::Radians,
    )
    .unwrap()
    .remove(0)
}

/// One gimbal's command path, its sender running, its requests going to `rflysim3d`.
struct Harness {
    inbox: CommandInbox<GimbalCommand>,
    stats: Arc<StreamStats>,
    rflysim3d: UdpSocket,
    stopped: Arc<AtomicBool>,
    sender: Option<JoinHandle<()>>,
}

impl Harness {
    fn new() -> Self {
        let rflysim3d = UdpSocket::bind("127.0.0.1:0").unwrap();
        rflysim3d.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let std::net::SocketAddr::V4(to) = rflysim3d.local_addr().unwrap() else {
            unreachable!()
        };
        let stats: Arc<StreamStats> = Arc::default();
        let transport = GimbalRequests {
            sock: Arc::new(UdpSocket::bind("127.0.0.1:0").unwrap()),
            to,
            bits: PROTOCOL_BITS,
            checksum: 12345,
            gimbals: vec![GimbalLink {
                state: Arc::new(Mutex::new(GimbalCommandState::new(&gimbal_config()))),
            }],
        };
        let (inbox, sender) = command_path(
            transport,
            TIMEOUT,
            vec!["gimbal".into()],
            vec![stats.clone()],
            "gimbal_test",
        );
        let stopped = Arc::new(AtomicBool::new(false));
        let flag = stopped.clone();
        let sender = std::thread::spawn(move || sender.run(move || flag.load(Ordering::Relaxed)));
        Self {
            inbox,
            stats,
            rflysim3d,
            stopped,
            sender: Some(sender),
        }
    }

    fn command(&self, c: Ctrl, stamp_s: f64, now_s: f64) {
        let change = ctrl_change(&c, &PROTOCOL_BITS).unwrap();
        let moving = change.moves(&PROTOCOL_BITS);
        self.inbox
            .submit(0, GimbalCommand::Change(change), stamp_s, Some(now_s), moving);
    }

    /// The requests that arrive within `within`.
    fn requests(&self, within: Duration) -> Vec<VisionSensorReq> {
        let deadline = Instant::now() + within;
        let mut buf = [0u8; 256];
        let mut out = Vec::new();
        while Instant::now() < deadline {
            if let Ok(n) = self.rflysim3d.recv(&mut buf) {
                out.push(VisionSensorReq::decode(&buf[..n]).unwrap().0);
            }
        }
        out
    }

    fn stop(&mut self) {
        self.stopped.store(true, Ordering::Relaxed);
        self.sender.take().unwrap().join().unwrap();
    }
}

fn pitch_of(r: &VisionSensorReq) -> f32 {
    r.sensor_ang_eular[1]
}

#[test]
fn a_refused_command_changes_nothing_a_later_request_or_the_neutral_is_built_from() {
    let mut h = Harness::new();
    let configured_pitch = pitch_of(&GimbalCommandState::new(&gimbal_config()).base);
    // Pitch −90°, stamped 10 s before the clock: refused (stale).
    let pitch_down = Ctrl {
        ctrl_type: ctrl_type::ATTITUDE,
        pitch: -9000,
        ..Default::default()
    };
    h.command(pitch_down, 90.0, 100.0);
    let fov = Ctrl {
        ctrl_type: ctrl_type::FOV,
        fov: 4000,
        ..Default::default()
    };
    h.command(fov, 0.0, 100.0);
    let mut sent = h.requests(Duration::from_millis(100));
    let turn = Ctrl {
        others: vec![0, 1, 1500, 0, 0],
        ..Default::default()
    };
    h.command(turn, 0.0, 100.0);
    sent.extend(h.requests(TIMEOUT * 2));
    h.stop();
    assert_eq!(
        sent.len(),
        3,
        "the FOV command, the rate command, the neutral: {sent:?}"
    );
    assert!(stops_rates_only(&sent[2], &PROTOCOL_BITS));
    for r in &sent {
        assert_eq!(pitch_of(r), configured_pitch, "the refused pitch is nowhere: {r:?}");
        assert_eq!(r.camera_fov, 40.0);
    }
    assert_eq!(h.stats.drops()["stale"], 1);
}
