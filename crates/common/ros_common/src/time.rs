//! One time base for every stream of a process (RflySim's Python SDK stamps
//! each sensor on its own clock): simulation time is mapped to wall-clock
//! time through an anchor the simulator sends (RflySim: the CopterSim
//! heartbeat) when one is heard, else through the first frame. With
//! `use_sim_time`, stamps are simulation time itself (and `/clock` carries it).
//!
//! The rules every stream follows:
//! - a sample whose sim time leaves the base (more than [`JUMP`] behind the
//!   newest, or ahead by more than the wall time since plus [`JUMP`]) is an
//!   outlier: refused, for headers and `/clock` alike, and nothing moves;
//! - a restart is a sustained jump: [`RESTART_SAMPLES`] samples in a row that
//!   agree with each other off the base re-anchor it (and may take `/clock` back);
//! - per stream, stamps never go backwards between restarts: an
//!   out-of-order sample is refused;
//! - a stream whose sim times are all outside `0..MAX_SIM_TIME` for
//!   [`FALLBACK_AFTER`] is stamped on arrival (`stamp_source: auto`), with
//!   one warning, until its sim times come back.

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

/// Where a stream's stamps come from (parameter `stamp_source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StampSource {
    /// The simulator's time; arrival time while a stream's times are not sim times.
    #[default]
    Auto,
    /// The simulator's time only: a sample without a usable one is dropped.
    Sim,
    /// Arrival time (with `use_sim_time`: the newest sim time known).
    Arrival,
}

/// Parameter `stamp_source` of every bridge whose simulator stamps its data.
pub const STAMP_SOURCE: crate::params::ChoiceParam<StampSource> = crate::params::ChoiceParam::new(
    "stamp_source",
    "auto",
    &[
        ("auto", StampSource::Auto),
        ("sim", StampSource::Sim),
        ("arrival", StampSource::Arrival),
    ],
);

#[derive(Debug, Clone, Copy)]
struct Candidate {
    last_sim: f64,
    last_wall: f64,
    samples: u32,
}

#[derive(Debug)]
struct State {
    /// Wall-clock epoch seconds of sim time 0.
    offset: Option<f64>,
    kind: TimeSourceKind,
    /// The newest sim time taken, and the wall time it came at.
    last_sim: f64,
    last_wall: f64,
    /// Samples off the base that agree with each other: a restart, once enough.
    candidate: Option<Candidate>,
    /// Counts restarts: stamps of a stream may go back only across one.
    generation: u64,
    /// The simulator instance whose anchors are followed (RflySim: one
    /// CopterSim per vehicle, each with its own start time).
    anchor_source: Option<i64>,
}

/// Sim time a simulator can plausibly report, in seconds (a year): a stamp
/// outside it is a corrupt sample, not a time to map.
pub const MAX_SIM_TIME: f64 = 365.0 * 86_400.0;
/// How far (s) a sample may fall behind the newest, or run ahead of it
/// beyond the wall time that passed, and still be on the base.
pub const JUMP: f64 = 1.0;
/// Samples in a row, off the base and agreeing, that make a restart.
pub const RESTART_SAMPLES: u32 = 3;
/// Seconds of samples with no sim time after which `auto` stamps on arrival.
pub const FALLBACK_AFTER: f64 = 2.0;

/// Why a sample is not stamped (it is dropped and counted under [`Self::reason`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StampRefusal {
    /// Not a time in `0..MAX_SIM_TIME`.
    NotSimTime(f64),
    /// Off the base: a jump of one sample, or the start of a restart.
    Outlier(f64),
    /// Older than the stream's last stamp.
    OutOfOrder(f64),
}

/// The older name of the refusal of a sim time that is not one.
pub type BadSimTime = StampRefusal;

impl StampRefusal {
    /// For counters and diagnostics.
    pub const REASON: &'static str = "bad_stamp";

