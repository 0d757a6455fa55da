//! Receipts, their matching to the emulator's send log, and the table.

use std::collections::{HashMap, HashSet};

use bench_support::{wall, StreamResult, Subscriptions};
use futures::{Stream, StreamExt};
use r2r::geometry_msgs::msg::PoseStamped;
use r2r::nav_msgs::msg::Odometry;
use r2r::sensor_msgs::msg::{CameraInfo, CompressedImage, Image};
use r2r::tf2_msgs::msg::TFMessage;
use r2r::QosProfile;

#[derive(Debug, Clone, Copy)]
pub enum Receipt {
    /// `seq`: from the JPEG's comment.
    Compressed {
        auv: u8,
        camera: u8,
        seq: Option<u64>,
        stamp_ns: i64,
        at: f64,
    },
    Raw {
        auv: u8,
        camera: u8,
        stamp_ns: i64,
        at: f64,
    },
    Pose {
        auv: u8,
        stamp_ns: i64,
        at: f64,
    },
    /// camera_info, odom or /tf: counted, not timed.
    Extra,
}

fn ns(sec: i32, nanosec: u32) -> i64 {
    i64::from(sec) * 1_000_000_000 + i64::from(nanosec)
}

/// `seq=N` from "auv_sim auv=<id> seq=<N> camera=<name>".
fn sequence_number(jpeg: &[u8]) -> Option<u64> {
    let comment = std::str::from_utf8(auv_proto::image::jpeg_comment(jpeg)?).ok()?;
    comment
        .split_whitespace()
        .find_map(|w| w.strip_prefix("seq="))
        .and_then(|n| n.parse().ok())
}

/// What tf2's listeners subscribe to `/tf` with.
fn ros_common_tf_qos() -> QosProfile {
    QosProfile::default().keep_last(100).reliable()
}

type ReceiptStream = Box<dyn Stream<Item = Receipt> + Unpin>;
/// Every subscription of a case.
pub type Streams = Subscriptions<Receipt>;

/// `every_topic`: camera_info, odom and /tf too, so that the bridge publishes all it can.
pub fn subscribe(node: &mut r2r::Node, namespace: &str, ids: &[u8], raw: bool, every_topic: bool) -> Streams {
    let qos = QosProfile::default().keep_last(10).reliable();
    let mut subs: Vec<ReceiptStream> = Vec::new();
    for &auv in ids {
        for (camera, name) in [(0u8, "front"), (1, "bottom")] {
            let topic = format!("{namespace}/auv{auv}/{name}/image_raw");
            let s = node
                .subscribe::<CompressedImage>(&format!("{topic}/compressed"), qos.clone())
                .unwrap();
            subs.push(Box::new(s.map(move |m| Receipt::Compressed {
                auv,
                camera,
                seq: sequence_number(&m.data),
                stamp_ns: ns(m.header.stamp.sec, m.header.stamp.nanosec),
                at: wall(),
            })));
            if every_topic {
                let s = node
                    .subscribe_native::<CameraInfo>(&format!("{namespace}/auv{auv}/{name}/camera_info"), qos.clone())
                    .unwrap();
                subs.push(Box::new(s.map(|_| Receipt::Extra)));
            }
            if raw {
                // Native: the receipt needs only the stamp, not a 2.7 MB copy.
                let s = node.subscribe_native::<Image>(&topic, qos.clone()).unwrap();
                subs.push(Box::new(s.map(move |m| Receipt::Raw {
                    auv,
                    camera,
                    stamp_ns: ns(m.header.stamp.sec, m.header.stamp.nanosec),
                    at: wall(),
                })));
            }
        }
        let s = node
            .subscribe::<PoseStamped>(&format!("{namespace}/auv{auv}/pose"), qos.clone())
            .unwrap();
        subs.push(Box::new(s.map(move |m| Receipt::Pose {
            auv,
            stamp_ns: ns(m.header.stamp.sec, m.header.stamp.nanosec),
            at: wall(),
        })));
        if every_topic {
            let s = node
                .subscribe_native::<Odometry>(&format!("{namespace}/auv{auv}/odom"), qos.clone())
                .unwrap();
            subs.push(Box::new(s.map(|_| Receipt::Extra)));
        }
    }
    if every_topic {
        let s = node.subscribe_native::<TFMessage>("/tf", ros_common_tf_qos()).unwrap();
        subs.push(Box::new(s.map(|_| Receipt::Extra)));
    }
    Subscriptions(subs)
}

