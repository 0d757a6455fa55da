//! One time base for every stream of a process (RflySim's Python SDK stamps
//! each sensor on its own clock): simulation time is mapped to wall-clock
//! time through an anchor the simulator sends (RflySim: the CopterSim
//! heartbeat) when one is heard, else through the first frame. With
//! `use_sim_time`, stamps are simulation time itself (and `/clock` carries it).

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use r2r::builtin_interfaces::msg::Time;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSourceKind {
    /// Not anchored yet.
    None,
    /// Epoch of sim time 0 from the simulator (RflySim: the CopterSim heartbeat).
    Heartbeat,
    /// Wall-clock arrival of the first frame (or of the first after a restart).
    FirstFrame,
    /// Stamps are sim time (`use_sim_time`).
    SimTime,
}

#[derive(Debug)]
struct State {
    /// Wall-clock epoch seconds of sim time 0.
    offset: Option<f64>,
    kind: TimeSourceKind,
    last_sim: f64,
    /// The simulator instance whose anchors are followed (RflySim: one
    /// CopterSim per vehicle, each with its own start time).
    anchor_source: Option<i64>,
}

/// Sim time a simulator can plausibly report, in seconds (a year): a stamp
/// outside it is a corrupt sample, not a time to map.
pub const MAX_SIM_TIME: f64 = 365.0 * 86_400.0;

/// Why a sample's time cannot be stamped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BadSimTime(pub f64);

impl BadSimTime {
    /// For counters and diagnostics.
    pub const REASON: &'static str = "bad_stamp";
}

impl std::fmt::Display for BadSimTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sim time {} is not a time in 0..{MAX_SIM_TIME} s", self.0)
    }
}

/// Shared by every publisher of a process.
#[derive(Debug)]
pub struct TimeBase {
    use_sim_time: bool,
    state: Mutex<State>,
}

/// Sim time going back by more than this (s) re-anchors a first-frame mapping.
const RESTART_JUMP: f64 = 1.0;

pub fn wall_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

pub fn to_ros_time(seconds: f64) -> Time {
    let s = seconds.max(0.0);
    let mut sec = s.floor();
    let mut nanosec = ((s - sec) * 1e9).round();
    if nanosec >= 1e9 {
        sec += 1.0;
        nanosec -= 1e9;
    }
    Time {
        sec: sec.min(f64::from(i32::MAX)) as i32,
        nanosec: nanosec as u32,
    }
}

pub fn from_ros_time(t: &Time) -> f64 {
    f64::from(t.sec) + f64::from(t.nanosec) * 1e-9
}

impl TimeBase {
    pub fn new(use_sim_time: bool) -> Self {
        let kind = if use_sim_time {
            TimeSourceKind::SimTime
        } else {
            TimeSourceKind::None
        };
        Self {
            use_sim_time,
            state: Mutex::new(State {
                offset: None,
                kind,
                last_sim: f64::NEG_INFINITY,
                anchor_source: None,
            }),
        }
    }

    pub fn uses_sim_time(&self) -> bool {
        self.use_sim_time
    }

    pub fn kind(&self) -> TimeSourceKind {
        self.state.lock().unwrap().kind
    }

    /// An anchor from simulator instance `source`: sim time 0 was
    /// `start_epoch_s` on the wall clock. The first instance heard is
    /// followed; the others' anchors are ignored (several CopterSims each
    /// send their own, and following all of them would flip every stamp).
    /// Returns whether the anchor was taken.
    pub fn heartbeat(&self, source: i64, start_epoch_s: f64) -> bool {
        let mut s = self.state.lock().unwrap();
        let plausible = start_epoch_s.is_finite() && start_epoch_s > 0.0 && start_epoch_s < 1e11;
        if self.use_sim_time || !plausible || s.anchor_source.is_some_and(|a| a != source) {
            return false;
        }
        s.anchor_source = Some(source);
        s.offset = Some(start_epoch_s);
        s.kind = TimeSourceKind::Heartbeat;
        true
    }

    /// The stamp, in seconds, of data sampled at sim time `sim`, received now.
    pub fn stamp_seconds(&self, sim: f64) -> Result<f64, BadSimTime> {
        self.stamp_seconds_at(sim, wall_now())
    }

