//! End-to-end benchmark: the built-in RflySim emulator → the bridge → a
//! native r2r subscriber (this process), next to a reference measured in the
//! same run: an r2r program publishing pre-built messages of the same size to
//! the same subscriber (what DDS alone allows here).
//!
//! `scripts/bench.sh` (or: `cargo build --release --workspace --bins &&
//! cargo bench -p rflysim_ros --bench end_to_end`). Prints a table; asserts
//! nothing. `RFLYSIM_BENCH_SECONDS` sets the measuring window (default 6).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bench_support::{cpu_seconds, percentile, udp_rcvbuf_errors, wall, SendLog, StoppedOnDrop};
use r2r::sensor_msgs::msg::{Image, PointCloud2, PointField};

#[allow(dead_code)] // each benchmark uses its part
mod shared;

use shared::{publisher_env, receive, start_bridge, start_emulator, window, Kind, WARMUP};

#[derive(Debug, Default)]
struct Result {
    name: String,
    offered: f64,
    delivered: f64,
    kernel_drops: u64,
    p50_ms: f64,
    p99_ms: f64,
    cpu_percent: Option<f64>,
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
    let dir = shared::run_dir();
    let cfg = dir.join("Config.json");
    std::fs::write(&cfg, config).unwrap();
    let log = dir.join(format!("send_{}.log", name.replace(' ', "_")));
    let bridge = start_bridge(&cfg, &["imu:=false".into()]);
    let mut args = vec!["--copters", ""];
    args.extend_from_slice(sim_args);
    let _sim = start_emulator(&cfg, &log, &args);
    let w = window();
    let t0 = Instant::now();
    let (mut cpu0, mut drops0, mut win_start) = (0.0, 0, 0.0);
    let mut mark = || {
        cpu0 = cpu_seconds(bridge.0.id());
        drops0 = udp_rcvbuf_errors();
        win_start = wall();
    };
    let warm = t0 + Duration::from_secs_f64(WARMUP);
    let topics = [(topic.to_string(), kind)];
    let receipts = receive(node, &topics, warm, warm + Duration::from_secs_f64(w), &mut mark).remove(0);
    let win_end = wall();
    let cpu = (cpu_seconds(bridge.0.id()) - cpu0) / (win_end - win_start) * 100.0;
    let drops = udp_rcvbuf_errors() - drops0;
    // Send times by sim time stamp (the bridge stamps with sim time here).
    let sent = SendLog::read(&log);
    let stream = seq_id.to_string();
    let offered = sent.sent_between(&stream, win_start, win_end) as f64 / (win_end - win_start);
    let in_window: Vec<&(f64, f64)> = receipts
        .iter()
        .filter(|(_, r)| *r >= win_start && *r < win_end)
        .collect();
    let mut lat: Vec<f64> = in_window
        .iter()
        .filter_map(|(stamp, r)| sent.sent_at(&stream, *stamp).map(|s| (r - s) * 1e3))
        .collect();
    lat.sort_by(f64::total_cmp);
    Result {
        name: name.into(),
        offered,
        delivered: in_window.len() as f64 / (win_end - win_start),
        kernel_drops: drops,
        p50_ms: percentile(&lat, 0.5),
        p99_ms: percentile(&lat, 0.99),
        cpu_percent: Some(cpu),
    }
}

