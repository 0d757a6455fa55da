//! `/diagnostics` (diagnostic_msgs): per stream its rate, frames published,
//! drops and why, bytes/s, latency and the age of its last frame; per
//! process its memory.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use r2r::diagnostic_msgs::msg::{DiagnosticArray, DiagnosticStatus, KeyValue};
use r2r::{Node, Publisher};
use tokio::sync::watch;

use crate::stats::StreamStats;
use crate::time::{to_ros_time, wall_now, TimeBase, TimeBaseReport, TimeSourceKind};

/// The keys of each stream's values, for the nodes that write them and the
/// views that read them (`status`).
pub mod keys {
    pub const RATE_HZ: &str = "rate_hz";
    pub const FRAMES_PUBLISHED: &str = "frames_published";
    pub const FRAMES_DROPPED: &str = "frames_dropped";
    pub const BYTES_PER_S: &str = "bytes_per_s";
    pub const DATAGRAMS: &str = "datagrams";
    pub const LAST_FRAME_AGE_S: &str = "last_frame_age_s";
    pub const LATENCY_MS: &str = "latency_ms";
    /// Followed by the reason: `dropped_bad_length`, …
    pub const DROPPED_PREFIX: &str = "dropped_";
    /// The process's status, `<node>: memory`: see `crate::memory::MemoryUsage`.
    pub const MEMORY: &str = "memory";
    pub const MEMORY_SUFFIX: &str = ": memory";
    /// The process's status once `/diagnostics` arrays failed to go out.
    pub const DIAGNOSTICS_PUBLISHER: &str = "diagnostics publisher";
    pub const RESIDENT_KIB: &str = "resident_kib";
    pub const HEAP_IN_USE_KIB: &str = "heap_in_use_kib";
    pub const HEAP_HELD_KIB: &str = "heap_held_kib";
    /// A command stream's: what the vehicle holds (`controller`, `neutral`, `none`).
    pub const COMMAND_IN_FORCE: &str = "command_in_force";
    /// Seconds since the controller's command in force was issued.
    pub const COMMAND_AGE_S: &str = "command_age_s";
    pub const NEUTRAL_COMMANDS_SENT: &str = "neutral_commands_sent";
    /// `true` while a neutral command waits for the transport to take it.
    pub const NEUTRAL_OWED: &str = "neutral_owed";
    /// What the user can do about the stream's losses (e.g. a receive buffer too small).
    pub const ADVICE: &str = "advice";
    /// A time base's: the simulator PC's clock minus this machine's, in ms
    /// (`unknown` until the simulator's anchor is heard).
    pub const CLOCK_OFFSET_MS: &str = "clock_offset_ms";
    /// A time base's: drift of the simulator's time against this machine's clock.
    pub const CLOCK_DRIFT_PPM: &str = "clock_drift_ppm";
    pub const ANCHORS_REFUSED: &str = "anchors_refused";
    pub const RESTARTS: &str = "restarts";
    /// A time base's: where its stamps come from.
    pub const STAMPS: &str = "stamps";
    /// A time base's: sim seconds per wall second (`paused`, `unknown`).
    pub const PACE: &str = "pace";
    /// A time base's: how often the pace left real time.
    pub const PACE_DEPARTURES: &str = "pace_departures";
}

/// The simulator a status is about: the first part of its `hardware_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Simulator {
    RflySim,
    Auv,
    GpsDenied,
    AeroSim,
}

impl Simulator {
    pub fn as_str(self) -> &'static str {
        match self {
            Simulator::RflySim => "rflysim",
            Simulator::Auv => "auv",
            Simulator::GpsDenied => "gps_denied",
            Simulator::AeroSim => "aerosim",
        }
    }
}

/// The name and `hardware_id` of one status, worded the one way every
/// bridge words them: name `<node>: <subject> <stream>` (`<node>: <stream>`
/// for a stream of the whole bridge), `hardware_id` `<simulator>/<device>`.
/// The `status` view groups by what precedes the first `": "`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusId {
    pub name: String,
    pub hardware_id: String,
}

impl StatusId {
    /// A stream of one vehicle, sensor or device, `subject` (`uav1`,
    /// `sensor3`, `drone`, an actor): it names the device in both.
    pub fn of(node: &str, simulator: Simulator, subject: &str, stream: &str) -> Self {
        Self {
            name: format!("{node}: {subject} {stream}"),
            hardware_id: hardware_id(simulator, subject),
        }
    }

