//! End-to-end benchmark: the built-in RflySim emulator → the bridge → a
//! native r2r subscriber (this process), next to a reference measured in the
//! same run: an r2r program publishing pre-built messages of the same size to
//! the same subscriber (what DDS alone allows here). For the UDP streams at
//! rate (and 4K from shared memory at 60 Hz) a second reference, "receiving
//! reference", takes each frame's datagrams from the same emulator into one
//! buffer (or copies it out of the emulator's region) before it publishes
//! its pre-built message: DDS alone plus the receive any bridge must make,
//! on the same three-process topology as the bridge. CopterSim's IMU at
//! 1000 Hz is measured against DDS alone publishing the same `Imu` messages.
//!
//! `scripts/bench.sh` (or: `cargo build --release --workspace --bins &&
//! cargo bench -p rflysim_ros --bench end_to_end`). Prints a table; asserts
//! nothing. `RFLYSIM_BENCH_SECONDS` sets the measuring window (default 6),
//! `RFLYSIM_BENCH_CASES` picks cases by name, `RFLYSIM_BENCH_ROUNDS` runs
//! them that many times in turn and prints each ratio's median.
//!
//! The cases "across a link" run the emulator on a second host (a network
//! namespace joined by a veth pair at MTU 1500, `bench_support::netns`:
//! root only), so that its datagrams cross as IP fragments.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use std::collections::HashMap;

use bench_support::{cpu_seconds, percentile, udp_drops_by_port, udp_rcvbuf_errors, wall, SendLog, StoppedOnDrop};
use r2r::sensor_msgs::msg::{Image, Imu, PointCloud2, PointField};
use rflysim_proto::header::{DatagramHeader, HeaderKind};

mod link;
mod reference;
mod report;
#[allow(dead_code)] // each benchmark uses its part
#[path = "../shared/mod.rs"]
mod shared;

use link::Place;
use reference::*;
use report::*;

use shared::{publisher_env, receive_slowly, start_bridge, start_emulator, start_emulator_via, window, Kind, WARMUP};

#[derive(Debug)]
struct Result {
    name: String,
    kind: Kind,
    /// The rate asked of the emulator or the reference publisher (NaN: flat out).
    nominal_hz: f64,
    offered: f64,
    delivered: f64,
    kernel_drops: u64,
    /// Datagrams the kernel dropped at each local UDP port in the window.
    socket_drops: HashMap<u16, u64>,
    p50_ms: f64,
    p99_ms: f64,
    cpu_percent: Option<f64>,
    /// The publishing process's peak resident memory at the window's end.
    peak_rss_mib: f64,
}

/// The frame size a case is about (`4K` or the 1080p/LiDAR default), for
/// matching a bridge row with its reference.
fn size_of(name: &str) -> &'static str {
    if name.contains("4K") {
        "4K"
    } else {
        ""
    }
}

/// The Config.json of a case (written for it) and its emulator's send log.
fn case_files(name: &str, config: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = shared::run_dir();
    let cfg = dir.join("Config.json");
    std::fs::write(&cfg, config).unwrap();
    let log = dir.join(format!("send_{}.log", name.replace([' ', ':'], "_")));
    (cfg, log)
}

/// What one publishing process (`pid`) delivered on a topic in the window.
struct Window {
    /// (stamp, receipt) of the messages received in the window.
    receipts: Vec<(f64, f64)>,
    start: f64,
    end: f64,
    cpu_percent: f64,
    kernel_drops: u64,
    socket_drops: HashMap<u16, u64>,
    peak_rss: u64,
}

impl Window {
    /// Subscribes to `topic` and measures over the window after the warm-up.
    fn measure(node: &mut r2r::Node, topic: &str, kind: Kind, pid: u32) -> Window {
        Self::measure_slowly(node, topic, kind, pid, Duration::ZERO)
    }