/// The case of the bridge's receive path alone (`receive_floor`).
pub const RECEIVE_FLOOR: &str = "receive floor: the bridge's SUB readers + parsing, publishing nothing";

#[derive(Debug, Default)]
pub struct CaseResult {
    pub name: String,
    pub compressed: StreamResult,
    pub raw: Option<StreamResult>,
    pub pose: StreamResult,
    /// Receipts a sent message could not be found for: compressed, raw, pose.
    pub unmatched: [usize; 3],
    /// camera_info + odom + /tf messages received per second (every-topic case).
    pub extra_hz: Option<f64>,
    pub cpu_percent: f64,
    pub sim_cpu_percent: f64,
    pub load: (f64, f64),
}

/// Matches receipts to the send log; counts only messages sent in [start, last_send].
pub fn evaluate(sent_log: &str, receipts: &[Receipt], start: f64, last_send: f64, slack: f64, raw: bool) -> CaseResult {
    let mut image_sent: HashMap<(u8, u64), f64> = HashMap::new();
    let mut telemetry_sent: HashMap<u8, Vec<(f64, u64)>> = HashMap::new();
    for line in sent_log.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(auv), Some(seq), Some(t)) = (
            f.get(1).and_then(|v| v.parse::<u8>().ok()),
            f.get(2).and_then(|v| v.parse::<u64>().ok()),
            f.get(3).and_then(|v| v.parse::<f64>().ok()),
        ) else {
            continue;
        };
        match f[0] {
            "images" => {
                image_sent.insert((auv, seq), t);
            }
            "telemetry" => telemetry_sent.entry(auv).or_default().push((t, seq)),
            _ => {}
        }
    }
    for v in telemetry_sent.values_mut() {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let in_window = |t: f64| t >= start && t <= last_send;
    let mut unmatched = [0; 3];

    let mut seen = HashSet::new();
    let mut seq_of_stamp = HashMap::new();
    let mut compressed = Vec::new();
    for r in receipts {
        if let Receipt::Compressed {
            auv,
            camera,
            seq,
            stamp_ns,
            at,
        } = *r
        {
            let Some(&sent) = seq.and_then(|s| image_sent.get(&(auv, s))) else {
                unmatched[0] += 1;
                continue;
            };
            let seq = seq.unwrap_or_default();
            seq_of_stamp.insert((auv, stamp_ns), seq);
            if in_window(sent) && seen.insert((auv, camera, seq)) {
                compressed.push((at - sent) * 1e3);
            }
        }
    }
    let mut raw_latencies = Vec::new();
    let mut seen_raw = HashSet::new();
    let mut poses = Vec::new();
    let mut seen_pose = HashSet::new();
    for r in receipts {
        match *r {
            Receipt::Raw {
                auv,
                camera,
                stamp_ns,
                at,
            } => {
                // Its compressed twin was not received (or not in this case's log).
                let Some(&seq) = seq_of_stamp.get(&(auv, stamp_ns)) else {
                    unmatched[1] += 1;
                    continue;
                };
                let sent = image_sent[&(auv, seq)];
                if in_window(sent) && seen_raw.insert((auv, camera, seq)) {
                    raw_latencies.push((at - sent) * 1e3);
                }
            }
            Receipt::Pose { auv, stamp_ns, at } => {
                let arrived = stamp_ns as f64 * 1e-9 + slack;
                let sends = telemetry_sent.get(&auv).map_or(&[][..], Vec::as_slice);
                let n = sends.partition_point(|(t, _)| *t <= arrived);
                let Some(&(sent, seq)) = n.checked_sub(1).and_then(|i| sends.get(i)) else {
                    unmatched[2] += 1;
                    continue;
                };
                if in_window(sent) && seen_pose.insert((auv, seq)) {
                    poses.push((at - sent) * 1e3);
                }
            }
            Receipt::Compressed { .. } | Receipt::Extra => {}
        }
    }
    let images_in_window = image_sent.values().filter(|&&t| in_window(t)).count();
    let telemetry_in_window = telemetry_sent.values().flatten().filter(|(t, _)| in_window(*t)).count();
    let span = last_send - start;
    CaseResult {
        compressed: StreamResult::summarise(2 * images_in_window, compressed, span),
        raw: raw.then(|| StreamResult::summarise(2 * images_in_window, raw_latencies, span)),
        pose: StreamResult::summarise(telemetry_in_window, poses, span),
        unmatched,
        ..Default::default()
    }
}

