//! A simulator instance's time base ([`TimeBase`]) and the registry of a
//! process's instances ([`TimeBases`]). Each base maps its instance's sim
//! time onto this machine's clock through the epoch its own arrivals show
//! ([`EpochEstimate`]): the simulator PC's clock never enters a stamp. A
//! heartbeat's anchor (that PC's wall clock at sim time 0) tells how far
//! its clock is from this one, for the log and `/diagnostics`. Under
//! `use_sim_time` the bases of a process share one clock, the sim time of
//! the first instance that took a sample (the reference), and the others
//! map into it through their epochs.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::epoch::EpochEstimate;
use super::pace::{PaceChange, PaceEstimate, PAUSED_BELOW};
use super::{
    wall_now, Accepted, StampRefusal, StampSource, TimeSourceKind, JUMP, LATE_S, MAX_PACE, MAX_SIM_TIME,
    RESTART_SAMPLES,
};

/// The farthest (s) a simulator PC's clock may plausibly be from this
/// one: a day covers a PC set to another time zone's local time. An
/// anchor farther off is refused.
pub const MAX_CLOCK_OFFSET_S: f64 = 86_400.0;
/// A sample whose mapped time lies more than this (s) before its arrival
/// is stamped with the arrival: no stream of a simulator keeping real time
/// takes that long to arrive.
const LATE_GUARD_S: f64 = 0.25;
/// How long (s) samples of the old run may still arrive after a new anchor
/// before the anchor counts as refused (a restart stops the old run's samples).
const ANCHOR_GRACE_S: f64 = 0.5;

#[derive(Debug, Clone, Copy)]
struct Candidate {
    last_sim: f64,
    last_wall: f64,
    samples: u32,
}

/// What a time base made of a heartbeat's anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnchorVerdict {
    /// Taken: it tells the simulator PC's clock offset.
    Taken,
    /// The anchor in use, again.
    Same,
    /// Another anchor than the one in use, or one before any sample: held
    /// until the samples show a restart (then taken) or the run it does not
    /// belong to goes on (then refused).
    Held,
    /// Refused and counted: not a time, or farther from the stream than
    /// [`MAX_CLOCK_OFFSET_S`].
    Refused,
    /// Another simulator instance's than the one this base follows.
    OtherInstance,
}

#[derive(Debug, Clone, Copy)]
struct HeldAnchor {
    anchor: f64,
    /// The run it came in, and when.
    generation: u64,
    wall: f64,
}

#[derive(Debug, Default)]
struct Anchors {
    /// The simulator PC's wall time at sim time 0 of the current run.
    current: Option<f64>,
    /// The simulator instance whose anchors are followed.
    source: Option<i64>,
    held: Option<HeldAnchor>,
    refused: u64,
}

#[derive(Debug)]
struct State {
    /// The newest sim time taken, and the wall time it came at.
    last_sim: f64,
    last_wall: f64,
    /// Samples off the base that agree with each other: a restart, once enough.
    candidate: Option<Candidate>,
    /// Counts restarts: stamps of a stream may go back only across one.
    generation: u64,
    /// This machine's wall time at sim time 0 of the current run.
    epoch: EpochEstimate,
    /// Whether sim time keeps real time, and so may give the stamps.
    pace: PaceEstimate,
    anchors: Anchors,
}

impl State {
    /// Takes the held anchor when the run has none and its samples show
    /// where it lies: refused if it is farther off than any PC's clock.
    fn adopt_held_anchor(&mut self) {
        let (None, Some(held), Some(epoch)) = (self.anchors.current, self.anchors.held, self.epoch.epoch()) else {
            return;
        };
        self.anchors.held = None;
        if (held.anchor - epoch).abs() <= MAX_CLOCK_OFFSET_S {
            self.anchors.current = Some(held.anchor);
        } else {
            self.anchors.refused += 1;
        }
    }

    /// A sample of the current run at `wall`: an anchor held since more
    /// than the grace before it belongs to no run that exists (a flap, or
    /// another PC's clock), while a restart's anchor meets no such sample.
    fn old_run_goes_on(&mut self, wall: f64) {
        if let Some(h) = self.anchors.held {
            if self.anchors.current.is_some() && h.generation == self.generation && wall - h.wall > ANCHOR_GRACE_S {
                self.anchors.held = None;
                self.anchors.refused += 1;
            }
        }
    }
}

