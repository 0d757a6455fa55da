//! One stream's view of its time base: a sample whose sim time goes back
//! within a run is refused, its stamps never go back (on this machine's
//! clock never; under `use_sim_time` only when `/clock` restarts), under
//! `stamp_source: auto` it falls back to arrival stamps while its samples
//! carry no sim time or one off the base, and a stream that runs on
//! another clock than its base's gets a base of its own.

use std::sync::Arc;

use super::{
    wall_now, Accepted, StampRefusal, StampSource, TimeBase, FALLBACK_AFTER, MAX_SIM_TIME, RESTART_SAMPLES,
    STAMP_SOURCE,
};

/// How far after the stream's last stamp a sample goes that the moved
/// mapping would stamp before it (well above an f64's step at Unix times).
const AFTER_LAST_S: f64 = 1e-6;

/// At most one log line per this many seconds about samples off the base.
const OUTLIER_LOG_PERIOD_S: f64 = 10.0;

#[derive(Debug)]
pub struct StreamClock {
    /// Named in the log lines.
    stream: String,
    logger: String,
    /// The last stamp, and the `/clock` generation it was on.
    last: Option<(f64, u64)>,
    /// The last sim time stamped from, and the run it was in.
    last_sim: Option<(f64, u64)>,
    /// Wall time of the last log line about a sample off the base.
    outlier_logged: f64,
    /// Wall time since which every sample had no sim time.
    unusable_since: Option<f64>,
    on_arrival: bool,
    /// Wall time since which every sample was off the base, and how many.
    off_base_since: Option<(f64, u32)>,
    /// The base of this stream alone, once its samples left the shared one.
    own: Option<Arc<TimeBase>>,
}