    /// `measure`, by a subscriber that takes `each` per message.
    fn measure_slowly(node: &mut r2r::Node, topic: &str, kind: Kind, pid: u32, each: Duration) -> Window {
        let t0 = Instant::now();
        let (mut cpu0, mut drops0, mut start) = (0.0, 0, 0.0);
        let mut ports0 = HashMap::new();
        let mut mark = || {
            cpu0 = cpu_seconds(pid);
            drops0 = udp_rcvbuf_errors();
            ports0 = udp_drops_by_port();
            start = wall();
        };
        let warm = t0 + Duration::from_secs_f64(WARMUP);
        let topics = [(topic.to_string(), kind)];
        let until = warm + Duration::from_secs_f64(window());
        let receipts = receive_slowly(node, &topics, warm, until, &mut mark, each).remove(0);
        let end = wall();
        Window {
            receipts: receipts.into_iter().filter(|(_, r)| *r >= start && *r < end).collect(),
            start,
            end,
            cpu_percent: (cpu_seconds(pid) - cpu0) / (end - start) * 100.0,
            kernel_drops: udp_rcvbuf_errors() - drops0,
            socket_drops: udp_drops_by_port()
                .into_iter()
                .map(|(port, n)| (port, n.saturating_sub(ports0.get(&port).copied().unwrap_or(0))))
                .collect(),
            peak_rss: bench_support::peak_rss_bytes(pid),
        }
    }

    /// Frames of `stream` the emulator finished sending in the window, per second.
    fn offered(&self, sent: &SendLog, stream: &str) -> f64 {
        sent.sent_between(stream, self.start, self.end) as f64 / (self.end - self.start)
    }

    /// Latency from the stamp the publisher set just before publishing.
    fn latencies_from_stamps(&self) -> Vec<f64> {
        self.receipts.iter().map(|(s, r)| (r - s) * 1e3).collect()
    }

    /// The result, latency from the emulator's send of each frame of
    /// stream `seq_id` (in its send log `log`), matched by the sim time
    /// stamp the publisher kept.
    fn result_from_sends(&self, name: &str, kind: Kind, log: &std::path::Path, seq_id: u16) -> Result {
        self.result_from_stream_sends(name, kind, log, &seq_id.to_string())
    }

    /// `result_from_sends` for the stream the send log names `stream`
    /// (a sensor's SeqID, or `imu<copter id>`).
    fn result_from_stream_sends(&self, name: &str, kind: Kind, log: &std::path::Path, stream: &str) -> Result {
        let sent = SendLog::read(log);
        let latencies = self
            .receipts
            .iter()
            .filter_map(|(stamp, r)| sent.sent_at(stream, *stamp).map(|s| (r - s) * 1e3))
            .collect();
        self.result(name, kind, self.offered(&sent, stream), latencies)
    }

    fn result(&self, name: &str, kind: Kind, offered: f64, mut latencies_ms: Vec<f64>) -> Result {
        latencies_ms.sort_by(f64::total_cmp);
        Result {
            name: name.into(),
            kind,
            nominal_hz: f64::NAN,
            offered,
            delivered: self.receipts.len() as f64 / (self.end - self.start),
            kernel_drops: self.kernel_drops,
            socket_drops: self.socket_drops.clone(),
            p50_ms: percentile(&latencies_ms, 0.5),
            p99_ms: percentile(&latencies_ms, 0.99),
            cpu_percent: Some(self.cpu_percent),
            peak_rss_mib: self.peak_rss as f64 / f64::from(1u32 << 20),
        }
    }
}

/// Runs the emulator and the bridge on `config`, measures on `topic`, the
/// stream of sensor `seq_id`.
fn bridge_case(
    node: &mut r2r::Node,
    name: &str,
    config: &str,
    topic: (&str, u16),
    kind: Kind,
    sim_args: &[&str],
) -> Result {
    bridge_case_at(Place::Here, node, name, config, topic, kind, sim_args)
}

/// `bridge_case` with the emulator at `place`.
fn bridge_case_at(
    place: Place,
    node: &mut r2r::Node,
    name: &str,
    config: &str,
    (topic, seq_id): (&str, u16),
    kind: Kind,
    sim_args: &[&str],
) -> Result {
    let (cfg, log) = case_files(name, config);
    let mut params = vec!["imu:=false".to_string()];
    params.extend(place.bridge_params());
    let bridge = start_bridge(&cfg, &params);
    let place_args = place.sim_args();
    let mut args = vec!["--copters", ""];
    args.extend_from_slice(sim_args);
    args.extend(place_args.iter().map(String::as_str));
    let _sim = start_emulator_via(&place.prefix(), &cfg, &log, &args);
    // "slow subscriber": one that takes 200 ms a message, so that what the
    // bridge holds for it shows in the bridge's memory.
    let each = Duration::from_millis(if name.contains("slow subscriber") { 200 } else { 0 });
    let measured = Window::measure_slowly(node, topic, kind, bridge.0.id(), each);
    measured.result_from_sends(name, kind, &log, seq_id)
}