    pub fn reason(&self) -> &'static str {
        match self {
            StampRefusal::NotSimTime(_) => Self::REASON,
            StampRefusal::Outlier(_) => "stamp_outlier",
            StampRefusal::OutOfOrder(_) => "out_of_order",
        }
    }
}

impl std::fmt::Display for StampRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StampRefusal::NotSimTime(t) => write!(f, "sim time {t} is not a time in 0..{MAX_SIM_TIME} s"),
            StampRefusal::Outlier(t) => write!(f, "sim time {t} s jumps off the time base"),
            StampRefusal::OutOfOrder(t) => write!(f, "sim time {t} s is older than the stream's last"),
        }
    }
}

/// A sample's stamp, as the time base took it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accepted {
    /// The header stamp, seconds.
    pub seconds: f64,
    /// The sim time, for `/clock` (`None`: stamped on arrival, moves no clock).
    pub sim: Option<f64>,
    /// The time base's restart count when it was taken.
    pub generation: u64,
}

/// Shared by every publisher of a process.
#[derive(Debug)]
pub struct TimeBase {
    use_sim_time: bool,
    source: StampSource,
    state: Mutex<State>,
}

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

/// Whether `sim` at `wall` follows a stream last at `last_sim` / `last_wall`.
fn follows(sim: f64, wall: f64, last_sim: f64, last_wall: f64) -> bool {
    sim >= last_sim - JUMP && sim <= last_sim + (wall - last_wall).max(0.0) + JUMP
}

impl TimeBase {
    pub fn new(use_sim_time: bool) -> Self {
        Self::with_source(use_sim_time, StampSource::Auto)
    }

    pub fn with_source(use_sim_time: bool, source: StampSource) -> Self {
        let kind = if use_sim_time {
            TimeSourceKind::SimTime
        } else {
            TimeSourceKind::None
        };
        Self {
            use_sim_time,
            source,
            state: Mutex::new(State {
                offset: None,
                kind,
                last_sim: f64::NEG_INFINITY,
                last_wall: f64::NEG_INFINITY,
                candidate: None,
                generation: 0,
                anchor_source: None,
            }),
        }
    }

    pub fn uses_sim_time(&self) -> bool {
        self.use_sim_time
    }

    pub fn source(&self) -> StampSource {
        self.source
    }

    pub fn kind(&self) -> TimeSourceKind {
        self.state.lock().unwrap().kind
    }

    /// The bridge's clock now, in its stamps' terms: the wall clock, or with
    /// `use_sim_time` the newest sim time taken (`None` before the first).
    pub fn now_seconds(&self) -> Option<f64> {
        if !self.use_sim_time {
            return Some(wall_now());
        }
        let s = self.state.lock().unwrap();
        s.last_sim.is_finite().then_some(s.last_sim)
    }

    /// An arrival stamp at `wall`: the wall clock, or with `use_sim_time` the
    /// newest sim time taken (0 before the first).
    pub fn arrival(&self, wall: f64) -> Accepted {
        let s = self.state.lock().unwrap();
        let seconds = if self.use_sim_time {
            if s.last_sim.is_finite() {
                s.last_sim
            } else {
                0.0
            }
        } else {
            wall
        };
        Accepted {
            seconds,
            sim: None,
            generation: s.generation,
        }
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
        // Another run's anchor (not the same one again, nor a first-frame
        // anchor refined by a few ms): stamps may go back once, as at a restart.
        if s.offset.is_some_and(|o| (o - start_epoch_s).abs() > JUMP) {
            s.generation += 1;
        }
        s.offset = Some(start_epoch_s);
        s.kind = TimeSourceKind::Heartbeat;
        true
    }

    /// The stamp, in seconds, of data sampled at sim time `sim`, received now.
    pub fn stamp_seconds(&self, sim: f64) -> Result<f64, StampRefusal> {
        self.stamp_seconds_at(sim, wall_now())
    }

