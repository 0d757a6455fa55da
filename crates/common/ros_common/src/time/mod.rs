//! One time base per simulator instance, all on one clock (RflySim's Python
//! SDK stamps each sensor on its own clock): while the simulator keeps real
//! time, simulation time is mapped to this machine's wall clock through the
//! epoch the instance's arrivals show (the least `arrival − sim time` over a
//! sliding window), whatever the simulator PC's clock says; at any other
//! pace (slower, faster, paused) a stamp is the sample's arrival. The anchor
//! a simulator sends (RflySim: the CopterSim heartbeat, that PC's wall time
//! at sim time 0) tells how far its clock is from this one. With
//! `use_sim_time`, stamps are simulation time on one clock, the one
//! `/clock` carries, at any pace: the first instance's, the others mapped
//! into it.
//!
//! - [`base`]: a simulator instance's base ([`TimeBase`]) and the registry
//!   of a process's instances ([`TimeBases`]: a swarm's CopterSims start
//!   apart, so each has its own);
//! - [`epoch`]: the estimate of where sim time 0 lies on this machine's clock;
//! - [`pace`]: how fast sim time runs, and whether it keeps real time;
//! - [`stream`]: one stream's view of its base ([`StreamClock`]);
//! - [`clock`]: `/clock` ([`ClockPublisher`]);
//! - [`arrival`]: stamps for what carries no time ([`ArrivalStamps`]).
//!
//! The rules every stream follows:
//! - a sample whose sim time leaves the base (more than [`JUMP`] behind the
//!   newest, or ahead by more than [`MAX_PACE`] times the wall time since
//!   plus [`JUMP`]) is an outlier: it moves nothing, neither the base nor
//!   `/clock`; on this machine's clock under `stamp_source: auto` it is
//!   stamped on arrival, under `use_sim_time` dropped;
//! - a restart is a sustained jump: [`RESTART_SAMPLES`] samples in a row that
//!   agree with each other off the base re-anchor it (and may take `/clock` back);
//! - per stream, a sample whose sim time goes back within a run is refused
//!   (out of order), and under `use_sim_time` an outlier; no other sample
//!   is dropped for its time. Stamps never
//!   go backwards: on this machine's clock never, under `use_sim_time` only
//!   when `/clock` itself restarts;
//! - a stream whose sim times are all outside `0..MAX_SIM_TIME` for
//!   [`FALLBACK_AFTER`] is stamped on arrival (`stamp_source: auto`), with
//!   one warning, until its sim times come back;
//! - a stream whose samples have all been off its base for [`FALLBACK_AFTER`]
//!   while the base goes on (another simulator's clock) gets a base of its
//!   own, with one warning.

mod arrival;
mod base;
mod clock;
mod epoch;
mod pace;
mod stream;

use std::time::{SystemTime, UNIX_EPOCH};

use r2r::builtin_interfaces::msg::Time;

pub use arrival::ArrivalStamps;
pub use base::{AnchorVerdict, TimeBase, TimeBaseReport, TimeBases, MAX_CLOCK_OFFSET_S};
pub use clock::ClockPublisher;
pub use stream::StreamClock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSourceKind {
    /// No sample yet.
    None,
    /// Stamps from arrivals; the simulator's clock offset known from its
    /// anchor (RflySim: the CopterSim heartbeat).
    Heartbeat,
    /// Stamps from arrivals; no anchor heard (the offset is unknown).
    Arrivals,
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
    "`auto`: the simulator's time, the arrival time while a stream's times are not sim times (one warning); `sim`: drop such samples; `arrival`: always the arrival time ([stamps](commands-and-time.md))",
);

/// Sim time a simulator can plausibly report, in seconds (a year): a stamp
/// outside it is a corrupt sample, not a time to map.
pub const MAX_SIM_TIME: f64 = 365.0 * 86_400.0;
/// How far (s) a sample may fall behind the newest, or run ahead of it
/// beyond the sim time the wall time since allows, and still be on the base.
pub const JUMP: f64 = 1.0;
/// The fastest pace (sim seconds per wall second) a base follows without
/// taking it for a jump: 20x real time with a margin.
pub const MAX_PACE: f64 = 25.0;
/// How late (s of wall time) a sample may arrive behind the base's newest:
/// at a fast pace more sim time than [`JUMP`].
pub const LATE_S: f64 = 0.2;
/// Samples in a row, off the base and agreeing, that make a restart.
pub const RESTART_SAMPLES: u32 = 3;
/// Seconds of samples with no sim time after which `auto` stamps on arrival;
/// likewise of samples off their base after which a stream gets its own.
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
    /// The sample's time on the process's one sim clock, for `/clock`
    /// (`None`: stamped on arrival, moves no clock).
    pub sim: Option<f64>,
    /// Counts the re-anchors this stamp's mapping went through: a stream's
    /// stamps may go back only when it changes.
    pub generation: u64,
    /// Counts the restarts of the one sim clock: `/clock` may go back only
    /// when it changes.
    pub clock_generation: u64,
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

#[cfg(test)]
mod tests {
    use super::*;

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