    /// A stream of the whole bridge (a time base, a port every device shares)
    /// whose device is `device` (`broker`, `coptersim`).
    pub fn bridge_wide(node: &str, simulator: Simulator, device: &str, stream: &str) -> Self {
        Self {
            name: format!("{node}: {stream}"),
            hardware_id: hardware_id(simulator, device),
        }
    }

    /// A status of the bridge process itself (its memory, its diagnostics
    /// publisher): no simulator device, so no `hardware_id`.
    pub fn own(node: &str, what: &str) -> Self {
        Self {
            name: format!("{node}: {what}"),
            hardware_id: String::new(),
        }
    }
}

/// `<simulator>/<device>`: `auv/auv0`, `aerosim/renderer`.
pub fn hardware_id(simulator: Simulator, device: &str) -> String {
    format!("{}/{device}", simulator.as_str())
}

/// Where a process's diagnostics go: `/diagnostics`, in the name of one of
/// its nodes.
pub struct Output {
    publisher: Publisher<DiagnosticArray>,
    node_name: String,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output").field("node_name", &self.node_name).finish()
    }
}

/// The `/diagnostics` publisher of `node`.
pub fn publisher(node: &mut Node) -> r2r::Result<Output> {
    Ok(Output {
        publisher: node.create_publisher("/diagnostics", crate::qos::diagnostics())?,
        node_name: node.fully_qualified_name()?,
    })
}

/// One stream the diagnostics report on.
#[derive(Debug, Clone)]
pub struct Watched {
    pub id: StatusId,
    pub stats: Arc<StreamStats>,
}

/// One simulator instance's time base the diagnostics report on.
#[derive(Debug, Clone)]
pub struct WatchedClock {
    pub id: StatusId,
    pub base: Arc<TimeBase>,
}

/// A time base's status: where its stamps come from, the simulator PC's
/// clock offset and drift, anchors refused. WARN while anchors are refused.
fn clock_status(id: &StatusId, r: &TimeBaseReport) -> DiagnosticStatus {
    let stamps = match r.kind {
        TimeSourceKind::None => "no sample yet",
        TimeSourceKind::Heartbeat | TimeSourceKind::Arrivals if r.real_time => {
            "this machine's clock, from sim time (real time)"
        }
        TimeSourceKind::Heartbeat | TimeSourceKind::Arrivals => "this machine's clock, the arrival (not real time)",
        TimeSourceKind::SimTime => "sim time (/clock)",
    };
    let offset = r.clock_offset_ms.map(|o| format!("{o:.1}"));
    let message = match (&offset, r.kind) {
        (_, TimeSourceKind::SimTime) => format!("stamps are sim time; pace {}", r.pace_words()),
        (_, TimeSourceKind::Heartbeat | TimeSourceKind::Arrivals) if !r.real_time => format!(
            "pace {}: stamps are the arrival on this machine's clock (use_sim_time keeps sim time)",
            r.pace_words()
        ),
        (Some(o), _) => format!("simulator clock {o} ms from this machine's; stamps on this machine's"),
        (None, TimeSourceKind::None) => "no sample yet".to_string(),
        (None, _) => "stamps on this machine's clock; simulator clock offset unknown (no anchor)".to_string(),
    };
    let level = if r.anchors_refused > 0 {
        DiagnosticStatus::WARN as u8
    } else {
        DiagnosticStatus::OK as u8
    };
    let message = if r.anchors_refused > 0 {
        format!("{message}; {} anchor(s) refused", r.anchors_refused)
    } else {
        message
    };
    DiagnosticStatus {
        level,
        name: id.name.clone(),
        message,
        hardware_id: id.hardware_id.clone(),
        values: vec![
            kv(keys::STAMPS, stamps),
            kv(keys::CLOCK_OFFSET_MS, offset.unwrap_or_else(|| "unknown".into())),
            kv(
                keys::CLOCK_DRIFT_PPM,
                r.drift_ppm.map_or("unknown".into(), |d| format!("{d:.1}")),
            ),
            kv(keys::ANCHORS_REFUSED, r.anchors_refused),
            kv(keys::RESTARTS, r.restarts),
            kv(
                keys::PACE,
                r.pace.map_or_else(|| "unknown".into(), |p| format!("{p:.3}")),
            ),
            kv(keys::PACE_DEPARTURES, r.pace_departures),
        ],
    }
}

