//! What the RflySim end-to-end benchmarks (`end_to_end`, `swarm`) share: the
//! emulator and the `bridge` as child processes on a Config.json written for
//! the run, and a native r2r subscriber recording the receipts of many topics
//! at once. Latency is matched by simulation-time stamp (`use_sim_time:=true`
//! on the bridge) to the emulator's `--send-log`.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bench_support::{release_bin_dir, seconds_from_env, wall, StoppedOnDrop};
use futures::{FutureExt, Stream, StreamExt};
use r2r::diagnostic_msgs::msg::DiagnosticArray;
use r2r::sensor_msgs::msg::{Image, Imu, PointCloud2};
use r2r::QosProfile;

/// Seconds between starting the processes and opening the measuring window.
pub const WARMUP: f64 = 3.0;

/// The measuring window: `RFLYSIM_BENCH_SECONDS`, default 6 s.
pub fn window() -> f64 {
    seconds_from_env("RFLYSIM_BENCH_SECONDS", 6.0)
}

/// `RFLYSIM_BENCH_PUBLISHER_ENV="K=V K2=V2"`: environment for the publishing
/// processes only (bridge, reference publisher), so that a middleware setting
/// on the publisher's side can be measured against a subscriber (this
/// process) that has the defaults.
pub fn publisher_env() -> Vec<(String, String)> {
    std::env::var("RFLYSIM_BENCH_PUBLISHER_ENV")
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect()
}

/// The message type of a subscribed topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Image,
    Cloud,
    Imu,
}

/// A subscriber's receipts: (stamp seconds, receipt wall seconds).
pub type Receipts = Vec<(f64, f64)>;

type Stamps = Pin<Box<dyn Stream<Item = f64>>>;

/// The subscriber's history depth: `RFLYSIM_BENCH_SUBSCRIBER_DEPTH`, default
/// 10 (what a node with default settings keeps); deeper tells whether a loss
/// is the subscriber's queue overflowing.
fn subscriber_depth() -> usize {
    std::env::var("RFLYSIM_BENCH_SUBSCRIBER_DEPTH")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|d| *d > 0)
        .unwrap_or(10)
}

/// Native subscriptions (no conversion to Rust types): what a C++ node gets.
fn subscribe(node: &mut r2r::Node, topic: &str, kind: Kind) -> Stamps {
    let qos = QosProfile::default().keep_last(subscriber_depth()).reliable();
    macro_rules! stamps {
        ($t:ty) => {
            Box::pin(
                node.subscribe_native::<$t>(topic, qos)
                    .expect("subscription")
                    .map(|m| f64::from(m.header.stamp.sec) + f64::from(m.header.stamp.nanosec) * 1e-9),
            )
        };
    }
    match kind {
        Kind::Image => stamps!(Image),
        Kind::Cloud => stamps!(PointCloud2),
        Kind::Imu => stamps!(Imu),
    }
}

/// Subscribes to every topic and records its receipts until `until`,
/// spinning all along; calls `window_opens` once at `warmed_up`. One vector
/// of receipts per topic, in the order given.
pub fn receive(
    node: &mut r2r::Node,
    topics: &[(String, Kind)],
    warmed_up: Instant,
    until: Instant,
    window_opens: &mut dyn FnMut(),
) -> Vec<Receipts> {
    receive_slowly(node, topics, warmed_up, until, window_opens, Duration::ZERO)
}

/// `receive`, by a subscriber that takes `each` to handle a message (a
/// slow consumer: the publisher's queue to it fills).
pub fn receive_slowly(
    node: &mut r2r::Node,
    topics: &[(String, Kind)],
    warmed_up: Instant,
    until: Instant,
    window_opens: &mut dyn FnMut(),
    each: Duration,
) -> Vec<Receipts> {
    let mut subs: Vec<Stamps> = topics.iter().map(|(t, k)| subscribe(node, t, *k)).collect();
    let mut out = vec![Vec::new(); topics.len()];
    let mut opened = false;
    while Instant::now() < until {
        if !opened && Instant::now() >= warmed_up {
            window_opens();
            opened = true;
        }
        node.spin_once(Duration::from_millis(5));
        for (sub, receipts) in subs.iter_mut().zip(out.iter_mut()) {
            while let Some(Some(stamp)) = sub.next().now_or_never() {
                receipts.push((stamp, wall()));
                std::thread::sleep(each);
            }
        }
    }
    out
}

/// A directory of this benchmark process for configs and send logs.
pub fn run_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rflysim_bench_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The `bridge` on `config` with simulation-time stamps, talking to the
/// emulator's window 9, plus `params` (`name:=value`).
pub fn start_bridge(config: &Path, params: &[String]) -> StoppedOnDrop {
    let mut args: Vec<String> = vec!["--ros-args".into()];
    let fixed = [
        format!("rflysim_config:={}", config.display()),
        "use_sim_time:=true".into(),
        "window_id:=9".into(),
    ];
    for p in fixed.iter().chain(params) {
        args.extend(["-p".into(), p.clone()]);
    }
    StoppedOnDrop(
        Command::new(release_bin_dir().join("bridge"))
            .args(args)
            .envs(publisher_env())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("bridge (build it: cargo build --release --workspace --bins)"),
    )
}

/// The emulator streaming `config` to window 9, each frame rendered once and
/// resent with new stamps, logging every send to `send_log`, plus `args`.
pub fn start_emulator(config: &Path, send_log: &Path, args: &[&str]) -> StoppedOnDrop {
    start_emulator_via(&[], config, send_log, args)
}

/// `start_emulator` run through `prefix` (`ip netns exec NS`: on another host).
pub fn start_emulator_via(prefix: &[String], config: &Path, send_log: &Path, args: &[&str]) -> StoppedOnDrop {
    let _ = std::fs::remove_file(send_log);
    let program = release_bin_dir().join("rflysim_sim");
    let mut command = match prefix.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(program);
            c
        }
        None => Command::new(program),
    };
    StoppedOnDrop(
        command
            .arg("--config")
            .arg(config)
            .args(["--stats", "0", "--window-id", "9", "--reuse-frames", "--send-log"])
            .arg(send_log)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rflysim_sim (build it: cargo build --release --workspace --bins)"),
    )
}

/// The rate of `frames_published` of the status whose name starts with
/// `name` between the first and the last report of the window: what the
/// bridge published, whatever DDS and the subscriber then lost.
pub fn published_hz(reports: &[(f64, DiagnosticArray)], name: &str) -> f64 {
    let published = |a: &DiagnosticArray| -> Option<f64> {
        let status = a.status.iter().find(|s| s.name.starts_with(name))?;
        let kv = status
            .values
            .iter()
            .find(|kv| kv.key == ros_common::diagnostics::keys::FRAMES_PUBLISHED)?;
        kv.value.parse().ok()
    };
    let samples: Vec<(f64, f64)> = reports
        .iter()
        .filter_map(|(at, a)| published(a).map(|n| (*at, n)))
        .collect();
    match (samples.first(), samples.last()) {
        (Some(a), Some(b)) if b.0 > a.0 => (b.1 - a.1) / (b.0 - a.0),
        _ => f64::NAN,
    }
}
