//! Receipts of every telemetry topic, their matching to the emulator's send
//! log by stamp, and the tables.

use std::collections::{HashMap, HashSet};

use bench_support::{wall, StreamResult, Subscriptions};
use futures::{Stream, StreamExt};
use r2r::geometry_msgs::msg::{PointStamped, TwistStamped};
use r2r::rflysim_bridge::msg::LandingPad;
use r2r::sensor_msgs::msg::{CameraInfo, CompressedImage, Imu, Range};
use r2r::std_msgs::msg::Bool;
use r2r::QosProfile;

/// Every topic a telemetry frame is republished on, in table order.
pub const TOPICS: [&str; 8] = [
    "imu",
    "altitude",
    "velocity",
    "landing_pad",
    "landing_pad/point",
    "landed",
    "camera/image_raw/compressed",
    "camera/camera_info",
];
const IMU: usize = 0;
const COMPRESSED: usize = 6;
/// The emulator's camera image is in every 5th frame.
const IMAGE_EVERY: u64 = 5;

#[derive(Debug, Clone, Copy)]
pub struct Receipt {
    topic: usize,
    /// `None` for `landed` (`std_msgs/Bool` has no header).
    stamp_ns: Option<i64>,
    at: f64,
}

type ReceiptStream = Box<dyn Stream<Item = Receipt> + Unpin>;
/// Every subscription of a case.
pub type Streams = Subscriptions<Receipt>;

/// Native subscriptions: a receipt needs the stamp only, not a conversion.
pub fn subscribe(node: &mut r2r::Node, namespace: &str) -> Streams {
    let qos = QosProfile::default().keep_last(10).reliable();
    let mut subs: Vec<ReceiptStream> = Vec::new();
    macro_rules! stamped {
        ($topic:expr, $t:ty) => {{
            let topic = TOPICS.iter().position(|t| *t == $topic).unwrap();
            let s = node
                .subscribe_native::<$t>(&format!("{namespace}/drone/{}", $topic), qos.clone())
                .unwrap();
            subs.push(Box::new(s.map(move |m| {
                let s = &m.header.stamp;
                Receipt {
                    topic,
                    stamp_ns: Some(i64::from(s.sec) * 1_000_000_000 + i64::from(s.nanosec)),
                    at: wall(),
                }
            })));
        }};
    }
    stamped!("imu", Imu);
    stamped!("altitude", Range);
    stamped!("velocity", TwistStamped);
    stamped!("landing_pad", LandingPad);
    stamped!("landing_pad/point", PointStamped);
    stamped!("camera/image_raw/compressed", CompressedImage);
    stamped!("camera/camera_info", CameraInfo);
    let landed = TOPICS.iter().position(|t| *t == "landed").unwrap();
    let s = node
        .subscribe_native::<Bool>(&format!("{namespace}/drone/landed"), qos.clone())
        .unwrap();
    subs.push(Box::new(s.map(move |_| Receipt {
        topic: landed,
        stamp_ns: None,
        at: wall(),
    })));
    Subscriptions(subs)
}

#[derive(Debug, Default)]
pub struct CaseResult {
    pub name: String,
    pub python: bool,
    pub flat_out: bool,
    /// One per telemetry frame.
    pub imu: StreamResult,
    /// One per image frame.
    pub compressed: StreamResult,
    /// Distinct messages per second on each of [`TOPICS`].
    pub topic_hz: [f64; TOPICS.len()],
    /// Receipts whose stamp no logged send has.
    pub unmatched: usize,
    pub cpu_percent: f64,
    pub sim_cpu_percent: f64,
    /// This process: the subscriptions of every topic.
    pub subscriber_cpu_percent: f64,
    /// Machine-wide: other programs' drops count too.
    pub kernel_drops: u64,
    pub load: (f64, f64),
}

impl CaseResult {
    /// Telemetry frames delivered per second of the republisher's CPU time.
    pub fn frames_per_cpu_second(&self) -> f64 {
        self.imu.delivered_hz / (self.cpu_percent / 100.0)
    }
}

/// Stamps are matched at microseconds: the send log has six decimals.
fn micros(seconds: f64) -> i64 {
    (seconds * 1e6).round() as i64
}