/// What `/diagnostics` and `status` show of a time base.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeBaseReport {
    pub kind: TimeSourceKind,
    /// The simulator PC's clock minus this machine's (less the least
    /// latency of a sample), in milliseconds, once an anchor is taken.
    pub clock_offset_ms: Option<f64>,
    /// How fast the simulator's sim time drifts against this machine's
    /// clock, in parts per million, once it ran long enough to tell.
    pub drift_ppm: Option<f64>,
    pub anchors_refused: u64,
    pub restarts: u64,
    /// Sim seconds per wall second lately (`None` before a tenth of a second).
    pub pace: Option<f64>,
    /// Whether stamps follow sim time (the pace is real time) or are the arrival.
    pub real_time: bool,
    /// How often the pace left real time.
    pub pace_departures: u64,
}

impl TimeBaseReport {
    pub fn paused(&self) -> bool {
        self.pace.is_some_and(|p| p < PAUSED_BELOW)
    }

    /// The pace in words: for `/diagnostics`, `status` and the log.
    pub fn pace_words(&self) -> String {
        match self.pace {
            None => "unknown".into(),
            Some(_) if self.paused() => "paused".into(),
            Some(p) => format!("{p:.3}x real time"),
        }
    }
}

/// What the bases of a process share under `use_sim_time`: the one clock.
#[derive(Debug, Default)]
struct Domain {
    state: Mutex<DomainState>,
}

#[derive(Debug, Default)]
struct DomainState {
    /// Hands each base of the domain its number.
    next_id: u64,
    /// The reference base: its number, epoch, restart count and newest sample.
    reference: Option<Reference>,
    /// Counts the reference's restarts: the one clock may go back then.
    generation: u64,
    /// The newest time on the one clock (`None`: no sample yet).
    newest: Option<f64>,
}

#[derive(Debug, Clone, Copy)]
struct Reference {
    id: u64,
    epoch: f64,
    generation: u64,
    last_sim: f64,
    last_wall: f64,
}

impl Domain {
    fn next_id(&self) -> u64 {
        let mut d = self.state.lock().unwrap();
        d.next_id += 1;
        d.next_id
    }
}

/// One simulator instance's time base, shared by the streams of that
/// instance (with `use_sim_time`, one of the domain's bases).
#[derive(Debug)]
pub struct TimeBase {
    use_sim_time: bool,
    source: StampSource,
    id: u64,
    domain: Arc<Domain>,
    state: Mutex<State>,
}

/// Whether `sim` at `wall` follows a stream last at `last_sim` / `last_wall`
/// whose time runs at `pace`: behind by at most [`JUMP`] (or [`LATE_S`] of
/// wall time at a faster pace), ahead by at most [`MAX_PACE`] times the wall
/// time since, plus [`JUMP`].
fn follows(sim: f64, wall: f64, last_sim: f64, last_wall: f64, pace: f64) -> bool {
    sim >= last_sim - JUMP.max(pace * LATE_S) && sim <= last_sim + MAX_PACE * (wall - last_wall).max(0.0) + JUMP
}

impl TimeBase {
    /// A base of its own domain: for a bridge whose simulator runs one clock.
    pub fn new(use_sim_time: bool) -> Self {
        Self::with_source(use_sim_time, StampSource::Auto)
    }

    pub fn with_source(use_sim_time: bool, source: StampSource) -> Self {
        Self::in_domain(use_sim_time, source, Arc::default())
    }

    fn in_domain(use_sim_time: bool, source: StampSource, domain: Arc<Domain>) -> Self {
        Self {
            use_sim_time,
            source,
            id: domain.next_id(),
            domain,
            state: Mutex::new(State {
                last_sim: f64::NEG_INFINITY,
                last_wall: f64::NEG_INFINITY,
                candidate: None,
                generation: 0,
                epoch: EpochEstimate::default(),
                pace: PaceEstimate::default(),
                anchors: Anchors::default(),
            }),
        }
    }

    /// A new base on the same clock, anchored by its own first sample: for
    /// a stream that turned out to run on another simulator's clock.
    pub fn detached(&self) -> Self {
        Self::in_domain(self.use_sim_time, self.source, self.domain.clone())
    }

    pub fn uses_sim_time(&self) -> bool {
        self.use_sim_time
    }

    pub fn source(&self) -> StampSource {
        self.source
    }

    pub fn kind(&self) -> TimeSourceKind {
        let s = self.state.lock().unwrap();
        if self.use_sim_time {
            TimeSourceKind::SimTime
        } else if s.epoch.epoch().is_none() {
            TimeSourceKind::None
        } else if s.anchors.current.is_some() {
            TimeSourceKind::Heartbeat
        } else {
            TimeSourceKind::Arrivals
        }
    }

