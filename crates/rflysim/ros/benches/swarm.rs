//! Swarm benchmark: how the bridge's cost grows with vehicles. For each swarm
//! size N, one emulator process streams N vehicles, each with one 640×480
//! bgr8 camera (raw UDP) at 30 Hz, one 20 000-point LiDAR at 10 Hz and its
//! CopterSim IMU at 200 Hz, into one `bridge` process; this process
//! subscribes natively to all 3·N topics.
//!
//! `scripts/bench.sh` (or: `cargo build --release --workspace --bins &&
//! cargo bench -p rflysim_ros --bench swarm`). `RFLYSIM_SWARM_SIZES` picks
//! the sizes (default "1,4,8,16"), `RFLYSIM_BENCH_SECONDS` the window
//! (default 6 s). Prints tables, the linearity ratio and the knee; asserts
//! nothing.

use std::time::{Duration, Instant};

use futures::{FutureExt, StreamExt};
use r2r::diagnostic_msgs::msg::DiagnosticArray;

use bench_support::{
    cores, cpu_seconds, load_average, percentile, rss_bytes, udp_drops_by_port, udp_rcvbuf_errors, wall, SendLog,
};
use rflysim_proto::request::imu_data_port;
use rflysim_ros::names;

#[allow(dead_code)] // each benchmark uses its part
mod shared;

use shared::{published_hz, receive, start_bridge, start_emulator, window, Kind, WARMUP};

const CAMERA_HZ: f64 = 30.0;
const LIDAR_HZ: f64 = 10.0;
const IMU_HZ: f64 = 200.0;
/// A stream is delivered when this share of what was offered arrived.
const DELIVERED: f64 = 0.95;
/// A stream starves when it gets less than this share while others of its kind are delivered.
const STARVED: f64 = 0.5;
/// Linear growth: CPU per vehicle at most this many times that of the smallest swarm.
const LINEAR: f64 = 1.2;
/// The project's p99 latency target for a 1080p image (a 640×480 one is smaller).
const P99_TARGET_MS: f64 = 10.0;

/// Sensor SeqIDs of vehicle `v` (1-based): its camera and its LiDAR.
fn seq_ids(v: u16) -> (u16, u16) {
    (2 * v - 1, 2 * v)
}

/// A sensor's UDP port: 9999 + SeqID, RflySim's default, written out.
fn port_of(seq_id: u16) -> u16 {
    9999 + seq_id
}

/// A Config.json for `n` vehicles: unique SeqIDs and ports (`port_of`).
fn swarm_config(n: u16) -> String {
    let sensors: Vec<String> = (1..=n)
        .flat_map(|v| {
            let (camera, lidar) = seq_ids(v);
            [
                format!(
                    r#"{{"SeqID": {camera}, "TypeID": 1, "TargetCopter": {v}, "DataWidth": 640, "DataHeight": 480,
        "DataCheckFreq": {CAMERA_HZ}, "SendProtocol": [2, 127, 0, 0, 1, {}, 0, 0], "CameraFOV": 90,
        "SensorAngEular": [0, -0.3, 0]}}"#,
                    port_of(camera)
                ),
                // A Livox-type cone looking straight down: all 200 × 100 rays hit the ground.
                format!(
                    r#"{{"SeqID": {lidar}, "TypeID": 22, "TargetCopter": {v}, "DataWidth": 200, "DataHeight": 100,
        "DataCheckFreq": {LIDAR_HZ}, "SendProtocol": [1, 127, 0, 0, 1, {}, 0, 0],
        "SensorAngEular": [0, -1.5707963, 0], "otherParams": [100, 0, 0, 0, 0, 0, 0, 0]}}"#,
                    port_of(lidar)
                ),
            ]
        })
        .collect();
    format!("{{\"VisionSensors\": [\n{}\n]}}", sensors.join(",\n"))
}

/// One stream of the swarm: its send-log name, its topic and kind, the
/// bridge's UDP port it arrives on, and the start of its `/diagnostics` status name.
struct Stream {
    logged_as: String,
    diagnosed_as: String,
    topic: String,
    kind: Kind,
    port: u16,
}