/// The bridge bridging CopterSim 1's IMU, asked of the emulator's CopterSim
/// at `hz`, and nothing else of RflySim3D (no sensor in its config). The
/// true state, which CopterSim sends at 100 Hz whatever is asked, comes too.
fn imu_bridge_case(node: &mut r2r::Node, name: &str, hz: u16) -> Result {
    const COPTER: u16 = 1;
    let (cfg, log) = case_files(name, r#"{"VisionSensors": []}"#);
    let params = [format!("vehicle_ids:=[{COPTER}]"), format!("imu_rate_hz:={hz}")];
    let bridge = start_bridge(&cfg, &params);
    let copters = COPTER.to_string();
    let _sim = start_emulator(&cfg, &log, &["--copters", &copters]);
    let topic = format!("/{}", rflysim_ros::names::imu_topic(COPTER, false));
    let measured = Window::measure(node, &topic, Kind::Imu, bridge.0.id());
    measured.result_from_stream_sends(name, Kind::Imu, &log, &format!("imu{COPTER}"))
}

/// CopterSim's highest IMU rate: where the bridge's cost per sample shows most.
const IMU_HZ: u16 = 1000;

/// Where the emulator sends the camera's and the LiDAR's datagrams.
const CAMERA_PORT: u16 = 45001;
const LIDAR_PORT: u16 = 45002;

fn camera_config(transport: u16, hz: u16) -> String {
    sized_camera_config(transport, hz, 1920, 1080)
}

/// 3840×2160: SendProtocol[0] 0 shared memory, 1 JPEG over UDP, 2 raw over UDP.
fn camera_4k_config(transport: u16, hz: u16) -> String {
    sized_camera_config(transport, hz, 3840, 2160)
}

fn sized_camera_config(transport: u16, hz: u16, width: u32, height: u32) -> String {
    format!(
        r#"{{"VisionSensors": [{{"SeqID": 1, "TypeID": 1, "DataWidth": {width}, "DataHeight": {height}, "DataCheckFreq": {hz},
        "SendProtocol": [{transport}, 127, 0, 0, 1, {CAMERA_PORT}, 0, 0], "CameraFOV": 90, "SensorAngEular": [0, -0.3, 0]}}]}}"#
    )
}

fn lidar_config(hz: u16) -> String {
    // A Livox-type cone looking straight down: all 500 × 200 rays hit the ground.
    format!(
        r#"{{"VisionSensors": [{{"SeqID": 2, "TypeID": 22, "DataWidth": 500, "DataHeight": 200, "DataCheckFreq": {hz},
        "SendProtocol": [1, 127, 0, 0, 1, {LIDAR_PORT}, 0, 0], "SensorAngEular": [0, -1.5707963, 0],
        "otherParams": [100, 0, 0, 0, 0, 0, 0, 0]}}]}}"#
    )
}

/// A case: its name, and what measures it (given a fresh subscriber node and the name).
type Case<'a> = (&'a str, Box<dyn FnOnce(&mut r2r::Node, &str) -> Result + 'a>);

/// Whether `only` (`RFLYSIM_BENCH_CASES`: names to run, any may match, and
/// after `!` names to leave out) picks the case `name`.
fn wanted(only: &str, name: &str) -> bool {
    let (out, picks): (Vec<&str>, Vec<&str>) = only
        .split(',')
        .filter(|w| !w.is_empty())
        .partition(|w| w.starts_with('!'));
    (picks.is_empty() || picks.iter().any(|w| name.contains(w))) && !out.iter().any(|w| name.contains(&w[1..]))
}

