//! Per-stream counters (what went through, what was dropped and why) and
//! log lines limited in rate, so that bad input is visible without flooding.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Input of a second simulator instance that a stream does not follow (e.g.
/// the heartbeat of another vehicle's CopterSim).
pub const OTHER_SOURCE: &str = "other_source";

/// Counted among the drops, but not faults of the input: a transport that
/// duplicates, a simulator that restarts, another instance's input.
pub const NOT_FAULTS: [&str; 3] = ["duplicate", "restart", OTHER_SOURCE];

#[derive(Debug, Default)]
pub struct StreamStats {
    pub frames_published: AtomicU64,
    pub bytes_in: AtomicU64,
    pub datagrams: AtomicU64,
    /// Wall-clock seconds (epoch) of the last frame published.
    last_frame: Mutex<Option<f64>>,
    drops: Mutex<BTreeMap<&'static str, u64>>,
    /// Drop counts a transport keeps itself (e.g. a datagram reassembler),
    /// replaced as a whole at each update.
    transport_drops: Mutex<BTreeMap<&'static str, u64>>,
    /// Age of the last frame's data when it was published (wall clock − stamp).
    latency_ms: Mutex<Option<f64>>,
    /// For a vehicle's command stream: what is in force (`crate::command`).
    command: Mutex<Option<CommandStatus>>,
    /// What the user can do about the stream's losses, once known.
    advice: Mutex<Option<String>>,
}

/// A vehicle's command state, as `/diagnostics` shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CommandStatus {
    /// Wall-clock issue time of the controller's command in force (`None`: none is).
    pub in_force_since: Option<f64>,
    /// The watchdog's or the stop's neutral command is what the vehicle holds.
    pub neutral_in_force: bool,
    /// Neutral commands the transport took.
    pub neutral_sent: u64,
    /// A neutral command is owed and not yet taken (no simulator connected).
    pub neutral_owed: bool,
}

impl StreamStats {
    pub fn drop_frame(&self, reason: &'static str) {
        *self.drops.lock().unwrap().entry(reason).or_default() += 1;
    }

    /// Counts a failed publish of one output of a frame under `reason` (a
    /// frame whose main message went out still counts as published); true
    /// when it went out.
    pub fn count_publish<E>(&self, outcome: Result<(), E>, reason: &'static str) -> bool {
        outcome.map_err(|_| self.drop_frame(reason)).is_ok()
    }

    pub fn published(&self, bytes: usize) {
        self.frames_published.fetch_add(1, Ordering::Relaxed);
        self.bytes_in.fetch_add(bytes as u64, Ordering::Relaxed);
        *self.last_frame.lock().unwrap() = Some(crate::time::wall_now());
    }

    pub fn set_latency_ms(&self, ms: f64) {
        *self.latency_ms.lock().unwrap() = Some(ms);
    }

    pub fn set_command_status(&self, status: CommandStatus) {
        *self.command.lock().unwrap() = Some(status);
    }

    pub fn command_status(&self) -> Option<CommandStatus> {
        *self.command.lock().unwrap()
    }

    pub fn set_advice(&self, advice: String) {
        *self.advice.lock().unwrap() = Some(advice);
    }

    pub fn advice(&self) -> Option<String> {
        self.advice.lock().unwrap().clone()
    }

    pub fn latency_ms(&self) -> Option<f64> {
        *self.latency_ms.lock().unwrap()
    }

    /// The transport's own counters, by reason.
    pub fn set_transport_drops(&self, counts: &[(&'static str, u64)]) {
        let mut t = self.transport_drops.lock().unwrap();
        t.clear();
        t.extend(counts.iter().filter(|(_, n)| *n > 0).copied());
    }

    pub fn last_frame(&self) -> Option<f64> {
        *self.last_frame.lock().unwrap()
    }

    /// Every drop reason with its count: the decoder's own, and the transport's.
    pub fn drops(&self) -> BTreeMap<&'static str, u64> {
        let mut d = self.drops.lock().unwrap().clone();
        for (k, v) in self.transport_drops.lock().unwrap().iter() {
            *d.entry(k).or_default() += v;
        }
        d
    }

    pub fn total_dropped(&self) -> u64 {
        self.drops()
            .iter()
            .filter(|(k, _)| !NOT_FAULTS.contains(k))
            .map(|(_, v)| v)
            .sum()
    }
}

/// Lets one line through per `period`, and says how many were held back.
#[derive(Debug)]
pub struct RateLimitedLog {
    period: Duration,
    last: Option<Instant>,
    suppressed: u64,
}

impl RateLimitedLog {
    pub fn new(period: Duration) -> Self {
        Self {
            period,
            last: None,
            suppressed: 0,
        }
    }

