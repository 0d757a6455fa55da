//! End-to-end benchmark of AeroSim over Kafka: `aerosim_sim` → broker
//! (tansu) → republisher → a native r2r subscriber (this process) of the
//! actor's odometry, its flight display and the camera, at AeroSim's rates
//! (vehicle state 100 Hz, flight display 20 Hz, a 1280×720 JPEG at 30 Hz).
//! The republisher is `aerosim_bridge`, or in the same run the Python
//! reference (`aerosim_python_reference.py`: confluent-kafka, `json`, rclpy
//! publishers of the same messages: what AeroSim's users write today), or
//! no Kafka at all: "DDS alone", this executable publishing pre-built
//! messages of the same sizes at the same rates, the floor no bridge can beat.
//! The bridge runs twice: with its fetch wait growing while idle (its
//! default) and held at `fetch_wait_ms` ("fixed wait"); the "idle" cases
//! run each with no emulator, for the CPU the fetches cost on their own.
//! The "receive floor" (`receive_floor.rs`) is the bridge's Kafka reading
//! and decoding publishing nothing: with DDS alone, the least a bridge can
//! spend.
//! Each publishes what the bridge publishes for this subscriber: the three
//! topics, TF and `/clock`.
//!
//! Every republisher stamps with AeroSim's simulation time (the bridge with
//! `use_sim_time:=true`; the emulator gives images that time too, with
//! `--stamp-images`), so a receipt is matched exactly to the emulator's
//! `--send-log` line: latency is from just before the producer's send to
//! receipt here. CPU: the republisher's user + system time.
//!
//! `cargo build --release --workspace --bins && cargo bench -p aerosim_ros
//! --bench aerosim_end_to_end`. Prints a table; asserts nothing.
//! `AEROSIM_BENCH_SECONDS` sets the window (default 10 s, after 3 s of
//! warm-up); `AEROSIM_BENCH_CASES=dds,bridge` runs the cases whose name
//! contains a word; `AEROSIM_BENCH_ROUNDS=N` runs them N times in turn;
//! `AEROSIM_BENCH_FETCH_WAIT_MS` sets the bridge's `fetch_wait_ms`.
//! Needs the broker (`AEROSIM_BROKER_BIN`, set by `.cache/env.sh`).

mod receive_floor;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aerosim_link::broker::Broker;
use bench_support::{
    cores, cpu_seconds, loadavg_line, release_bin_dir, start_python_reference, wall, BenchRole, SendLog, StoppedOnDrop,
    StreamResult, Subscriptions,
};
use futures::StreamExt;
use r2r::nav_msgs::msg::Odometry;
use r2r::rflysim_bridge::msg::FlightDisplay;
use r2r::rosgraph_msgs::msg::Clock;
use r2r::sensor_msgs::msg::CompressedImage;
use r2r::tf2_msgs::msg::TFMessage;
use r2r::QosProfile;

const WARMUP_S: f64 = 3.0;
/// Records sent this close to the end of the window may still be in flight.
const TAIL_S: f64 = 0.5;
const ACTOR: &str = "actor1";
/// (stream in the send log, topic under the namespace, rate in Hz)
const STREAMS: [(&str, &str, f64); 3] = [
    ("state:actor1", "actor1/odom", 100.0),
    ("display:actor1", "actor1/flight_display", 20.0),
    ("camera", "camera/image_raw/compressed", 30.0),
];
const CAMERA: (u32, u32) = (1280, 720);

