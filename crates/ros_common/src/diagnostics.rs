//! `/diagnostics` (diagnostic_msgs): per stream its rate, frames published,
//! drops and why, bytes/s, latency and the age of its last frame.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use r2r::diagnostic_msgs::msg::{DiagnosticArray, DiagnosticStatus, KeyValue};
use r2r::Publisher;
use tokio::sync::watch;

use crate::stats::StreamStats;
use crate::time::{to_ros_time, wall_now};

/// One stream the diagnostics report on.
#[derive(Debug, Clone)]
pub struct Watched {
    pub name: String,
    pub hardware_id: String,
    pub stats: Arc<StreamStats>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Previous {
    frames: u64,
    bytes: u64,
}

fn kv(key: &str, value: impl ToString) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: value.to_string(),
    }
}

/// Level by the age of the last frame: OK while fresh, WARN when it stopped,
/// STALE when nothing ever came.
fn status(w: &Watched, prev: &mut Previous, dt: f64, now: f64) -> DiagnosticStatus {
    let frames = w.stats.frames_published.load(Ordering::Relaxed);
    let bytes = w.stats.bytes_in.load(Ordering::Relaxed);
    let rate = (frames - prev.frames) as f64 / dt;
    let bps = (bytes - prev.bytes) as f64 / dt;
    *prev = Previous { frames, bytes };
    let age = w.stats.last_frame().map(|t| now - t);
    let drops = w.stats.drops();
    let dropped = w.stats.total_dropped();
    let (level, message) = match age {
        None => (DiagnosticStatus::STALE as u8, "no data yet".to_string()),
        Some(a) if a > 3.0 => (DiagnosticStatus::WARN as u8, format!("no frame for {a:.1} s")),
        Some(_) if dropped > 0 => (
            DiagnosticStatus::OK as u8,
            format!("{rate:.1} Hz, {dropped} dropped so far"),
        ),
        Some(_) => (DiagnosticStatus::OK as u8, format!("{rate:.1} Hz")),
    };
    let mut values = vec![
        kv("rate_hz", format!("{rate:.2}")),
        kv("frames_published", frames),
        kv("frames_dropped", dropped),
        kv("bytes_per_s", format!("{bps:.0}")),
        kv("datagrams", w.stats.datagrams.load(Ordering::Relaxed)),
        kv("last_frame_age_s", age.map_or("never".into(), |a| format!("{a:.3}"))),
        kv(
            "latency_ms",
            w.stats.latency_ms().map_or("unknown".into(), |l| format!("{l:.2}")),
        ),
    ];
    values.extend(drops.iter().map(|(reason, n)| kv(&format!("dropped_{reason}"), n)));
    DiagnosticStatus {
        level,
        name: w.name.clone(),
        message,
        hardware_id: w.hardware_id.clone(),
        values,
    }
}

/// Publishes the diagnostics of `watched` every `period`.
pub async fn run(
    publisher: Publisher<DiagnosticArray>,
    watched: Vec<Watched>,
    period: Duration,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut prev = vec![Previous::default(); watched.len()];
    let mut last = wall_now();
    let mut tick = tokio::time::interval(period);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = shutdown.changed() => break,
        }
        let now = wall_now();
        let dt = (now - last).max(1e-3);
        last = now;
        let statuses = watched
            .iter()
            .zip(prev.iter_mut())
            .map(|(w, p)| status(w, p, dt, now))
            .collect();
        let msg = DiagnosticArray {
            header: crate::msgs::header(to_ros_time(now), ""),
            status: statuses,
        };
        let _ = publisher.publish(&msg);
    }
}