    /// A non-finite or absurd `sim` is refused and changes nothing: one
    /// corrupt sample must not move the stamps of every later one.
    pub fn stamp_seconds_at(&self, sim: f64, wall: f64) -> Result<f64, BadSimTime> {
        if !(0.0..=MAX_SIM_TIME).contains(&sim) {
            return Err(BadSimTime(sim));
        }
        if self.use_sim_time {
            return Ok(sim);
        }
        let mut s = self.state.lock().unwrap();
        let restarted = sim < s.last_sim - RESTART_JUMP;
        s.last_sim = sim;
        Ok(match s.offset {
            Some(offset) if !restarted => sim + offset,
            _ => {
                // The first sample, or the first after a simulator restart:
                // a heartbeat anchor belongs to the previous run until the
                // next heartbeat of the new one comes (up to a second later),
                // so the sample itself anchors until then.
                let offset = wall - sim;
                s.offset = Some(offset);
                s.kind = TimeSourceKind::FirstFrame;
                sim + offset
            }
        })
    }

    pub fn stamp(&self, sim: f64) -> Result<Time, BadSimTime> {
        self.stamp_seconds(sim).map(to_ros_time)
    }
}

/// Publishes `/clock` from simulation time (with `use_sim_time`), never
/// going back except at a simulator restart, at most every `min_period`.
pub struct ClockPublisher {
    /// The publisher and the last sim time published (a publisher is not `Sync`).
    inner: Mutex<(r2r::Publisher<r2r::rosgraph_msgs::msg::Clock>, f64)>,
    min_period: f64,
}

impl std::fmt::Debug for ClockPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClockPublisher")
            .field("last", &self.inner.lock().unwrap().1)
            .finish()
    }
}

impl ClockPublisher {
    pub fn new(node: &mut r2r::Node) -> r2r::Result<Self> {
        // /clock is latched-free, reliable, shallow: what rclcpp's time source subscribes with.
        let qos = r2r::QosProfile::default().keep_last(1).reliable();
        Ok(Self {
            inner: Mutex::new((node.create_publisher("/clock", qos)?, f64::NEG_INFINITY)),
            min_period: 0.001,
        })
    }