fn window() -> f64 {
    bench_support::seconds_from_env("AEROSIM_BENCH_SECONDS", 10.0)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Republisher {
    /// The bridge with its fetch wait growing while idle (its default), or
    /// held at `fetch_wait_ms` (`fixed_wait`).
    Bridge {
        fixed_wait: bool,
    },
    Python,
    DdsAlone,
    ReceiveFloor,
}

/// `fetch_wait_max_ms` at 0: the wait never grows.
const FIXED_WAIT: &str = "fetch_wait_max_ms:=0";

/// The bridge's `fetch_wait_ms` from `AEROSIM_BENCH_FETCH_WAIT_MS`, when set:
/// what a longer short wait saves and costs.
fn fetch_wait_arg() -> Option<String> {
    let ms: u32 = std::env::var("AEROSIM_BENCH_FETCH_WAIT_MS").ok()?.parse().ok()?;
    Some(format!("fetch_wait_ms:={ms}"))
}

#[derive(Debug, Clone, Copy)]
struct Receipt {
    stream: usize,
    stamp: f64,
    at: f64,
}

fn subscribe(node: &mut r2r::Node, namespace: &str) -> Subscriptions<Receipt> {
    let qos = QosProfile::default().keep_last(10).best_effort();
    let topic = |i: usize| format!("{namespace}/{}", STREAMS[i].1);
    let receipt = move |stream: usize| {
        move |sec: i32, nanosec: u32| Receipt {
            stream,
            stamp: f64::from(sec) + f64::from(nanosec) * 1e-9,
            at: wall(),
        }
    };
    let (r0, r1, r2) = (receipt(0), receipt(1), receipt(2));
    Subscriptions(vec![
        Box::new(
            node.subscribe_native::<Odometry>(&topic(0), qos.clone())
                .unwrap()
                .map(move |m| r0(m.header.stamp.sec, m.header.stamp.nanosec)),
        ),
        Box::new(
            node.subscribe_native::<FlightDisplay>(&topic(1), qos.clone())
                .unwrap()
                .map(move |m| r1(m.header.stamp.sec, m.header.stamp.nanosec)),
        ),
        Box::new(
            node.subscribe_native::<CompressedImage>(&topic(2), qos)
                .unwrap()
                .map(move |m| r2(m.header.stamp.sec, m.header.stamp.nanosec)),
        ),
    ])
}

fn start_sim(bootstrap: &str, log: &Path) -> StoppedOnDrop {
    let (w, h) = CAMERA;
    StoppedOnDrop(
        Command::new(release_bin_dir().join("aerosim_sim"))
            .args(["--bootstrap-servers", bootstrap, "--actors", ACTOR])
            .args(["--state-rate", &STREAMS[0].2.to_string()])
            .args(["--display-rate", &STREAMS[1].2.to_string()])
            .args(["--camera-rate", &STREAMS[2].2.to_string()])
            .args(["--camera-width", &w.to_string(), "--camera-height", &h.to_string()])
            .args(["--reuse-frames", "--stamp-images", "--stats", "0", "--send-log"])
            .arg(log)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("aerosim_sim (build it: cargo build --release --workspace --bins)"),
    )
}

/// The bridge's parameters in this benchmark.
fn bridge_parameters(bootstrap: &str, fixed_wait: bool) -> Vec<String> {
    let (host, port) = bootstrap.rsplit_once(':').expect("the broker's address is host:port");
    let mut p = vec![
        format!("sim_host:={host}"),
        format!("sim_port:={port}"),
        "use_sim_time:=true".into(),
    ];
    p.extend(fixed_wait.then(|| FIXED_WAIT.to_string()));
    p.extend(fetch_wait_arg());
    p
}

fn start_republisher(r: Republisher, bootstrap: &str, namespace: &str, log: &Path) -> StoppedOnDrop {
    match r {
        Republisher::Bridge { fixed_wait } => StoppedOnDrop(
            Command::new(release_bin_dir().join("aerosim_bridge"))
                .args(["--ros-args", "-r", &format!("__ns:={namespace}")])
                .args(bridge_parameters(bootstrap, fixed_wait).iter().flat_map(|p| ["-p", p]))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("aerosim_bridge (build it: cargo build --release --workspace --bins)"),
        ),
        Republisher::ReceiveFloor => receive_floor::start(&bridge_parameters(bootstrap, false)),
        Republisher::Python => {
            let script =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/aerosim_end_to_end/aerosim_python_reference.py");
            start_python_reference(&script, &[bootstrap, ACTOR], namespace)
        }
        Republisher::DdsAlone => bench_support::start_dds_alone(namespace, log),
    }
}

#[derive(Debug)]
struct CaseResult {
    name: &'static str,
    streams: Vec<StreamResult>,
    cpu_percent: f64,
    broker_cpu_percent: f64,
    /// Republisher CPU per delivered message, µs.
    cpu_per_message_us: f64,
}

fn run_case(ctx: &r2r::Context, index: usize, name: &'static str, r: Republisher, broker: &Broker) -> CaseResult {
    let dir = std::env::temp_dir().join(format!("aerosim_bench_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log: PathBuf = dir.join(format!("send_{index}.log"));
    let _ = std::fs::remove_file(&log);
    let namespace = format!("/aerosim_bench{index}");
    let mut node = r2r::Node::create(ctx.clone(), &format!("aerosim_bench_subscriber{index}"), "").unwrap();
    let mut subs = subscribe(&mut node, &namespace);
    let republisher = start_republisher(r, &broker.bootstrap(), &namespace, &log);
    let sim = (r != Republisher::DdsAlone).then(|| {
        // The republisher reads from the end of each topic: it is there first.
        std::thread::sleep(Duration::from_secs(2));
        start_sim(&broker.bootstrap(), &log)
    });
    let mut receipts = Vec::with_capacity(1 << 16);
    let mut spin = |until: Instant, out: &mut Vec<Receipt>| {
        while Instant::now() < until {
            node.spin_once(Duration::from_millis(2));
            subs.drain(out);
        }
    };
    spin(Instant::now() + Duration::from_secs_f64(WARMUP_S), &mut Vec::new());
    let (cpu0, broker_cpu0, start) = (cpu_seconds(republisher.id()), cpu_seconds(broker.pid()), wall());
    spin(Instant::now() + Duration::from_secs_f64(window()), &mut receipts);
    let end = wall();
    let cpu_s = cpu_seconds(republisher.id()) - cpu0;
    let broker_cpu_s = cpu_seconds(broker.pid()) - broker_cpu0;
    drop(sim);
    drop(republisher);
    let sent = SendLog::read(&log);
    let mut streams: Vec<StreamResult> = Vec::new();
    let (mut delivered_messages, mut sent_messages) = (0, 0);
    for (i, (stream, _, _)) in STREAMS.iter().enumerate() {
        let mut seen: HashMap<i64, f64> = HashMap::new();
        for x in receipts.iter().filter(|x| x.stream == i) {
            if let Some(left) = sent.sent_at(stream, x.stamp) {
                if left >= start && left < end - TAIL_S {
                    seen.entry((x.stamp * 1e6).round() as i64)
                        .or_insert((x.at - left) * 1e3);
                }
            }
        }
        delivered_messages += seen.len();
        let sent_in_window = sent.sent_between(stream, start, end - TAIL_S);
        sent_messages += sent_in_window;
        streams.push(StreamResult::summarise(
            sent_in_window,
            seen.into_values().collect(),
            end - TAIL_S - start,
        ));
    }
    CaseResult {
        name,
        streams,
        cpu_percent: cpu_s / (end - start) * 100.0,
        broker_cpu_percent: if r == Republisher::DdsAlone {
            0.0
        } else {
            broker_cpu_s / (end - start) * 100.0
        },
        // The receive floor publishes nothing: its CPU is per message sent.
        cpu_per_message_us: cpu_s
            / if r == Republisher::ReceiveFloor {
                sent_messages
            } else {
                delivered_messages
            }
            .max(1) as f64
            * 1e6,
    }
}

/// Stream `i` of [`STREAMS`]: `message`, restamped, on `publisher`.
fn paced<'a, T: r2r::WrappedTypesupport + 'static>(
    i: usize,
    publisher: &'a r2r::Publisher<T>,
    message: &'a mut T,
    header: fn(&mut T) -> &mut r2r::std_msgs::msg::Header,
) -> bench_support::PacedStream<'a> {
    bench_support::PacedStream {
        name: STREAMS[i].0,
        hz: STREAMS[i].2,
        publish: Box::new(move |t| {
            let (sec, nanosec) = bench_support::ros_time(t);
            header(message).stamp = r2r::builtin_interfaces::msg::Time { sec, nanosec };
            publisher.publish(message).is_ok()
        }),
    }
}

/// What the bridge publishes besides the three topics taken here, with no
/// subscriber: TF and `/clock`, each at the vehicle state's rate.
const UNTAKEN: [&str; 2] = ["tf", "clock"];

/// DDS alone: pre-built messages of the bridge's sizes at AeroSim's rates
/// (the three taken here and [`UNTAKEN`]), stamped with their publish time
/// and logged as the emulator logs its records.
fn dds_alone(namespace: &str, log: &Path) {
    let ctx = r2r::Context::create().unwrap();
    let mut node = r2r::Node::create(ctx, "aerosim_bench_dds_alone", namespace).unwrap();
    let qos = ros_common::qos::sensor_publisher(ros_common::qos::DEFAULT_SENSOR_DEPTH);
    let odom_pub = node.create_publisher::<Odometry>(STREAMS[0].1, qos.clone()).unwrap();
    let display_pub = node
        .create_publisher::<FlightDisplay>(STREAMS[1].1, qos.clone())
        .unwrap();
    let image_pub = node.create_publisher::<CompressedImage>(STREAMS[2].1, qos).unwrap();
    let tf_pub = node
        .create_publisher::<TFMessage>("/tf", ros_common::qos::tf())
        .unwrap();
    let clock_pub = node
        .create_publisher::<Clock>("/clock", QosProfile::default().keep_last(1).reliable())
        .unwrap();
    let (w, h) = CAMERA;
    let jpeg = aerosim_sim::render::jpeg(&aerosim_sim::render::horizon(w, h, 0.1, 0.05, 90.0), w, h, 80).unwrap();
    let mut odom = Odometry::default();
    odom.header.frame_id = "aerosim/map".into();
    odom.child_frame_id = format!("aerosim/{ACTOR}/base_link");
    let mut display = FlightDisplay::default();
    display.header.frame_id = format!("aerosim/{ACTOR}/base_link");
    let mut image = CompressedImage {
        format: "jpeg".into(),
        data: jpeg,
        ..Default::default()
    };
    image.header.frame_id = format!("aerosim/{ACTOR}/camera_optical");
    let mut tf = ros_common::tf::odometry_tf(&odom);
    let mut clock = Clock::default();
    let stop = ros_common::lifecycle::stop_flag_at_signal();
    let mut streams = [
        paced(0, &odom_pub, &mut odom, |m| &mut m.header),
        paced(1, &display_pub, &mut display, |m| &mut m.header),
        paced(2, &image_pub, &mut image, |m| &mut m.header),
        bench_support::PacedStream {
            name: UNTAKEN[0],
            hz: STREAMS[0].2,
            publish: Box::new(|t| {
                let (sec, nanosec) = bench_support::ros_time(t);
                tf.transforms[0].header.stamp = r2r::builtin_interfaces::msg::Time { sec, nanosec };
                tf_pub.publish(&tf).is_ok()
            }),
        },
        bench_support::PacedStream {
            name: UNTAKEN[1],
            hz: STREAMS[0].2,
            publish: Box::new(|t| {
                let (sec, nanosec) = bench_support::ros_time(t);
                clock.clock = r2r::builtin_interfaces::msg::Time { sec, nanosec };
                clock_pub.publish(&clock).is_ok()
            }),
        },
    ];
    let log_text = bench_support::publish_paced(&mut streams, || stop.load(std::sync::atomic::Ordering::Relaxed));
    std::fs::write(log, log_text).unwrap();
}

const IDLE: &str = "idle aerosim_bridge";
const IDLE_FIXED: &str = "idle aerosim_bridge, fixed wait";

/// CPU milliseconds a second of the bridge and of the broker with no record
/// flowing (no emulator): what the fetches cost on their own.
fn idle_cpu(index: usize, fixed_wait: bool) -> (f64, f64) {
    let broker = Broker::start_on_free_port().expect("the broker (AEROSIM_BROKER_BIN; scripts/setup.sh builds it)");
    let namespace = format!("/aerosim_bench{index}");
    let bridge = start_republisher(
        Republisher::Bridge { fixed_wait },
        &broker.bootstrap(),
        &namespace,
        Path::new("/dev/null"),
    );
    std::thread::sleep(Duration::from_secs_f64(WARMUP_S));
    let (cpu0, broker_cpu0, start) = (cpu_seconds(bridge.id()), cpu_seconds(broker.pid()), wall());
    std::thread::sleep(Duration::from_secs_f64(window()));
    let seconds = wall() - start;
    (
        (cpu_seconds(bridge.id()) - cpu0) / seconds * 1e3,
        (cpu_seconds(broker.pid()) - broker_cpu0) / seconds * 1e3,
    )
}

fn print_idle(idle: &[(&str, (f64, f64))]) {
    for (name, (bridge_ms, broker_ms)) in idle {
        println!("{name:30} no record: bridge {bridge_ms:5.1} ms of CPU a second, broker {broker_ms:5.1}");
    }
}

/// The case every ratio is taken over.
const DDS_ALONE: &str = "DDS alone (no Kafka)";
const RECEIVE_FLOOR: &str = "receive floor (no publish)";

fn floor_of(results: &[CaseResult]) -> Option<&CaseResult> {
    results.iter().find(|r| r.name == DDS_ALONE)
}

fn print(results: &[CaseResult]) {
    let floor = floor_of(results);
    println!(
        "\n== AeroSim over Kafka: vehicle state {} Hz, flight display {} Hz, {}x{} JPEG camera {} Hz; \
         {:.0}-s window after {WARMUP_S:.0} s of warm-up",
        STREAMS[0].2,
        STREAMS[1].2,
        CAMERA.0,
        CAMERA.1,
        STREAMS[2].2,
        window()
    );
    println!(
        "{:30} {:>24} {:>24} {:>24} {:>7} {:>9} {:>7} {:>7}",
        "case", "odom: Hz (missed) p50/p99", "display", "camera", "CPU %", "µs/msg", "× DDS", "broker"
    );
    for r in results {
        let cell = |s: &StreamResult| {
            if r.name == RECEIVE_FLOOR {
                "–".to_string()
            } else {
                format!(
                    "{:5.1} ({:3}) {:5.1}/{:5.1}",
                    s.delivered_hz, s.missed, s.p50_ms, s.p99_ms
                )
            }
        };
        let ratio = floor.map_or(f64::NAN, |f| r.cpu_per_message_us / f.cpu_per_message_us);
        println!(
            "{:30} {:>24} {:>24} {:>24} {:7.1} {:9.1} {:7.2} {:6.1}%",
            r.name,
            cell(&r.streams[0]),
            cell(&r.streams[1]),
            cell(&r.streams[2]),
            r.cpu_percent,
            r.cpu_per_message_us,
            ratio,
            r.broker_cpu_percent
        );
    }
    println!(
        "latency in ms from just before the producer's send (for DDS alone: the publish) to receipt; \
         missed = sent in the window, never received; CPU = the republisher's; × DDS = its CPU per message \
         over DDS alone's (the receive floor's per message sent); broker = tansu's CPU"
    );
}

fn main() {
    if receive_floor::is_the_role() {
        return receive_floor::run();
    }
    match bench_support::bench_role() {
        BenchRole::Listing => return,
        BenchRole::DdsAlone(namespace, log) => return dds_alone(&namespace, &log),
        BenchRole::Bench => {}
    }
    let ctx = r2r::Context::create().unwrap();
    let only = std::env::var("AEROSIM_BENCH_CASES").unwrap_or_default().to_lowercase();
    // One round's CPU ratio moves with the machine (DDS alone's own CPU per
    // message does): AEROSIM_BENCH_ROUNDS=N runs the cases N times in turn
    // and sums the ratios up by their median.
    let rounds = bench_support::rounds_from_env("AEROSIM_BENCH_ROUNDS", 1);
    let load_at_start = loadavg_line();
    let mut ratios: Vec<(&str, Vec<f64>)> = Vec::new();
    let mut over_floor: Vec<(&str, Vec<f64>)> = Vec::new();
    for round in 0..rounds {
        let mut results = Vec::new();
        for (i, (name, r)) in [
            (DDS_ALONE, Republisher::DdsAlone),
            (RECEIVE_FLOOR, Republisher::ReceiveFloor),
            ("aerosim_bridge", Republisher::Bridge { fixed_wait: false }),
            ("aerosim_bridge, fixed wait", Republisher::Bridge { fixed_wait: true }),
            ("Python reference", Republisher::Python),
        ]
        .into_iter()
        .enumerate()
        {
            if only.is_empty() || only.split(',').any(|w| name.to_lowercase().contains(w)) {
                // A broker of its own for each case: tansu's in-memory log keeps every
                // record, and its CPU per record grows with it (40 % → 96 % over three
                // rounds on one broker).
                let broker =
                    Broker::start_on_free_port().expect("the broker (AEROSIM_BROKER_BIN; scripts/setup.sh builds it)");
                results.push(run_case(&ctx, round * 10 + i, name, r, &broker));
            }
        }
        let mut idle = Vec::new();
        for (i, (name, fixed_wait)) in [(IDLE, false), (IDLE_FIXED, true)].into_iter().enumerate() {
            if only.is_empty() || only.split(',').any(|w| name.contains(w)) {
                idle.push((name, idle_cpu(round * 10 + 5 + i, fixed_wait)));
            }
        }
        if rounds > 1 {
            println!("\nround {} of {rounds}:", round + 1);
        }
        print(&results);
        print_idle(&idle);
        if let Some(floor) = floor_of(&results) {
            let receiving = results.iter().find(|r| r.name == RECEIVE_FLOOR);
            for r in results.iter().filter(|r| r.name != DDS_ALONE) {
                push(&mut ratios, r.name, r.cpu_per_message_us / floor.cpu_per_message_us);
                if let (Some(f), true) = (receiving, r.name.starts_with("aerosim_bridge")) {
                    let least = floor.cpu_per_message_us + f.cpu_per_message_us;
                    push(&mut over_floor, r.name, r.cpu_per_message_us / least);
                }
            }
        }
    }
    if rounds > 1 {
        let medians = medians_of(&mut ratios);
        println!(
            "\nCPU per message over DDS alone's, median of {rounds} rounds: {}",
            medians.join(", ")
        );
        println!(
            "CPU per message over DDS alone's and the receive floor's together (the least a bridge can spend), \
             median of {rounds} rounds: {}",
            medians_of(&mut over_floor).join(", ")
        );
    }
    println!(
        "/proc/loadavg at start: {load_at_start}; at end: {}; {} cores",
        loadavg_line(),
        cores()
    );
}

/// Adds `ratio` to the ratios of case `name`.
fn push<'a>(ratios: &mut Vec<(&'a str, Vec<f64>)>, name: &'a str, ratio: f64) {
    match ratios.iter_mut().find(|(n, _)| *n == name) {
        Some((_, v)) => v.push(ratio),
        None => ratios.push((name, vec![ratio])),
    }
}

/// "<case> <median>" of each case's ratios.
fn medians_of(ratios: &mut [(&str, Vec<f64>)]) -> Vec<String> {
    ratios
        .iter_mut()
        .map(|(name, v)| {
            v.sort_by(f64::total_cmp);
            format!("{name} {:.2}", bench_support::median(v))
        })
        .collect()
}