    /// `take(sim, wall)`'s stamp in seconds.
    pub fn stamp_seconds_at(&self, sim: f64, wall: f64) -> Result<f64, StampRefusal> {
        self.take(sim, wall).map(|a| a.seconds)
    }

    /// Takes a sample sampled at sim time `sim`, received at `wall`: its
    /// stamp, or why it has none. Refused samples change nothing, except
    /// that the samples of a restart are counted towards it.
    pub fn take(&self, sim: f64, wall: f64) -> Result<Accepted, StampRefusal> {
        if !(0.0..=MAX_SIM_TIME).contains(&sim) {
            return Err(StampRefusal::NotSimTime(sim));
        }
        let mut s = self.state.lock().unwrap();
        let first = !s.last_sim.is_finite();
        if first || follows(sim, wall, s.last_sim, s.last_wall) {
            s.candidate = None;
            if sim >= s.last_sim || first {
                s.last_sim = sim;
                s.last_wall = wall;
            }
            if s.offset.is_none() {
                s.offset = Some(wall - sim);
                s.kind = if self.use_sim_time {
                    TimeSourceKind::SimTime
                } else {
                    TimeSourceKind::FirstFrame
                };
            }
        } else {
            let candidate = match s.candidate {
                Some(c) if follows(sim, wall, c.last_sim, c.last_wall) => Candidate {
                    last_sim: sim.max(c.last_sim),
                    last_wall: wall,
                    samples: c.samples + 1,
                },
                _ => Candidate {
                    last_sim: sim,
                    last_wall: wall,
                    samples: 1,
                },
            };
            if candidate.samples < RESTART_SAMPLES {
                s.candidate = Some(candidate);
                return Err(StampRefusal::Outlier(sim));
            }
            // A restart: a heartbeat anchor belongs to the previous run
            // until the next heartbeat of the new one comes (up to a second
            // later), so the sample itself anchors until then.
            s.candidate = None;
            s.generation += 1;
            s.last_sim = sim;
            s.last_wall = wall;
            s.offset = Some(wall - sim);
            if !self.use_sim_time {
                s.kind = TimeSourceKind::FirstFrame;
            }
        }
        let seconds = if self.use_sim_time {
            sim
        } else {
            sim + s.offset.unwrap_or(wall - sim)
        };
        Ok(Accepted {
            seconds,
            sim: Some(sim),
            generation: s.generation,
        })
    }

    pub fn stamp(&self, sim: f64) -> Result<Time, StampRefusal> {
        self.stamp_seconds(sim).map(to_ros_time)
    }
}

/// One stream's view of the time base: its stamps never go back between
/// restarts, and under `stamp_source: auto` it falls back to arrival
/// stamps while its samples carry no sim time.
#[derive(Debug)]
pub struct StreamClock {
    /// Named in the fallback's log lines.
    stream: String,
    logger: String,
    last: Option<(f64, u64)>,
    /// Wall time since which every sample had no sim time.
    unusable_since: Option<f64>,
    on_arrival: bool,
}

impl StreamClock {
    pub fn new(stream: impl Into<String>, logger: impl Into<String>) -> Self {
        Self {
            stream: stream.into(),
            logger: logger.into(),
            last: None,
            unusable_since: None,
            on_arrival: false,
        }
    }

    /// Whether this stream is stamped on arrival for want of sim times.
    pub fn on_arrival(&self) -> bool {
        self.on_arrival
    }

    /// The stamp of a sample of this stream at sim time `sim`, received now.
    pub fn stamp(&mut self, base: &TimeBase, sim: f64) -> Result<Accepted, StampRefusal> {
        self.stamp_at(base, sim, wall_now())
    }

    pub fn stamp_at(&mut self, base: &TimeBase, sim: f64, wall: f64) -> Result<Accepted, StampRefusal> {
        let taken = match base.source() {
            StampSource::Arrival => Ok(base.arrival(wall)),
            StampSource::Sim => base.take(sim, wall),
            StampSource::Auto => self.auto(base, sim, wall),
        }?;
        self.ordered(taken, sim)
    }

