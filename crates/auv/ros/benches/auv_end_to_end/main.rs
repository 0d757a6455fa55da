//! End-to-end benchmark of the AUV side: `auv_sim` → `auv_bridge` → a native
//! r2r subscriber (this process), 4 AUVs × two 1280×720 JPEG cameras at
//! 30 Hz + telemetry at 100 Hz; once with the compressed images and poses
//! subscribed, once with the raw images subscribed too (JPEG decode on); and
//! next to it, in the same run, the Python reference: a pyzmq + rclpy
//! republisher (`auv_python_reference.py`) of the same streams.
//!
//! Latency is from the emulator's send (its `--send-log`) to receipt here.
//! Images are matched by the sequence number `auv_sim` writes into each
//! JPEG's comment; raw images by their stamp (shared with the compressed
//! image of the same message); telemetry carries no number, so a pose is
//! matched to the latest message of its AUV logged as sent before its stamp
//! (the republisher's arrival time) plus [`LOG_SLACK_S`].
//!
//! The "receive floor" (`receive_floor.rs`) is the bridge's receive path
//! publishing nothing, fed by `auv_sim`: its CPU per simulator message is
//! printed next to what the bridge spends over DDS alone per message.
//!
//! `scripts/bench.sh` (or: `cargo build --release --workspace --bins &&
//! cargo bench -p auv_ros --bench auv_end_to_end`). Prints a table per
//! round and, over the rounds, each bridge case's CPU over DDS alone;
//! asserts nothing. `AUV_BENCH_SECONDS` sets the measuring window (default
//! 16), `AUV_BENCH_ROUNDS` the rounds of the cases in turn (default 3),
//! `AUV_BENCH_CASES` picks cases by name.

mod dds_alone;
mod measure;
mod receive_floor;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bench_support::{
    cores, cpu_seconds, load_average, loadavg_line, release_bin_dir, start_python_reference, wall, BenchRole,
    StoppedOnDrop,
};
use measure::{CaseResult, Receipt};

const AUV_IDS: [u8; 4] = [0, 1, 2, 3];
const IMAGE_HZ: f64 = 30.0;
const TELEMETRY_HZ: f64 = 100.0;
const WARMUP_S: f64 = 4.0;
/// Messages sent this close to the end of the window may still be in flight.
const TAIL_S: f64 = 0.5;
/// The emulator logs a send just after the send call returns.
const LOG_SLACK_S: f64 = 0.002;

fn window() -> f64 {
    bench_support::seconds_from_env("AUV_BENCH_SECONDS", 16.0)
}

/// `AUV_BENCH_BIN_DIR` runs other builds of `auv_sim` and `auv_bridge` (an older commit's, to compare).
fn bin_dir() -> PathBuf {
    std::env::var_os("AUV_BENCH_BIN_DIR").map_or_else(release_bin_dir, PathBuf::from)
}

/// Ports of this run (not the protocol's: other programs on the machine may hold those).
#[derive(Clone, Copy)]
struct Ports {
    image: u16,
    thruster: u16,
    telemetry: u16,
}

enum Republisher {
    /// With these extra `-p` parameters.
    Bridge(&'static [&'static str]),
    Python,
    /// No simulator: this executable publishing pre-built messages (`dds_alone`).
    DdsAlone,
    /// This executable receiving and parsing as the bridge does, publishing nothing (`receive_floor`).
    ReceiveFloor,
}

struct Case {
    name: &'static str,
    republisher: Republisher,
    raw: bool,
    /// camera_info, odom and /tf subscribed too.
    every_topic: bool,
}

fn ids_csv() -> String {
    AUV_IDS.map(|i| i.to_string()).join(",")
}

fn start_sim(ports: Ports, log: &Path) -> StoppedOnDrop {
    StoppedOnDrop(
        Command::new(bin_dir().join("auv_sim"))
            .args(["--auv-ids", &ids_csv(), "--width", "1280", "--height", "720"])
            .args(["--image-rate", &IMAGE_HZ.to_string()])
            .args(["--telemetry-rate", &TELEMETRY_HZ.to_string()])
            .args(["--image-port", &ports.image.to_string()])
            .args(["--thruster-port", &ports.thruster.to_string()])
            .args(["--telemetry-port", &ports.telemetry.to_string()])
            .args(["--reuse-frames", "--stats", "0", "--send-log"])
            .arg(log)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("auv_sim (build it: cargo build --release --workspace --bins)"),
    )
}

fn start_republisher(case: &Case, ports: Ports, namespace: &str, log: &Path) -> StoppedOnDrop {
    match case.republisher {
        Republisher::Bridge(params) => StoppedOnDrop(
            Command::new(bin_dir().join("auv_bridge"))
                .args(["--ros-args", "-r", &format!("__ns:={namespace}")])
                .args(["-p", &format!("image_port:={}", ports.image)])
                .args(["-p", &format!("thruster_port:={}", ports.thruster)])
                .args(["-p", &format!("telemetry_port:={}", ports.telemetry)])
                .args(["-p", &format!("vehicle_ids:=[{}]", ids_csv())])
                .args(params.iter().flat_map(|p| ["-p", p]))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("auv_bridge (build it: cargo build --release --workspace --bins)"),
        ),
        Republisher::Python => {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/auv_end_to_end/auv_python_reference.py");
            let (image, telemetry) = (ports.image.to_string(), ports.telemetry.to_string());
            start_python_reference(&script, &["127.0.0.1", &image, &telemetry, &ids_csv()], namespace)
        }
        Republisher::DdsAlone => bench_support::start_dds_alone(namespace, log),
        Republisher::ReceiveFloor => receive_floor::start(ports),
    }
}