pub fn print(results: &[CaseResult], window: f64, warmup: f64, auvs: usize, image_hz: f64, telemetry_hz: f64) {
    println!(
        "AUV end to end: auv_sim → republisher → native r2r subscriber; {auvs} AUVs × 2 cameras 1280×720 JPEG \
         @ {image_hz} Hz + telemetry @ {telemetry_hz} Hz; {window} s windows after {warmup} s warm-up"
    );
    println!("(latency: emulator send → receipt; CPU: the republisher's, % of one core; load: 1-min load average before/after)\n");
    println!("| case | stream | offered msg/s | delivered msg/s | missed | p50 ms | p99 ms | max ms | CPU % | auv_sim CPU % | load |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for r in results {
        let mut rows = vec![("compressed images", &r.compressed)];
        if let Some(raw) = &r.raw {
            rows.push(("raw images (bgr8)", raw));
        }
        rows.push(("pose (telemetry)", &r.pose));
        for (i, (stream, s)) in rows.into_iter().enumerate() {
            let (name, cpu, sim, load) = if i == 0 {
                (
                    r.name.as_str(),
                    format!("{:.1}", r.cpu_percent),
                    format!("{:.1}", r.sim_cpu_percent),
                    format!("{:.2} / {:.2}", r.load.0, r.load.1),
                )
            } else {
                ("", String::new(), String::new(), String::new())
            };
            // The receive floor publishes nothing: there is nothing to deliver or time.
            let delivery = if r.name == RECEIVE_FLOOR {
                "– | – | – | – | –".to_string()
            } else {
                format!(
                    "{:.1} | {} | {:.2} | {:.2} | {:.2}",
                    s.delivered_hz, s.missed, s.p50_ms, s.p99_ms, s.max_ms
                )
            };
            println!(
                "| {name} | {stream} | {:.1} | {delivery} | {cpu} | {sim} | {load} |",
                s.offered_hz
            );
        }
    }
    println!("\nreceipts not matched to a sent message (compressed / raw / pose):");
    for r in results {
        let [c, raw, pose] = r.unmatched;
        println!("  {}: {c} / {raw} / {pose}", r.name);
    }
    for r in results {
        if let Some(hz) = r.extra_hz {
            println!("  {}: camera_info + odom + /tf received: {hz:.1} msg/s", r.name);
        }
    }
    let python = results.iter().find(|r| r.name.starts_with("Python"));
    let floor = results.iter().find(|r| r.name.starts_with("DDS alone"));
    let receive_floor = results.iter().find(|r| r.name == RECEIVE_FLOOR);
    for r in results
        .iter()
        .filter(|r| !r.name.starts_with("DDS alone") && r.name != RECEIVE_FLOOR)
    {
        if let Some(f) = floor {
            println!(
                "{}: CPU × {:.2} that of DDS alone at the same rates",
                r.name,
                r.cpu_percent / f.cpu_percent
            );
        }
    }
    if let Some(receive) = receive_floor {
        println!(
            "{RECEIVE_FLOOR}: {:.1} µs CPU per simulator message",
            us_per_message(receive)
        );
        for r in results.iter().filter(|r| is_bridge(r)) {
            if let Some(over) = floor.map(|f| us_over(r, f)) {
                println!(
                    "{}: bridge − DDS alone = {over:.1} µs CPU per simulator message",
                    r.name
                );
            }
        }
    }
    for r in results
        .iter()
        .filter(|r| !r.name.starts_with("Python") && r.name != RECEIVE_FLOOR)
    {
        let ratio = python.map_or("–".into(), |p| format!("{:.3}", r.cpu_percent / p.cpu_percent));
        let delivered = r.compressed.missed == 0 && r.pose.missed == 0 && r.raw.as_ref().is_none_or(|s| s.missed == 0);
        println!(
            "{}: CPU / Python reference's = {ratio}; every message delivered: {}; \
             p99 compressed {:.2} ms, pose {:.2} ms",
            r.name,
            if delivered { "yes" } else { "no" },
            r.compressed.p99_ms,
            r.pose.p99_ms
        );
    }
}