    /// `Ok` also when there was nothing to publish; the caller counts a
    /// failure on the stream whose frame moved the clock.
    pub fn advance(&self, sim: f64) -> r2r::Result<()> {
        if !(0.0..=MAX_SIM_TIME).contains(&sim) {
            return Ok(());
        }
        let mut inner = self.inner.lock().unwrap();
        let last = inner.1;
        if sim >= last + self.min_period || sim < last - RESTART_JUMP {
            inner.1 = sim;
            inner.0.publish(&r2r::rosgraph_msgs::msg::Clock {
                clock: to_ros_time(sim),
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_frame_anchors_and_all_sensors_share_it() {
        let tb = TimeBase::new(false);
        assert_eq!(tb.stamp_seconds_at(10.0, 1000.0), Ok(1000.0));
        // Another sensor, received later, sampled at sim 10.5: same mapping.
        assert_eq!(tb.stamp_seconds_at(10.5, 1000.9), Ok(1000.5));
        assert_eq!(tb.kind(), TimeSourceKind::FirstFrame);
        // A restart (sim time back to 0) re-anchors.
        assert_eq!(tb.stamp_seconds_at(0.0, 2000.0), Ok(2000.0));
    }

    #[test]
    fn heartbeat_wins_and_sim_time_passes_through() {
        let tb = TimeBase::new(false);
        tb.stamp_seconds_at(5.0, 100.0).unwrap();
        assert!(tb.heartbeat(1, 90.0));
        assert_eq!(tb.stamp_seconds_at(6.0, 101.2), Ok(96.0));
        assert_eq!(tb.kind(), TimeSourceKind::Heartbeat);
        let sim = TimeBase::new(true);
        assert_eq!(sim.stamp_seconds_at(6.25, 101.0), Ok(6.25));
        assert!(!sim.heartbeat(1, 90.0));
        assert_eq!(sim.kind(), TimeSourceKind::SimTime);
    }

    #[test]
    fn a_restart_re_anchors_at_once_even_on_a_heartbeat_anchor() {
        let tb = TimeBase::new(false);
        assert!(tb.heartbeat(1, 1000.0));
        assert_eq!(tb.stamp_seconds_at(100.0, 1100.0), Ok(1100.0));
        // The simulator restarts at wall 1200: sim time back to 0. Until its
        // next heartbeat, the sample anchors; stamps stay near the wall clock.
        assert_eq!(tb.stamp_seconds_at(0.0, 1200.0), Ok(1200.0));
        assert_eq!(tb.stamp_seconds_at(0.5, 1200.6), Ok(1200.5));
        assert_eq!(tb.kind(), TimeSourceKind::FirstFrame);
        assert!(tb.heartbeat(1, 1199.9));
        assert_eq!(tb.stamp_seconds_at(1.0, 1201.0), Ok(1200.9));
    }

    #[test]
    fn bad_sim_times_are_refused_and_change_nothing() {
        let tb = TimeBase::new(false);
        assert_eq!(tb.stamp_seconds_at(10.0, 1000.0), Ok(1000.0));
        for bad in [f64::NAN, f64::INFINITY, -1.0, 1e300, MAX_SIM_TIME * 2.0] {
            assert!(tb.stamp_seconds_at(bad, 1000.5).is_err(), "{bad}");
            assert_eq!(tb.stamp_seconds_at(10.5, 1000.6), Ok(1000.5), "after {bad}");
        }
        // Before any anchor, too.
        let fresh = TimeBase::new(false);
        assert!(fresh.stamp_seconds_at(f64::NAN, 5.0).is_err());
        assert_eq!(fresh.stamp_seconds_at(1.0, 5.0), Ok(5.0));
        assert!(!fresh.heartbeat(1, f64::NAN) && !fresh.heartbeat(1, -3.0) && !fresh.heartbeat(1, 1e300));
        assert_eq!(fresh.kind(), TimeSourceKind::FirstFrame);
    }

    #[test]
    fn the_first_simulator_heard_keeps_the_anchor() {
        let tb = TimeBase::new(false);
        assert!(tb.heartbeat(1, 1000.0));
        assert!(!tb.heartbeat(2, 5000.0), "a second CopterSim does not move the stamps");
        assert_eq!(tb.stamp_seconds_at(1.0, 0.0), Ok(1001.0));
        // The same CopterSim restarted: a new start time is followed.
        assert!(tb.heartbeat(1, 2000.0));
        assert_eq!(tb.stamp_seconds_at(1.0, 0.0), Ok(2001.0));
    }

    #[test]
    fn ros_time_conversion() {
        assert_eq!(
            to_ros_time(1.5),
            Time {
                sec: 1,
                nanosec: 500_000_000
            }
        );
        assert_eq!(to_ros_time(2.999_999_999_9), Time { sec: 3, nanosec: 0 });
        assert_eq!(to_ros_time(-1.0), Time { sec: 0, nanosec: 0 });
        assert!((from_ros_time(&to_ros_time(1_234.000_001)) - 1_234.000_001).abs() < 1e-9);
    }

    /// A bounded fuzz run of the time base: after any sim time, a good one
    /// maps with the anchor it had (recovery, not just survival).
    #[test]
    fn fuzzed_sim_times_never_move_the_good_ones() {
        let tb = TimeBase::new(false);
        assert!(tb.heartbeat(1, 1_000_000.0));
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut good = 0.0;
        for i in 0..20_000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            // Only times that cannot be sim times: a plausible one going back
            // is a restart, which rightly re-anchors.
            let bad = match rng % 3 {
                0 => Some(f64::from_bits(rng))
                    .filter(|t| !(0.0..=MAX_SIM_TIME).contains(t))
                    .unwrap_or(f64::NAN),
                1 => [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.5, 1e300][(rng >> 8) as usize % 5],
                _ => MAX_SIM_TIME + 1.0 + (rng >> 11) as f64,
            };
            let _ = tb.stamp_seconds_at(bad, 5.0);
            if rng % 7 == 0 {
                // Heartbeats of another CopterSim, or absurd ones: ignored.
                let _ = tb.heartbeat(2, bad);
                let _ = tb.heartbeat(1, f64::NAN);
            }
            good += 0.005;
            assert_eq!(
                tb.stamp_seconds_at(good, 0.0),
                Ok(good + 1_000_000.0),
                "after input {i}: {bad}"
            );
        }
    }
}
