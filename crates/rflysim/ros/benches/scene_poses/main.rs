//! Scene benchmark: a swarm placed in RflySim3D's scene from one bulk
//! `rflysim_bridge/ScenePoses` message per tick at 30 Hz, 100 and 1 000
//! vehicles. This process publishes the pre-built messages and stands where
//! RflySim3D listens (UDP 20010 + window), timing each tick from its publish
//! to the receipt of its last datagram. Measured in the same run:
//!
//! - `scene_node`, the bridge;
//! - a Python reference, rclpy + `struct` (the SDK's `sendUE4PosScale100`
//!   way: `scene_python_reference.py`);
//! - DDS alone: this executable again, as a native r2r subscriber of the same
//!   messages that sends one 8-byte datagram per message it takes (the floor
//!   any bridge in this direction pays).
//!
//! `scripts/bench.sh scene` (or `cargo build --release --workspace --bins &&
//! cargo bench -p rflysim_ros --bench scene_poses`); `RFLYSIM_BENCH_SECONDS`
//! the window (default 8 s), `RFLYSIM_BENCH_ROUNDS` the rounds (default 1).
//! Prints tables; asserts nothing.

use std::collections::HashMap;
use std::net::UdpSocket;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{FutureExt, StreamExt};
use r2r::geometry_msgs::msg::Pose;
use r2r::rflysim_bridge::msg::ScenePoses;

use bench_support::{
    bench_role, cpu_seconds, loadavg_line, median, percentile, release_bin_dir, rounds_from_env, rss_bytes,
    seconds_from_env, start_dds_alone, start_python_reference, BenchRole, StoppedOnDrop,
};
use rflysim_proto::scene::MultiVehicleUpdate;

const HZ: f64 = 30.0;
const WARMUP: Duration = Duration::from_secs(3);
/// The window the targets send to (20010 + this).
const WINDOW: u16 = 17;
/// The targets' status port: nothing is sent there here.
const STATUS_PORT: u16 = 43_917;
/// What DDS alone sends per message: the tick, as the first vehicle's x.
const RECEIPT_LEN: usize = 8;

fn main() {
    match bench_role() {
        BenchRole::Listing => {}
        BenchRole::DdsAlone(namespace, _) => dds_alone(&namespace),
        BenchRole::Bench => bench(),
    }
}

/// One tick's message: every vehicle at ENU x = the tick (how the receiver
/// tells ticks apart), y = its index.
fn poses(n: usize, tick: u32) -> ScenePoses {
    ScenePoses {
        ids: (1..=n as u16).collect(),
        poses: (0..n)
            .map(|i| {
                let mut p = Pose::default();
                p.position.x = f64::from(tick);
                p.position.y = i as f64;
                p.position.z = 10.0;
                p.orientation.w = 1.0;
                p
            })
            .collect(),
        ..Default::default()
    }
}

/// The tick a datagram belongs to: slot 0's NED y (ENU x) for a bulk
/// datagram, the first f64 of a DDS-alone receipt.
fn tick_of(d: &[u8]) -> Option<u32> {
    match d.len() {
        MultiVehicleUpdate::LEN => {
            let at = 404 + 4; // positions start at 404; y of slot 0
            Some(f32::from_le_bytes(d[at..at + 4].try_into().ok()?) as u32)
        }
        RECEIPT_LEN => Some(f64::from_le_bytes(d.try_into().ok()?) as u32),
        _ => None,
    }
}

/// DDS alone: takes each message natively and says so with one datagram.
fn dds_alone(namespace: &str) {
    let ctx = r2r::Context::create().expect("context");
    let mut node = r2r::Node::create(ctx, "scene_dds_alone", namespace).expect("node");
    let mut sub = node
        .subscribe::<ScenePoses>("rflysim/scene/poses", r2r::QosProfile::default())
        .expect("subscription");
    let sock = UdpSocket::bind("127.0.0.1:0").expect("socket");
    let to = ("127.0.0.1", 20_010 + WINDOW);
    let stop = ros_common::lifecycle::stop_flag_at_signal();
    let mut pool = futures::executor::LocalPool::new();
    while !stop.load(Ordering::Relaxed) {
        node.spin_once(Duration::from_millis(20));
        pool.run_until_stalled();
        while let Some(Some(m)) = sub.next().now_or_never() {
            let tick = m.poses.first().map_or(0.0, |p| p.position.x);
            let _ = sock.send_to(&tick.to_le_bytes(), to);
        }
    }
}