    /// `Some(n)` when a line may be written now, `n` being how many were held back.
    pub fn allow(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self.last.is_some_and(|l| now.duration_since(l) < self.period) {
            self.suppressed += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.suppressed))
    }

    /// The warning about input `stream` did not take, when one may be
    /// written now: see [`dropped_line`].
    pub fn dropped(&mut self, stream: impl Display, what: impl Display, reason: impl Display) -> Option<String> {
        self.allow().map(|held| dropped_line(stream, what, reason, held))
    }

    /// A warning of `stream` that is not about a drop (a neutral not
    /// confirmed, an anchor refused), when one may be written now: see
    /// [`event_line`].
    pub fn event(&mut self, stream: impl Display, event: impl Display) -> Option<String> {
        self.allow().map(|held| event_line(stream, event, held))
    }

    /// [`Self::dropped`], written as a warning of `logger`.
    pub fn warn_dropped(&mut self, logger: &str, stream: impl Display, what: impl Display, reason: impl Display) {
        if let Some(line) = self.dropped(stream, what, reason) {
            r2r::log_warn!(logger, "{line}");
        }
    }

    /// [`Self::event`], written as a warning of `logger`.
    pub fn warn_event(&mut self, logger: &str, stream: impl Display, event: impl Display) {
        if let Some(line) = self.event(stream, event) {
            r2r::log_warn!(logger, "{line}");
        }
    }
}

/// The one wording of a rate-limited warning about dropped input:
/// `<stream>: <what> dropped: <reason> (<n> more held back)`, without the
/// parenthesis when nothing was held back.
pub fn dropped_line(stream: impl Display, what: impl Display, reason: impl Display, held_back: u64) -> String {
    event_line(stream, format_args!("{what} dropped: {reason}"), held_back)
}

/// The same for any other rate-limited warning: `<stream>: <event> (<n> more held back)`.
pub fn event_line(stream: impl Display, event: impl Display, held_back: u64) -> String {
    if held_back == 0 {
        format!("{stream}: {event}")
    } else {
        format!("{stream}: {event} ({held_back} more held back)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_counts_what_it_holds_back() {
        let mut l = RateLimitedLog::new(Duration::from_secs(60));
        assert_eq!(l.allow(), Some(0));
        assert_eq!(l.allow(), None);
        assert_eq!(l.allow(), None);
        l.last = Some(Instant::now() - Duration::from_secs(61));
        assert_eq!(l.allow(), Some(2));
    }

    #[test]
    fn every_rate_limited_line_is_worded_stream_what_dropped_reason_held_back() {
        assert_eq!(
            dropped_line("uav1 imu", "datagram", "bad length 12", 0),
            "uav1 imu: datagram dropped: bad length 12"
        );
        assert_eq!(
            dropped_line("auv0 images", "message", "not JSON", 3),
            "auv0 images: message dropped: not JSON (3 more held back)"
        );
        assert_eq!(
            event_line("sensor2 gimbal", "neutral not confirmed", 1),
            "sensor2 gimbal: neutral not confirmed (1 more held back)"
        );
        let mut l = RateLimitedLog::new(Duration::from_secs(60));
        assert_eq!(
            l.dropped("scene", "vehicle 3", "pos_ned is not finite").as_deref(),
            Some("scene: vehicle 3 dropped: pos_ned is not finite")
        );
        assert_eq!(l.dropped("scene", "vehicle 3", "again"), None);
        assert_eq!(l.event("scene", "held"), None);
        l.last = Some(Instant::now() - Duration::from_secs(61));
        assert_eq!(
            l.dropped("scene", "vehicle 4", "x").as_deref(),
            Some("scene: vehicle 4 dropped: x (2 more held back)")
        );
    }

    #[test]
    fn a_failed_publish_is_a_counted_fault() {
        let s = StreamStats::default();
        assert!(s.count_publish(Ok::<(), ()>(()), "tf_publish_failed"));
        assert!(!s.count_publish(Err(()), "tf_publish_failed"));
        assert!(!s.count_publish(Err(()), "clock_publish_failed"));
        let d = s.drops();
        assert_eq!((d["tf_publish_failed"], d["clock_publish_failed"]), (1, 1));
        assert_eq!(s.total_dropped(), 2);
    }

    #[test]
    fn drops_merge_decoder_and_transport_reasons() {
        let s = StreamStats::default();
        s.drop_frame("bad_image");
        s.drop_frame("bad_image");
        s.set_transport_drops(&[("garbage", 3), ("timed_out", 1), ("duplicate", 5), ("late", 0)]);
        let d = s.drops();
        assert_eq!(
            (d["bad_image"], d["garbage"], d["timed_out"], d["duplicate"]),
            (2, 3, 1, 5)
        );
        assert_eq!(s.total_dropped(), 6);
    }
}
