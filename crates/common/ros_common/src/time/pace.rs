//! How fast a simulator's time runs against this machine's clock (its
//! pace), and whether stamps may follow sim time ([`PaceEstimate`]).
//!
//! A simulator keeps real time only when its PC keeps up: a heavy scene
//! runs slower, batch runs faster, a user pauses. Only at real time is
//! `sim time + epoch` a time on this machine's clock; at any other pace
//! stamps are the arrival. The pace is read off the lower envelope of
//! `arrival − sim time` (the least-delay samples, as NTP reads a clock's
//! frequency): at real time it stays flat, it rises while sim time runs
//! slower (or stands still) and falls while it runs faster. A short span
//! tells quickly that the pace left real time; a long one, and a second
//! of it, that it came back.

use std::collections::VecDeque;

/// One envelope point per this much wall time (s): the history stays small.
const SLOT_S: f64 = 0.01;
/// Wall time (s) of points kept.
const HISTORY_S: f64 = 2.0;
/// The envelope "now": the least `arrival − sim` of the newest this many
/// points (slots of samples), so that a late sample, or a burst of them
/// after either machine stalled, is not read as a slower pace: the newest
/// points before the stall still count, and the burst's last sample
/// arrives in time again.
const NOW_POINTS: usize = 3;
/// The envelope "then" is the least of the points in this much wall time (s)
/// around the start of the span.
const THEN_S: f64 = 0.03;
/// The span (s) over which leaving real time is judged, and the span (and
/// the time in the other mode) over which coming back is.
const LEAVE_SPAN_S: f64 = 0.5;
pub(super) const RETURN_SPAN_S: f64 = 1.0;
/// How far (s) the envelope may move over a span, plus a share of the span,
/// and still be real time: latency noise, and the drift of two PCs' clocks.
const ENVELOPE_NOISE_S: f64 = 0.003;
const LEAVE_TOLERANCE: f64 = 0.01;
const RETURN_TOLERANCE: f64 = 0.005;
/// Below this pace the simulation counts as paused (for the report).
pub const PAUSED_BELOW: f64 = 0.01;

/// What [`PaceEstimate::sample`] saw change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PaceChange {
    None,
    /// The pace left real time: stamps are the arrival from now on.
    Left,
    /// Back at real time for long enough: stamps follow sim time again,
    /// on an epoch estimated afresh from the samples since.
    Returned,
}

#[derive(Debug, Clone)]
pub(super) struct PaceEstimate {
    /// Per slot of wall time, the sample with the least `wall − sim`:
    /// (sim, wall), oldest first.
    points: VecDeque<(f64, f64)>,
    real_time: bool,
    /// The wall time the mode last changed (or the history began).
    since: f64,
    /// How often the pace left real time.
    departures: u64,
}

impl Default for PaceEstimate {
    fn default() -> Self {
        Self {
            points: VecDeque::with_capacity((HISTORY_S / SLOT_S) as usize + 2),
            real_time: true,
            since: f64::NEG_INFINITY,
            departures: 0,
        }
    }
}

impl PaceEstimate {
    /// Whether stamps follow sim time (the pace is real time).
    pub fn real_time(&self) -> bool {
        self.real_time
    }

    pub fn departures(&self) -> u64 {
        self.departures
    }

    /// A new run (a restart): its points start afresh, the mode stays.
    pub fn restart(&mut self, wall: f64) {
        self.points.clear();
        self.since = self.since.max(wall - RETURN_SPAN_S).min(wall);
    }

    /// Takes a sample at the front of its simulator's time (sim time no
    /// older than any before it in this run), received at `wall`.
    pub fn sample(&mut self, sim: f64, wall: f64) -> PaceChange {
        let slot = (wall / SLOT_S).floor();
        match self.points.back_mut() {
            Some(p) if (p.1 / SLOT_S).floor() >= slot => {
                if wall - sim < p.1 - p.0 {
                    *p = (sim, wall.max(p.1));
                }
            }
            _ => self.points.push_back((sim, wall)),
        }
        while self.points.front().is_some_and(|p| p.1 < wall - HISTORY_S) {
            self.points.pop_front();
        }
        if !self.since.is_finite() {
            self.since = wall;
        }
        if self.real_time {
            if self.off_real_time(LEAVE_SPAN_S.min(wall - self.since), LEAVE_TOLERANCE) {
                self.real_time = false;
                self.since = wall;
                self.departures += 1;
                return PaceChange::Left;
            }
        } else if wall - self.since >= RETURN_SPAN_S && !self.off_real_time(RETURN_SPAN_S, RETURN_TOLERANCE) {
            self.real_time = true;
            self.since = wall;
            return PaceChange::Returned;
        }
        PaceChange::None
    }

    /// Whether the envelope moved more over the last `span` of wall time
    /// than real time allows (unknown, and so not, while the history is shorter).
    fn off_real_time(&self, span: f64, tolerance: f64) -> bool {
        let Some(&(_, newest)) = self.points.back() else {
            return false;
        };
        if span < THEN_S || self.points.len() <= NOW_POINTS || self.points.front().is_none_or(|p| p.1 > newest - span) {
            return false;
        }
        let now = self
            .points
            .iter()
            .rev()
            .take(NOW_POINTS)
            .map(|p| p.1 - p.0)
            .reduce(f64::min);
        let (Some(now), Some(then)) = (now, self.least_delay(newest - span - THEN_S, newest - span)) else {
            return false;
        };
        (now - then).abs() > ENVELOPE_NOISE_S + tolerance * span
    }