/// One round: every wanted case in turn, each bridge case followed by its
/// reference, then the paced pairs at the flat-out rates this round found.
fn run_round(ctx: &r2r::Context, only: &str, first_node: usize, link: Option<&link::LinkedHost>) -> Vec<Result> {
    // A fresh subscriber node per case: no subscription outlives its case.
    let mut case = first_node;
    let mut fresh = || {
        case += 1;
        r2r::Node::create(ctx.clone(), &format!("rflysim_bench_subscriber{case}"), "").unwrap()
    };
    let image_topic = ("/rflysim/sensor1/img_rgb", 1);
    let cloud_topic = ("/rflysim/sensor2/livox_lidar", 2);
    let sweep = link::receive_buffer_sizes();
    let mut cases: Vec<Case> = vec![
        (
            "1080p bgr8 raw UDP @ 60 Hz",
            Box::new(|n, name| bridge_case(n, name, &camera_config(2, 60), image_topic, Kind::Image, &[])),
        ),
        (
            "reference: 1080p Image @ 60 Hz",
            Box::new(|n, name| reference_case(n, name, Kind::Image, Some(60.0))),
        ),
        (
            "receiving reference: 1080p Image from raw UDP @ 60 Hz",
            Box::new(|n, name| {
                receiving_reference_case(
                    n,
                    name,
                    &camera_config(2, 60),
                    (CAMERA_PORT, image_topic.1),
                    Kind::Image,
                )
            }),
        ),
        (
            "LiDAR 100k points UDP @ 20 Hz",
            Box::new(|n, name| bridge_case(n, name, &lidar_config(20), cloud_topic, Kind::Cloud, &[])),
        ),
        (
            "reference: 100k PointCloud2 @ 20 Hz",
            Box::new(|n, name| reference_case(n, name, Kind::Cloud, Some(20.0))),
        ),
        (
            "receiving reference: 100k PointCloud2 from UDP @ 20 Hz",
            Box::new(|n, name| {
                receiving_reference_case(n, name, &lidar_config(20), (LIDAR_PORT, cloud_topic.1), Kind::Cloud)
            }),
        ),
        (
            "CopterSim IMU UDP @ 1000 Hz",
            Box::new(|n, name| imu_bridge_case(n, name, IMU_HZ)),
        ),
        (
            "reference: Imu @ 1000 Hz",
            Box::new(|n, name| reference_case(n, name, Kind::Imu, Some(f64::from(IMU_HZ)))),
        ),
        (
            "receiving reference: Imu from CopterSim UDP @ 1000 Hz",
            Box::new(|n, name| imu_receiving_reference_case(n, name, 1, IMU_HZ)),
        ),
        (
            "1080p bgr8 shm @ 60 Hz",
            Box::new(|n, name| bridge_case(n, name, &camera_config(0, 60), image_topic, Kind::Image, &[])),
        ),
        (
            "4K bgr8 raw UDP @ 30 Hz",
            Box::new(|n, name| bridge_case(n, name, &camera_4k_config(2, 30), image_topic, Kind::Image, &[])),
        ),
        (
            "4K bgr8 raw UDP @ 30 Hz, slow subscriber (5 Hz)",
            Box::new(|n, name| bridge_case(n, name, &camera_4k_config(2, 30), image_topic, Kind::Image, &[])),
        ),
        (
            "reference: 4K Image @ 30 Hz",
            Box::new(|n, name| reference_case(n, name, Kind::Image, Some(30.0))),
        ),
        (
            "receiving reference: 4K Image from raw UDP @ 30 Hz",
            Box::new(|n, name| {
                receiving_reference_case(
                    n,
                    name,
                    &camera_4k_config(2, 30),
                    (CAMERA_PORT, image_topic.1),
                    Kind::Image,
                )
            }),
        ),
        (
            "4K bgr8 shm @ 30 Hz",
            Box::new(|n, name| bridge_case(n, name, &camera_4k_config(0, 30), image_topic, Kind::Image, &[])),
        ),
        (
            "4K bgr8 shm @ 60 Hz",
            Box::new(|n, name| bridge_case(n, name, &camera_4k_config(0, 60), image_topic, Kind::Image, &[])),
        ),
        (
            "receiving reference: 4K Image from shm @ 60 Hz",
            Box::new(|n, name| {
                shm_receiving_reference_case(
                    n,
                    name,
                    &camera_4k_config(0, 60),
                    ("RflySim3DImg_1", image_topic.1),
                    Kind::Image,
                )
            }),
        ),
        (
            "reference: 4K Image @ 60 Hz",
            Box::new(|n, name| reference_case(n, name, Kind::Image, Some(60.0))),
        ),
        (
            "4K JPEG UDP @ 30 Hz (raw topic: decoded)",
            Box::new(|n, name| bridge_case(n, name, &camera_4k_config(1, 30), image_topic, Kind::Image, &[])),
        ),
        (
            "1080p bgr8 raw UDP, flat out",
            Box::new(|n, name| {
                bridge_case(
                    n,
                    name,
                    &camera_config(2, 60),
                    image_topic,
                    Kind::Image,
                    &["--flat-out"],
                )
            }),
        ),
        (
            "1080p bgr8 shm, flat out",
            Box::new(|n, name| {
                bridge_case(
                    n,
                    name,
                    &camera_config(0, 60),
                    image_topic,
                    Kind::Image,
                    &["--flat-out"],
                )
            }),
        ),
        (
            "reference: 1080p Image, flat out",
            Box::new(|n, name| reference_case(n, name, Kind::Image, None)),
        ),
        (
            "LiDAR 100k points UDP, flat out",
            Box::new(|n, name| bridge_case(n, name, &lidar_config(20), cloud_topic, Kind::Cloud, &["--flat-out"])),
        ),
        (
            "reference: 100k PointCloud2, flat out",
            Box::new(|n, name| reference_case(n, name, Kind::Cloud, None)),
        ),
    ];
    if let Some(host) = link {
        cases.extend(link::cases(host, &sweep, image_topic));
    }
    let mut rows = Vec::new();
    for (name, run) in cases {
        if wanted(only, name) {
            let mut row = run(&mut fresh(), name);
            if let Some(hz) = name
                .split(" @ ")
                .nth(1)
                .and_then(|r| r.trim_end_matches(" Hz").parse().ok())
            {
                row.nominal_hz = hz;
            }
            rows.push(row);
        }
    }
    // Flat out, the emulator offers far more than the bridge takes and the
    // kernel drops the rest: the bridge's CPU then includes frames it
    // half-received. Paced just above what it took flat out, the sender no
    // longer sets the figure, and the reference publishes at the same rate.
    let paced = [
        (
            "1080p bgr8 raw UDP",
            "1080p Image",
            Kind::Image,
            camera_config(2, 60),
            image_topic,
        ),
        (
            "1080p bgr8 shm",
            "1080p Image",
            Kind::Image,
            camera_config(0, 60),
            image_topic,
        ),
        (
            "LiDAR 100k points UDP",
            "100k PointCloud2",
            Kind::Cloud,
            lidar_config(20),
            cloud_topic,
        ),
    ];
    for (bridge_name, reference_name, kind, config, topic) in paced {
        let Some(flat) = rows.iter().find(|r| r.name == format!("{bridge_name}, flat out")) else {
            continue;
        };
        let hz = (flat.delivered * 1.05).ceil().max(1.0);
        let name = format!("{bridge_name}, paced at {hz:.0} Hz (flat-out rate + 5 %)");
        if wanted(only, &name) {
            let rate = hz.to_string();
            let mut row = bridge_case(&mut fresh(), &name, &config, topic, kind, &["--rate", &rate]);
            row.nominal_hz = hz;
            rows.push(row);
            let name = format!("reference: {reference_name}, paced at {hz:.0} Hz");
            rows.push(reference_case(&mut fresh(), &name, kind, Some(hz)));
        }
    }

    rows
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--reference-publisher") {
        let receive_port = args
            .iter()
            .position(|a| a == "--receive-port")
            .and_then(|p| args.get(p + 1)?.parse().ok());
        let receive_shm = args
            .iter()
            .position(|a| a == "--receive-shm")
            .and_then(|p| args.get(p + 1))
            .map(String::as_str);
        let receive_imu = args
            .iter()
            .position(|a| a == "--receive-imu")
            .and_then(|p| Some((args.get(p + 1)?.parse().ok()?, args.get(p + 2)?.parse().ok()?)));
        reference_publisher(
            &args[i + 1],
            args[i + 2].parse().unwrap_or(0.0),
            receive_port,
            receive_shm,
            receive_imu,
        );
        return;
    }
    // LOCALHOST unless asked otherwise: with it rmw_fastrtps builds its own
    // transports (shared memory and loopback UDP) and ignores
    // FASTDDS_BUILTIN_TRANSPORTS, so a UDP-only run (a subscriber as on
    // another host) needs SUBNET.
    if let bench_support::BenchRole::Listing = bench_support::bench_role() {
        return;
    }
    let ctx = r2r::Context::create().unwrap();
    // RFLYSIM_BENCH_CASES=shm runs only the cases whose name contains "shm" (and so on).
    let only = std::env::var("RFLYSIM_BENCH_CASES").unwrap_or_default();
    // One round's ratio moves by ±20 % with the machine (the reference's
    // own CPU per frame does): RFLYSIM_BENCH_ROUNDS=N runs the cases N
    // times in turn and sums the rounds up by their median.
    let rounds = bench_support::rounds_from_env("RFLYSIM_BENCH_ROUNDS", 1);
    let link = link::host_if_wanted(&only);
    let mut all_rounds = Vec::new();
    for round in 0..rounds {
        let rows = run_round(&ctx, &only, round * 100, link.as_ref());
        if rounds > 1 {
            println!("round {} of {rounds}:", round + 1);
        }
        print_table(&rows);
        link::print_tables(&rows);
        all_rounds.push(rows);
    }
    if rounds > 1 {
        print_rounds_summary(&all_rounds);
    }
}