fn streams(n: u16) -> Vec<Stream> {
    let absolute = |t: String| format!("/{t}");
    let sensor = |seq_id: u16, topic: &str, kind| Stream {
        logged_as: seq_id.to_string(),
        diagnosed_as: names::diagnostics_id(&format!("sensor{seq_id}"), "").name,
        topic: absolute(names::sensor_topic(seq_id, topic)),
        kind,
        port: port_of(seq_id),
    };
    (1..=n)
        .flat_map(|v| {
            let (camera, lidar) = seq_ids(v);
            [
                sensor(camera, "img_rgb", Kind::Image),
                sensor(lidar, "livox_lidar", Kind::Cloud),
                Stream {
                    logged_as: format!("imu{v}"),
                    diagnosed_as: names::diagnostics_id(&format!("uav{v}"), "imu").name,
                    topic: absolute(names::imu_topic(v, n > 1)),
                    kind: Kind::Imu,
                    port: imu_data_port(v),
                },
            ]
        })
        .collect()
}

/// One stream over the window.
struct StreamFigures {
    kind: Kind,
    topic: String,
    offered_hz: f64,
    /// What the bridge's `/diagnostics` says it published (NaN: no two reports in the window).
    published_hz: f64,
    delivered_hz: f64,
    /// Send → receipt, milliseconds, ascending.
    latencies_ms: Vec<f64>,
    /// Datagrams the kernel dropped at the bridge's socket.
    kernel_drops: u64,
}

impl StreamFigures {
    fn delivered_share(&self) -> f64 {
        if self.offered_hz > 0.0 {
            self.delivered_hz / self.offered_hz
        } else {
            0.0
        }
    }
}

/// One swarm size over the window.
struct SwarmFigures {
    vehicles: u16,
    streams: Vec<StreamFigures>,
    bridge_cpu_percent: f64,
    bridge_rss_bytes: u64,
    emulator_cpu_percent: f64,
    subscriber_cpu_percent: f64,
    kernel_udp_drops: u64,
    load_before: f64,
}

impl SwarmFigures {
    fn of_kind(&self, kind: Kind) -> impl Iterator<Item = &StreamFigures> {
        self.streams.iter().filter(move |s| s.kind == kind)
    }

    fn kernel_drops_of(&self, kind: Kind) -> u64 {
        self.of_kind(kind).map(|s| s.kernel_drops).sum()
    }

    fn cpu_per_vehicle(&self) -> f64 {
        self.bridge_cpu_percent / f64::from(self.vehicles)
    }

    fn undelivered(&self) -> Vec<&StreamFigures> {
        self.streams
            .iter()
            .filter(|s| s.delivered_share() < DELIVERED)
            .collect()
    }

    /// Streams far below what others of their kind got: one starving the other.
    fn starved(&self) -> Vec<&StreamFigures> {
        self.streams
            .iter()
            .filter(|s| s.delivered_share() < STARVED && self.of_kind(s.kind).any(|o| o.delivered_share() >= DELIVERED))
            .collect()
    }

    /// p99 latency of all streams of `kind` together, ms.
    fn p99_ms(&self, kind: Kind) -> f64 {
        let mut all: Vec<f64> = self
            .of_kind(kind)
            .flat_map(|s| s.latencies_ms.iter().copied())
            .collect();
        all.sort_by(f64::total_cmp);
        percentile(&all, 0.99)
    }
}