impl StreamClock {
    pub fn new(stream: impl Into<String>, logger: impl Into<String>) -> Self {
        Self {
            stream: stream.into(),
            logger: logger.into(),
            last: None,
            last_sim: None,
            outlier_logged: f64::NEG_INFINITY,
            unusable_since: None,
            on_arrival: false,
            off_base_since: None,
            own: None,
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
        let own = self.own.clone();
        let base = own.as_deref().unwrap_or(base);
        let (taken, from_sim) = match base.source() {
            StampSource::Arrival => (base.arrival(wall), false),
            StampSource::Sim => (self.on_base(base, sim, wall)?, true),
            StampSource::Auto => self.auto(base, sim, wall)?,
        };
        self.ordered(taken, from_sim.then_some(sim))
    }

    /// The stamp of a sample that carries no sim time, received at `wall`.
    pub fn arrival_at(&mut self, base: &TimeBase, wall: f64) -> Result<Accepted, StampRefusal> {
        let taken = self.own.as_deref().unwrap_or(base).arrival(wall);
        self.ordered(taken, None)
    }

    /// Refuses a sample whose sim time goes back within its run (the only
    /// sample dropped for its time), and keeps stamps from going back when
    /// the mapping moved (a better epoch, a change of pace): such a sample
    /// is stamped just after the stream's last.
    fn ordered(&mut self, mut taken: Accepted, sim: Option<f64>) -> Result<Accepted, StampRefusal> {
        let mut same_sample_time = false;
        if let (Some(sim), Some((last_sim, generation))) = (sim, self.last_sim) {
            if taken.generation == generation && sim < last_sim {
                return Err(StampRefusal::OutOfOrder(sim));
            }
            same_sample_time = taken.generation == generation && sim == last_sim;
        }
        if let Some((last, clock_generation)) = self.last {
            let behind = taken.seconds < last || (taken.seconds == last && !same_sample_time);
            if taken.clock_generation == clock_generation && behind {
                // Never the last stamp again: tf2 and message_filters take two
                // samples with one stamp for one.
                taken.seconds = last + AFTER_LAST_S;
            }
        }
        if let Some(sim) = sim {
            self.last_sim = Some((sim, taken.generation));
        }
        self.last = Some((taken.seconds, taken.clock_generation));
        Ok(taken)
    }

    /// `base.take`, and the move to a base of its own when this stream's
    /// samples stayed off the shared base for [`FALLBACK_AFTER`] (a
    /// restart of the stream's own simulator would have re-anchored it).
    fn on_base(&mut self, base: &TimeBase, sim: f64, wall: f64) -> Result<Accepted, StampRefusal> {
        let taken = base.take(sim, wall);
        if !matches!(taken, Err(StampRefusal::Outlier(_))) {
            self.off_base_since = None;
            return taken;
        }
        let (since, samples) = self.off_base_since.get_or_insert((wall, 0));
        *samples += 1;
        if self.own.is_some() || wall - *since < FALLBACK_AFTER || *samples < RESTART_SAMPLES {
            return taken;
        }
        r2r::log_warn!(
            &self.logger,
            "{}: no sample in {FALLBACK_AFTER} s followed the time base its simulator's other streams \
             keep (the last at sim time {sim} s): it runs on another clock; stamping it on a time base \
             of its own from now on",
            self.stream
        );
        self.off_base_since = None;
        let own = Arc::new(base.detached());
        let retaken = own.take(sim, wall);
        self.own = Some(own);
        retaken
    }

    /// The stamp, and whether it came from the sample's sim time.
    fn auto(&mut self, base: &TimeBase, sim: f64, wall: f64) -> Result<(Accepted, bool), StampRefusal> {
        match self.on_base(base, sim, wall) {
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
                    Ok((base.arrival(wall), false))
                } else {
                    Err(StampRefusal::NotSimTime(t))
                }
            }
            // Under use_sim_time a stamp is the sample's sim time: one off the
            // base has none to give, and is dropped.
            Err(StampRefusal::Outlier(t)) if !base.uses_sim_time() => {
                // A valid sample may be the first of a jump of its simulator's
                // time: it moves no clock, but its data is kept.
                self.unusable_since = None;
                if wall - self.outlier_logged >= OUTLIER_LOG_PERIOD_S {
                    self.outlier_logged = wall;
                    r2r::log_warn!(
                        &self.logger,
                        "{}: sim time {t} s is off its time base (a jump, or a corrupt time): stamped on \
                         arrival, moves no clock (three such samples that agree are a restart)",
                        self.stream
                    );
                }
                Ok((base.arrival(wall), false))
            }
            other => {
                self.unusable_since = None;
                if self.on_arrival && other.is_ok() {
                    self.on_arrival = false;
                    r2r::log_info!(&self.logger, "{}: sim times are back; stamping with them", self.stream);
                }
                other.map(|a| (a, true))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::JUMP;
    use super::*;

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
        assert_eq!((after.seconds, after.clock_generation), (0.05, 1));
        assert_eq!(cam.stamp_at(&tb, 0.06, 1.06).unwrap().seconds, 0.06);
    }

    /// A sample the moved mapping would stamp at or before the last one
    /// goes just after it; a sample repeating the last sim time keeps its stamp.
    #[test]
    fn a_moved_mapping_never_repeats_a_stamp() {
        let tb = TimeBase::new(false);
        let mut s = StreamClock::new("imu", "test");
        let first = s.stamp_at(&tb, 10.0, 1000.0).unwrap().seconds;
        assert_eq!(
            s.stamp_at(&tb, 10.0, 1000.1).unwrap().seconds,
            first,
            "the same sample time"
        );
        let behind = s.arrival_at(&tb, first - 0.5).unwrap().seconds;
        assert_eq!(behind, first + AFTER_LAST_S);
        let again = s.arrival_at(&tb, first - 0.4).unwrap();
        assert_eq!(again.seconds, behind + AFTER_LAST_S);
        assert_ne!(
            super::super::to_ros_time(behind),
            super::super::to_ros_time(again.seconds)
        );
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
        assert_eq!(
            tb.heartbeat_at(1, 1_000_000.0, 1_000_000.0),
            super::super::AnchorVerdict::Held
        );
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
                // Heartbeats of another CopterSim, or absurd ones: they move no stamp.
                let _ = tb.heartbeat_at(2, bad, wall);
                let _ = tb.heartbeat_at(1, f64::NAN, wall);
                let _ = tb.heartbeat_at(1, bad, wall);
            }
            good += 0.005;
            let stamp = tb.stamp_seconds_at(good, wall + 0.005);
            assert!(
                stamp.is_ok_and(|s| (s - (good + 1_000_000.0)).abs() < 1e-6),
                "after input {i}: {bad}: {stamp:?}"
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
        // Where the run before the last restart ended: a sample of the new run
        // off the base is stamped on arrival, the clock's newest time, until
        // the restart is confirmed.
        let mut previous_run = 0.0;
        for i in 0..20_000 {
            let r = xorshift(&mut rng);
            wall += 0.004;
            sim += 0.004;
            if r % 3000 == 0 {
                previous_run = sim;
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
                let newest = if a.sim.is_none() { sim.max(previous_run) } else { sim };
                assert!(
                    a.seconds <= newest + JUMP,
                    "a stamp ahead of the simulator at {i}: {a:?} (sim {sim})"
                );
                last[s] = Some(a);
            }
        }
        let now = clocks[0].stamp_at(&tb, sim + 0.004, wall + 0.004).unwrap();
        assert_eq!(
            now.clock_generation, restarts,
            "every restart was followed, and nothing else"
        );
    }
}