    /// The stamp of a sample that carries no sim time, received at `wall`.
    pub fn arrival_at(&mut self, base: &TimeBase, wall: f64) -> Result<Accepted, StampRefusal> {
        let taken = base.arrival(wall);
        self.ordered(taken, f64::NAN)
    }

    fn ordered(&mut self, taken: Accepted, sim: f64) -> Result<Accepted, StampRefusal> {
        if let Some((last, generation)) = self.last {
            if taken.generation == generation && taken.seconds < last {
                return Err(StampRefusal::OutOfOrder(sim));
            }
        }
        self.last = Some((taken.seconds, taken.generation));
        Ok(taken)
    }

    fn auto(&mut self, base: &TimeBase, sim: f64, wall: f64) -> Result<Accepted, StampRefusal> {
        match base.take(sim, wall) {
            Err(StampRefusal::NotSimTime(t)) => {
                let since = *self.unusable_since.get_or_insert(wall);
                if !self.on_arrival && wall - since >= FALLBACK_AFTER {
                    self.on_arrival = true;
                    r2r::log_warn!(
                        &self.logger,
                        "{}: no sample in {FALLBACK_AFTER} s had a sim time in 0..{MAX_SIM_TIME} s \
                         (the last: {t}); stamping on arrival until they do. Set parameter {} to \
                         sim (drop such samples) or arrival (always stamp on arrival) to choose",
                        self.stream,
                        STAMP_SOURCE.name
                    );
                }
                if self.on_arrival {
                    Ok(base.arrival(wall))
                } else {
                    Err(StampRefusal::NotSimTime(t))
                }
            }
            other => {
                self.unusable_since = None;
                if self.on_arrival && other.is_ok() {
                    self.on_arrival = false;
                    r2r::log_info!(&self.logger, "{}: sim times are back; stamping with them", self.stream);
                }
                other
            }
        }
    }
}

/// Publishes `/clock` from simulation time (with `use_sim_time`), never
/// going back except at a simulator restart, at most every `min_period`.
pub struct ClockPublisher {
    /// The publisher, the last sim time published and its generation (a publisher is not `Sync`).
    inner: Mutex<(r2r::Publisher<r2r::rosgraph_msgs::msg::Clock>, f64, u64)>,
    min_period: f64,
}

impl std::fmt::Debug for ClockPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClockPublisher")
            .field("last", &self.inner.lock().unwrap().1)
            .finish()
    }
}

/// Whether `/clock` moves to `sim` of `generation`, last at `last` of `last_generation`.
fn clock_moves(sim: f64, generation: u64, last: f64, last_generation: u64, min_period: f64) -> bool {
    generation > last_generation || (generation == last_generation && sim >= last + min_period)
}

impl ClockPublisher {
    pub fn new(node: &mut r2r::Node) -> r2r::Result<Self> {
        // /clock is latched-free, reliable, shallow: what rclcpp's time source subscribes with.
        let qos = r2r::QosProfile::default().keep_last(1).reliable();
        Ok(Self {
            inner: Mutex::new((node.create_publisher("/clock", qos)?, f64::NEG_INFINITY, 0)),
            min_period: 0.001,
        })
    }

