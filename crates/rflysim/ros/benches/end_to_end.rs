//! End-to-end benchmark: the built-in RflySim emulator → the bridge → a
//! native r2r subscriber (this process), next to a reference measured in the
//! same run: an r2r program publishing pre-built messages of the same size to
//! the same subscriber (what DDS alone allows here). For the UDP streams at
//! rate a second reference, "receiving reference", takes each frame's
//! datagrams from the same emulator into one buffer before it publishes its
//! pre-built message: DDS alone plus the receive any bridge must make, on the
//! same three-process topology as the bridge.
//!
//! `scripts/bench.sh` (or: `cargo build --release --workspace --bins &&
//! cargo bench -p rflysim_ros --bench end_to_end`). Prints a table; asserts
//! nothing. `RFLYSIM_BENCH_SECONDS` sets the measuring window (default 6),
//! `RFLYSIM_BENCH_CASES` picks cases by name, `RFLYSIM_BENCH_ROUNDS` runs
//! them that many times in turn and prints each ratio's median.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bench_support::{cpu_seconds, percentile, udp_rcvbuf_errors, wall, SendLog, StoppedOnDrop};
use r2r::sensor_msgs::msg::{Image, PointCloud2, PointField};
use rflysim_proto::header::{DatagramHeader, HeaderKind};

#[allow(dead_code)] // each benchmark uses its part
mod shared;

use shared::{publisher_env, receive, start_bridge, start_emulator, window, Kind, WARMUP};

#[derive(Debug)]
struct Result {
    name: String,
    kind: Kind,
    /// The rate asked of the emulator or the reference publisher (NaN: flat out).
    nominal_hz: f64,
    offered: f64,
    delivered: f64,
    kernel_drops: u64,
    p50_ms: f64,
    p99_ms: f64,
    cpu_percent: Option<f64>,
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
}