/// Matches receipts to the send log ("timestamp wall" per frame); counts
/// only frames sent in [start, last_send]. `dt`: sim seconds per frame.
pub fn evaluate(sent_log: &str, receipts: &[Receipt], start: f64, last_send: f64, dt: f64) -> CaseResult {
    let sent: HashMap<i64, f64> = sent_log
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace().map(str::parse::<f64>);
            Some((micros(f.next()?.ok()?), f.next()?.ok()?))
        })
        .collect();
    let in_window = |t: f64| t >= start && t <= last_send;
    let is_image_frame = |stamp_us: i64| (stamp_us as f64 * 1e-6 / dt).round() as u64 % IMAGE_EVERY == 0;
    let frames = sent.values().filter(|&&t| in_window(t)).count();
    let images = sent.iter().filter(|(&s, &t)| in_window(t) && is_image_frame(s)).count();

    let mut seen: Vec<HashSet<i64>> = vec![HashSet::new(); TOPICS.len()];
    let mut latencies: Vec<Vec<f64>> = vec![Vec::new(); TOPICS.len()];
    let mut unstamped = 0usize;
    let mut unmatched = 0;
    for r in receipts {
        let Some(stamp_ns) = r.stamp_ns else {
            if in_window(r.at) {
                unstamped += 1;
            }
            continue;
        };
        let stamp_us = (stamp_ns as f64 / 1e3).round() as i64;
        let Some(&sent_at) = sent.get(&stamp_us) else {
            unmatched += 1;
            continue;
        };
        if in_window(sent_at) && seen[r.topic].insert(stamp_us) {
            latencies[r.topic].push((r.at - sent_at) * 1e3);
        }
    }
    let span = last_send - start;
    let mut topic_hz: [f64; TOPICS.len()] = std::array::from_fn(|i| seen[i].len() as f64 / span);
    let landed = TOPICS.iter().position(|t| *t == "landed").unwrap_or_default();
    topic_hz[landed] = unstamped as f64 / span;
    CaseResult {
        imu: StreamResult::summarise(frames, std::mem::take(&mut latencies[IMU]), span),
        compressed: StreamResult::summarise(images, std::mem::take(&mut latencies[COMPRESSED]), span),
        topic_hz,
        unmatched,
        ..Default::default()
    }
}

pub fn print(results: &[CaseResult], window: f64, warmup: f64) {
    println!(
        "GPS-denied drone end to end: gps_denied_sim → republisher → native r2r subscriber of {} topics; \
         {window} s windows after {warmup} s warm-up",
        TOPICS.len()
    );
    println!(
        "(frames: telemetry frames, counted on imu; images: every 5th frame, on camera/image_raw/compressed; \
         latency: emulator send → receipt; CPU: the republisher's, % of one core; frames/CPU-s: delivered frames \
         per second of the republisher's CPU time; kernel drops: UDP receive-buffer drops, machine-wide; \
         load: 1-min load average before/after)\n"
    );
    println!(
        "| case | offered frames/s | delivered frames/s | missed | frame p50 ms | frame p99 ms | images/s | \
         image p50 ms | image p99 ms | CPU % | frames/CPU-s | gps_denied_sim CPU % | subscriber CPU % | kernel drops | load |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for r in results {
        let (f, c) = (&r.imu, &r.compressed);
        println!(
            "| {} | {:.1} | {:.1} | {} | {:.2} | {:.2} | {:.1} | {:.2} | {:.2} | {:.1} | {:.0} | {:.1} | {:.1} | {} | {:.2} / {:.2} |",
            r.name,
            f.offered_hz,
            f.delivered_hz,
            f.missed,
            f.p50_ms,
            f.p99_ms,
            c.delivered_hz,
            c.p50_ms,
            c.p99_ms,
            r.cpu_percent,
            r.frames_per_cpu_second(),
            r.sim_cpu_percent,
            r.subscriber_cpu_percent,
            r.kernel_drops,
            r.load.0,
            r.load.1
        );
    }
    println!("\nmessages/s delivered per topic:\n");
    println!("| case | {} |", TOPICS.join(" | "));
    println!("|---|{}", "---:|".repeat(TOPICS.len()));
    for r in results {
        let rates: Vec<String> = r.topic_hz.iter().map(|h| format!("{h:.1}")).collect();
        println!("| {} | {} |", r.name, rates.join(" | "));
    }
    println!("\nreceipts not matched to a logged send:");
    for r in results {
        println!("  {}: {}", r.name, r.unmatched);
    }
    let find = |python: bool, flat_out: bool, equal: bool| {
        results
            .iter()
            .find(|r| r.python == python && r.flat_out == flat_out && r.name.contains("equal") == equal)
    };
    let at_rate = |prefix: &str| {
        results
            .iter()
            .find(|r| r.name.starts_with(prefix) && r.name.contains("@ 25 Hz"))
    };
    if let Some(floor) = at_rate("DDS alone") {
        for r in ["gps_denied_bridge", "Python reference"]
            .into_iter()
            .filter_map(at_rate)
        {
            println!(
                "at 25 Hz: {} {:.0} frames per CPU-second, DDS alone {:.0}: × {:.2} the CPU per frame of DDS alone",
                r.name,
                r.frames_per_cpu_second(),
                floor.frames_per_cpu_second(),
                floor.frames_per_cpu_second() / r.frames_per_cpu_second()
            );
        }
    }
    if let (Some(b), Some(p)) = (find(false, true, false), find(true, true, false)) {
        println!(
            "flat out: bridge {:.0} frames/s at {:.0} % CPU, Python {:.0} frames/s at {:.0} % CPU: rate × {:.1}; \
             frames per CPU-second × {:.1}",
            b.imu.delivered_hz,
            b.cpu_percent,
            p.imu.delivered_hz,
            p.cpu_percent,
            b.imu.delivered_hz / p.imu.delivered_hz,
            b.frames_per_cpu_second() / p.frames_per_cpu_second()
        );
    }
    if let (Some(b), Some(p)) = (find(false, false, true), find(true, false, true)) {
        println!(
            "equal rate: bridge {:.1} % CPU, Python {:.1} % CPU: the bridge needs {:.3} of the reference's CPU \
             (frames per CPU-second × {:.1})",
            b.cpu_percent,
            p.cpu_percent,
            b.cpu_percent / p.cpu_percent,
            b.frames_per_cpu_second() / p.frames_per_cpu_second()
        );
    }
}