/// The reference: a separate r2r process publishing pre-built messages.
fn reference_case(node: &mut r2r::Node, name: &str, kind: Kind, rate: Option<f64>) -> Result {
    let exe = std::env::current_exe().unwrap();
    let k = if kind == Kind::Image { "image" } else { "cloud" };
    let topic = &format!("/rflysim_bench/reference_{k}");
    let publisher = StoppedOnDrop(
        Command::new(exe)
            .args(["--reference-publisher", k, &rate.map_or("0".into(), |r| r.to_string())])
            .envs(publisher_env())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let w = window();
    let t0 = Instant::now();
    let (mut cpu0, mut win_start) = (0.0, 0.0);
    let mut mark = || {
        cpu0 = cpu_seconds(publisher.0.id());
        win_start = wall();
    };
    let warm = t0 + Duration::from_secs_f64(WARMUP);
    let topics = [(topic.to_string(), kind)];
    let receipts = receive(node, &topics, warm, warm + Duration::from_secs_f64(w), &mut mark).remove(0);
    let win_end = wall();
    let cpu = (cpu_seconds(publisher.0.id()) - cpu0) / (win_end - win_start) * 100.0;
    let in_window: Vec<&(f64, f64)> = receipts
        .iter()
        .filter(|(_, r)| *r >= win_start && *r < win_end)
        .collect();
    let mut lat: Vec<f64> = in_window.iter().map(|(s, r)| (r - s) * 1e3).collect();
    lat.sort_by(f64::total_cmp);
    Result {
        name: name.into(),
        offered: rate.unwrap_or(f64::NAN),
        delivered: in_window.len() as f64 / (win_end - win_start),
        kernel_drops: 0,
        p50_ms: percentile(&lat, 0.5),
        p99_ms: percentile(&lat, 0.99),
        cpu_percent: Some(cpu),
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

fn reference_publisher(kind: &str, rate: f64) {
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
            loop {
                if let Some(per) = period {
                    let now = Instant::now();
                    if now < next {
                        std::thread::sleep(next - now);
                    }
                    next += per;
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

fn camera_config(transport: u16, hz: u16) -> String {
    format!(
        r#"{{"VisionSensors": [{{"SeqID": 1, "TypeID": 1, "DataWidth": 1920, "DataHeight": 1080, "DataCheckFreq": {hz},
        "SendProtocol": [{transport}, 127, 0, 0, 1, 45001, 0, 0], "CameraFOV": 90, "SensorAngEular": [0, -0.3, 0]}}]}}"#
    )
}

fn lidar_config(hz: u16) -> String {
    // A Livox-type cone looking straight down: all 500 × 200 rays hit the ground.
    format!(
        r#"{{"VisionSensors": [{{"SeqID": 2, "TypeID": 22, "DataWidth": 500, "DataHeight": 200, "DataCheckFreq": {hz},
        "SendProtocol": [1, 127, 0, 0, 1, 45002, 0, 0], "SensorAngEular": [0, -1.5707963, 0],
        "otherParams": [100, 0, 0, 0, 0, 0, 0, 0]}}]}}"#
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--reference-publisher") {
        reference_publisher(&args[i + 1], args[i + 2].parse().unwrap_or(0.0));
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
    // A fresh subscriber node per case: no subscription outlives its case.
    let mut case = 0;
    let mut fresh = || {
        case += 1;
        r2r::Node::create(ctx.clone(), &format!("rflysim_bench_subscriber{case}"), "").unwrap()
    };
    let image_topic = ("/rflysim/sensor1/img_rgb", 1);
    let cloud_topic = ("/rflysim/sensor2/livox_lidar", 2);
    // RFLYSIM_BENCH_CASES=shm runs only the cases whose name contains "shm" (and so on).
    let only = std::env::var("RFLYSIM_BENCH_CASES").unwrap_or_default();
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
            "LiDAR 100k points UDP @ 20 Hz",
            Box::new(|n, name| bridge_case(n, name, &lidar_config(20), cloud_topic, Kind::Cloud, &[])),
        ),
        (
            "reference: 100k PointCloud2 @ 20 Hz",
            Box::new(|n, name| reference_case(n, name, Kind::Cloud, Some(20.0))),
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
            rows.push(run(&mut fresh(), name));
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
            let row = bridge_case(&mut fresh(), &name, &config, topic, kind, &["--rate", &rate]);
            rows.push(row);
            let name = format!("reference: {reference_name}, paced at {hz:.0} Hz");
            rows.push(reference_case(&mut fresh(), &name, kind, Some(hz)));
        }
    }

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
    for r in &rows {
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
    println!("\nCPU ms/frame over the reference's at the same rate (each bridge row with the reference row after it):");
    for pair in rows.windows(2) {
        let (b, r) = (&pair[0], &pair[1]);
        if b.name.starts_with("reference") || !r.name.starts_with("reference") || r.offered.is_nan() {
            continue;
        }
        if let (Some(bc), Some(rc)) = (b.cpu_percent, r.cpu_percent) {
            if b.delivered > 0.0 && r.delivered > 0.0 && rc > 0.0 {
                println!("  {}: {:.2}", b.name, (bc / b.delivered) / (rc / r.delivered));
            }
        }
    }
}