fn measure(n: u16, node: &mut r2r::Node) -> SwarmFigures {
    let dir = shared::run_dir();
    let config = dir.join(format!("Config_swarm{n}.json"));
    std::fs::write(&config, swarm_config(n)).expect("config written");
    let log = dir.join(format!("send_swarm{n}.log"));
    let ids: Vec<String> = (1..=n).map(|v| v.to_string()).collect();
    let load_before = load_average();
    // Reports every 3 s: r2r's subscription channel holds 10, drained after the run.
    let bridge = start_bridge(
        &config,
        &[
            format!("vehicle_ids:=[{}]", ids.join(",")),
            "diagnostics_period_s:=3.0".into(),
        ],
    );
    let mut diagnostics = node
        .subscribe::<DiagnosticArray>("/diagnostics", r2r::QosProfile::default().keep_last(10).reliable())
        .expect("diagnostics subscription");
    let sim = start_emulator(&config, &log, &["--copters", &ids.join(",")]);
    let streams = streams(n);
    let topics: Vec<(String, Kind)> = streams.iter().map(|s| (s.topic.clone(), s.kind)).collect();
    // Discovery of 3·N topics takes longer the larger the swarm.
    let warmup = WARMUP.max(2.0 + 0.3 * f64::from(n));
    let me = std::process::id();
    let (mut bridge0, mut sim0, mut me0, mut drops0, mut start) = (0.0, 0.0, 0.0, 0, 0.0);
    let mut port_drops0 = Default::default();
    let mut window_opens = || {
        (bridge0, sim0, me0) = (cpu_seconds(bridge.id()), cpu_seconds(sim.id()), cpu_seconds(me));
        drops0 = udp_rcvbuf_errors();
        port_drops0 = udp_drops_by_port();
        start = wall();
    };
    let opens = Instant::now() + Duration::from_secs_f64(warmup);
    let receipts = receive(
        node,
        &topics,
        opens,
        opens + Duration::from_secs_f64(window()),
        &mut window_opens,
    );
    let end = wall();
    let percent = |pid, before| (cpu_seconds(pid) - before) / (end - start) * 100.0;
    let (bridge_cpu_percent, emulator_cpu_percent) = (percent(bridge.id(), bridge0), percent(sim.id(), sim0));
    let subscriber_cpu_percent = percent(me, me0);
    let bridge_rss_bytes = rss_bytes(bridge.id());
    let kernel_udp_drops = udp_rcvbuf_errors() - drops0;
    let port_drops = udp_drops_by_port();
    let dropped_at = |port| {
        port_drops
            .get(&port)
            .unwrap_or(&0)
            .saturating_sub(*port_drops0.get(&port).unwrap_or(&0))
    };
    drop((sim, bridge));
    let mut reports = Vec::new();
    while let Some(Some(a)) = diagnostics.next().now_or_never() {
        let at = f64::from(a.header.stamp.sec) + f64::from(a.header.stamp.nanosec) * 1e-9;
        if (start..end).contains(&at) {
            reports.push((at, a));
        }
    }
    let sent = SendLog::read(&log);
    let streams = streams
        .iter()
        .zip(receipts)
        .map(|(s, got)| {
            let in_window: Vec<(f64, f64)> = got.into_iter().filter(|(_, at)| (start..end).contains(at)).collect();
            let mut latencies_ms: Vec<f64> = in_window
                .iter()
                .filter_map(|(stamp, at)| sent.sent_at(&s.logged_as, *stamp).map(|left| (at - left) * 1e3))
                .collect();
            latencies_ms.sort_by(f64::total_cmp);
            StreamFigures {
                kind: s.kind,
                topic: s.topic.clone(),
                offered_hz: sent.sent_between(&s.logged_as, start, end) as f64 / (end - start),
                published_hz: published_hz(&reports, &s.diagnosed_as),
                delivered_hz: in_window.len() as f64 / (end - start),
                latencies_ms,
                kernel_drops: dropped_at(s.port),
            }
        })
        .collect();
    SwarmFigures {
        vehicles: n,
        streams,
        bridge_cpu_percent,
        bridge_rss_bytes,
        emulator_cpu_percent,
        subscriber_cpu_percent,
        kernel_udp_drops,
        load_before,
    }
}

/// "offered / published by the bridge / delivered (worst delivered)" per stream of `kind`, in Hz.
fn rates(f: &SwarmFigures, kind: Kind) -> String {
    let of: Vec<&StreamFigures> = f.of_kind(kind).collect();
    let mean = |g: fn(&StreamFigures) -> f64| of.iter().map(|s| g(s)).sum::<f64>() / of.len().max(1) as f64;
    let worst = of.iter().map(|s| s.delivered_hz).fold(f64::INFINITY, f64::min);
    format!(
        "{:.1} / {:.1} / {:.1} ({:.1})",
        mean(|s| s.offered_hz),
        mean(|s| s.published_hz),
        mean(|s| s.delivered_hz),
        worst
    )
}

