//! End-to-end benchmark of the GPS-denied drone: `gps_denied_sim` →
//! republisher → a native r2r subscriber (this process) of every telemetry
//! topic, at the simulator's 25 Hz, flat out, and at one rate both
//! republishers keep up with; the republisher is `gps_denied_bridge` or, in
//! the same run, the Python reference (`gps_denied_python_reference.py`: a
//! UDP socket, `json.loads`, `base64.b64decode`, rclpy publishers of the
//! same typed messages: what the simulator's users write today).
//!
//! Both republishers stamp every message of a frame with its `timestamp`
//! (the bridge with `use_sim_time:=true`), so a receipt is matched exactly to
//! the line of the emulator's `--send-log` that has its stamp: latency is
//! from the emulator's send (logged just after the send call) to receipt
//! here. CPU: user + system time of the republisher from `/proc/<pid>/stat`.
//!
//! `cargo build --release --workspace --bins && cargo bench -p gps_denied_ros
//! --bench gps_denied_end_to_end`. Prints tables; asserts nothing.
//! `GPS_BENCH_SECONDS` sets the window (default 8 s, after 3 s of warm-up),
//! `GPS_BENCH_CASES=flat,python` runs the cases whose name contains a word,
//! `GPS_BENCH_EQUAL_RATE` fixes the rate of the equal-rate cases (default:
//! 60 % of what the Python reference delivered flat out in this run, so that
//! both keep up on a shared machine).

mod dds_alone;
mod measure;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bench_support::{
    cores, cpu_seconds, load_average, loadavg_line, release_bin_dir, start_python_reference, udp_rcvbuf_errors, wall,
    BenchRole, StoppedOnDrop,
};
use measure::CaseResult;

/// The simulator's own rate; flat out, sim time still advances 1/25 s per frame.
const SIM_HZ: f64 = 25.0;
const WARMUP_S: f64 = 3.0;
/// Frames sent this close to the end of the window may still be in flight.
const TAIL_S: f64 = 0.5;

