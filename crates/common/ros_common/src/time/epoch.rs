//! Where a simulator's sim time 0 lies on this machine's clock, estimated
//! from arrivals alone ([`EpochEstimate`]): the least `arrival − sim time`
//! over a sliding window. Each sample's `arrival − sim` is the epoch plus
//! the latency that sample met; the least over a window is the epoch plus
//! the least latency, and the window lets the estimate follow the drift of
//! the simulator PC's clock and a sim time a little off real time. No clock
//! of the simulator PC enters it, so stamps follow this machine's clock
//! whatever the simulator's says.

use std::collections::VecDeque;

/// Width (s) of one bucket of the window, and how many buckets it keeps:
/// a 2-second window, its least kept per half second.
const BUCKET_S: f64 = 0.5;
const WINDOW_BUCKETS: i64 = 4;
/// How fast (s per s of wall time) the epoch in use may move back to a
/// lower estimate: below 1, so that a stream's stamps, whose sim time
/// advances at 1 s per s, never go back when it does (a first sample 20 ms
/// late costs 40 ms of stamps closer together than their samples).
const SLEW_BACK: f64 = 0.5;
/// Wall time (s) the estimate must have run before a drift is reported.
const DRIFT_AFTER_S: f64 = 10.0;

#[derive(Debug, Clone)]
pub(super) struct EpochEstimate {
    /// (bucket number, least `arrival − sim` in it), oldest first.
    buckets: VecDeque<(i64, f64)>,
    /// The epoch stamps use, and the wall time it was last moved at.
    in_use: Option<(f64, f64)>,
    /// The first estimate of the run and when: where drift is measured from.
    first: Option<(f64, f64)>,
}

impl Default for EpochEstimate {
    fn default() -> Self {
        Self {
            buckets: VecDeque::with_capacity(WINDOW_BUCKETS as usize + 1),
            in_use: None,
            first: None,
        }
    }
}

impl EpochEstimate {
    /// Takes a sample of sim time `sim` that arrived at `wall`.
    pub fn sample(&mut self, sim: f64, wall: f64) {
        let d = wall - sim;
        let bucket = (wall / BUCKET_S).floor() as i64;
        match self.buckets.back_mut() {
            Some((b, least)) if *b == bucket => *least = least.min(d),
            // A late sample of an older bucket counts in the newest.
            Some((b, least)) if *b > bucket => *least = least.min(d),
            _ => self.buckets.push_back((bucket, d)),
        }
        while self.buckets.front().is_some_and(|(b, _)| *b <= bucket - WINDOW_BUCKETS) {
            self.buckets.pop_front();
        }
        let target = self.least().expect("a sample was just taken");
        let epoch = match self.in_use {
            None => target,
            Some((e, _)) if target >= e => target,
            Some((e, at)) => target.max(e - SLEW_BACK * (wall - at).max(0.0)),
        };
        self.in_use = Some((epoch, wall));
        self.first.get_or_insert((epoch, wall));
    }

    fn least(&self) -> Option<f64> {
        self.buckets.iter().map(|(_, d)| *d).reduce(f64::min)
    }

    /// The wall time of sim time 0 that stamps use (`None` before a sample).
    pub fn epoch(&self) -> Option<f64> {
        self.in_use.map(|(e, _)| e)
    }

    /// How fast the epoch moved since the run's first estimate, in parts
    /// per million of wall time: the two clocks' drift (or a sim time off
    /// real time), once the estimate ran long enough to tell.
    pub fn drift_ppm(&self) -> Option<f64> {
        let ((first, since), (now, at)) = (self.first?, self.in_use?);
        (at - since >= DRIFT_AFTER_S).then(|| (now - first) / (at - since) * 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_latency_over_the_window_is_the_epoch() {
        let mut e = EpochEstimate::default();
        // Sim time 0 was wall 1000; latencies 3, 1, 7 ms.
        for (i, lat) in [0.003, 0.001, 0.007].into_iter().enumerate() {
            let sim = 5.0 + i as f64 * 0.01;
            e.sample(sim, 1000.0 + sim + lat);
        }
        let epoch = e.epoch().unwrap();
        // The first sample set it (3 ms); the better one pulls it back at the slew rate.
        assert!((1000.001..1000.003).contains(&epoch), "{epoch}");
        for i in 3..200 {
            let sim = 5.0 + f64::from(i) * 0.01;
            e.sample(sim, 1000.0 + sim + 0.002);
        }
        assert!((e.epoch().unwrap() - 1000.001).abs() < 1e-9, "{:?}", e.epoch());
    }

    #[test]
    fn a_drifting_clock_is_followed_and_stamps_never_go_back() {
        let mut e = EpochEstimate::default();
        // The simulator's clock runs 100 ppm slow against this one.
        let mut last_stamp = f64::NEG_INFINITY;
        for i in 0..6000 {
            let wall = 2000.0 + f64::from(i) * 0.005;
            let sim = (wall - 2000.0) * (1.0 - 100e-6);
            e.sample(sim, wall + 0.0005);
            let stamp = sim + e.epoch().unwrap();
            assert!(stamp >= last_stamp);
            assert!((stamp - wall).abs() < 0.001, "{stamp} vs {wall}");
            last_stamp = stamp;
        }
        let drift = e.drift_ppm().unwrap();
        assert!((drift - 100.0).abs() < 10.0, "{drift}");
    }

    #[test]
    fn a_lower_estimate_moves_the_epoch_back_slower_than_time_passes() {
        let mut e = EpochEstimate::default();
        e.sample(1.0, 101.050); // a first sample 50 ms late
        let mut last = 1.0 + e.epoch().unwrap();
        for i in 1..200 {
            let sim = 1.0 + f64::from(i) * 0.005;
            e.sample(sim, 100.0 + sim);
            let stamp = sim + e.epoch().unwrap();
            assert!(stamp > last, "{i}: {stamp} after {last}");
            last = stamp;
        }
        assert_eq!(e.epoch(), Some(100.0));
        assert!(e.drift_ppm().is_none(), "too short to tell");
    }
}