fn run_case(ctx: &r2r::Context, index: usize, case: &Case, ports: Ports) -> CaseResult {
    let dir = std::env::temp_dir().join(format!("auv_bench_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join(format!("send_{index}.log"));
    let _ = std::fs::remove_file(&log);
    let namespace = format!("/auv_bench{index}");
    let load_before = load_average();
    let republisher = start_republisher(case, ports, &namespace, &log);
    let sim = (!matches!(case.republisher, Republisher::DdsAlone)).then(|| start_sim(ports, &log));
    let mut node = r2r::Node::create(ctx.clone(), &format!("auv_bench_subscriber{index}"), "").unwrap();
    let mut streams = measure::subscribe(&mut node, &namespace, &AUV_IDS, case.raw, case.every_topic);

    let warm = Instant::now() + Duration::from_secs_f64(WARMUP_S);
    while Instant::now() < warm {
        node.spin_once(Duration::from_millis(5));
        streams.drain(&mut Vec::new());
    }
    let sim_cpu = |sim: &Option<StoppedOnDrop>| sim.as_ref().map_or(0.0, |s| cpu_seconds(s.id()));
    let (cpu0, sim_cpu0, start) = (cpu_seconds(republisher.0.id()), sim_cpu(&sim), wall());
    let until = Instant::now() + Duration::from_secs_f64(window());
    let mut receipts: Vec<Receipt> = Vec::with_capacity(20_000);
    while Instant::now() < until {
        node.spin_once(Duration::from_millis(5));
        streams.drain(&mut receipts);
    }
    let end = wall();
    let cpu = (cpu_seconds(republisher.0.id()) - cpu0) / (end - start) * 100.0;
    let sim_cpu = (sim_cpu(&sim) - sim_cpu0) / (end - start) * 100.0;
    drop(sim);
    drop(republisher);
    let sent = std::fs::read_to_string(&log).unwrap_or_default();
    let mut result = measure::evaluate(&sent, &receipts, start, end - TAIL_S, LOG_SLACK_S, case.raw);
    result.name = case.name.into();
    let extra = receipts.iter().filter(|r| matches!(r, Receipt::Extra)).count();
    result.extra_hz = case.every_topic.then(|| extra as f64 / (end - start));
    result.cpu_percent = cpu;
    result.sim_cpu_percent = sim_cpu;
    result.load = (load_before, load_average());
    result
}

/// One round's window moves the bridge's CPU over DDS alone by up to ±20 %:
/// the cases run this many times in turn (default 3).
fn rounds() -> usize {
    bench_support::rounds_from_env("AUV_BENCH_ROUNDS", 3)
}

fn main() {
    match bench_support::bench_role() {
        BenchRole::Listing => return,
        BenchRole::DdsAlone(namespace, log) => return dds_alone::run(&namespace, &log),
        BenchRole::Bench => {}
    }
    if let Some((image_port, telemetry_port)) = receive_floor::arguments() {
        return receive_floor::run(image_port, telemetry_port);
    }
    let ctx = r2r::Context::create().unwrap();
    let base = 30_000 + (std::process::id() % 9_000) as u16 * 3;
    let ports = Ports {
        image: base,
        thruster: base + 1,
        telemetry: base + 2,
    };
    let cases = [
        Case {
            name: "DDS alone (compressed + pose, pre-built)",
            republisher: Republisher::DdsAlone,
            raw: false,
            every_topic: false,
        },
        Case {
            name: measure::RECEIVE_FLOOR,
            republisher: Republisher::ReceiveFloor,
            raw: false,
            every_topic: false,
        },
        Case {
            name: "auv_bridge (compressed + pose subscribed)",
            republisher: Republisher::Bridge(&[]),
            raw: false,
            every_topic: false,
        },
        Case {
            name: "auv_bridge (every topic subscribed: + camera_info, odom, /tf)",
            republisher: Republisher::Bridge(&[]),
            raw: false,
            every_topic: true,
        },
        Case {
            name: "auv_bridge publish_tf:=false (compressed + pose subscribed)",
            republisher: Republisher::Bridge(&["publish_tf:=false"]),
            raw: false,
            every_topic: false,
        },
        Case {
            name: "auv_bridge (+ raw image_raw subscribed: decode on)",
            republisher: Republisher::Bridge(&[]),
            raw: true,
            every_topic: false,
        },
        Case {
            name: "Python reference: pyzmq + rclpy republisher",
            republisher: Republisher::Python,
            raw: false,
            every_topic: false,
        },
    ];
    // AUV_BENCH_CASES=python runs only the cases whose name contains "python" (case-insensitive).
    let only = std::env::var("AUV_BENCH_CASES").unwrap_or_default().to_lowercase();
    let load_at_start = loadavg_line();
    let rounds = rounds();
    let mut all_rounds = Vec::with_capacity(rounds);
    for round in 0..rounds {
        // Names of their own per round: DDS may still know the last round's.
        let results: Vec<CaseResult> = cases
            .iter()
            .enumerate()
            .filter(|(_, c)| only.is_empty() || only.split(',').any(|w| c.name.to_lowercase().contains(w)))
            .map(|(i, c)| run_case(&ctx, round * 100 + i, c, ports))
            .collect();
        if rounds > 1 {
            println!("round {} of {rounds}:", round + 1);
        }
        measure::print(&results, window(), WARMUP_S, AUV_IDS.len(), IMAGE_HZ, TELEMETRY_HZ);
        println!();
        all_rounds.push(results);
    }
    if rounds > 1 {
        measure::print_rounds_summary(&all_rounds);
    }
    // On a shared machine, figures taken under a high load are to be repeated.
    println!(
        "/proc/loadavg at start: {load_at_start}; at end: {}; {} cores",
        loadavg_line(),
        cores()
    );
}