impl Window {
    /// Subscribes to `topic` and measures over the window after the warm-up.
    fn measure(node: &mut r2r::Node, topic: &str, kind: Kind, pid: u32) -> Window {
        let t0 = Instant::now();
        let (mut cpu0, mut drops0, mut start) = (0.0, 0, 0.0);
        let mut mark = || {
            cpu0 = cpu_seconds(pid);
            drops0 = udp_rcvbuf_errors();
            start = wall();
        };
        let warm = t0 + Duration::from_secs_f64(WARMUP);
        let topics = [(topic.to_string(), kind)];
        let receipts = receive(node, &topics, warm, warm + Duration::from_secs_f64(window()), &mut mark).remove(0);
        let end = wall();
        Window {
            receipts: receipts.into_iter().filter(|(_, r)| *r >= start && *r < end).collect(),
            start,
            end,
            cpu_percent: (cpu_seconds(pid) - cpu0) / (end - start) * 100.0,
            kernel_drops: udp_rcvbuf_errors() - drops0,
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

    fn result(&self, name: &str, kind: Kind, offered: f64, mut latencies_ms: Vec<f64>) -> Result {
        latencies_ms.sort_by(f64::total_cmp);
        Result {
            name: name.into(),
            kind,
            nominal_hz: f64::NAN,
            offered,
            delivered: self.receipts.len() as f64 / (self.end - self.start),
            kernel_drops: self.kernel_drops,
            p50_ms: percentile(&latencies_ms, 0.5),
            p99_ms: percentile(&latencies_ms, 0.99),
            cpu_percent: Some(self.cpu_percent),
        }
    }
}

/// Runs the emulator and the bridge on `config`, measures on `topic`, the
/// stream of sensor `seq_id`.
fn bridge_case(
    node: &mut r2r::Node,
    name: &str,
    config: &str,
    (topic, seq_id): (&str, u16),
    kind: Kind,
    sim_args: &[&str],
) -> Result {
    let (cfg, log) = case_files(name, config);
    let bridge = start_bridge(&cfg, &["imu:=false".into()]);
    let mut args = vec!["--copters", ""];
    args.extend_from_slice(sim_args);
    let _sim = start_emulator(&cfg, &log, &args);
    let measured = Window::measure(node, topic, kind, bridge.0.id());
    // Send times by sim time stamp (the bridge stamps with sim time here).
    let sent = SendLog::read(&log);
    let stream = seq_id.to_string();
    let latencies = measured
        .receipts
        .iter()
        .filter_map(|(stamp, r)| sent.sent_at(&stream, *stamp).map(|s| (r - s) * 1e3))
        .collect();
    measured.result(name, kind, measured.offered(&sent, &stream), latencies)
}

/// A reference publisher (this executable, `--reference-publisher`) and the
/// topic it publishes on.
fn start_reference(kind: Kind, rate: Option<f64>, receive_port: Option<u16>) -> (StoppedOnDrop, String) {
    let k = if kind == Kind::Image { "image" } else { "cloud" };
    let mut args = vec![
        "--reference-publisher".to_string(),
        k.into(),
        rate.map_or("0".into(), |r| r.to_string()),
    ];
    if let Some(port) = receive_port {
        args.extend(["--receive-port".into(), port.to_string()]);
    }
    let publisher = StoppedOnDrop(
        Command::new(std::env::current_exe().unwrap())
            .args(args)
            .envs(publisher_env())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    (publisher, format!("/rflysim_bench/reference_{k}"))
}

/// The reference: a separate r2r process publishing pre-built messages.
fn reference_case(node: &mut r2r::Node, name: &str, kind: Kind, rate: Option<f64>) -> Result {
    let (publisher, topic) = start_reference(kind, rate, None);
    let measured = Window::measure(node, &topic, kind, publisher.0.id());
    let mut row = measured.result(name, kind, rate.unwrap_or(f64::NAN), measured.latencies_from_stamps());
    row.nominal_hz = rate.unwrap_or(f64::NAN);
    row
}

/// The receiving reference: the reference publisher, but each message is
/// published when the emulator's next frame has been received (into one
/// buffer, as a bridge must) on `port`, where the emulator sends sensor
/// `seq_id`'s stream as in [`bridge_case`].
fn receiving_reference_case(
    node: &mut r2r::Node,
    name: &str,
    config: &str,
    (port, seq_id): (u16, u16),
    kind: Kind,
) -> Result {
    let (cfg, log) = case_files(name, config);
    let (publisher, topic) = start_reference(kind, None, Some(port));
    let _sim = start_emulator(&cfg, &log, &["--copters", ""]);
    let measured = Window::measure(node, &topic, kind, publisher.0.id());
    let sent = SendLog::read(&log);
    let stream = seq_id.to_string();
    // Stamped just before publishing, after the frame's last datagram came in:
    // latency from then, not from the emulator's send as for the bridge.
    measured.result(
        name,
        kind,
        measured.offered(&sent, &stream),
        measured.latencies_from_stamps(),
    )
}

/// What any bridge must do before it can publish a UDP frame: take the
/// frame's datagrams out of the kernel, each into its place in one buffer,
/// until the frame's last. A datagram is received over the end of what is
/// already there, so its header covers the 32 bytes before its place; those
/// are put back. False if the socket's read timed out first.
fn receive_frame(sock: &std::net::UdpSocket, frame: &mut [u8]) -> bool {
    // The longer of RflySim's two headers.
    const ROOM: usize = HeaderKind::Frame32.header_len();
    let mut end = ROOM;
    loop {
        let at = end - ROOM;
        let mut covered = [0u8; ROOM];
        covered.copy_from_slice(&frame[at..end]);
        let Ok(n) = sock.recv(&mut frame[at..]) else {
            return false;
        };
        let Ok(header) = DatagramHeader::parse(&frame[at..at + n]) else {
            frame[at..end].copy_from_slice(&covered);
            continue;
        };
        let header_len = header.kind.header_len();
        if header_len != ROOM {
            frame.copy_within(at + header_len..at + n, end);
        }
        frame[at..end].copy_from_slice(&covered);
        end += n - header_len;
        if header.pkg_id + 1 >= header.pkg_num || end + (1 << 16) > frame.len() {
            return true;
        }
    }
}

fn image_1080p() -> Image {
    Image {
        height: 1080,
        width: 1920,
        encoding: "bgr8".into(),
        step: 1920 * 3,
        data: vec![0x7F; 1920 * 1080 * 3],
        ..Default::default()
    }
}

fn cloud_100k() -> PointCloud2 {
    let f = |n: &str, o| PointField {
        name: n.into(),
        offset: o,
        datatype: PointField::FLOAT32 as u8,
        count: 1,
    };
    PointCloud2 {
        height: 1,
        width: 100_000,
        fields: vec![f("x", 0), f("y", 4), f("z", 8), f("seg", 12)],
        point_step: 16,
        row_step: 1_600_000,
        data: vec![0x3F; 1_600_000],
        is_dense: true,
        ..Default::default()
    }
}

fn reference_publisher(kind: &str, rate: f64, receive_port: Option<u16>) {
    // Ends the loop at SIGINT: killed, it would leave its shared-memory segment behind.
    let stop = ros_common::lifecycle::stop_flag_at_signal();
    // The bridge's own receive buffer, so that the kernel drops nothing the bridge would keep.
    let rcvbuf = rflysim_ros::settings::param::RCVBUF_BYTES.default_as();
    let mut receiver = receive_port.map(|port| {
        let (sock, _) = ros_common::net::udp_receiver(std::net::Ipv4Addr::UNSPECIFIED, port, rcvbuf, None).unwrap();
        sock.set_nonblocking(false).unwrap();
        // Short enough to see the stop once the emulator has gone.
        sock.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
        // Room for a 1080p bgr8 frame and its headers.
        (sock, vec![0u8; 8 << 20])
    });
    let ctx = r2r::Context::create().unwrap();
    let mut node = r2r::Node::create(ctx, "rflysim_bench_reference", "").unwrap();
    let qos = ros_common::qos::sensor_publisher(ros_common::qos::DEFAULT_SENSOR_DEPTH);
    let topic = &format!("/rflysim_bench/reference_{kind}");
    let period = (rate > 0.0).then(|| Duration::from_secs_f64(1.0 / rate));
    let mut next = Instant::now();
    let stamp = || ros_common::time::to_ros_time(wall());
    macro_rules! run {
        ($msg:expr, $t:ty) => {{
            let p = node.create_publisher::<$t>(topic, qos).unwrap();
            let mut msg = $msg;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(per) = period {
                    let now = Instant::now();
                    if now < next {
                        std::thread::sleep(next - now);
                    }
                    next += per;
                }
                if let Some((sock, frame)) = receiver.as_mut() {
                    if !receive_frame(sock, frame) {
                        continue;
                    }
                }
                msg.header.stamp = stamp();
                let _ = p.publish(&msg);
                node.spin_once(Duration::ZERO);
            }
        }};
    }
    if kind == "image" {
        run!(image_1080p(), Image)
    } else {
        run!(cloud_100k(), PointCloud2)
    }
}

/// Where the emulator sends the camera's and the LiDAR's datagrams.
const CAMERA_PORT: u16 = 45001;
const LIDAR_PORT: u16 = 45002;

fn camera_config(transport: u16, hz: u16) -> String {
    format!(
        r#"{{"VisionSensors": [{{"SeqID": 1, "TypeID": 1, "DataWidth": 1920, "DataHeight": 1080, "DataCheckFreq": {hz},
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

/// One round: every wanted case in turn, each bridge case followed by its
/// reference, then the paced pairs at the flat-out rates this round found.
fn run_round(ctx: &r2r::Context, only: &str, first_node: usize) -> Vec<Result> {
    // A fresh subscriber node per case: no subscription outlives its case.
    let mut case = first_node;
    let mut fresh = || {
        case += 1;
        r2r::Node::create(ctx.clone(), &format!("rflysim_bench_subscriber{case}"), "").unwrap()
    };
    let image_topic = ("/rflysim/sensor1/img_rgb", 1);
    let cloud_topic = ("/rflysim/sensor2/livox_lidar", 2);
    let wanted = |name: &str| only.is_empty() || only.split(',').any(|w| name.contains(w));
    type Case<'a> = (&'a str, Box<dyn FnOnce(&mut r2r::Node, &str) -> Result + 'a>);
    let cases: Vec<Case> = vec![
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
            "1080p bgr8 shm @ 60 Hz",
            Box::new(|n, name| bridge_case(n, name, &camera_config(0, 60), image_topic, Kind::Image, &[])),
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
    let mut rows = Vec::new();
    for (name, run) in cases {
        if wanted(name) {
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
        if wanted(&name) {
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
        reference_publisher(&args[i + 1], args[i + 2].parse().unwrap_or(0.0), receive_port);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    // LOCALHOST unless asked otherwise: with it rmw_fastrtps builds its own
    // transports (shared memory and loopback UDP) and ignores
    // FASTDDS_BUILTIN_TRANSPORTS, so a UDP-only run (a subscriber as on
    // another host) needs SUBNET.
    if std::env::var_os("ROS_AUTOMATIC_DISCOVERY_RANGE").is_none() {
        std::env::set_var("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    }
    let ctx = r2r::Context::create().unwrap();
    // RFLYSIM_BENCH_CASES=shm runs only the cases whose name contains "shm" (and so on).
    let only = std::env::var("RFLYSIM_BENCH_CASES").unwrap_or_default();
    // One round's ratio moves by ±20 % with the machine (the reference's
    // own CPU per frame does): RFLYSIM_BENCH_ROUNDS=N runs the cases N
    // times in turn and sums the rounds up by their median.
    let rounds = std::env::var("RFLYSIM_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1usize)
        .max(1);
    let mut all_rounds = Vec::new();
    for round in 0..rounds {
        let rows = run_round(&ctx, &only, round * 100);
        if rounds > 1 {
            println!("round {} of {rounds}:", round + 1);
        }
        print_table(&rows);
        all_rounds.push(rows);
    }
    if rounds > 1 {
        print_rounds_summary(&all_rounds);
    }
}

fn print_table(rows: &[Result]) {
    println!(
        "end-to-end: emulator → bridge → native r2r subscriber; {} s windows after {WARMUP} s warm-up",
        window()
    );
    println!(
        "(CPU is the bridge's, or for references the reference publisher's, in % of one core; \
         CPU ms/frame = CPU time per delivered frame)"
    );
    for var in [
        "ROS_AUTOMATIC_DISCOVERY_RANGE",
        "FASTRTPS_DEFAULT_PROFILES_FILE",
        "FASTDDS_BUILTIN_TRANSPORTS",
        "RMW_IMPLEMENTATION",
    ] {
        println!("subscriber {var}={}", std::env::var(var).unwrap_or_default());
    }
    println!("publishers' extra environment: {:?}\n", publisher_env());
    println!(
        "| case | offered fps | delivered fps | kernel UDP drops | latency p50 (ms) | latency p99 (ms) | CPU % | CPU ms/frame |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let offered = if r.offered.is_nan() {
            "flat out".into()
        } else {
            format!("{:.1}", r.offered)
        };
        println!(
            "| {} | {offered} | {:.1} | {} | {:.2} | {:.2} | {} | {} |",
            r.name,
            r.delivered,
            r.kernel_drops,
            r.p50_ms,
            r.p99_ms,
            r.cpu_percent.map_or("–".into(), |c| format!("{c:.0}")),
            r.cpu_percent
                .filter(|_| r.delivered > 0.0)
                .map_or("–".into(), |c| format!("{:.2}", c * 10.0 / r.delivered))
        );
    }
    let ratio = |a: &str, b: &str| {
        let find = |n: &str| rows.iter().find(|r| r.name == n).map(|r| r.delivered);
        match (find(a), find(b)) {
            (Some(x), Some(y)) if y > 0.0 => format!("{:.2}", x / y),
            _ => "–".into(),
        }
    };
    println!("\nflat-out ratios to the reference (delivered fps):");
    println!(
        "  1080p UDP: {}",
        ratio("1080p bgr8 raw UDP, flat out", "reference: 1080p Image, flat out")
    );
    println!(
        "  1080p shared memory: {}",
        ratio("1080p bgr8 shm, flat out", "reference: 1080p Image, flat out")
    );
    println!(
        "  LiDAR 100k: {}",
        ratio(
            "LiDAR 100k points UDP, flat out",
            "reference: 100k PointCloud2, flat out"
        )
    );
    for against in Against::BOTH {
        println!("\nCPU ms/frame over {} at the same rate:", against.title());
        for b in rows {
            if let Some(ratio) = cpu_ratio(rows, b, against) {
                println!("  {}: {ratio:.2}", b.name);
            }
        }
    }
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

fn ms_per_frame(r: &Result) -> Option<f64> {
    r.cpu_percent
        .filter(|_| r.delivered > 0.0)
        .map(|c| c * 10.0 / r.delivered)
}

/// The two references a bridge row is measured against: DDS alone, and
/// (UDP streams at rate) DDS alone after receiving the same frames.
#[derive(Clone, Copy, PartialEq)]
enum Against {
    DdsAlone,
    Receiving,
}

impl Against {
    const BOTH: [Against; 2] = [Against::DdsAlone, Against::Receiving];

    fn title(self) -> &'static str {
        match self {
            Against::DdsAlone => "the reference's",
            Against::Receiving => "the receiving reference's (DDS alone after the same receive)",
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Against::DdsAlone => "reference",
            Against::Receiving => "receiving reference",
        }
    }

    fn is_reference(name: &str) -> bool {
        name.starts_with(Against::DdsAlone.prefix()) || name.starts_with(Against::Receiving.prefix())
    }

    /// The row of `rows` that `bridge` is measured against, if any.
    fn reference<'a>(self, rows: &'a [Result], bridge: &Result) -> Option<&'a Result> {
        // A receiving reference may itself be measured against DDS alone.
        let eligible = match self {
            Against::DdsAlone => !bridge.name.starts_with(Against::DdsAlone.prefix()),
            Against::Receiving => !Against::is_reference(&bridge.name) && bridge.name.contains("UDP"),
        };
        if !eligible {
            return None;
        }
        rows.iter()
            .find(|r| r.name.starts_with(self.prefix()) && r.kind == bridge.kind && r.nominal_hz == bridge.nominal_hz)
    }
}

/// A row's CPU per frame over its round's reference of the same kind at
/// the same rate (none for flat-out rows and for the reference itself).
fn cpu_ratio(rows: &[Result], bridge: &Result, against: Against) -> Option<f64> {
    cpu_per_frame(rows, bridge, against).map(|(b, r)| b / r)
}

/// CPU ms per frame of a row and of the reference it is measured against.
fn cpu_per_frame(rows: &[Result], bridge: &Result, against: Against) -> Option<(f64, f64)> {
    let reference = against.reference(rows, bridge)?;
    Some((ms_per_frame(bridge)?, ms_per_frame(reference).filter(|&m| m > 0.0)?))
}

/// Each bridge case's ratio to either reference in every round, their
/// median and spread, and the ratio of the rounds' mean CPU per frame.
fn print_rounds_summary(rounds: &[Vec<Result>]) {
    for against in Against::BOTH {
        print_rounds_against(rounds, against);
    }
}

fn print_rounds_against(rounds: &[Vec<Result>], against: Against) {
    println!(
        "\nover {} rounds: CPU ms/frame over {} at the same rate",
        rounds.len(),
        against.title()
    );
    println!("| case | ratio per round | median | min-max | mean ms/frame bridge / reference | ratio of means |");
    println!("|---|---|---:|---:|---:|---:|");
    // Paced rows are named by their rate, which differs between rounds.
    let stem = |name: &str| name.split(", paced at").next().unwrap_or(name).to_string();
    let mut stems: Vec<String> = Vec::new();
    for r in rounds.iter().flatten() {
        let s = stem(&r.name);
        if !r.name.starts_with(against.prefix()) && !r.nominal_hz.is_nan() && !stems.contains(&s) {
            stems.push(s);
        }
    }
    for s in stems {
        let paced = if rounds
            .iter()
            .flatten()
            .any(|r| r.name.starts_with(&format!("{s}, paced")))
        {
            ", paced"
        } else {
            ""
        };
        let mut ratios = Vec::new();
        let (mut bridge_ms, mut reference_ms) = (Vec::new(), Vec::new());
        for rows in rounds {
            let Some(b) = rows.iter().find(|r| stem(&r.name) == s && !r.nominal_hz.is_nan()) else {
                continue;
            };
            if let Some((bm, rm)) = cpu_per_frame(rows, b, against) {
                ratios.push(bm / rm);
                bridge_ms.push(bm);
                reference_ms.push(rm);
            }
        }
        if ratios.is_empty() {
            continue;
        }
        let listed: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
        let mut sorted = ratios.clone();
        sorted.sort_by(f64::total_cmp);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        println!(
            "| {s}{paced} | {} | {:.2} | {:.2}-{:.2} | {:.2} / {:.2} | {:.2} |",
            listed.join(", "),
            median(&sorted),
            sorted[0],
            sorted[sorted.len() - 1],
            mean(&bridge_ms),
            mean(&reference_ms),
            mean(&bridge_ms) / mean(&reference_ms)
        );
    }
}
