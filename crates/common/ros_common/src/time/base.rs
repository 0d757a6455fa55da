//! A simulator instance's time base ([`TimeBase`]) and the registry of a
//! process's instances ([`TimeBases`]). Each base maps its instance's sim
//! time to the wall clock (its anchor: a heartbeat, or the first sample);
//! under `use_sim_time` the bases of a process share one clock, the sim
//! time of the first instance that took a sample (the reference), and the
//! others map into it through their anchors.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::{wall_now, Accepted, StampRefusal, StampSource, TimeSourceKind, JUMP, MAX_SIM_TIME, RESTART_SAMPLES};

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
    /// The simulator instance whose anchors are followed.
    anchor_source: Option<i64>,
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
    /// The reference base: its number, anchor and restart count.
    reference: Option<Reference>,
    /// Counts the reference's re-anchors: the one clock may go back then.
    generation: u64,
    /// The newest time on the one clock (`None`: no sample yet).
    newest: Option<f64>,
}

#[derive(Debug, Clone, Copy)]
struct Reference {
    id: u64,
    offset: f64,
    generation: u64,
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

/// Whether `sim` at `wall` follows a stream last at `last_sim` / `last_wall`.
fn follows(sim: f64, wall: f64, last_sim: f64, last_wall: f64) -> bool {
    sim >= last_sim - JUMP && sim <= last_sim + (wall - last_wall).max(0.0) + JUMP
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
        let kind = if use_sim_time {
            TimeSourceKind::SimTime
        } else {
            TimeSourceKind::None
        };
        Self {
            use_sim_time,
            source,
            id: domain.next_id(),
            domain,
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
        self.state.lock().unwrap().kind
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

    /// An anchor from simulator instance `source`: sim time 0 was
    /// `start_epoch_s` on the wall clock. The first instance heard is
    /// followed, the others' anchors are ignored (each instance has a base
    /// of its own: [`TimeBases`]). Returns whether the anchor was taken.
    pub fn heartbeat(&self, source: i64, start_epoch_s: f64) -> bool {
        let mut s = self.state.lock().unwrap();
        let plausible = start_epoch_s.is_finite() && start_epoch_s > 0.0 && start_epoch_s < 1e11;
        if !plausible || s.anchor_source.is_some_and(|a| a != source) {
            return false;
        }
        s.anchor_source = Some(source);
        // Another run's anchor (not the same one again, nor a first-frame
        // anchor refined by a few ms): stamps may go back once, as at a restart.
        if s.offset.is_some_and(|o| (o - start_epoch_s).abs() > JUMP) {
            s.generation += 1;
        }
        s.offset = Some(start_epoch_s);
        if !self.use_sim_time {
            s.kind = TimeSourceKind::Heartbeat;
        }
        let mut d = self.domain.state.lock().unwrap();
        self.follow_reference(&s, &mut d);
        true
    }

    /// When this base is the domain's reference: the domain takes its anchor,
    /// and a re-anchor of it restarts the one clock.
    fn follow_reference(&self, s: &State, d: &mut DomainState) {
        let Some(offset) = s.offset else { return };
        match &mut d.reference {
            Some(r) if r.id == self.id => {
                r.offset = offset;
                if r.generation != s.generation {
                    r.generation = s.generation;
                    d.generation += 1;
                    d.newest = None;
                }
            }
            _ => {}
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
        if first || follows(sim, wall, s.last_sim, s.last_wall) {
            s.candidate = None;
            if sim >= s.last_sim || first {
                s.last_sim = sim;
                s.last_wall = wall;
            }
            if s.offset.is_none() {
                s.offset = Some(wall - sim);
                if !self.use_sim_time {
                    s.kind = TimeSourceKind::FirstFrame;
                }
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
        let offset = s.offset.unwrap_or(wall - sim);
        if !self.use_sim_time {
            return Ok(Accepted {
                seconds: sim + offset,
                sim: Some(sim),
                generation: s.generation,
                clock_generation: 0,
            });
        }
        let mut d = self.domain.state.lock().unwrap();
        if d.reference.is_none() {
            d.reference = Some(Reference {
                id: self.id,
                offset,
                generation: s.generation,
            });
        }
        self.follow_reference(&s, &mut d);
        let reference = d.reference.expect("set above");
        // The reference's own sim time is the clock; another instance's is
        // moved by the difference of the two anchors.
        let seconds = if reference.id == self.id {
            sim
        } else {
            sim + offset - reference.offset
        };
        d.newest = Some(d.newest.map_or(seconds, |n| n.max(seconds)));
        Ok(Accepted {
            seconds,
            sim: Some(seconds),
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

    /// An anchor from instance `id`, taken by its base if the process has
    /// one (an instance nobody bridges makes none: the map stays bounded).
    pub fn heartbeat(&self, id: i64, start_epoch_s: f64) -> bool {
        let base = self.bases.lock().unwrap().get(&id).cloned();
        base.is_some_and(|b| b.heartbeat(id, start_epoch_s))
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
        // With use_sim_time the reference's sim time is the stamp, heartbeat or not.
        let sim = TimeBase::new(true);
        assert_eq!(sim.stamp_seconds_at(6.25, 101.0), Ok(6.25));
        assert!(sim.heartbeat(1, 90.0));
        assert_eq!(sim.stamp_seconds_at(6.5, 101.2), Ok(6.5));
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
    fn a_base_follows_the_instance_it_heard_first() {
        let tb = TimeBase::new(false);
        assert!(tb.heartbeat(1, 1000.0));
        assert!(
            !tb.heartbeat(2, 5000.0),
            "another instance's anchor does not move this base"
        );
        assert_eq!(tb.stamp_seconds_at(1.0, 0.0), Ok(1001.0));
        // The same CopterSim restarted: a new start time is followed.
        assert!(tb.heartbeat(1, 2000.0));
        assert_eq!(tb.stamp_seconds_at(1.0, 0.0), Ok(2001.0));
    }

    /// A swarm whose CopterSims started 30 s apart, IMUs interleaved at
    /// 200 Hz each: every sample of both is stamped, near the wall clock,
    /// never backwards (one shared base refused every sample of the second).
    #[test]
    fn a_swarm_on_staggered_clocks_keeps_every_vehicle() {
        let bases = TimeBases::new(false, StampSource::Auto);
        let (one, two) = (bases.instance(1), bases.instance(2));
        assert!(!bases.heartbeat(3, 1000.0), "no base for a vehicle nobody bridges");
        let (mut c1, mut c2) = (
            StreamClock::new("uav1 imu", "test"),
            StreamClock::new("uav2 imu", "test"),
        );
        let wall0 = 1_000_000.0;
        // CopterSim 1 started 40 s before wall0, CopterSim 2 10 s before: 30 s apart.
        assert!(bases.heartbeat(1, wall0 - 40.0));
        let (mut last1, mut last2) = (0.0, 0.0);
        for i in 0..1600 {
            let wall = wall0 + f64::from(i) * 0.005;
            let a = c1.stamp_at(&one, wall - (wall0 - 40.0), wall).expect("vehicle 1");
            // Vehicle 2 heard no heartbeat yet for the first half: its first sample anchors.
            if i == 800 {
                assert!(bases.heartbeat(2, wall0 - 10.0));
            }
            let b = c2.stamp_at(&two, wall - (wall0 - 10.0), wall).expect("vehicle 2");
            for (x, last) in [(a.seconds, &mut last1), (b.seconds, &mut last2)] {
                assert!((x - wall).abs() < 1e-6, "{x} vs wall {wall}");
                assert!(x >= *last);
                *last = x;
            }
        }
    }

    /// With use_sim_time, every vehicle on the first one's clock: stamps of
    /// the same instant agree whatever each CopterSim's own time reads.
    #[test]
    fn under_sim_time_every_instance_maps_onto_the_first_ones_clock() {
        let bases = TimeBases::new(true, StampSource::Auto);
        let (one, two) = (bases.instance(1), bases.instance(2));
        assert!(bases.heartbeat(1, 960.0));
        assert!(bases.heartbeat(2, 990.0));
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
