//! The gimbals' command path with its real transport: requests over a real
//! UDP socket to one the test reads, the shared rule's sender on its thread.
//! RflySim3D's echo is played by the test (a stand-in named `EchoingGimbal`).

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use super::*;
use crate::gimbal::{ctrl_change, ctrl_type, Ctrl};
use rflysim_proto::config::SensorConfig;
use rflysim_proto::config::{parse_config, AngleUnit};
use rflysim_proto::gimbal::slot;
use rflysim_proto::gimbal::{stops_rates_only, PROTOCOL_BITS};
use rflysim_proto::request::{VisionSensorReq, GIMBAL_ECHO_CHECKSUM};
use ros_common::command::command_path;
use ros_common::command::CommandInbox;

const SEQ: u16 = 6;
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
    echoes: Arc<EchoBook>,
    rflysim3d: UdpSocket,
    stop: watch::Sender<bool>,
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
        let echoes: Arc<EchoBook> = Arc::default();
        let (stop, stop_rx) = watch::channel(false);
        let (settled, _) = watch::channel(false);
        let transport = GimbalRequests {
            sock: Arc::new(UdpSocket::bind("127.0.0.1:0").unwrap()),
            to: to.into(),
            bits: PROTOCOL_BITS,
            checksum: 12345,
            gimbals: vec![GimbalLink {
                seq: SEQ,
                state: Arc::new(Mutex::new(GimbalCommandState::new(&gimbal_config()))),
                stats: stats.clone(),
                neutral: None,
            }],
            echoes: echoes.clone(),
            stop: stop_rx,
            settled,
            status_port: "UDP 20006".into(),
            logger: "gimbal_test".into(),
            log: RateLimitedLog::new(Duration::from_secs(5)),
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
            echoes,
            rflysim3d,
            stop,
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
        let _ = self.stop.send(true);
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
    assert_eq!(
        h.stats.drops()["neutral_unconfirmed"],
        1,
        "nothing echoes here: the neutral cannot be confirmed"
    );
}

/// Plays RflySim3D for one gimbal: applies the requests that reach it except
/// the first `drop_neutrals` neutrals, and echoes its rates every 20 ms.
struct EchoingGimbal {
    rates: [f32; 2],
    drop_neutrals: usize,
    neutrals_seen: usize,
}

impl EchoingGimbal {
    /// Echoing for a while (its echo is known to flow), then commanded to turn.
    fn turning(h: &Harness, drop_neutrals: usize) -> Self {
        let mut gimbal = Self {
            rates: [0.0; 2],
            drop_neutrals,
            neutrals_seen: 0,
        };
        gimbal.run(h, Duration::from_millis(100));
        let turn = Ctrl {
            others: vec![0, 1, 1500, 1, 1000],
            ..Default::default()
        };
        h.command(turn, 0.0, 100.0);
        gimbal
    }

    fn run(&mut self, h: &Harness, for_: Duration) -> Vec<VisionSensorReq> {
        let deadline = Instant::now() + for_;
        let mut got = Vec::new();
        let mut buf = [0u8; 256];
        while Instant::now() < deadline {
            if let Ok(n) = h.rflysim3d.recv(&mut buf) {
                let r = VisionSensorReq::decode(&buf[..n]).unwrap().0;
                let neutral = stops_rates_only(&r, &PROTOCOL_BITS);
                self.neutrals_seen += usize::from(neutral);
                if !neutral || self.neutrals_seen > self.drop_neutrals {
                    self.rates = [r.other_params[slot::PITCH_RATE], r.other_params[slot::YAW_RATE]];
                }
                got.push(r);
            }
            // RflySim3D's echo: its rates in otherParams[1..3].
            let mut echo = VisionSensorReq {
                seq_id: SEQ,
                ..Default::default()
            };
            echo.other_params[1..3].copy_from_slice(&self.rates);
            let echo = GimbalEcho::decode(&echo.encode(RequestForm::Gimbal148, GIMBAL_ECHO_CHECKSUM)).unwrap();
            h.echoes.heard(SEQ, &echo);
        }
        got
    }
}

#[test]
fn the_neutral_goes_again_until_the_echo_shows_both_rates_zero() {
    let mut h = Harness::new();
    let mut gimbal = EchoingGimbal::turning(&h, 1);
    let got = gimbal.run(&h, TIMEOUT + CONFIRM_WAIT * 3);
    let neutrals = got.iter().filter(|r| stops_rates_only(r, &PROTOCOL_BITS)).count();
    assert_eq!(
        (got.len(), neutrals),
        (3, 2),
        "the rate command, the lost neutral, the one that stops it"
    );
    assert_eq!(gimbal.rates, [0.0; 2]);
    let status = h.stats.command_status().unwrap();
    assert!(status.neutral_in_force && !status.neutral_owed && status.neutral_sent == 1);
    assert_eq!(h.stats.drops()["neutral_not_echoed"], 1);
    assert!(!h.stats.drops().contains_key("neutral_unconfirmed"));
    h.stop();
    assert!(
        h.requests(Duration::from_millis(100)).is_empty(),
        "stopped already: nothing at the stop"
    );
}

#[test]
fn an_unconfirmed_neutral_goes_for_the_budget_then_is_counted_once() {
    let mut h = Harness::new();
    let mut gimbal = EchoingGimbal::turning(&h, usize::MAX);
    gimbal.run(&h, TIMEOUT + NEUTRAL_BUDGET + CONFIRM_WAIT * 3);
    // Sent at 0, 0.2 and 0.4 s, given up at 0.6 s (a sender woken late may give up after two).
    let datagrams = gimbal.neutrals_seen;
    assert!((2..=3).contains(&datagrams), "{datagrams} neutral datagrams");
    assert_eq!(h.stats.drops()["neutral_unconfirmed"], 1);
    assert_eq!(h.stats.drops()["neutral_not_echoed"], datagrams as u64 - 1);
    assert!(!h.stats.command_status().unwrap().neutral_owed, "given up: not sent on");
    h.stop();
}

#[test]
fn the_verdict_on_a_neutral() {
    let t0 = Instant::now();
    let sent = NeutralSent {
        first: t0,
        last: t0 + Duration::from_millis(200),
        datagrams: 2,
        in_flight: true,
    };
    let echo = |ms: u64, rates: [f32; 2]| {
        Some(HeardEcho {
            at: t0 + Duration::from_millis(ms),
            rates,
            stopped: rates == [0.0; 2],
        })
    };
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    use NeutralVerdict::*;
    assert_eq!(judge(&sent, echo(250, [0.0, 0.0]), at(260), false), Confirmed);
    assert_eq!(
        judge(&sent, echo(150, [0.0, 0.0]), at(260), false),
        Waiting,
        "an echo from before the last datagram says nothing of it"
    );
    assert_eq!(judge(&sent, echo(250, [0.1, 0.0]), at(399), false), Waiting);
    assert_eq!(judge(&sent, echo(350, [0.1, 0.0]), at(400), false), SendAgain);
    assert_eq!(judge(&sent, None, at(400), false), SendAgain);
    let late = NeutralSent { last: at(400), ..sent };
    assert_eq!(judge(&late, None, at(600), false), GiveUp, "the budget is spent");
    assert_eq!(
        judge(&late, None, at(600), true),
        SendAgain,
        "at the stop the command path's budget ends it"
    );
}
