//! Simulation time at any pace (slower or faster than real time, paused),
//! and the faults that move it: a restart back to zero, a jump.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use process_support::pace_control::TimeEvent;
use process_support::pace_control::{take_pause_signal, PauseSignal};

/// Where sim time stands: `sim` at `at`, running at `pace` unless paused.
#[derive(Debug, Clone, Copy)]
struct Run {
    at: Instant,
    sim: f64,
    pace: f64,
    paused: bool,
    /// This PC's wall clock (µs) at sim time 0 of the run, at its pace: what
    /// a CopterSim's heartbeat tells. A pause does not move it.
    anchor_us: i64,
}

impl Run {
    fn at(&self, when: Instant) -> f64 {
        if self.paused {
            self.sim
        } else {
            // A sample due before the run went on from `at` (a resume, a
            // jump) was due at the time it stood at.
            self.sim + self.pace * when.saturating_duration_since(self.at).as_secs_f64()
        }
    }
}

/// Simulation time, and the restarts that send it back to zero.
#[derive(Debug)]
pub struct SimClock {
    started: Instant,
    /// This PC's wall clock, read together with `started`: the wall clock
    /// derived from both is right however late a thread first asks for it.
    started_unix_us: i64,
    run: Mutex<Run>,
    epoch: AtomicU64,
}

impl SimClock {
    pub fn new(start_time: f64) -> Self {
        Self::with_pace(start_time, 1.0)
    }

    /// A clock whose sim time runs `pace` seconds per second of wall time.
    pub fn with_pace(start_time: f64, pace: f64) -> Self {
        let now = Instant::now();
        let started_unix_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64);
        Self {
            started: now,
            started_unix_us,
            run: Mutex::new(Run {
                at: now,
                sim: start_time,
                pace,
                paused: false,
                anchor_us: started_unix_us - (start_time / pace * 1e6) as i64,
            }),
            epoch: AtomicU64::new(0),
        }
    }

    pub fn now(&self) -> f64 {
        self.at(Instant::now())
    }

    /// Sim time at `when` (a sample due then keeps it, however late it is sent).
    pub fn at(&self, when: Instant) -> f64 {
        self.run.lock().unwrap().at(when)
    }

    pub fn paused(&self) -> bool {
        self.run.lock().unwrap().paused
    }

    pub fn pace(&self) -> f64 {
        self.run.lock().unwrap().pace
    }

    /// How many restarts there have been: a stream seeing it change starts
    /// its frame ids again from zero.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    pub fn restart(&self) {
        self.reset_to(0.0);
    }

    /// A reset of the simulation to `sim`: frame ids start again from zero.
    pub fn reset_to(&self, sim: f64) {
        self.set(sim);
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// Sim time jumps to `sim` (a step forward, or back without a restart
    /// of the frame ids) and runs on from there.
    pub fn set(&self, sim: f64) {
        let now = Instant::now();
        let wall_us = self.wall_clock_us_at(now);
        let mut r = self.run.lock().unwrap();
        r.at = now;
        r.sim = sim;
        r.anchor_us = wall_us - (sim / r.pace * 1e6) as i64;
    }

    /// Sim time stands still until [`Self::resume`].
    pub fn pause(&self) {
        let now = Instant::now();
        let mut r = self.run.lock().unwrap();
        r.sim = r.at(now);
        r.at = now;
        r.paused = true;
    }

    pub fn resume(&self) {
        let mut r = self.run.lock().unwrap();
        if r.paused {
            r.at = Instant::now();
            r.paused = false;
        }
    }

    pub fn wall_elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// This PC's wall clock now, in microseconds since the Unix epoch, on the
    /// monotonic clock since the start (a wall clock step does not move it).
    pub fn wall_clock_us(&self) -> i64 {
        self.wall_clock_us_at(Instant::now())
    }

    fn wall_clock_us_at(&self, when: Instant) -> i64 {
        self.started_unix_us + when.saturating_duration_since(self.started).as_micros() as i64
    }

    /// This PC's wall clock (µs) at sim time 0 of the current run, for a
    /// vehicle whose clock runs `ahead_s` ahead: a heartbeat's anchor.
    pub fn anchor_us(&self, ahead_s: f64) -> i64 {
        let r = self.run.lock().unwrap();
        r.anchor_us - (ahead_s / r.pace * 1e6) as i64
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

/// Carries out `events` ((wall seconds after the start, event), in any
/// order) until `stop`; SIGUSR1 pauses and SIGUSR2 resumes at any time.
pub(crate) fn time_events_loop(mut events: Vec<(f64, TimeEvent)>, stop: &AtomicBool, clock: &SimClock) {
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut resume_at: Option<f64> = None;
    let mut next = 0;
    while !stop.load(Ordering::Relaxed) {
        let t = clock.wall_elapsed().as_secs_f64();
        if resume_at.is_some_and(|r| t >= r) {
            resume_at = None;
            clock.resume();
            crate::log::line(&format!("resume: sim time runs again from {:.3} s", clock.now()));
        }
        while next < events.len() && events[next].0 <= t {
            match events[next].1 {
                TimeEvent::Pause(d) => {
                    clock.pause();
                    resume_at = Some(t + d);
                    crate::log::line(&format!("pause: sim time stands at {:.3} s for {d} s", clock.now()));
                }
                TimeEvent::Jump(to) if to < clock.now() => {
                    clock.reset_to(to);
                    crate::log::line(&format!("reset: sim time back to {to} s, frame ids from zero"));
                }
                TimeEvent::Jump(to) => {
                    clock.set(to);
                    crate::log::line(&format!("jump: sim time forward to {to} s"));
                }
            }
            next += 1;
        }
        match take_pause_signal() {
            Some(PauseSignal::Pause) => {
                clock.pause();
                crate::log::line(&format!("pause (SIGUSR1): sim time stands at {:.3} s", clock.now()));
            }
            Some(PauseSignal::Resume) => {
                clock.resume();
                crate::log::line(&format!(
                    "resume (SIGUSR2): sim time runs again from {:.3} s",
                    clock.now()
                ));
            }
            None => {}
        }
        std::thread::sleep(Duration::from_millis(1));
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
    fn sim_time_runs_at_its_pace_stands_while_paused_and_keeps_its_anchor() {
        let clock = SimClock::with_pace(100.0, 0.5);
        let t0 = Instant::now();
        let anchor = clock.anchor_us(0.0);
        // Sim time 0 was 200 s of wall time before the start, at half pace.
        let started = clock.wall_clock_us_at(clock.started);
        assert!((started - anchor - 200_000_000).abs() < 2, "{started} {anchor}");
        let later = t0 + Duration::from_secs(2);
        assert!((clock.at(later) - clock.at(t0) - 1.0).abs() < 1e-6);
        clock.pause();
        let stood = clock.now();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(clock.now(), stood);
        assert!(clock.paused());
        clock.resume();
        std::thread::sleep(Duration::from_millis(20));
        let ran = clock.now() - stood;
        assert!((0.009..0.1).contains(&ran), "{ran}");
        assert_eq!(clock.anchor_us(0.0), anchor, "a pause leaves the anchor");
        // A vehicle 30 s ahead started 60 s of wall time earlier at this pace.
        assert_eq!(clock.anchor_us(30.0), anchor - 60_000_000);
        // A step forward keeps the frame ids; a reset restarts them.
        clock.set(500.0);
        assert!(clock.now() >= 500.0 && clock.epoch() == 0);
        clock.reset_to(0.0);
        assert!(clock.now() < 1.0 && clock.epoch() == 1);
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