    /// Moves `/clock` to a sample the time base took (an arrival stamp
    /// moves nothing). `Ok` also when there was nothing to publish; the
    /// caller counts a failure on the stream whose frame moved the clock.
    pub fn advance(&self, taken: &Accepted) -> r2r::Result<()> {
        let Some(sim) = taken.sim else { return Ok(()) };
        let mut inner = self.inner.lock().unwrap();
        if clock_moves(sim, taken.generation, inner.1, inner.2, self.min_period) {
            inner.1 = sim;
            inner.2 = taken.generation;
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

    fn restart(tb: &TimeBase, sim: f64, wall: f64) -> Result<f64, StampRefusal> {
        for i in 1..RESTART_SAMPLES {
            let t = f64::from(i - 1) * 0.01;
            assert!(matches!(tb.take(sim + t, wall + t), Err(StampRefusal::Outlier(_))));
        }
        let t = f64::from(RESTART_SAMPLES - 1) * 0.01;
        tb.stamp_seconds_at(sim + t, wall + t).map(|s| s - t)
    }

    #[test]
    fn first_frame_anchors_and_all_sensors_share_it() {
        let tb = TimeBase::new(false);
        assert_eq!(tb.stamp_seconds_at(10.0, 1000.0), Ok(1000.0));
        // Another sensor, received later, sampled at sim 10.5: same mapping.
        assert_eq!(tb.stamp_seconds_at(10.5, 1000.9), Ok(1000.5));
        assert_eq!(tb.kind(), TimeSourceKind::FirstFrame);
        // A restart (sim time back to 0, sustained) re-anchors.
        assert_eq!(restart(&tb, 0.0, 2000.0), Ok(2000.0));
        assert_eq!(tb.stamp_seconds_at(1.0, 2001.0), Ok(2001.0));
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
    fn a_restart_re_anchors_even_on_a_heartbeat_anchor() {
        let tb = TimeBase::new(false);
        assert!(tb.heartbeat(1, 1000.0));
        assert_eq!(tb.stamp_seconds_at(100.0, 1100.0), Ok(1100.0));
        // The simulator restarts at wall 1200: sim time back to 0. Until its
        // next heartbeat, the samples anchor; stamps stay near the wall clock.
        assert_eq!(restart(&tb, 0.0, 1200.0), Ok(1200.0));
        assert_eq!(tb.stamp_seconds_at(0.5, 1200.6), Ok(1200.5));
        assert_eq!(tb.kind(), TimeSourceKind::FirstFrame);
        assert!(tb.heartbeat(1, 1199.9));
        assert_eq!(tb.stamp_seconds_at(1.0, 1201.0), Ok(1200.9));
    }

    #[test]
    fn one_plausible_outlier_moves_nothing() {
        for use_sim_time in [false, true] {
            let tb = TimeBase::new(use_sim_time);
            let base = if use_sim_time { 0.0 } else { 990.0 };
            assert_eq!(tb.stamp_seconds_at(10.0, 1000.0), Ok(10.0 + base));
            // 1e6 s: a time a simulator could report, but not this one's now.
            assert_eq!(tb.take(1e6, 1000.01), Err(StampRefusal::Outlier(1e6)));
            assert_eq!(tb.stamp_seconds_at(10.02, 1000.02), Ok(10.02 + base), "no re-anchor");
            // Two outliers that do not agree with each other are no restart either.
            assert!(tb.take(3.0, 1000.03).is_err());
            assert!(tb.take(5e5, 1000.04).is_err());
            assert!(tb.take(3.01, 1000.05).is_err());
            assert_eq!(tb.stamp_seconds_at(10.06, 1000.06), Ok(10.06 + base));
            // A pause of the data: sim time moved on as the wall clock did.
            assert_eq!(tb.stamp_seconds_at(40.0, 1030.0), Ok(40.0 + base));
        }
    }

    #[test]
    fn a_stream_never_goes_back_except_across_a_restart() {
        let tb = TimeBase::new(true);
        let mut imu = StreamClock::new("imu", "test");
        let mut cam = StreamClock::new("camera", "test");
        assert_eq!(imu.stamp_at(&tb, 10.0, 0.0).unwrap().seconds, 10.0);
        assert_eq!(imu.stamp_at(&tb, 9.99, 0.01), Err(StampRefusal::OutOfOrder(9.99)));
        // Another stream may be behind the first (a slower sensor): its own order counts.
        assert_eq!(cam.stamp_at(&tb, 9.9, 0.02).unwrap().seconds, 9.9);
        assert_eq!(imu.stamp_at(&tb, 10.01, 0.03).unwrap().seconds, 10.01);
        // A restart: back to 0, and every stream follows it back.
        for i in 0..RESTART_SAMPLES {
            let _ = imu.stamp_at(&tb, f64::from(i) * 0.01, 1.0 + f64::from(i) * 0.01);
        }
        let after = imu.stamp_at(&tb, 0.05, 1.05).unwrap();
        assert_eq!((after.seconds, after.generation), (0.05, 1));
        assert_eq!(cam.stamp_at(&tb, 0.06, 1.06).unwrap().seconds, 0.06);
    }

    #[test]
    fn auto_falls_back_to_arrival_and_comes_back() {
        let tb = TimeBase::new(false);
        let mut s = StreamClock::new("sensor 1", "test");
        // Unix seconds where sim time belongs: dropped for a while, then on arrival.
        assert_eq!(s.stamp_at(&tb, 1.7e9, 100.0), Err(StampRefusal::NotSimTime(1.7e9)));
        assert_eq!(s.stamp_at(&tb, 1.7e9, 101.0), Err(StampRefusal::NotSimTime(1.7e9)));
        let late = s.stamp_at(&tb, 1.7e9, 100.0 + FALLBACK_AFTER).unwrap();
        assert_eq!((late.seconds, late.sim), (100.0 + FALLBACK_AFTER, None));
        assert!(s.on_arrival());
        assert_eq!(s.stamp_at(&tb, 1.7e9, 103.0).unwrap().seconds, 103.0);
        // Sim times again: stamped with them.
        assert_eq!(s.stamp_at(&tb, 5.0, 104.0).unwrap().sim, Some(5.0));
        assert!(!s.on_arrival());
        // `sim` never falls back; `arrival` always stamps on arrival.
        let sim_only = TimeBase::with_source(false, StampSource::Sim);
        let mut s = StreamClock::new("sensor 2", "test");
        for wall in [0.0, 10.0, 100.0] {
            assert!(s.stamp_at(&sim_only, -1.0, wall).is_err());
        }
        let arrival = TimeBase::with_source(false, StampSource::Arrival);
        let mut s = StreamClock::new("sensor 3", "test");
        assert_eq!(s.stamp_at(&arrival, 7.0, 50.0).unwrap().seconds, 50.0);
        assert_eq!(STAMP_SOURCE.check("arrival"), Ok(StampSource::Arrival));
        assert!(STAMP_SOURCE.check("unix").is_err());
    }

    #[test]
    fn the_clock_goes_back_only_at_a_restart() {
        assert!(clock_moves(10.0, 0, 9.0, 0, 0.001));
        assert!(!clock_moves(8.0, 0, 9.0, 0, 0.001), "an out-of-order sample");
        assert!(!clock_moves(9.0005, 0, 9.0, 0, 0.001), "within the period");
        assert!(clock_moves(0.5, 1, 9.0, 0, 0.001), "a restart");
        assert!(!clock_moves(100.0, 0, 0.5, 1, 0.001), "the old run's late sample");
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
    fn a_heartbeat_of_another_run_lets_stamps_go_back_once() {
        let tb = TimeBase::new(false);
        let mut s = StreamClock::new("camera", "test");
        assert_eq!(s.stamp_at(&tb, 5.0, 2000.0).unwrap().seconds, 2000.0);
        // The same anchor refined by a few ms: no new generation; an older stamp is dropped.
        assert!(tb.heartbeat(1, 1994.997));
        assert!(s.stamp_at(&tb, 5.001, 2000.001).is_err());
        assert!((s.stamp_at(&tb, 5.01, 2000.01).unwrap().seconds - 2000.007).abs() < 1e-9);
        // An anchor 1000 s away: followed, back in time once.
        assert!(tb.heartbeat(1, 1000.0));
        let back = s.stamp_at(&tb, 5.02, 2000.02).unwrap();
        assert_eq!((back.seconds, back.generation), (1005.02, 1));
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

    fn xorshift(rng: &mut u64) -> u64 {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        *rng
    }

    /// A bounded fuzz run of the time base: after any sim time, impossible
    /// or plausible (a lone jump ahead or back), a good one maps with the
    /// anchor it had (recovery, not just survival).
    #[test]
    fn fuzzed_sim_times_never_move_the_good_ones() {
        let tb = TimeBase::new(false);
        assert!(tb.heartbeat(1, 1_000_000.0));
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut good = 0.0;
        assert_eq!(tb.stamp_seconds_at(good, 1_000_000.0), Ok(1_000_000.0));
        for i in 0..20_000 {
            let r = xorshift(&mut rng);
            let bad = match r % 4 {
                0 => f64::from_bits(r),
                1 => [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.5, 1e300][(r >> 8) as usize % 5],
                2 => MAX_SIM_TIME + 1.0 + (r >> 11) as f64,
                // Plausible: a time the simulator could report, off by
                // more than JUMP (closer ones cannot be told from the truth).
                _ => {
                    let off =
                        2.0 * JUMP + ((r >> 11) as f64 / (1u64 << 53) as f64) * [1e6, 10.0][(r >> 7) as usize % 2];
                    if r & 1 == 0 && good - off >= 0.0 {
                        good - off
                    } else {
                        good + off
                    }
                }
            };
            let wall = 1_000_000.0 + good;
            let _ = tb.take(bad, wall);
            if r % 7 == 0 {
                // Heartbeats of another CopterSim, or absurd ones: ignored.
                let _ = tb.heartbeat(2, bad);
                let _ = tb.heartbeat(1, f64::NAN);
            }
            good += 0.005;
            assert_eq!(
                tb.stamp_seconds_at(good, wall + 0.005),
                Ok(good + 1_000_000.0),
                "after input {i}: {bad}"
            );
        }
    }

    /// Streams fuzzed with reordering, outliers and restarts: what comes out
    /// of each never goes back within a run, and every restart is followed.
    #[test]
    fn fuzzed_streams_keep_their_order_and_follow_restarts() {
        let tb = TimeBase::new(true);
        let mut clocks: Vec<StreamClock> = (0..3).map(|i| StreamClock::new(format!("s{i}"), "test")).collect();
        let mut last: Vec<Option<Accepted>> = vec![None; 3];
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let (mut sim, mut wall, mut restarts) = (5.0, 0.0, 0u64);
        for i in 0..20_000 {
            let r = xorshift(&mut rng);
            wall += 0.004;
            sim += 0.004;
            if r % 3000 == 0 {
                sim = (r % 50) as f64 * 0.001; // a restart: sustained from here on
                restarts += 1;
            }
            let sample = match r % 10 {
                0 => sim - 0.003 * ((r >> 8) % 100) as f64, // reordered, up to 0.3 s late
                1 => [1e6, 3e7, sim + 50.0, f64::NAN][(r >> 8) as usize % 4],
                _ => sim,
            };
            let s = (r >> 20) as usize % 3;
            if let Ok(a) = clocks[s].stamp_at(&tb, sample, wall) {
                if let Some(prev) = last[s] {
                    assert!(
                        a.generation > prev.generation || a.seconds >= prev.seconds,
                        "stream {s} went back at {i}: {prev:?} -> {a:?}"
                    );
                }
                assert!(
                    a.seconds <= sim + JUMP,
                    "a stamp ahead of the simulator at {i}: {a:?} (sim {sim})"
                );
                last[s] = Some(a);
            }
        }
        let now = clocks[0].stamp_at(&tb, sim + 0.004, wall + 0.004).unwrap();
        assert_eq!(now.generation, restarts, "every restart was followed, and nothing else");
    }
}