fn window() -> f64 {
    bench_support::seconds_from_env("GPS_BENCH_SECONDS", 8.0)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Republisher {
    Bridge,
    Python,
    /// No simulator: this executable publishing pre-built messages of every
    /// topic at 25 Hz, the floor no republisher can beat.
    DdsAlone,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Pace {
    Hz(f64),
    FlatOut,
    /// The rate of the equal-rate cases, known once the Python reference ran flat out.
    EqualRate,
}

#[derive(Debug)]
struct Case {
    name: &'static str,
    republisher: Republisher,
    pace: Pace,
}

/// Ports of this run (not the protocol's 5555/5556: a simulator or bridge on the
/// machine may hold those).
#[derive(Debug, Clone, Copy)]
struct Ports {
    sim: u16,
    bridge: u16,
}

fn start_sim(ports: Ports, hz: Option<f64>, log: &Path) -> StoppedOnDrop {
    let mut c = Command::new(release_bin_dir().join("gps_denied_sim"));
    c.args(["--bind", &format!("127.0.0.1:{}", ports.sim)])
        .args(["--target", &format!("127.0.0.1:{}", ports.bridge)])
        .args(["--reuse-image", "--stats", "0", "--send-log"])
        .arg(log);
    match hz {
        Some(hz) => c.args(["--rate", &hz.to_string()]),
        None => c.args(["--rate", &SIM_HZ.to_string(), "--flat-out"]),
    };
    StoppedOnDrop(
        c.stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("gps_denied_sim (build it: cargo build --release --workspace --bins)"),
    )
}

fn start_republisher(republisher: Republisher, ports: Ports, namespace: &str, log: &Path) -> StoppedOnDrop {
    match republisher {
        Republisher::Bridge => StoppedOnDrop(
            Command::new(release_bin_dir().join("gps_denied_bridge"))
                .args(["--ros-args", "-r", &format!("__ns:={namespace}")])
                .args(["-p", &format!("local_port:={}", ports.bridge)])
                .args(["-p", &format!("sim_port:={}", ports.sim)])
                .args(["-p", "sim_host:=127.0.0.1", "-p", "use_sim_time:=true"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("gps_denied_bridge (build it: cargo build --release --workspace --bins)"),
        ),
        Republisher::Python => {
            let script = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("benches/gps_denied_end_to_end/gps_denied_python_reference.py");
            start_python_reference(&script, &["127.0.0.1", &ports.bridge.to_string()], namespace)
        }
        Republisher::DdsAlone => bench_support::start_dds_alone(namespace, log),
    }
}

fn run_case(ctx: &r2r::Context, index: usize, case: &Case, hz: Option<f64>, ports: Ports) -> CaseResult {
    let dir = std::env::temp_dir().join(format!("gps_denied_bench_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join(format!("send_{index}.log"));
    let _ = std::fs::remove_file(&log);
    let namespace = format!("/gps_bench{index}");
    let load_before = load_average();
    let mut node = r2r::Node::create(ctx.clone(), &format!("gps_bench_subscriber{index}"), "").unwrap();
    let mut streams = measure::subscribe(&mut node, &namespace);
    let republisher = start_republisher(case.republisher, ports, &namespace, &log);
    // The republisher's socket is bound before the first frame leaves.
    std::thread::sleep(Duration::from_millis(500));
    let sim = (case.republisher != Republisher::DdsAlone).then(|| start_sim(ports, hz, &log));

    let warm = Instant::now() + Duration::from_secs_f64(WARMUP_S);
    while Instant::now() < warm {
        node.spin_once(Duration::from_millis(5));
        streams.drain(&mut Vec::new());
    }
    let own = std::process::id();
    let (cpu0, sim_cpu0, subscriber_cpu0, drops0, start) = (
        cpu_seconds(republisher.id()),
        sim.as_ref().map_or(0.0, |s| cpu_seconds(s.id())),
        cpu_seconds(own),
        udp_rcvbuf_errors(),
        wall(),
    );
    let until = Instant::now() + Duration::from_secs_f64(window());
    let mut receipts = Vec::with_capacity(1 << 20);
    while Instant::now() < until {
        node.spin_once(Duration::from_millis(5));
        streams.drain(&mut receipts);
    }
    let end = wall();
    let cpu_s = cpu_seconds(republisher.id()) - cpu0;
    let sim_cpu_s = sim.as_ref().map_or(0.0, |s| cpu_seconds(s.id())) - sim_cpu0;
    let subscriber_cpu_s = cpu_seconds(own) - subscriber_cpu0;
    let kernel_drops = udp_rcvbuf_errors() - drops0;
    drop(sim);
    drop(republisher);
    let sent = std::fs::read_to_string(&log).unwrap_or_default();
    let dt = 1.0 / hz.unwrap_or(SIM_HZ);
    let mut result = measure::evaluate(&sent, &receipts, start, end - TAIL_S, dt);
    result.name = match hz {
        Some(hz) if case.pace == Pace::EqualRate => format!("{} ({hz:.0} Hz)", case.name),
        _ => case.name.into(),
    };
    result.python = case.republisher == Republisher::Python;
    result.flat_out = hz.is_none();
    result.cpu_percent = cpu_s / (end - start) * 100.0;
    result.sim_cpu_percent = sim_cpu_s / (end - start) * 100.0;
    result.subscriber_cpu_percent = subscriber_cpu_s / (end - start) * 100.0;
    result.kernel_drops = kernel_drops;
    result.load = (load_before, load_average());
    result
}

fn main() {
    match bench_support::bench_role() {
        BenchRole::Listing => return,
        BenchRole::DdsAlone(namespace, log) => return dds_alone::run(&namespace, &log, SIM_HZ),
        BenchRole::Bench => {}
    }
    let ctx = r2r::Context::create().unwrap();
    let base = 30_000 + (std::process::id() % 9_000) as u16 * 3;
    let ports = Ports {
        sim: base,
        bridge: base + 1,
    };
    let cases = [
        ("DDS alone @ 25 Hz", Republisher::DdsAlone, Pace::Hz(SIM_HZ)),
        ("gps_denied_bridge @ 25 Hz", Republisher::Bridge, Pace::Hz(SIM_HZ)),
        ("Python reference @ 25 Hz", Republisher::Python, Pace::Hz(SIM_HZ)),
        ("Python reference, flat out", Republisher::Python, Pace::FlatOut),
        ("gps_denied_bridge, flat out", Republisher::Bridge, Pace::FlatOut),
        ("gps_denied_bridge, equal rate", Republisher::Bridge, Pace::EqualRate),
        ("Python reference, equal rate", Republisher::Python, Pace::EqualRate),
    ]
    .map(|(name, republisher, pace)| Case {
        name,
        republisher,
        pace,
    });
    let only = std::env::var("GPS_BENCH_CASES").unwrap_or_default().to_lowercase();
    let fixed_equal_rate: Option<f64> = std::env::var("GPS_BENCH_EQUAL_RATE").ok().and_then(|v| v.parse().ok());
    let load_at_start = loadavg_line();
    let mut results: Vec<CaseResult> = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let wanted = only.is_empty() || only.split(',').any(|w| case.name.to_lowercase().contains(w));
        if !wanted {
            continue;
        }
        let hz = match case.pace {
            Pace::Hz(hz) => Some(hz),
            Pace::FlatOut => None,
            Pace::EqualRate => {
                let python_flat_out = results.iter().find(|r| r.python && r.flat_out);
                // Rounded down to 10 Hz: both republishers must keep up with it.
                let derived = python_flat_out.map(|r| (r.imu.delivered_hz * 0.6 / 10.0).floor() * 10.0);
                Some(fixed_equal_rate.or(derived).unwrap_or(500.0).max(SIM_HZ))
            }
        };
        results.push(run_case(&ctx, i, case, hz, ports));
    }
    measure::print(&results, window(), WARMUP_S);
    println!(
        "/proc/loadavg at start: {load_at_start}; at end: {}; {} cores",
        loadavg_line(),
        cores()
    );
}