/// What one case measured.
struct Outcome {
    name: String,
    vehicles: usize,
    sent: usize,
    complete: usize,
    datagrams_per_tick: f64,
    p50_ms: f64,
    p99_ms: f64,
    cpu_ms_per_tick: f64,
    rss_mib: f64,
}

fn bench() {
    let seconds = seconds_from_env("RFLYSIM_BENCH_SECONDS", 8.0);
    let rounds = rounds_from_env("RFLYSIM_BENCH_ROUNDS", 1);
    let bin = release_bin_dir();
    let work = std::env::temp_dir().join(format!("rflysim_scene_bench_{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("work dir");
    let config = work.join("Config.json");
    std::fs::write(&config, r#"{"VisionSensors": []}"#).expect("config");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/scene_poses/scene_python_reference.py");
    println!(
        "# scene: bulk poses at {HZ} Hz, {seconds} s a case after {WARMUP:?}; {}",
        loadavg_line()
    );

    let ctx = r2r::Context::create().expect("context");
    let mut node = r2r::Node::create(ctx, "scene_bench", "").expect("node");
    let receiver = Receiver::start();
    let mut results: Vec<Vec<Outcome>> = Vec::new();
    for round in 0..rounds {
        let mut round_results = Vec::new();
        for n in [100usize, 1000] {
            for target in ["DDS alone", "scene_node", "Python rclpy + struct"] {
                let namespace = format!("/scene_bench_{round}_{n}_{}", target.len());
                let child = match target {
                    "scene_node" => StoppedOnDrop(
                        std::process::Command::new(bin.join("scene_node"))
                            .args(["--ros-args", "-r", &format!("__ns:={namespace}")])
                            .args(["-p", &format!("rflysim_config:={}", config.display())])
                            .args(["-p", &format!("window_id:={WINDOW}")])
                            .args([
                                "-p",
                                &format!("status_port:={STATUS_PORT}"),
                                "-p",
                                "status_multicast:=false",
                            ])
                            .stdout(std::process::Stdio::null())
                            .stderr(std::process::Stdio::null())
                            .spawn()
                            .expect("scene_node (cargo build --release --workspace --bins)"),
                    ),
                    "DDS alone" => start_dds_alone(&namespace, &work.join("unused.log")),
                    _ => start_python_reference(&script, &[&(20_010 + WINDOW).to_string()], &namespace),
                };
                round_results.push(run_case(&mut node, &receiver, target, n, &namespace, &child, seconds));
            }
        }
        print_round(round, &round_results);
        results.push(round_results);
    }
    if rounds > 1 {
        println!("\nCPU per tick over DDS alone's, median of {rounds} rounds:");
        for i in 0..results[0].len() {
            let r = &results[0][i];
            if r.name == "DDS alone" {
                continue;
            }
            let floor = i - results[0][..=i]
                .iter()
                .rev()
                .position(|x| x.name == "DDS alone")
                .unwrap_or(0);
            let mut ratios: Vec<f64> = results
                .iter()
                .map(|rr| rr[i].cpu_ms_per_tick / rr[floor].cpu_ms_per_tick.max(1e-9))
                .collect();
            ratios.sort_by(f64::total_cmp);
            println!("  {:>5} vehicles, {:<22} × {:.2}", r.vehicles, r.name, median(&ratios));
        }
    }
    let _ = std::fs::remove_dir_all(&work);
}

fn run_case(
    node: &mut r2r::Node,
    receiver: &Receiver,
    name: &str,
    n: usize,
    namespace: &str,
    child: &StoppedOnDrop,
    seconds: f64,
) -> Outcome {
    let topic = format!("{namespace}/rflysim/scene/poses");
    let publisher = node
        .create_publisher::<ScenePoses>(&topic, r2r::QosProfile::default())
        .expect("publisher");
    // Pre-built: publishing is the same work for every target.
    let messages: Vec<ScenePoses> = (0..((seconds + WARMUP.as_secs_f64() + 2.0) * HZ) as u32)
        .map(|t| poses(n, t + 1))
        .collect();
    let period = Duration::from_secs_f64(1.0 / HZ);
    let started = Instant::now();
    while publisher.get_inter_process_subscription_count().unwrap_or(0) == 0
        && started.elapsed() < Duration::from_secs(15)
    {
        node.spin_once(Duration::from_millis(20));
    }
    receiver.clear();
    let mut published: HashMap<u32, f64> = HashMap::new();
    let (mut cpu0, mut measured_from) = (None, None);
    let warm_ticks = (WARMUP.as_secs_f64() * HZ) as u32;
    let mut next = Instant::now();
    for (k, m) in messages.iter().enumerate() {
        let tick = k as u32 + 1;
        if tick == warm_ticks + 1 {
            cpu0 = Some(cpu_seconds(child.id()));
            measured_from = Some(tick);
        }
        if Instant::now() < next {
            std::thread::sleep(next - Instant::now());
        }
        next += period;
        let at = bench_support::wall();
        let _ = publisher.publish(m);
        let into_window = f64::from(tick) - f64::from(warm_ticks);
        if measured_from.is_some() && into_window <= seconds * HZ {
            published.insert(tick, at);
        }
        node.spin_once(Duration::ZERO);
        if into_window >= seconds * HZ {
            break;
        }
    }
    // The last tick's work, then the CPU of the window.
    std::thread::sleep(Duration::from_millis(100));
    let cpu = cpu_seconds(child.id()) - cpu0.unwrap_or(0.0);
    let rss = rss_bytes(child.id()) as f64 / f64::from(1u32 << 20);
    std::thread::sleep(Duration::from_millis(300));
    let expected_datagrams = if name == "DDS alone" {
        1
    } else {
        MultiVehicleUpdate::datagram_count(n)
    };
    let arrivals = receiver.take();
    let mut latencies = Vec::new();
    let mut datagrams = 0usize;
    for (tick, sent_at) in &published {
        if let Some(got) = arrivals.get(tick) {
            datagrams += got.len();
            if got.len() >= expected_datagrams {
                let last = got.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                latencies.push((last - sent_at) * 1e3);
            }
        }
    }
    latencies.sort_by(f64::total_cmp);
    let sent = published.len();
    Outcome {
        name: name.to_string(),
        vehicles: n,
        sent,
        complete: latencies.len(),
        datagrams_per_tick: datagrams as f64 / sent.max(1) as f64,
        p50_ms: percentile(&latencies, 0.5),
        p99_ms: percentile(&latencies, 0.99),
        cpu_ms_per_tick: cpu * 1e3 / sent.max(1) as f64,
        rss_mib: rss,
    }
}

fn print_round(round: usize, results: &[Outcome]) {
    println!("\n## round {}", round + 1);
    println!(
        "{:>8}  {:<22} {:>9} {:>9} {:>10} {:>8} {:>8} {:>12} {:>8} {:>8}",
        "vehicles", "target", "ticks", "complete", "dgrams/t", "p50 ms", "p99 ms", "CPU ms/tick", "× DDS", "RSS MiB"
    );
    for r in results {
        let floor = results
            .iter()
            .find(|f| f.vehicles == r.vehicles && f.name == "DDS alone")
            .map_or(f64::NAN, |f| r.cpu_ms_per_tick / f.cpu_ms_per_tick.max(1e-9));
        println!(
            "{:>8}  {:<22} {:>9} {:>9} {:>10.1} {:>8.2} {:>8.2} {:>12.3} {:>8.2} {:>8.1}",
            r.vehicles,
            r.name,
            r.sent,
            r.complete,
            r.datagrams_per_tick,
            r.p50_ms,
            r.p99_ms,
            r.cpu_ms_per_tick,
            floor,
            r.rss_mib
        );
    }
    println!(
        "latency: publish → receipt of the tick's last datagram (DDS alone: its one receipt); \
         dgrams/t: RflySim3D's datagrams a tick (DDS alone: receipts); × DDS: CPU per tick over DDS alone's"
    );
}

/// Stands where RflySim3D listens: the arrival times of each tick's datagrams.
struct Receiver {
    arrivals: Arc<Mutex<HashMap<u32, Vec<f64>>>>,
    _stop: Arc<AtomicBool>,
}

impl Receiver {
    fn start() -> Self {
        let sock = UdpSocket::bind(("127.0.0.1", 20_010 + WINDOW)).expect("the window's port");
        let _ = socket2::SockRef::from(&sock).set_recv_buffer_size(16 << 20);
        sock.set_read_timeout(Some(Duration::from_millis(100)))
            .expect("timeout");
        let arrivals: Arc<Mutex<HashMap<u32, Vec<f64>>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (a, s) = (arrivals.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while !s.load(Ordering::Relaxed) {
                if let Ok(n) = sock.recv(&mut buf) {
                    let at = bench_support::wall();
                    if let Some(tick) = tick_of(&buf[..n]) {
                        a.lock().unwrap().entry(tick).or_default().push(at);
                    }
                }
            }
        });
        Self { arrivals, _stop: stop }
    }

    fn clear(&self) {
        self.arrivals.lock().unwrap().clear();
    }

    fn take(&self) -> HashMap<u32, Vec<f64>> {
        std::mem::take(&mut *self.arrivals.lock().unwrap())
    }
}
