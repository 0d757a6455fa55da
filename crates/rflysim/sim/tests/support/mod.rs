//! What the emulator's wire tests share: the emulator as a child process
//! (stopped with SIGTERM so that it unlinks its shared memory), listeners,
//! reassembly until N frames, test configs, and what the world renders.

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rflysim_proto::config::{parse_config, AngleUnit, SensorConfig};
use rflysim_proto::reassembly::{Frame, Reassembler};
use rflysim_proto::request::ImuRequest;
use rflysim_proto::sensor::Encoding;
use rflysim_proto::telemetry::ImuSample;
use rflysim_sim::render::{self, Mount};
use rflysim_sim::world::{Scene, Trajectory};
use socket2::{Domain, Protocol, Socket, Type};

pub struct Sim(Child);

impl Drop for Sim {
    fn drop(&mut self) {
        // SIGTERM first: the emulator unlinks its shared memory on the way out.
        let _ = Command::new("kill").arg(self.0.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs the emulator on `config` without its CopterSim heartbeat (port 20005
/// is shared by every test); see `start_with_heartbeat`.
pub fn start(config: &str, args: &[&str]) -> (Sim, Vec<SensorConfig>) {
    let mut all = vec!["--no-heartbeat"];
    all.extend_from_slice(args);
    start_with_heartbeat(config, &all)
}

pub fn start_with_heartbeat(config: &str, args: &[&str]) -> (Sim, Vec<SensorConfig>) {
    let dir = std::env::temp_dir().join(format!(
        "rflysim_sim_test_{}_{}",
        std::process::id(),
        args.join("_").replace(['/', ' ', ':', '.'], "")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("Config.json");
    std::fs::write(&path, config).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_rflysim_sim"))
        .arg("--config")
        .arg(&path)
        .args(["--stats", "0"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("rflysim_sim runs");
    (Sim(child), parse_config(config, AngleUnit::Auto).unwrap())
}

pub fn listener(port: u16) -> UdpSocket {
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP)).unwrap();
    s.set_reuse_address(true).unwrap();
    let _ = s.set_recv_buffer_size(4 << 20);
    s.bind(&SocketAddrV4::new(Ipv4Addr::LOCALHOST, port).into()).unwrap();
    let s: UdpSocket = s.into();
    s.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    s
}

/// Receives until `want` frames came out of the reassembler or `timeout`.
pub fn frames(sock: &UdpSocket, r: &mut Reassembler, want: usize, timeout: Duration) -> Vec<Frame> {
    let start = Instant::now();
    let mut buf = vec![0u8; 65_536];
    let mut out = Vec::new();
    while out.len() < want && start.elapsed() < timeout {
        if let Ok(n) = sock.recv(&mut buf) {
            if let Some(f) = r.push(&buf[..n], start.elapsed()) {
                out.push(f);
            }
        } else {
            r.evict_stale(start.elapsed());
        }
    }
    out
}

pub fn camera_json(seq: u16, type_id: u16, transport: u16, port: u16, w: u16, h: u16, hz: u16) -> String {
    format!(
        r#"{{"SeqID": {seq}, "TypeID": {type_id}, "DataWidth": {w}, "DataHeight": {h}, "DataCheckFreq": {hz},
            "SendProtocol": [{transport}, 127, 0, 0, 1, {port}, 0, 0], "CameraFOV": 80,
            "SensorPosXYZ": [0.3, 0.1, 0.05], "SensorAngEular": [0, -0.3, 0.2], "otherParams": [0.1, 100, 0, 0, 0, 0, 0, 0]}}"#
    )
}

pub fn config(sensors: &[String]) -> String {
    format!("// test config\n{{\"VisionSensors\": [{}]}}", sensors.join(",\n"))
}

pub fn rendered(cfg: &SensorConfig, enc: Encoding, t: f64) -> Vec<u8> {
    let v = Trajectory::default().state(t);
    let view = render::CameraView::of(cfg).unwrap();
    assert_eq!(view.encoding, enc);
    render::render_camera(&Scene::default(), &v, &Mount::of(cfg), &view)
}

/// Asks vehicle `copter`'s CopterSim for its IMU at 200 Hz on `sock`'s
/// `port`, at the request port of the spec (RflySim's SDK, CopterSim IMU: 30100 + 2·(id − 1), written
/// out rather than taken from the crate, so that a port wrong on both sides
/// fails), until `want` samples arrived or 10 s passed. Each sample comes
/// with `arrival()` read as it arrived.
pub fn imu_samples<T>(
    copter: u16,
    sock: &UdpSocket,
    port: u16,
    want: usize,
    arrival: impl Fn() -> T,
) -> Vec<(T, ImuSample)> {
    let req = ImuRequest {
        sensor_type: 0,
        freq_hz: 200,
        port,
        receiver: Ipv4Addr::LOCALHOST,
        params: [0.0; 6],
    };
    let send = UdpSocket::bind("127.0.0.1:0").unwrap();
    let request_port = 30100 + 2 * (copter - 1);
    let mut buf = [0u8; 512];
    let mut samples = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while samples.len() < want && Instant::now() < deadline {
        if samples.is_empty() {
            send.send_to(&req.encode(), (Ipv4Addr::LOCALHOST, request_port))
                .unwrap();
        }
        if let Ok(n) = sock.recv(&mut buf) {
            samples.push((arrival(), ImuSample::decode(&buf[..n]).unwrap()));
        }
    }
    samples
}
