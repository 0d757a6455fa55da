//! What the emulators share to run sim time at any pace: SIGUSR1 pauses
//! and SIGUSR2 resumes ([`catch_pause_signals`], [`take_pause_signal`]),
//! and the schedule flags `--pause AT:S` and `--jump AT:TO` ([`pause`],
//! [`jump`]), wall seconds after the start.

use std::sync::atomic::{AtomicI32, Ordering};

/// The last of SIGUSR1 / SIGUSR2 not yet taken, 0 for none.
static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn note(signal: libc::c_int) {
    PENDING.store(signal, Ordering::SeqCst);
}

/// A change of the simulation's time at a wall time after the start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeEvent {
    /// Sim time stands still for this many seconds.
    Pause(f64),
    /// Sim time jumps to this (back: a reset, which restarts the frame ids too).
    Jump(f64),
}

/// The events of `--pause AT:S` and `--jump AT:TO` flags, in wall-time order.
pub fn time_events(pauses: &[(f64, f64)], jumps: &[(f64, f64)]) -> Vec<(f64, TimeEvent)> {
    let mut events: Vec<(f64, TimeEvent)> = pauses
        .iter()
        .map(|&(at, s)| (at, TimeEvent::Pause(s)))
        .chain(jumps.iter().map(|&(at, to)| (at, TimeEvent::Jump(to))))
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    events
}

/// Sim time of a simulator that steps it (AeroSim's loop): at its pace,
/// through the pauses and jumps of its schedule and the pause signals.
#[derive(Debug, Clone)]
pub struct Timeline {
    events: Vec<(f64, TimeEvent)>,
    next: usize,
    /// Wall seconds after the start when a scheduled pause ends.
    paused_until: Option<f64>,
    paused_by_signal: bool,
    sim: f64,
    pace: f64,
}

impl Timeline {
    pub fn new(start: f64, pace: f64, events: Vec<(f64, TimeEvent)>) -> Self {
        Self {
            events,
            next: 0,
            paused_until: None,
            paused_by_signal: false,
            sim: start,
            pace,
        }
    }

    pub fn sim(&self) -> f64 {
        self.sim
    }

    pub fn paused(&self) -> bool {
        self.paused_until.is_some() || self.paused_by_signal
    }

    /// The events due `elapsed` wall seconds after the start (with a log
    /// line each), then `wall_step` seconds of wall time at the pace unless
    /// paused: the sim seconds that passed (0 while paused or at a jump).
    pub fn step(&mut self, elapsed: f64, wall_step: f64, log: &mut dyn FnMut(String)) -> f64 {
        if self.paused_until.is_some_and(|t| elapsed >= t) {
            self.paused_until = None;
            log(format!("resume: sim time runs again from {:.3} s", self.sim));
        }
        let mut jumped = false;
        while let Some(&(at, event)) = self.events.get(self.next).filter(|e| e.0 <= elapsed) {
            self.next += 1;
            match event {
                TimeEvent::Pause(s) => {
                    self.paused_until = Some(at + s);
                    log(format!("pause: sim time stands at {:.3} s for {s} s", self.sim));
                }
                TimeEvent::Jump(to) => {
                    log(format!("jump: sim time from {:.3} s to {to} s", self.sim));
                    self.sim = to;
                    jumped = true;
                }
            }
        }
        match take_pause_signal() {
            Some(PauseSignal::Pause) => {
                self.paused_by_signal = true;
                log(format!("pause (SIGUSR1): sim time stands at {:.3} s", self.sim));
            }
            Some(PauseSignal::Resume) => {
                self.paused_by_signal = false;
                self.paused_until = None;
                log(format!("resume (SIGUSR2): sim time runs again from {:.3} s", self.sim));
            }
            None => {}
        }
        if self.paused() || jumped {
            return 0.0;
        }
        let step = wall_step * self.pace;
        self.sim += step;
        step
    }
}

/// What a pause signal asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PauseSignal {
    Pause,
    Resume,
}