/// Whether a time base left real time while its pace still reads 1 (within
/// 1 %): the arrivals' delay moved, not the simulation's pace.
fn delay_moved(r: &TimeBaseReport) -> bool {
    !r.real_time && !r.paused() && r.pace.is_some_and(|p| (p - 1.0).abs() < 0.01)
}

/// The log line when a time base's stamps change mode (the pace left real
/// time, or came back), once per change the diagnostics see.
fn pace_line(id: &StatusId, r: &TimeBaseReport) -> String {
    if r.real_time {
        format!(
            "{}: the simulation keeps real time again: stamps follow its sim time",
            id.name
        )
    } else if delay_moved(r) {
        format!(
            "{}: the samples' delay moved more than a simulation keeping real time allows, at pace {} \
             (a loaded machine or network?): stamps are each sample's arrival on this machine's clock until \
             it settles",
            id.name,
            r.pace_words()
        )
    } else {
        let pace = if r.paused() {
            "is paused".to_string()
        } else {
            format!("runs at {}", r.pace_words())
        };
        format!(
            "{}: the simulation {pace} (not real time): stamps are each sample's arrival on this machine's \
             clock until it keeps real time again; set use_sim_time:=true to stamp with sim time",
            id.name,
        )
    }
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
    let advice = w.stats.advice();
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
        kv(keys::RATE_HZ, format!("{rate:.2}")),
        kv(keys::FRAMES_PUBLISHED, frames),
        kv(keys::FRAMES_DROPPED, dropped),
        kv(keys::BYTES_PER_S, format!("{bps:.0}")),
        kv(keys::DATAGRAMS, w.stats.datagrams.load(Ordering::Relaxed)),
        kv(
            keys::LAST_FRAME_AGE_S,
            age.map_or("never".into(), |a| format!("{a:.3}")),
        ),
        kv(
            keys::LATENCY_MS,
            w.stats.latency_ms().map_or("unknown".into(), |l| format!("{l:.2}")),
        ),
    ];
    if let Some(c) = w.stats.command_status() {
        let in_force = match (c.in_force_since, c.neutral_in_force) {
            (Some(_), _) => "controller",
            (None, true) => "neutral",
            (None, false) => "none",
        };
        values.push(kv(keys::COMMAND_IN_FORCE, in_force));
        values.push(kv(
            keys::COMMAND_AGE_S,
            c.in_force_since
                .map_or("none".into(), |t| format!("{:.3}", (now - t).max(0.0))),
        ));
        values.push(kv(keys::NEUTRAL_COMMANDS_SENT, c.neutral_sent));
        values.push(kv(keys::NEUTRAL_OWED, c.neutral_owed));
    }
    values.extend(
        drops
            .iter()
            .map(|(reason, n)| kv(&format!("{}{reason}", keys::DROPPED_PREFIX), n)),
    );
    let level = match &advice {
        Some(a) => {
            values.push(kv(keys::ADVICE, a));
            level.max(DiagnosticStatus::WARN as u8)
        }
        None => level,
    };
    DiagnosticStatus {
        level,
        name: w.id.name.clone(),
        message,
        hardware_id: w.id.hardware_id.clone(),
        values,
    }
}

/// The diagnostics' own failed publishes, once there are any.
fn own_status(node_name: &str, failed_publishes: u64) -> Option<DiagnosticStatus> {
    let id = StatusId::own(node_name, keys::DIAGNOSTICS_PUBLISHER);
    (failed_publishes > 0).then(|| DiagnosticStatus {
        level: DiagnosticStatus::WARN as u8,
        name: id.name,
        message: format!("{failed_publishes} diagnostics arrays not published"),
        hardware_id: id.hardware_id,
        values: vec![kv(&format!("{}publish_failed", keys::DROPPED_PREFIX), failed_publishes)],
    })
}

/// The memory of the process whose node is `node_name`.
fn memory_status(node_name: &str, usage: crate::memory::MemoryUsage) -> DiagnosticStatus {
    let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
    let id = StatusId::own(node_name, keys::MEMORY);
    DiagnosticStatus {
        level: DiagnosticStatus::OK as u8,
        name: id.name,
        message: format!(
            "resident {:.1} MiB, heap in use {:.1} MiB of {:.1} MiB held",
            mib(usage.resident),
            mib(usage.heap_in_use),
            mib(usage.heap_held)
        ),
        hardware_id: id.hardware_id,
        values: vec![
            kv(keys::RESIDENT_KIB, usage.resident / 1024),
            kv(keys::HEAP_IN_USE_KIB, usage.heap_in_use / 1024),
            kv(keys::HEAP_HELD_KIB, usage.heap_held / 1024),
        ],
    }
}