    /// The clock offset, drift and counts of this base.
    pub fn report(&self) -> TimeBaseReport {
        let kind = self.kind();
        let s = self.state.lock().unwrap();
        // An epoch, and so an offset or a drift, is a time only at real time.
        let real_time = s.pace.real_time();
        let offset = s.anchors.current.zip(s.epoch.epoch()).map(|(a, e)| (a - e) * 1e3);
        TimeBaseReport {
            kind,
            clock_offset_ms: offset.filter(|_| real_time),
            drift_ppm: s.epoch.drift_ppm().filter(|_| real_time),
            anchors_refused: s.anchors.refused,
            restarts: s.generation,
            pace: s.pace.pace(),
            real_time,
            pace_departures: s.pace.departures(),
        }
    }

    /// The bridge's clock now, in its stamps' terms: the wall clock, or with
    /// `use_sim_time` the newest time on the one clock (`None` before the first).
    pub fn now_seconds(&self) -> Option<f64> {
        if !self.use_sim_time {
            return Some(wall_now());
        }
        self.domain.state.lock().unwrap().newest
    }

    /// An arrival stamp at `wall`: the wall clock, or with `use_sim_time` the
    /// newest time on the one clock (0 before the first).
    pub fn arrival(&self, wall: f64) -> Accepted {
        let generation = self.state.lock().unwrap().generation;
        let d = self.domain.state.lock().unwrap();
        let seconds = if self.use_sim_time {
            d.newest.unwrap_or(0.0)
        } else {
            wall
        };
        Accepted {
            seconds,
            sim: None,
            generation: generation + d.generation,
            clock_generation: d.generation,
        }
    }

    /// An anchor from simulator instance `source`, received now: its sim
    /// time 0 was `start_epoch_s` on its PC's wall clock.
    pub fn heartbeat(&self, source: i64, start_epoch_s: f64) -> AnchorVerdict {
        self.heartbeat_at(source, start_epoch_s, wall_now())
    }