    /// The least `wall − sim` of the points whose wall time is in `from..=to`.
    fn least_delay(&self, from: f64, to: f64) -> Option<f64> {
        let start = self.points.partition_point(|p| p.1 < from);
        self.points
            .range(start..)
            .take_while(|p| p.1 <= to)
            .map(|p| p.1 - p.0)
            .reduce(f64::min)
    }

    /// The sim time of the points kept (the newest with history), for
    /// the samples since `since` in order: the epoch starts afresh from them.
    pub fn points_since(&self, since: f64) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.points.iter().copied().filter(move |p| p.1 >= since)
    }

    /// Sim seconds per wall second over the history kept (`None` before a
    /// tenth of a second of it).
    pub fn pace(&self) -> Option<f64> {
        let (first, last) = (self.points.front()?, self.points.back()?);
        let wall = last.1 - first.1;
        (wall >= 0.1).then(|| ((last.0 - first.0) / wall).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples every 5 ms of wall time at `pace`, latency 0.2-1.2 ms, from
    /// `wall0` for `seconds`, sim time continuing from `sim0`: the changes seen.
    fn run(p: &mut PaceEstimate, sim0: f64, wall0: f64, pace: f64, seconds: f64) -> (f64, Vec<(f64, PaceChange)>) {
        let mut changes = Vec::new();
        let n = (seconds / 0.005).round() as u32;
        let mut sim = sim0;
        for i in 0..n {
            let t = f64::from(i) * 0.005;
            sim = sim0 + pace * t;
            let latency = 0.0002 + f64::from((i * 7919) % 1000) * 1e-6;
            let c = p.sample(sim, wall0 + t + latency);
            if c != PaceChange::None {
                changes.push((t, c));
            }
        }
        (sim, changes)
    }

    #[test]
    fn real_time_stays_real_time() {
        let mut p = PaceEstimate::default();
        let (_, changes) = run(&mut p, 10.0, 1000.0, 1.0, 10.0);
        assert!(changes.is_empty(), "{changes:?}");
        assert!((p.pace().unwrap() - 1.0).abs() < 0.002, "{:?}", p.pace());
        // A clock 100 ppm off is real time too.
        let mut p = PaceEstimate::default();
        let (_, changes) = run(&mut p, 10.0, 1000.0, 1.0001, 10.0);
        assert!(changes.is_empty(), "{changes:?}");
    }

    #[test]
    fn any_other_pace_leaves_real_time_within_tens_of_milliseconds_and_comes_back() {
        for pace in [0.0, 0.05, 0.1, 0.5, 0.97, 1.05, 2.0, 10.0, 20.0] {
            let mut p = PaceEstimate::default();
            // Each run goes on from where the one before would have been next.
            let (sim, _) = run(&mut p, 10.0, 1000.0, 1.0, 2.0);
            let (sim, changes) = run(&mut p, sim + 0.005, 1002.0, pace, 3.0);
            let (t, change) = changes[0];
            assert_eq!(change, PaceChange::Left, "{pace}");
            // Sim time off by 3 ms plus a share of the span, seen in the envelope "now".
            assert!(t < 0.05 + 0.01 / (pace - 1.0).abs(), "pace {pace}: left at {t}");
            assert_eq!(changes.len(), 1, "{pace}: {changes:?}");
            assert!(!p.real_time());
            if pace > 0.2 && pace != 1.05 && pace != 0.97 {
                assert!((p.pace().unwrap() - pace).abs() < 0.01 * pace, "{pace}: {:?}", p.pace());
            }
            let (_, changes) = run(&mut p, sim + pace * 0.005, 1005.0, 1.0, 3.0);
            assert_eq!(changes.len(), 1, "{pace}: {changes:?}");
            let (t, change) = changes[0];
            assert_eq!(change, PaceChange::Returned);
            // Back after a second of real time; sooner only from a pace close to it.
            assert!(
                t < 1.4 && (t >= 0.95 || (pace - 1.0).abs() < 0.06),
                "{pace}: back at {t}"
            );
            assert_eq!(p.departures(), 1);
        }
    }

    #[test]
    fn a_late_burst_after_a_stall_is_not_a_pace() {
        for stall in [0.02, 0.05, 0.1] {
            let mut p = PaceEstimate::default();
            let (mut sim, _) = run(&mut p, 10.0, 1000.0, 1.0, 2.0);
            // Either machine stalled: nothing arrives for `stall` s, then the
            // samples due meanwhile arrive together, each with its own sim time.
            let burst_at = 1000.0 + sim - 10.0 + stall;
            while 1000.0 + sim - 10.0 < burst_at {
                sim += 0.005;
                assert_eq!(p.sample(sim, burst_at), PaceChange::None, "stall {stall}");
            }
            let (_, changes) = run(&mut p, sim + 0.005, burst_at + 0.005, 1.0, 1.0);
            assert!(changes.is_empty(), "stall {stall}: {changes:?}");
        }
    }
}