/// The diagnostics of a process: its watched streams and its memory.
#[allow(missing_debug_implementations)] // holds a publisher, which is not Debug
pub struct Reporter {
    output: Output,
    watched: Vec<Watched>,
    clocks: Vec<WatchedClock>,
    /// Per clock, whether its stamps followed sim time at the last array.
    clocks_real_time: Vec<bool>,
    prev: Vec<Previous>,
    /// Reported in the next array that gets through.
    failed_publishes: u64,
    last: f64,
}

impl Reporter {
    pub fn new(output: Output, watched: Vec<Watched>, clocks: Vec<WatchedClock>) -> Self {
        Self {
            prev: vec![Previous::default(); watched.len()],
            clocks_real_time: vec![true; clocks.len()],
            output,
            watched,
            clocks,
            failed_publishes: 0,
            last: wall_now(),
        }
    }

    /// Publishes one array: every stream's status since the last one.
    pub fn publish(&mut self) {
        let now = wall_now();
        let dt = (now - self.last).max(1e-3);
        self.last = now;
        let mut statuses: Vec<DiagnosticStatus> = self
            .watched
            .iter()
            .zip(self.prev.iter_mut())
            .map(|(w, p)| status(w, p, dt, now))
            .collect();
        let node = self.output.node_name.trim_start_matches('/');
        for (c, was_real_time) in self.clocks.iter().zip(self.clocks_real_time.iter_mut()) {
            let report = c.base.report();
            if report.real_time != *was_real_time && !c.base.uses_sim_time() {
                *was_real_time = report.real_time;
                let line = pace_line(&c.id, &report);
                // The logger names the node already.
                let line = line.strip_prefix(&format!("{node}: ")).unwrap_or(&line);
                // A delay that moved is this machine's or the network's, not the user's to act on.
                if report.real_time || delay_moved(&report) {
                    r2r::log_info!(node, "{line}");
                } else {
                    r2r::log_warn!(node, "{line}");
                }
            }
            statuses.push(clock_status(&c.id, &report));
        }
        statuses.extend(crate::memory::usage().map(|u| memory_status(&self.output.node_name, u)));
        statuses.extend(own_status(&self.output.node_name, self.failed_publishes));
        let msg = DiagnosticArray {
            header: crate::msgs::header(to_ros_time(now), ""),
            status: statuses,
        };
        if self.output.publisher.publish(&msg).is_err() {
            self.failed_publishes += 1;
        }
    }
}