    /// The first instance heard is followed, the others' anchors are
    /// ignored (each instance has a base of its own: [`TimeBases`]). An
    /// anchor changes only with a restart of the run (sim time back): one
    /// that disagrees with the run whose samples go on is refused.
    pub fn heartbeat_at(&self, source: i64, start_epoch_s: f64, wall: f64) -> AnchorVerdict {
        let mut s = self.state.lock().unwrap();
        if s.anchors.source.is_some_and(|a| a != source) {
            return AnchorVerdict::OtherInstance;
        }
        if !(start_epoch_s.is_finite() && start_epoch_s > 0.0 && start_epoch_s < 1e11) {
            s.anchors.refused += 1;
            return AnchorVerdict::Refused;
        }
        s.anchors.source = Some(source);
        if let Some(current) = s.anchors.current {
            if (current - start_epoch_s).abs() <= JUMP {
                return AnchorVerdict::Same;
            }
            // Off real time an anchor tells no offset: the newest is kept, none refused.
            if !s.pace.real_time() {
                s.anchors.current = Some(start_epoch_s);
                return AnchorVerdict::Taken;
            }
        }
        s.anchors.held = Some(HeldAnchor {
            anchor: start_epoch_s,
            generation: s.generation,
            wall,
        });
        let refused = s.anchors.refused;
        s.adopt_held_anchor();
        if s.anchors.current == Some(start_epoch_s) {
            AnchorVerdict::Taken
        } else if s.anchors.refused > refused {
            AnchorVerdict::Refused
        } else {
            AnchorVerdict::Held
        }
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
        let pace = s.pace.pace().unwrap_or(1.0);
        let front;
        if first || follows(sim, wall, s.last_sim, s.last_wall, pace) {
            s.candidate = None;
            front = sim >= s.last_sim || first;
            if front {
                s.last_sim = sim;
                s.last_wall = wall;
            }
            s.old_run_goes_on(wall);
        } else {
            let candidate = match s.candidate {
                Some(c) if follows(sim, wall, c.last_sim, c.last_wall, pace) => Candidate {
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
            // A restart: a new run, a new epoch; its anchor is the one
            // held (a heartbeat of the new run that came first) or the next.
            s.candidate = None;
            s.generation += 1;
            s.last_sim = sim;
            s.last_wall = wall;
            s.epoch = EpochEstimate::default();
            s.pace.restart(wall);
            s.anchors.current = None;
            front = true;
        }
        if front && s.pace.sample(sim, wall) == PaceChange::Returned {
            // Back at real time: an epoch from the samples since, none from before.
            let mut epoch = EpochEstimate::default();
            for (sim, wall) in s.pace.points_since(wall - super::pace::RETURN_SPAN_S) {
                epoch.sample(sim, wall);
            }
            s.epoch = epoch;
        }
        s.epoch.sample(sim, wall);
        s.adopt_held_anchor();
        let epoch = s.epoch.epoch().expect("a sample was just taken");
        if !self.use_sim_time {
            // Never in the future; off real time, the arrival; and the arrival
            // for a sample the mapping puts far before it (the first ones
            // after a silent pause, before the pace is seen to have left).
            let mapped = sim + epoch;
            let seconds = if s.pace.real_time() && wall - mapped <= LATE_GUARD_S {
                mapped.min(wall)
            } else {
                wall
            };
            return Ok(Accepted {
                seconds,
                sim: Some(sim),
                generation: s.generation,
                clock_generation: 0,
            });
        }
        let mut d = self.domain.state.lock().unwrap();
        let reference = d.reference.get_or_insert(Reference {
            id: self.id,
            epoch,
            generation: s.generation,
            last_sim: sim,
            last_wall: wall,
        });
        if reference.id == self.id {
            reference.epoch = epoch;
            if sim >= reference.last_sim || reference.generation != s.generation {
                reference.last_sim = sim;
                reference.last_wall = wall;
            }
            if reference.generation != s.generation {
                reference.generation = s.generation;
                d.generation += 1;
                d.newest = None;
            }
        }
        let reference = *d.reference.as_ref().expect("set above");
        // The reference's own sim time is the clock; another instance's is
        // moved by the difference of the two epochs, and moves the clock no
        // farther than the reference's own samples reach.
        let (seconds, on_clock) = if reference.id == self.id {
            (sim, Some(sim))
        } else {
            let mapped = sim + epoch - reference.epoch;
            let reach = reference.last_sim + MAX_PACE * (wall - reference.last_wall).max(0.0) + JUMP;
            (mapped, (mapped <= reach).then_some(mapped))
        };
        if let Some(t) = on_clock {
            d.newest = Some(d.newest.map_or(t, |n| n.max(t)));
        }
        Ok(Accepted {
            seconds,
            sim: on_clock,
            generation: s.generation + d.generation,
            clock_generation: d.generation,
        })
    }

    pub fn stamp(&self, sim: f64) -> Result<r2r::builtin_interfaces::msg::Time, StampRefusal> {
        self.stamp_seconds(sim).map(super::to_ros_time)
    }
}

/// The time bases of a process's simulator instances (RflySim: one per
/// CopterSim, keyed by vehicle id), all on one clock.
#[derive(Debug)]
pub struct TimeBases {
    use_sim_time: bool,
    source: StampSource,
    domain: Arc<Domain>,
    bases: Mutex<BTreeMap<i64, Arc<TimeBase>>>,
}

impl TimeBases {
    pub fn new(use_sim_time: bool, source: StampSource) -> Self {
        Self {
            use_sim_time,
            source,
            domain: Arc::default(),
            bases: Mutex::default(),
        }
    }

    /// Instance `id`'s base, made at its first use.
    pub fn instance(&self, id: i64) -> Arc<TimeBase> {
        self.bases
            .lock()
            .unwrap()
            .entry(id)
            .or_insert_with(|| Arc::new(TimeBase::in_domain(self.use_sim_time, self.source, self.domain.clone())))
            .clone()
    }

    /// Instance `id`'s base if the process made one.
    pub fn existing(&self, id: i64) -> Option<Arc<TimeBase>> {
        self.bases.lock().unwrap().get(&id).cloned()
    }

    /// An anchor from instance `id`, for its base if the process has one (an
    /// instance nobody bridges makes none: the map stays bounded).
    pub fn heartbeat(&self, id: i64, start_epoch_s: f64) -> AnchorVerdict {
        self.existing(id)
            .map_or(AnchorVerdict::OtherInstance, |b| b.heartbeat(id, start_epoch_s))
    }

    pub fn uses_sim_time(&self) -> bool {
        self.use_sim_time
    }

    /// The bridge's clock now: the wall clock, or the newest time on the one clock.
    pub fn now_seconds(&self) -> Option<f64> {
        if !self.use_sim_time {
            return Some(wall_now());
        }
        self.domain.state.lock().unwrap().newest
    }
}

#[cfg(test)]
mod tests {
    use super::super::{StreamClock, FALLBACK_AFTER};
    use super::*;

    fn restart(tb: &TimeBase, sim: f64, wall: f64) -> Result<f64, StampRefusal> {
        for i in 1..RESTART_SAMPLES {
            let t = f64::from(i - 1) * 0.01;
            assert!(matches!(tb.take(sim + t, wall + t), Err(StampRefusal::Outlier(_))));
        }
        let t = f64::from(RESTART_SAMPLES - 1) * 0.01;
        tb.stamp_seconds_at(sim + t, wall + t).map(|s| s - t)
    }

    /// A latency between 0.2 and 2.2 ms, the least of them now and then.
    fn latency(i: u32) -> f64 {
        if i % 50 == 0 {
            0.0002
        } else {
            0.0002 + f64::from((i * 7919) % 2000) * 1e-6
        }
    }

    #[test]
    fn first_frame_anchors_and_all_sensors_share_it() {
        let tb = TimeBase::new(false);
        assert_eq!(tb.stamp_seconds_at(10.0, 1000.0), Ok(1000.0));
        // Another sensor, received later, sampled at sim 10.5: same mapping.
        assert_eq!(tb.stamp_seconds_at(10.5, 1000.7), Ok(1000.5));
        assert_eq!(tb.kind(), TimeSourceKind::Arrivals);
        // A restart (sim time back to 0, sustained) re-anchors.
        assert_eq!(restart(&tb, 0.0, 2000.0), Ok(2000.0));
        assert_eq!(tb.stamp_seconds_at(1.0, 2001.0), Ok(2001.0));
    }

    #[test]
    fn a_heartbeat_tells_the_clock_offset_and_moves_no_stamp() {
        let tb = TimeBase::new(false);
        tb.stamp_seconds_at(5.0, 100.0).unwrap();
        // The simulator PC's clock is 5 s behind this one.
        assert_eq!(tb.heartbeat_at(1, 90.0, 100.1), AnchorVerdict::Taken);
        assert_eq!(tb.stamp_seconds_at(6.0, 101.2), Ok(101.0));
        assert_eq!(tb.kind(), TimeSourceKind::Heartbeat);
        assert_eq!(tb.report().clock_offset_ms, Some(-5000.0));
        assert_eq!(tb.heartbeat_at(1, 90.0005, 101.1), AnchorVerdict::Same);
        // With use_sim_time the reference's sim time is the stamp, heartbeat or not.
        let sim = TimeBase::new(true);
        assert_eq!(sim.stamp_seconds_at(6.25, 101.0), Ok(6.25));
        assert_eq!(sim.heartbeat_at(1, 90.0, 101.1), AnchorVerdict::Taken);
        assert_eq!(sim.stamp_seconds_at(6.5, 101.2), Ok(6.5));
        assert_eq!(sim.kind(), TimeSourceKind::SimTime);
    }

    /// The simulator on a PC whose clock is 10 s ahead, then one 10 s
    /// behind: stamps within a few ms of each sample's time on this
    /// machine, never back, and the offset reported.
    #[test]
    fn a_simulator_pc_clock_off_by_ten_seconds_leaves_stamps_on_this_clock() {
        for pc_clock_ahead in [10.0, -10.0] {
            let tb = TimeBase::new(false);
            let mut imu = StreamClock::new("imu", "test");
            let epoch = 1_700_000_000.0;
            // Heard before the first sample: held, then taken with it.
            assert_eq!(
                tb.heartbeat_at(1, epoch + pc_clock_ahead, epoch + 30.0),
                AnchorVerdict::Held
            );
            let mut last = f64::NEG_INFINITY;
            for i in 0..1600 {
                let sim = 30.0 + f64::from(i) * 0.005;
                let sampled = epoch + sim;
                let a = imu.stamp_at(&tb, sim, sampled + latency(i)).unwrap();
                assert!(a.seconds >= last, "back at {i}");
                assert!((a.seconds - sampled).abs() < 0.003, "{i}: {} vs {sampled}", a.seconds);
                last = a.seconds;
                if i % 200 == 0 {
                    let beat = tb.heartbeat_at(1, epoch + pc_clock_ahead, sampled);
                    assert!(matches!(beat, AnchorVerdict::Same | AnchorVerdict::Taken), "{beat:?}");
                }
            }
            let report = tb.report();
            let offset = report.clock_offset_ms.unwrap();
            assert!((offset - pc_clock_ahead * 1e3).abs() < 1.0, "{offset}");
            assert_eq!((report.kind, report.anchors_refused), (TimeSourceKind::Heartbeat, 0));
        }
    }

    /// Two heartbeats for one vehicle alternating anchors T and T + 10 s at
    /// 2 Hz (two CopterSims given one id, or a stepped PC clock): the run's
    /// first anchor stays, the other is refused and counted, stamps move
    /// not at all.
    #[test]
    fn flapping_anchors_are_refused_and_stamps_never_go_back() {
        let tb = TimeBase::new(false);
        let mut imu = StreamClock::new("imu", "test");
        let t = 1_700_000_000.0;
        let mut last = f64::NEG_INFINITY;
        for i in 0..1600 {
            let sim = 100.0 + f64::from(i) * 0.005;
            let sampled = t + sim;
            if i % 100 == 0 {
                let anchor = if (i / 100) % 2 == 0 { t } else { t + 10.0 };
                tb.heartbeat_at(1, anchor, sampled);
            }
            let a = imu.stamp_at(&tb, sim, sampled + latency(i)).unwrap();
            assert!(a.seconds >= last && (a.seconds - sampled).abs() < 0.003, "{i}");
            last = a.seconds;
        }
        let report = tb.report();
        assert!((report.clock_offset_ms.unwrap()).abs() < 1.0, "{report:?}");
        assert!((7..=8).contains(&report.anchors_refused), "{report:?}");
        assert_eq!(report.restarts, 0);
    }

    /// A restarted CopterSim's heartbeat often comes before its first
    /// samples (the IMU waits for the bridge's next request): held, taken
    /// at the restart, not counted as refused.
    #[test]
    fn a_restarts_anchor_heard_first_is_taken_with_it() {
        let tb = TimeBase::new(false);
        assert_eq!(tb.heartbeat_at(1, 1000.0, 1000.5), AnchorVerdict::Held);
        assert_eq!(tb.stamp_seconds_at(100.0, 1100.0), Ok(1100.0));
        assert_eq!(tb.kind(), TimeSourceKind::Heartbeat);
        // The simulator restarts at wall 1200; heartbeats of the new run for two seconds first.
        for k in 0..3 {
            assert_eq!(tb.heartbeat_at(1, 1199.9, 1200.0 + f64::from(k)), AnchorVerdict::Held);
        }
        assert_eq!(restart(&tb, 0.0, 1203.0), Ok(1203.0));
        assert_eq!(tb.stamp_seconds_at(0.5, 1203.6), Ok(1203.5));
        assert_eq!(tb.stamp_seconds_at(60.0, 1263.0), Ok(1263.0));
        let report = tb.report();
        assert_eq!(
            (report.kind, report.anchors_refused, report.restarts),
            (TimeSourceKind::Heartbeat, 0, 1)
        );
        assert!((report.clock_offset_ms.unwrap() + 3100.0).abs() < 1e-6, "{report:?}");
        // A restart with no heartbeat yet: no offset until the next one.
        assert_eq!(restart(&tb, 0.0, 1300.0), Ok(1300.0));
        assert_eq!(tb.kind(), TimeSourceKind::Arrivals);
        assert_eq!(tb.heartbeat_at(1, 1299.9, 1300.5), AnchorVerdict::Taken);
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
    fn bad_sim_times_and_anchors_are_refused_and_change_nothing() {
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
        for bad in [f64::NAN, -3.0, 1e300] {
            assert_eq!(fresh.heartbeat_at(1, bad, 5.0), AnchorVerdict::Refused);
        }
        // 9·10¹⁰ s, a start time in the year 4800: farther than any PC's clock.
        assert_eq!(fresh.heartbeat_at(1, 9e10, 5.1), AnchorVerdict::Refused);
        let report = fresh.report();
        assert_eq!(
            (report.kind, report.anchors_refused, report.clock_offset_ms),
            (TimeSourceKind::Arrivals, 4, None)
        );
    }

    #[test]
    fn a_base_follows_the_instance_it_heard_first() {
        let tb = TimeBase::new(false);
        assert_eq!(tb.stamp_seconds_at(1.0, 1001.0), Ok(1001.0));
        assert_eq!(tb.heartbeat_at(1, 1000.0, 1001.0), AnchorVerdict::Taken);
        assert_eq!(
            tb.heartbeat_at(2, 5000.0, 1001.1),
            AnchorVerdict::OtherInstance,
            "another instance's anchor does not move this base"
        );
        assert_eq!(tb.report().clock_offset_ms, Some(0.0));
    }

    /// A swarm whose CopterSims started 30 s apart, IMUs interleaved at
    /// 200 Hz each: every sample of both is stamped, near the wall clock,
    /// never backwards (one shared base refused every sample of the second).
    #[test]
    fn a_swarm_on_staggered_clocks_keeps_every_vehicle() {
        let bases = TimeBases::new(false, StampSource::Auto);
        let (one, two) = (bases.instance(1), bases.instance(2));
        assert_eq!(
            bases.heartbeat(3, 1000.0),
            AnchorVerdict::OtherInstance,
            "no base for a vehicle nobody bridges"
        );
        let (mut c1, mut c2) = (
            StreamClock::new("uav1 imu", "test"),
            StreamClock::new("uav2 imu", "test"),
        );
        let wall0 = 1_000_000.0;
        // CopterSim 1 started 40 s before wall0, CopterSim 2 10 s before: 30 s apart.
        assert_eq!(one.heartbeat_at(1, wall0 - 40.0, wall0), AnchorVerdict::Held);
        let (mut last1, mut last2) = (0.0, 0.0);
        for i in 0..1600 {
            let wall = wall0 + f64::from(i) * 0.005;
            let a = c1.stamp_at(&one, wall - (wall0 - 40.0), wall).expect("vehicle 1");
            // Vehicle 2 heard no heartbeat yet for the first half.
            if i == 800 {
                assert_eq!(two.heartbeat_at(2, wall0 - 10.0, wall), AnchorVerdict::Taken);
            }
            let b = c2.stamp_at(&two, wall - (wall0 - 10.0), wall).expect("vehicle 2");
            for (x, last) in [(a.seconds, &mut last1), (b.seconds, &mut last2)] {
                assert!((x - wall).abs() < 1e-6, "{x} vs wall {wall}");
                assert!(x >= *last);
                *last = x;
            }
        }
        assert_eq!(one.report().anchors_refused + two.report().anchors_refused, 0);
    }

    /// With use_sim_time, every vehicle on the first one's clock: stamps of
    /// the same instant agree whatever each CopterSim's own time reads.
    #[test]
    fn under_sim_time_every_instance_maps_onto_the_first_ones_clock() {
        let bases = TimeBases::new(true, StampSource::Auto);
        let (one, two) = (bases.instance(1), bases.instance(2));
        // At wall 1000: vehicle 1's clock reads 40 s, vehicle 2's 10 s.
        let a = one.take(40.0, 1000.0).unwrap();
        let b = two.take(10.0, 1000.0).unwrap();
        assert_eq!((a.seconds, b.seconds), (40.0, 40.0));
        assert_eq!((a.sim, b.sim), (Some(40.0), Some(40.0)));
        assert_eq!(bases.now_seconds(), Some(40.0));
        let b = two.take(10.5, 1000.5).unwrap();
        assert_eq!(b.seconds, 40.5);
        assert_eq!(bases.now_seconds(), Some(40.5));
        // Vehicle 2 restarts: its own samples re-anchor it; the one clock
        // does not go back (it is vehicle 1's).
        for i in 0..RESTART_SAMPLES {
            let _ = two.take(0.01 * f64::from(i), 1001.0 + 0.01 * f64::from(i));
        }
        let b = two.take(0.5, 1001.5).unwrap();
        assert!((b.seconds - 41.5).abs() < 0.05, "{b:?}");
        assert_eq!(b.clock_generation, 0);
        // Vehicle 1 restarts: the one clock goes back, once.
        for i in 0..RESTART_SAMPLES {
            let _ = one.take(0.01 * f64::from(i), 1002.0 + 0.01 * f64::from(i));
        }
        let a = one.take(0.1, 1002.1).unwrap();
        assert_eq!((a.seconds, a.clock_generation), (0.1, 1));
        let b = two.take(1.1, 1002.1).unwrap();
        assert!((b.seconds - 0.1).abs() < 0.05, "{b:?}");
    }

    /// Under use_sim_time, a second vehicle's heartbeat anchored in the far
    /// future (once: /clock went to 2^31 − 1 s and stayed), or a vehicle
    /// whose samples map ahead of the reference's: /clock goes no farther
    /// than the reference vehicle's own samples reach.
    #[test]
    fn clock_goes_no_farther_than_the_reference_reaches() {
        let bases = TimeBases::new(true, StampSource::Auto);
        let (one, two) = (bases.instance(1), bases.instance(2));
        one.take(50.0, 1000.0).unwrap();
        two.take(20.0, 1000.0).unwrap();
        assert_eq!(two.heartbeat_at(2, 9e10, 1000.0), AnchorVerdict::Refused);
        for i in 1..400 {
            let dt = f64::from(i) * 0.005;
            one.take(50.0 + dt, 1000.0 + dt).unwrap();
            let b = two.take(20.0 + dt, 1000.0 + dt).unwrap();
            assert!((b.seconds - (50.0 + dt)).abs() < 1e-6);
            assert!(bases.now_seconds().unwrap() <= 50.0 + dt + 1e-9);
        }
        // Vehicle 2's sim time runs at twice real time (a fault): its stamps
        // run ahead; /clock goes no farther than vehicle 1's samples reach.
        let (mut ahead, start1, start2) = (false, 50.0 + 399.0 * 0.005, 20.0 + 399.0 * 0.005);
        for i in 1..600 {
            let dt = f64::from(i) * 0.005;
            let wall = 1000.0 + 399.0 * 0.005 + dt;
            one.take(start1 + dt, wall).unwrap();
            let b = two.take(start2 + 2.0 * dt, wall).unwrap();
            ahead |= b.sim.is_none();
            assert!(bases.now_seconds().unwrap() <= start1 + dt + JUMP + 1e-9);
        }
        assert!(ahead, "the samples ahead of the reach moved no clock");
    }

    /// Synthetic series at each pace, with delay noise, a 2-s pause (samples
    /// going on, their sim time standing), a reset to 0 and a step 500 s
    /// forward: on this machine's clock every IMU sample and camera frame is
    /// stamped, within 20 ms of its arrival (p95), never after it, never
    /// back; under sim time each stamp is its sample's sim time, but for the
    /// two samples of a jump before it counts as a restart.
    #[test]
    fn stamps_hold_at_any_pace_through_a_pause_a_reset_and_a_step() {
        for pace in [0.05, 0.1, 0.5, 1.0, 2.0, 10.0, 20.0] {
            for use_sim_time in [false, true] {
                let tb = TimeBase::new(use_sim_time);
                let (mut imu, mut camera) = (StreamClock::new("imu", "test"), StreamClock::new("camera", "test"));
                let (mut last_imu, mut last_camera) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
                let (mut late, mut not_sim) = (Vec::new(), 0);
                let (mut sim, wall0) = (100.0, 1_700_000_000.0);
                for i in 0..4000u32 {
                    let t = f64::from(i) * 0.005;
                    match i {
                        2400 => sim = 0.0,
                        3200 => sim += 500.0,
                        _ if (5.0..7.0).contains(&t) => {}
                        _ => sim += pace * 0.005,
                    }
                    let arrival = wall0 + t + latency(i);
                    // Under sim time the first two samples of each jump have no
                    // stamp to give (dropped); on this machine's clock none is.
                    let Ok(a) = imu.stamp_at(&tb, sim, arrival) else {
                        assert!(use_sim_time, "pace {pace}, {i}: an IMU sample refused");
                        not_sim += 1;
                        continue;
                    };
                    let b = (i % 10 == 0)
                        .then(|| camera.stamp_at(&tb, sim, arrival + 0.003))
                        .and_then(|b| {
                            assert!(use_sim_time || b.is_ok(), "pace {pace}, {i}: a frame refused");
                            b.ok()
                        });
                    for (x, arrived, last) in [
                        (Some(a), arrival, &mut last_imu),
                        (b, arrival + 0.003, &mut last_camera),
                    ] {
                        let Some(x) = x else { continue };
                        if use_sim_time {
                            if x.seconds != sim {
                                not_sim += 1;
                            }
                            continue;
                        }
                        assert!(
                            x.seconds <= arrived,
                            "pace {pace}, {i}: {} after its arrival {arrived}",
                            x.seconds
                        );
                        assert!(x.seconds >= *last, "pace {pace}, {i}: back");
                        *last = x.seconds;
                        late.push(arrived - x.seconds);
                    }
                }
                if use_sim_time {
                    assert!(not_sim <= 4, "pace {pace}: {not_sim} stamps not their sim time");
                    continue;
                }
                late.sort_by(f64::total_cmp);
                let p95 = late[late.len() * 95 / 100];
                assert!(p95 < 0.020, "pace {pace}: p95 {p95}");
                assert_eq!(tb.report().real_time, pace == 1.0, "pace {pace}: {:?}", tb.report());
                let measured = tb.report().pace.unwrap();
                assert!(
                    (measured - pace).abs() < 0.02 * pace,
                    "pace {pace}: measured {measured}"
                );
            }
        }
    }

    /// A stream on another clock than its base (a sensor of a vehicle whose
    /// simulator started elsewhere): refused for a while, then on a base of
    /// its own, while the base's other streams go on untouched.
    #[test]
    fn a_stream_off_its_base_for_long_gets_its_own() {
        let tb = TimeBase::new(false);
        let (mut imu, mut cam) = (StreamClock::new("imu", "test"), StreamClock::new("camera", "test"));
        let mut taken_camera = 0;
        for i in 0..1000 {
            let wall = 5000.0 + f64::from(i) * 0.005;
            assert_eq!(imu.stamp_at(&tb, wall - 4000.0, wall).unwrap().seconds, wall);
            if i % 7 == 0 {
                if let Ok(a) = cam.stamp_at(&tb, wall - 4030.0, wall) {
                    assert_eq!(a.seconds, wall, "anchored near the wall clock");
                    taken_camera += 1;
                }
            }
        }
        let refused = (FALLBACK_AFTER / 0.035).ceil() as i32;
        assert!(taken_camera > 140 - refused - 2, "{taken_camera}");
    }
}
