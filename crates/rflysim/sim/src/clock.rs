//! Simulation time, and the "restart" fault that sends it back to zero.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Simulation time, and the restarts that send it back to zero.
#[derive(Debug)]
pub struct SimClock {
    started: Instant,
    /// This PC's wall clock, read together with `started`: the wall clock
    /// derived from both is right however late a thread first asks for it.
    started_unix_us: i64,
    base: Mutex<(Instant, f64)>,
    epoch: AtomicU64,
}

impl SimClock {
    pub fn new(start_time: f64) -> Self {
        let now = Instant::now();
        let started_unix_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64);
        Self {
            started: now,
            started_unix_us,
            base: Mutex::new((now, start_time)),
            epoch: AtomicU64::new(0),
        }
    }

    pub fn now(&self) -> f64 {
        let (at, t0) = *self.base.lock().unwrap();
        t0 + at.elapsed().as_secs_f64()
    }

    /// How many restarts there have been: a stream seeing it change starts
    /// its frame ids again from zero.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    pub fn restart(&self) {
        *self.base.lock().unwrap() = (Instant::now(), 0.0);
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }

    pub fn wall_elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// This PC's wall clock now, in microseconds since the Unix epoch, on the
    /// monotonic clock since the start (a wall clock step does not move it).
    pub fn wall_clock_us(&self) -> i64 {
        self.started_unix_us + self.started.elapsed().as_micros() as i64
    }
}

/// Restarts the simulation every `every` seconds until `stop`.
pub(crate) fn restart_loop(every: f64, stop: &AtomicBool, clock: &SimClock) {
    let mut next = Instant::now() + Duration::from_secs_f64(every);
    while !stop.load(Ordering::Relaxed) {
        if Instant::now() >= next {
            clock.restart();
            crate::log::line("restart: frame ids and simulation time back to zero");
            next += Duration::from_secs_f64(every);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_sends_time_back_to_zero_and_counts_an_epoch() {
        let clock = SimClock::new(1000.0);
        assert!(clock.now() >= 1000.0 && clock.epoch() == 0);
        clock.restart();
        let t = clock.now();
        assert!((0.0..1.0).contains(&t), "{t}");
        assert_eq!(clock.epoch(), 1);
        // Wall time is not simulation time: a restart leaves it running.
        std::thread::sleep(Duration::from_millis(5));
        assert!(clock.wall_elapsed() >= Duration::from_millis(5));
    }

    #[test]
    fn the_wall_clock_is_right_however_late_it_is_first_read() {
        let clock = SimClock::new(0.0);
        // A thread that first reads it late (as the CopterSim loop, started
        // after the clock, does on a loaded machine): it is still this PC's.
        std::thread::sleep(Duration::from_millis(30));
        let read = clock.wall_clock_us();
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as i64;
        assert!((read - now).abs() < 2_000, "{read} vs {now}");
    }
}