/// Makes SIGUSR1 pause and SIGUSR2 resume the simulation (taken with
/// [`take_pause_signal`]) instead of ending the process.
pub fn catch_pause_signals() -> std::io::Result<()> {
    crate::stop_signal::install_handler(&[libc::SIGUSR1, libc::SIGUSR2], note)
}

/// The pause signal that came since the last call, if any (the later of two).
pub fn take_pause_signal() -> Option<PauseSignal> {
    match PENDING.swap(0, Ordering::SeqCst) {
        libc::SIGUSR1 => Some(PauseSignal::Pause),
        libc::SIGUSR2 => Some(PauseSignal::Resume),
        _ => None,
    }
}

fn two_seconds(v: &str, what: &str) -> Result<(f64, f64), String> {
    let (a, b) = v.split_once(':').ok_or_else(|| format!("{what}, e.g. 3:2"))?;
    let parse = |x: &str| {
        x.trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| format!("{x:?} is not a number of seconds ≥ 0 ({what})"))
    };
    Ok((parse(a)?, parse(b)?))
}

/// `AT:S`: sim time stands still for S seconds from AT seconds after the start.
pub fn pause(v: &str) -> Result<(f64, f64), String> {
    two_seconds(v, "AT:SECONDS")
}

/// `AT:TO`: sim time jumps to TO at AT seconds after the start.
pub fn jump(v: &str) -> Result<(f64, f64), String> {
    two_seconds(v, "AT:SIM_TIME")
}

/// `--pace R`: sim seconds per wall second, 0.01 to 100.
pub fn pace(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|p| (0.01..=100.0).contains(p))
        .ok_or_else(|| format!("{v:?} is not a pace from 0.01 to 100 (sim seconds per wall second)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_and_paces_parse_and_refuse() {
        assert_eq!(pause("3:2"), Ok((3.0, 2.0)));
        assert_eq!(jump("4.5:0"), Ok((4.5, 0.0)));
        assert!(pause("3").is_err() && pause("-1:2").is_err() && jump("a:1").is_err());
        assert_eq!(pace("0.05"), Ok(0.05));
        assert!(pace("0").is_err() && pace("nan").is_err() && pace("1000").is_err());
    }

    #[test]
    fn a_timeline_runs_at_its_pace_through_its_pauses_jumps_and_signals() {
        let events = time_events(&[(1.0, 0.5)], &[(2.0, 0.0), (3.0, 100.0)]);
        let mut t = Timeline::new(10.0, 2.0, events);
        let mut lines = Vec::new();
        let mut log = |l: String| lines.push(l);
        let mut at = |t: &mut Timeline, elapsed: f64| t.step(elapsed, 0.1, &mut log);
        assert!((at(&mut t, 0.1) - 0.2).abs() < 1e-12);
        assert!((t.sim() - 10.2).abs() < 1e-12);
        assert_eq!(at(&mut t, 1.0), 0.0, "paused from 1 s");
        assert!(t.paused());
        assert_eq!(at(&mut t, 1.4), 0.0);
        assert!(at(&mut t, 1.5) > 0.0, "resumed at 1.5 s");
        assert_eq!(at(&mut t, 2.0), 0.0, "a reset");
        assert_eq!(t.sim(), 0.0);
        at(&mut t, 2.1);
        assert!((t.sim() - 0.2).abs() < 1e-12);
        at(&mut t, 3.0);
        assert_eq!(t.sim(), 100.0, "a step forward");
        assert_eq!(lines.len(), 4, "{lines:?}");
        // In the same test: the signals are the process's, taken by every step.
        catch_pause_signals().unwrap();
        assert_eq!(take_pause_signal(), None);
        // SAFETY: raising a signal whose handler was just installed.
        unsafe { libc::raise(libc::SIGUSR1) };
        assert_eq!(take_pause_signal(), Some(PauseSignal::Pause));
        unsafe { libc::raise(libc::SIGUSR2) };
        assert_eq!(take_pause_signal(), Some(PauseSignal::Resume));
        assert_eq!(take_pause_signal(), None);
    }
}