/// Publishes `reporter`'s diagnostics every `period` until the stop (the
/// process publishes a last array itself once its threads ended).
pub async fn run(reporter: Arc<Mutex<Reporter>>, period: Duration, mut shutdown: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(period);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = shutdown.changed() => break,
        }
        reporter.lock().unwrap_or_else(|e| e.into_inner()).publish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value<'a>(s: &'a DiagnosticStatus, key: &str) -> Option<&'a str> {
        s.values.iter().find(|kv| kv.key == key).map(|kv| kv.value.as_str())
    }

    #[test]
    fn failed_publishes_of_a_streams_other_outputs_show_as_its_drops() {
        let stats = Arc::new(StreamStats::default());
        stats.published(100);
        stats.count_publish(Err(()), "tf_publish_failed");
        stats.count_publish(Err(()), "clock_publish_failed");
        let w = Watched {
            id: StatusId::of("rflysim_bridge", Simulator::RflySim, "uav1", "true state"),
            stats,
        };
        let s = status(&w, &mut Previous::default(), 1.0, wall_now());
        assert_eq!(value(&s, "dropped_tf_publish_failed"), Some("1"));
        assert_eq!(value(&s, "dropped_clock_publish_failed"), Some("1"));
        assert_eq!(value(&s, "frames_dropped"), Some("2"));
    }

    #[test]
    fn the_memory_status_is_named_after_the_node_and_counts_in_kib() {
        let usage = crate::memory::MemoryUsage {
            resident: 100 << 20,
            heap_in_use: 30 << 20,
            heap_held: 40 << 20,
        };
        let s = memory_status("rflysim_bridge", usage);
        assert_eq!(s.name, "rflysim_bridge: memory");
        assert_eq!(value(&s, keys::RESIDENT_KIB), Some("102400"));
        assert_eq!(value(&s, keys::HEAP_IN_USE_KIB), Some("30720"));
        assert_eq!(value(&s, keys::HEAP_HELD_KIB), Some("40960"));
        assert_eq!(s.message, "resident 100.0 MiB, heap in use 30.0 MiB of 40.0 MiB held");
    }

    #[test]
    fn a_time_base_reports_its_clock_offset_in_ms_and_refused_anchors() {
        let r = TimeBaseReport {
            kind: TimeSourceKind::Heartbeat,
            clock_offset_ms: Some(10_000.25),
            drift_ppm: None,
            anchors_refused: 0,
            restarts: 1,
            pace: Some(1.0),
            real_time: true,
            pace_departures: 0,
        };
        let id = StatusId::of("rflysim_bridge", Simulator::RflySim, "uav1", "time base");
        let s = clock_status(&id, &r);
        assert_eq!(value(&s, keys::CLOCK_OFFSET_MS), Some("10000.2"));
        assert_eq!(value(&s, keys::CLOCK_DRIFT_PPM), Some("unknown"));
        assert_eq!(s.level, DiagnosticStatus::OK as u8);
        let refused = clock_status(
            &id,
            &TimeBaseReport {
                anchors_refused: 2,
                ..r
            },
        );
        assert_eq!(refused.level, DiagnosticStatus::WARN as u8);
        assert_eq!(value(&refused, keys::ANCHORS_REFUSED), Some("2"));
        let none = clock_status(
            &id,
            &TimeBaseReport {
                clock_offset_ms: None,
                kind: TimeSourceKind::Arrivals,
                ..r
            },
        );
        assert_eq!(value(&none, keys::CLOCK_OFFSET_MS), Some("unknown"));
        let slow = clock_status(
            &id,
            &TimeBaseReport {
                clock_offset_ms: None,
                pace: Some(0.1),
                real_time: false,
                pace_departures: 1,
                ..r
            },
        );
        assert_eq!(value(&slow, keys::PACE), Some("0.100"));
        assert_eq!(value(&slow, keys::PACE_DEPARTURES), Some("1"));
        assert_eq!(
            value(&slow, keys::STAMPS),
            Some("this machine's clock, the arrival (not real time)")
        );
        assert!(
            slow.message
                .starts_with("pace 0.100x real time: stamps are the arrival"),
            "{}",
            slow.message
        );
        assert!(pace_line(
            &id,
            &TimeBaseReport {
                real_time: false,
                pace: Some(0.0),
                ..r
            }
        )
        .contains("simulation is paused"));
        let jittery = TimeBaseReport {
            real_time: false,
            pace: Some(1.0004),
            ..r
        };
        assert!(delay_moved(&jittery));
        assert!(pace_line(&id, &jittery).contains("the samples' delay moved"));
        assert!(!delay_moved(&TimeBaseReport {
            real_time: false,
            pace: Some(1.05),
            ..r
        }));
    }

    #[test]
    fn the_diagnostics_report_their_own_failed_publishes() {
        assert!(own_status("/auv_bridge", 0).is_none());
        let s = own_status("/auv_bridge", 3).unwrap();
        assert_eq!(s.name, "/auv_bridge: diagnostics publisher");
        assert_eq!(s.level, DiagnosticStatus::WARN as u8);
        assert_eq!(value(&s, "dropped_publish_failed"), Some("3"));
    }

    #[test]
    fn every_status_is_named_node_subject_stream_on_simulator_slash_device() {
        let id = |name: &str, hardware_id: &str| StatusId {
            name: name.into(),
            hardware_id: hardware_id.into(),
        };
        let cases = [
            (
                StatusId::of("rflysim_bridge", Simulator::RflySim, "uav1", "imu"),
                id("rflysim_bridge: uav1 imu", "rflysim/uav1"),
            ),
            (
                StatusId::of("auv_bridge", Simulator::Auv, "auv0", "images"),
                id("auv_bridge: auv0 images", "auv/auv0"),
            ),
            (
                StatusId::of("gps_denied_bridge", Simulator::GpsDenied, "drone", "telemetry"),
                id("gps_denied_bridge: drone telemetry", "gps_denied/drone"),
            ),
            (
                StatusId::bridge_wide("aerosim_bridge", Simulator::AeroSim, "broker", "time base"),
                id("aerosim_bridge: time base", "aerosim/broker"),
            ),
            (
                StatusId::own("/auv_bridge", keys::MEMORY),
                id(&format!("/auv_bridge{}", keys::MEMORY_SUFFIX), ""),
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }
}