/// Up to 64 vehicles: beyond 450 CopterSim's request ports (30100 + 2·(id − 1))
/// would run into its IMU data ports (31000 + id − 1), and 64 is far past this machine.
const MAX_VEHICLES: u16 = 64;

/// `RFLYSIM_SWARM_SIZES`, ascending: the smallest swarm is the reference of the growth.
fn sizes() -> Vec<u16> {
    let text = std::env::var("RFLYSIM_SWARM_SIZES").unwrap_or_else(|_| "1,4,8,16".into());
    let mut sizes: Vec<u16> = text
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .filter(|n| (1..=MAX_VEHICLES).contains(n))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    assert!(
        !sizes.is_empty(),
        "RFLYSIM_SWARM_SIZES={text:?}: no swarm size in 1..={MAX_VEHICLES}"
    );
    sizes
}

const MB: f64 = 1024.0 * 1024.0;

fn print_report(all: &[SwarmFigures]) {
    println!(
        "swarm: rflysim_sim (N vehicles: 640×480 bgr8 raw UDP @ {CAMERA_HZ} Hz, 20k-point LiDAR @ {LIDAR_HZ} Hz, \
         IMU @ {IMU_HZ} Hz) → one bridge → native r2r subscriber of all 3·N topics; {} s windows; {} cores",
        window(),
        cores()
    );
    for var in [
        "FASTRTPS_DEFAULT_PROFILES_FILE",
        "RMW_IMPLEMENTATION",
        "RFLYSIM_BENCH_SUBSCRIBER_DEPTH",
    ] {
        println!("subscriber {var}={}", std::env::var(var).unwrap_or_default());
    }
    println!("\nRates per stream in Hz: offered / published by the bridge (its /diagnostics) / delivered here, mean over the kind's streams (worst delivered).\n");
    println!("Kernel UDP drops: machine-wide, and at the bridge's camera / LiDAR / IMU sockets.\n");
    println!("| vehicles | camera | LiDAR | IMU | p99 camera (ms) | p99 LiDAR (ms) | p99 IMU (ms) | kernel UDP drops | at camera / LiDAR / IMU | streams < {:.0} % | starved |", DELIVERED * 100.0);
    println!("|---:|---|---|---|---:|---:|---:|---:|---|---:|---|");
    for f in all {
        let starved: Vec<&str> = f.starved().iter().map(|s| s.topic.as_str()).collect();
        println!(
            "| {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {} | {} / {} / {} | {} of {} | {} |",
            f.vehicles,
            rates(f, Kind::Image),
            rates(f, Kind::Cloud),
            rates(f, Kind::Imu),
            f.p99_ms(Kind::Image),
            f.p99_ms(Kind::Cloud),
            f.p99_ms(Kind::Imu),
            f.kernel_udp_drops,
            f.kernel_drops_of(Kind::Image),
            f.kernel_drops_of(Kind::Cloud),
            f.kernel_drops_of(Kind::Imu),
            f.undelivered().len(),
            f.streams.len(),
            if starved.is_empty() {
                "none".into()
            } else {
                starved.join(" ")
            }
        );
    }
    println!("\nCPU in % of one core over the window (user + system); RSS at the window's end.\n");
    println!("(\"added vehicle\": the growth over the smallest swarm per vehicle added, without the process's fixed share)\n");
    println!(
        "| vehicles | bridge CPU % | per vehicle | per added vehicle | bridge RSS (MB) | per vehicle | per added vehicle | emulator CPU % | subscriber CPU % | load before |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let smallest = &all[0];
    for f in all {
        let rss = f.bridge_rss_bytes as f64 / MB;
        let added = f64::from(f.vehicles - smallest.vehicles);
        let per_added = |grown: f64| {
            if added > 0.0 {
                format!("{:.1}", grown / added)
            } else {
                "–".into()
            }
        };
        println!(
            "| {} | {:.0} | {:.1} | {} | {:.0} | {:.1} | {} | {:.0} | {:.0} | {:.2} |",
            f.vehicles,
            f.bridge_cpu_percent,
            f.cpu_per_vehicle(),
            per_added(f.bridge_cpu_percent - smallest.bridge_cpu_percent),
            rss,
            rss / f64::from(f.vehicles),
            per_added((f.bridge_rss_bytes as f64 - smallest.bridge_rss_bytes as f64) / MB),
            f.emulator_cpu_percent,
            f.subscriber_cpu_percent,
            f.load_before
        );
    }
    for f in all {
        for s in f.undelivered() {
            println!(
                "N={}: {} offered {:.1} Hz, published {:.1} Hz, delivered {:.1} Hz",
                f.vehicles, s.topic, s.offered_hz, s.published_hz, s.delivered_hz
            );
        }
    }
    let (Some(first), Some(last)) = (all.first(), all.last()) else {
        return;
    };
    println!(
        "\nlinearity: CPU per vehicle at {} / at {} = {:.2} (target ≤ {LINEAR})",
        last.vehicles,
        first.vehicles,
        last.cpu_per_vehicle() / first.cpu_per_vehicle()
    );
    if !last.undelivered().is_empty() {
        println!(
            "  (not every stream was delivered at {}: the bridge did less work than offered there)",
            last.vehicles
        );
    }
    print_knee(all, first);
}

/// The knees: the first size where a kind's p99 latency passes the target,
/// where a stream is not delivered, and where CPU per vehicle grows beyond
/// linear; with what the machine was busy with there.
fn print_knee(all: &[SwarmFigures], first: &SwarmFigures) {
    let kinds = [(Kind::Image, "camera"), (Kind::Cloud, "LiDAR"), (Kind::Imu, "IMU")];
    let knee = |name: &str, why: &dyn Fn(&SwarmFigures) -> Option<String>| {
        match all.iter().find_map(|f| why(f).map(|w| (f, w))) {
        Some((f, w)) => println!(
            "{name} knee: at {} vehicles ({w}); bridge {:.0} % + emulator {:.0} % + subscriber {:.0} % of the {} % the machine has; load before {:.2}",
            f.vehicles,
            f.bridge_cpu_percent,
            f.emulator_cpu_percent,
            f.subscriber_cpu_percent,
            cores() * 100,
            f.load_before
        ),
        None => println!("{name} knee: none up to {} vehicles", all.last().map_or(0, |f| f.vehicles)),
    }
    };
    knee("latency", &|f| {
        let over: Vec<String> = kinds
            .iter()
            .filter(|(k, _)| f.p99_ms(*k) > P99_TARGET_MS)
            .map(|(k, name)| format!("{name} p99 {:.1} ms", f.p99_ms(*k)))
            .collect();
        (!over.is_empty()).then(|| format!("{} > {P99_TARGET_MS} ms", over.join(", ")))
    });
    knee("delivery", &|f| {
        let n = f.undelivered().len();
        (n > 0).then(|| {
            format!(
                "{n} of {} streams below {:.0} % delivered",
                f.streams.len(),
                DELIVERED * 100.0
            )
        })
    });
    knee("linearity", &|f| {
        (f.cpu_per_vehicle() > LINEAR * first.cpu_per_vehicle()).then(|| {
            format!(
                "CPU per vehicle {:.1} % vs {:.1} % at {}",
                f.cpu_per_vehicle(),
                first.cpu_per_vehicle(),
                first.vehicles
            )
        })
    });
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    std::env::set_var("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    let ctx = r2r::Context::create().expect("ROS context");
    let mut all = Vec::new();
    for n in sizes() {
        // A fresh subscriber node per size: no subscription outlives its run.
        let mut node = r2r::Node::create(ctx.clone(), &format!("rflysim_swarm_subscriber{n}"), "").expect("node");
        all.push(measure(n, &mut node));
    }
    print_report(&all);
}