fn is_bridge(r: &CaseResult) -> bool {
    r.name.starts_with("auv_bridge")
}

/// Messages the simulator sent per second in the window (an image message
/// carries both cameras); DDS alone's log counts the same.
fn messages_per_second(r: &CaseResult) -> f64 {
    r.compressed.offered_hz / 2.0 + r.pose.offered_hz
}

/// CPU µs of the case's process per simulator message.
fn us_per_message(r: &CaseResult) -> f64 {
    r.cpu_percent * 1e4 / messages_per_second(r)
}

/// What `bridge` spends over DDS alone, CPU µs per simulator message.
fn us_over(bridge: &CaseResult, dds_alone: &CaseResult) -> f64 {
    (bridge.cpu_percent - dds_alone.cpu_percent) * 1e4 / messages_per_second(bridge)
}

/// Each bridge case's CPU over DDS alone in every round, their median and
/// spread, the ratio of the rounds' mean CPU, and what the bridge spends
/// over DDS alone per message next to the receive floor's.
pub fn print_rounds_summary(rounds: &[Vec<CaseResult>]) {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let floors: Vec<f64> = rounds
        .iter()
        .filter_map(|rows| rows.iter().find(|r| r.name == RECEIVE_FLOOR))
        .map(us_per_message)
        .collect();
    let floor = if floors.is_empty() {
        "–".to_string()
    } else {
        format!("{:.1}", mean(&floors))
    };
    println!(
        "over {} rounds: CPU × DDS alone at the same rates; µs: CPU per simulator message, mean of the rounds; \
         × floor: CPU over that of DDS alone and the receive floor together (the least a bridge can spend), median",
        rounds.len()
    );
    println!(
        "| case | ratio per round | median | min–max | ratio of means | bridge − DDS alone µs | receive floor µs | × floor |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let mut names: Vec<&str> = Vec::new();
    for r in rounds.iter().flatten().filter(|r| is_bridge(r)) {
        if !names.contains(&r.name.as_str()) {
            names.push(&r.name);
        }
    }
    for name in names {
        let (mut ratios, mut bridge_cpu, mut dds_cpu, mut over) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut over_floor = Vec::new();
        for rows in rounds {
            let bridge = rows.iter().find(|r| r.name == name);
            let dds_alone = rows.iter().find(|r| r.name.starts_with("DDS alone"));
            let (Some(b), Some(d)) = (bridge, dds_alone) else {
                continue;
            };
            ratios.push(b.cpu_percent / d.cpu_percent);
            bridge_cpu.push(b.cpu_percent);
            dds_cpu.push(d.cpu_percent);
            over.push(us_over(b, d));
            if let Some(f) = rows.iter().find(|r| r.name == RECEIVE_FLOOR) {
                over_floor.push(b.cpu_percent / (d.cpu_percent + f.cpu_percent));
            }
        }
        if ratios.is_empty() {
            continue;
        }
        let listed: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
        let mut sorted = ratios.clone();
        sorted.sort_by(f64::total_cmp);
        over_floor.sort_by(f64::total_cmp);
        let times_floor = if over_floor.is_empty() {
            "–".to_string()
        } else {
            format!("{:.2}", bench_support::median(&over_floor))
        };
        println!(
            "| {name} | {} | {:.2} | {:.2}–{:.2} | {:.2} | {:.1} | {floor} | {times_floor} |",
            listed.join(", "),
            bench_support::median(&sorted),
            sorted[0],
            sorted[sorted.len() - 1],
            mean(&bridge_cpu) / mean(&dds_cpu),
            mean(&over),
        );
    }
}
