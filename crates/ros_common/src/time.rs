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
            }),
        }
    }

    pub fn uses_sim_time(&self) -> bool {
        self.use_sim_time
    }

    pub fn kind(&self) -> TimeSourceKind {
        self.state.lock().unwrap().kind
    }

    /// A heartbeat: sim time 0 was `start_epoch_s` on the wall clock.
    pub fn heartbeat(&self, start_epoch_s: f64) {
        let mut s = self.state.lock().unwrap();
        if !self.use_sim_time && start_epoch_s.is_finite() && start_epoch_s > 0.0 {
            s.offset = Some(start_epoch_s);
            s.kind = TimeSourceKind::Heartbeat;
        }
    }

    /// The stamp, in seconds, of data sampled at sim time `sim`, received now.
    pub fn stamp_seconds(&self, sim: f64) -> f64 {
        self.stamp_seconds_at(sim, wall_now())
    }

    pub fn stamp_seconds_at(&self, sim: f64, wall: f64) -> f64 {
        if self.use_sim_time {
            return sim;
        }
        let mut s = self.state.lock().unwrap();
        let restarted = sim < s.last_sim - RESTART_JUMP;
        s.last_sim = sim;
        match s.offset {
            Some(offset) if !(restarted && s.kind == TimeSourceKind::FirstFrame) => sim + offset,
            _ => {
                let offset = wall - sim;
                if s.kind != TimeSourceKind::Heartbeat {
                    s.offset = Some(offset);
                    s.kind = TimeSourceKind::FirstFrame;
                }
                sim + offset
            }
        }
    }

    pub fn stamp(&self, sim: f64) -> Time {
        to_ros_time(self.stamp_seconds(sim))
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

    pub fn advance(&self, sim: f64) {
        let mut inner = self.inner.lock().unwrap();
        let last = inner.1;
        if sim >= last + self.min_period || sim < last - RESTART_JUMP {
            inner.1 = sim;
            let _ = inner.0.publish(&r2r::rosgraph_msgs::msg::Clock {
                clock: to_ros_time(sim),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_frame_anchors_and_all_sensors_share_it() {
        let tb = TimeBase::new(false);
        assert_eq!(tb.stamp_seconds_at(10.0, 1000.0), 1000.0);
        // Another sensor, received later, sampled at sim 10.5: same mapping.
        assert_eq!(tb.stamp_seconds_at(10.5, 1000.9), 1000.5);
        assert_eq!(tb.kind(), TimeSourceKind::FirstFrame);
        // A restart (sim time back to 0) re-anchors.
        assert_eq!(tb.stamp_seconds_at(0.0, 2000.0), 2000.0);
    }

    #[test]
    fn heartbeat_wins_and_sim_time_passes_through() {
        let tb = TimeBase::new(false);
        tb.stamp_seconds_at(5.0, 100.0);
        tb.heartbeat(90.0);
        assert_eq!(tb.stamp_seconds_at(6.0, 101.2), 96.0);
        assert_eq!(tb.kind(), TimeSourceKind::Heartbeat);
        let sim = TimeBase::new(true);
        assert_eq!(sim.stamp_seconds_at(6.25, 101.0), 6.25);
        sim.heartbeat(90.0);
        assert_eq!(sim.kind(), TimeSourceKind::SimTime);
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
}
