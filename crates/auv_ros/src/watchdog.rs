//! Which thruster commands reach the simulator, and when the bridge sends
//! all-zero on its own: a command older than `cmd_timeout` (by its stamp,
//! or by how long it waited inside the bridge) is dropped; after
//! `cmd_timeout` without a command, one all-zero command; all-zero at
//! shutdown. Pure: the caller passes the times.

use std::time::{Duration, Instant};

use auv_proto::thruster::ThrusterCommand;

/// Why a command was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Its header stamp is older than the timeout (a replayed or late message).
    Stale,
    /// It waited inside the bridge longer than the timeout.
    Late,
}

impl Refusal {
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::Stale => "stale",
            Refusal::Late => "late",
        }
    }
}

#[derive(Debug)]
pub struct Watchdog {
    timeout: Duration,
    /// Per AUV: when its last command was sent, and whether its stop was sent since.
    last: Vec<(u8, Option<Instant>, bool)>,
}

impl Watchdog {
    pub fn new(ids: &[u8], timeout: Duration) -> Self {
        Watchdog {
            timeout,
            last: ids.iter().map(|&id| (id, None, false)).collect(),
        }
    }

    /// A command received at `received` (monotonic) with header stamp
    /// `stamp_age` old at receipt (`None`: unstamped), now at `now`: send it?
    pub fn admit(
        &mut self,
        command: &ThrusterCommand,
        stamp_age: Option<Duration>,
        received: Instant,
        now: Instant,
    ) -> Result<(), Refusal> {
        if stamp_age.is_some_and(|age| age > self.timeout) {
            return Err(Refusal::Stale);
        }
        if now.saturating_duration_since(received) > self.timeout {
            return Err(Refusal::Late);
        }
        if let Some(entry) = self.last.iter_mut().find(|e| e.0 == command.auv_id()) {
            entry.1 = Some(now);
            entry.2 = false;
        }
        Ok(())
    }

    /// The stop commands due at `now`: one per AUV whose last command timed out.
    pub fn expired(&mut self, now: Instant) -> Vec<ThrusterCommand> {
        let timeout = self.timeout;
        self.last
            .iter_mut()
            .filter(|(_, sent, stopped)| !stopped && sent.is_some_and(|t| now.saturating_duration_since(t) >= timeout))
            .map(|entry| {
                entry.2 = true;
                ThrusterCommand::stop(entry.0)
            })
            .collect()
    }

    /// When the next stop falls due (`None`: no AUV is armed).
    pub fn next_due(&self) -> Option<Instant> {
        self.last
            .iter()
            .filter(|(_, _, stopped)| !stopped)
            .filter_map(|(_, sent, _)| sent.map(|t| t + self.timeout))
            .min()
    }

    /// All-zero for every AUV (shutdown).
    pub fn all_stop(&self) -> Vec<ThrusterCommand> {
        self.last.iter().map(|e| ThrusterCommand::stop(e.0)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forward(id: u8) -> ThrusterCommand {
        ThrusterCommand::new(id, [Some(50), Some(50), None, None]).unwrap()
    }

    #[test]
    fn one_stop_after_the_timeout_and_none_before() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut w = Watchdog::new(&[0, 1], ms(500));
        assert!(
            w.expired(t0 + ms(10_000)).is_empty(),
            "nothing sent yet: nothing to stop"
        );
        assert_eq!(w.next_due(), None);
        w.admit(&forward(1), None, t0, t0).unwrap();
        assert_eq!(w.next_due(), Some(t0 + ms(500)));
        assert!(w.expired(t0 + ms(499)).is_empty());
        assert_eq!(w.expired(t0 + ms(500)), vec![ThrusterCommand::stop(1)]);
        assert!(w.expired(t0 + ms(2000)).is_empty(), "only one stop");
        assert_eq!(w.next_due(), None, "stopped: nothing due");
        // A new command re-arms it.
        w.admit(&forward(1), Some(ms(20)), t0 + ms(3000), t0 + ms(3000))
            .unwrap();
        w.admit(&forward(0), None, t0 + ms(3100), t0 + ms(3100)).unwrap();
        assert_eq!(w.next_due(), Some(t0 + ms(3500)), "the earliest of two");
        assert_eq!(
            w.expired(t0 + ms(3600)),
            vec![ThrusterCommand::stop(0), ThrusterCommand::stop(1)]
        );
    }

    #[test]
    fn stale_and_late_commands_are_refused() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut w = Watchdog::new(&[0], ms(500));
        assert_eq!(w.admit(&forward(0), Some(ms(501)), t0, t0), Err(Refusal::Stale));
        assert_eq!(w.admit(&forward(0), None, t0, t0 + ms(501)), Err(Refusal::Late));
        assert!(w.expired(t0 + ms(5000)).is_empty(), "refused commands arm nothing");
        assert_eq!(w.all_stop(), vec![ThrusterCommand::stop(0)]);
    }
}
