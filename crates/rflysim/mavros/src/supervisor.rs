//! What the launcher does with its vehicles' process groups, apart from the
//! system calls (a [`Host`]), so that it can be tested without processes:
//! every vehicle started, a failed start or an exit retried with back-off, a
//! group that outlives its leader ended (SIGTERM, SIGKILL after a grace
//! period) before the next start, and a stop that ends every group within a
//! second.

use std::time::{Duration, Instant};

/// What the supervisor asks of the operating system.
pub trait Host {
    /// The leader of a vehicle's process group, as the host tracks it.
    type Leader;
    /// Starts vehicle `id` in a process group of its own: the leader and the group id.
    fn spawn(&mut self, id: u16, args: &[String]) -> std::io::Result<(Self::Leader, i32)>;
    /// How the leader ended, once it has (it is then reaped).
    fn exited(&mut self, leader: &mut Self::Leader) -> Option<String>;
    /// Whether any process of group `pgid` still runs.
    fn group_running(&mut self, pgid: i32) -> bool;
    fn signal_group(&mut self, pgid: i32, signal: libc::c_int);
}

/// Between SIGTERM and SIGKILL for a group whose leader has ended.
pub const GROUP_GRACE: Duration = Duration::from_secs(2);
/// A stop: SIGINT (as a terminal would send), then SIGTERM, then SIGKILL, so
/// that the launcher has ended within a second.
pub const STOP_SCHEDULE: [(Duration, libc::c_int); 3] = [
    (Duration::ZERO, libc::SIGINT),
    (Duration::from_millis(400), libc::SIGTERM),
    (Duration::from_millis(700), libc::SIGKILL),
];
/// A run that lasted this long was no crash loop: the back-off starts over.
const STABLE_RUN: Duration = Duration::from_secs(60);

/// Back-off after the n-th failure in a row: 1, 2, 4, … 30 s.
pub fn backoff(failures: u32) -> Duration {
    Duration::from_secs(1u64 << failures.saturating_sub(1).min(5)).min(Duration::from_secs(30))
}

#[derive(Debug)]
enum Phase<L> {
    /// Not running; started at `start_at`.
    Waiting {
        start_at: Instant,
    },
    Running {
        leader: L,
        pgid: i32,
        started: Instant,
    },
    /// The leader has ended and members of its group still run: they are
    /// ended before the next start, which would find them holding its port.
    Ending {
        pgid: i32,
        since: Instant,
        killed: bool,
        start_at: Instant,
    },
    /// Stopping and the leader has ended.
    Ended {
        pgid: i32,
    },
}

#[derive(Debug)]
struct Vehicle<L> {
    id: u16,
    args: Vec<String>,
    failures: u32,
    phase: Phase<L>,
}

/// The vehicles' process groups.
#[derive(Debug)]
pub struct Supervisor<H: Host> {
    host: H,
    vehicles: Vec<Vehicle<H::Leader>>,
    stop_signals_sent: usize,
}

impl<H: Host> Supervisor<H> {
    /// Vehicles (id, arguments), each to be started at the first [`Supervisor::step`].
    pub fn new(host: H, vehicles: Vec<(u16, Vec<String>)>, now: Instant) -> Self {
        let vehicles = vehicles
            .into_iter()
            .map(|(id, args)| Vehicle {
                id,
                args,
                failures: 0,
                phase: Phase::Waiting { start_at: now },
            })
            .collect();
        Supervisor {
            host,
            vehicles,
            stop_signals_sent: 0,
        }
    }

    /// One pass over every vehicle: reaps, ends leaderless groups, (re)starts.
    pub fn step(&mut self, now: Instant, log: &dyn Fn(&str)) {
        for v in &mut self.vehicles {
            step_vehicle(&mut self.host, v, now, log);
        }
    }

    /// One pass of the stop, `elapsed` after it began: the signals of
    /// [`STOP_SCHEDULE`] that are due go to every group that still runs.
    /// True once none does.
    pub fn stop_step(&mut self, elapsed: Duration) -> bool {
        let mut running = Vec::new();
        for v in &mut self.vehicles {
            if let Phase::Running { leader, pgid, .. } = &mut v.phase {
                let pgid = *pgid;
                if self.host.exited(leader).is_some() {
                    v.phase = Phase::Ended { pgid };
                } else {
                    running.push(pgid);
                    continue;
                }
            }
            match v.phase {
                Phase::Ended { pgid } | Phase::Ending { pgid, .. } if self.host.group_running(pgid) => {
                    running.push(pgid);
                }
                _ => {}
            }
        }
        if running.is_empty() {
            return true;
        }
        while let Some(&(at, signal)) = STOP_SCHEDULE.get(self.stop_signals_sent) {
            if elapsed < at {
                break;
            }
            for &pgid in &running {
                self.host.signal_group(pgid, signal);
            }
            self.stop_signals_sent += 1;
        }
        false
    }
}

fn step_vehicle<H: Host>(host: &mut H, v: &mut Vehicle<H::Leader>, now: Instant, log: &dyn Fn(&str)) {
    if let Phase::Running { leader, pgid, started } = &mut v.phase {
        let Some(how) = host.exited(leader) else {
            return;
        };
        let (pgid, started) = (*pgid, *started);
        if now.duration_since(started) > STABLE_RUN {
            v.failures = 0;
        }
        v.failures += 1;
        let wait = backoff(v.failures);
        log(&format!(
            "mavros for vehicle {} exited ({how}); restarting in {} s",
            v.id,
            wait.as_secs()
        ));
        let start_at = now + wait;
        v.phase = if host.group_running(pgid) {
            log(&format!(
                "vehicle {}: its process group {pgid} outlived its leader: SIGTERM, SIGKILL after {} s",
                v.id,
                GROUP_GRACE.as_secs()
            ));
            host.signal_group(pgid, libc::SIGTERM);
            Phase::Ending {
                pgid,
                since: now,
                killed: false,
                start_at,
            }
        } else {
            Phase::Waiting { start_at }
        };
    }
    if let Phase::Ending {
        pgid,
        since,
        killed,
        start_at,
    } = &mut v.phase
    {
        if !host.group_running(*pgid) {
            v.phase = Phase::Waiting { start_at: *start_at };
        } else if !*killed && now.duration_since(*since) >= GROUP_GRACE {
            log(&format!("vehicle {}: process group {pgid} still runs: SIGKILL", v.id));
            host.signal_group(*pgid, libc::SIGKILL);
            *killed = true;
        }
    }
    if let Phase::Waiting { start_at } = v.phase {
        if now < start_at {
            return;
        }
        match host.spawn(v.id, &v.args) {
            Ok((leader, pgid)) => {
                log(&format!(
                    "vehicle {}: ros2 {} (process group {pgid})",
                    v.id,
                    v.args.join(" ")
                ));
                v.phase = Phase::Running {
                    leader,
                    pgid,
                    started: now,
                };
            }
            Err(e) => {
                v.failures += 1;
                let wait = backoff(v.failures);
                log(&format!(
                    "vehicle {}: cannot start mavros: {e}; retrying in {} s",
                    v.id,
                    wait.as_secs()
                ));
                v.phase = Phase::Waiting { start_at: now + wait };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::{HashMap, HashSet};

    /// Groups numbered 100, 101, …; the leader is its group id.
    #[derive(Debug, Default)]
    struct FakeHost {
        attempts: Vec<u16>,
        refuse: HashSet<u16>,
        next_pgid: i32,
        running_groups: HashSet<i32>,
        exits: HashMap<i32, String>,
        signals: Vec<(i32, libc::c_int)>,
    }

    impl Host for FakeHost {
        type Leader = i32;
        fn spawn(&mut self, id: u16, _args: &[String]) -> std::io::Result<(i32, i32)> {
            self.attempts.push(id);
            if self.refuse.remove(&id) {
                return Err(std::io::Error::from_raw_os_error(libc::EAGAIN));
            }
            let pgid = 100 + self.next_pgid;
            self.next_pgid += 1;
            self.running_groups.insert(pgid);
            Ok((pgid, pgid))
        }
        fn exited(&mut self, leader: &mut i32) -> Option<String> {
            self.exits.remove(leader)
        }
        fn group_running(&mut self, pgid: i32) -> bool {
            self.running_groups.contains(&pgid)
        }
        fn signal_group(&mut self, pgid: i32, signal: libc::c_int) {
            self.signals.push((pgid, signal));
        }
    }

    fn supervisor(ids: &[u16], host: FakeHost, t0: Instant) -> Supervisor<FakeHost> {
        Supervisor::new(
            host,
            ids.iter().map(|&id| (id, vec![format!("tgt_system:={id}")])).collect(),
            t0,
        )
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn backoff_grows_and_caps() {
        assert_eq!([1, 2, 3, 4, 6, 10].map(|n| backoff(n).as_secs()), [1, 2, 4, 8, 30, 30]);
    }

    #[test]
    fn a_failed_start_holds_back_no_other_vehicle_and_is_retried_with_backoff() {
        let t0 = Instant::now();
        let host = FakeHost {
            refuse: HashSet::from([2]),
            ..FakeHost::default()
        };
        let mut s = supervisor(&[1, 2, 3], host, t0);
        let lines = RefCell::new(Vec::new());
        let log = |l: &str| lines.borrow_mut().push(l.to_string());
        s.step(t0, &log);
        assert_eq!(s.host.attempts, [1, 2, 3]);
        assert!(lines
            .borrow()
            .iter()
            .any(|l| l.contains("vehicle 2: cannot start") && l.contains("retrying in 1 s")));
        s.step(t0 + ms(900), &log);
        assert_eq!(s.host.attempts, [1, 2, 3]);
        s.step(t0 + ms(1000), &log);
        assert_eq!(s.host.attempts, [1, 2, 3, 2]);
        assert_eq!(s.host.running_groups.len(), 3);
    }

    #[test]
    fn a_group_outliving_its_leader_is_ended_before_the_restart() {
        let t0 = Instant::now();
        let mut s = supervisor(&[1], FakeHost::default(), t0);
        s.step(t0, &|_| {});
        s.host.exits.insert(100, "exit code 3".into());
        s.step(t0 + ms(100), &|_| {});
        assert_eq!(s.host.signals, [(100, libc::SIGTERM)]);
        // The back-off is over, the group is not: no start, no SIGKILL before the grace period.
        s.step(t0 + ms(1500), &|_| {});
        assert_eq!((s.host.attempts.len(), s.host.signals.len()), (1, 1));
        s.step(t0 + ms(100) + GROUP_GRACE, &|_| {});
        assert_eq!(s.host.signals, [(100, libc::SIGTERM), (100, libc::SIGKILL)]);
        s.step(t0 + ms(3000), &|_| {});
        assert_eq!((s.host.attempts.len(), s.host.signals.len()), (1, 2));
        s.host.running_groups.remove(&100);
        s.step(t0 + ms(3050), &|_| {});
        assert_eq!(s.host.attempts, [1, 1]);
    }

    #[test]
    fn a_group_that_ends_after_its_leader_gets_no_sigkill_and_keeps_the_backoff() {
        let t0 = Instant::now();
        let mut s = supervisor(&[1], FakeHost::default(), t0);
        s.step(t0, &|_| {});
        s.host.exits.insert(100, "exit code 3".into());
        s.step(t0 + ms(100), &|_| {});
        s.host.running_groups.remove(&100);
        s.step(t0 + ms(200), &|_| {});
        assert_eq!(s.host.attempts.len(), 1, "restarted before its back-off");
        s.step(t0 + ms(1100), &|_| {});
        assert_eq!(s.host.attempts.len(), 2);
        assert_eq!(s.host.signals, [(100, libc::SIGTERM)]);
    }

    /// Vehicle `pgid`'s leader and group have ended.
    fn end(s: &mut Supervisor<FakeHost>, pgid: i32) {
        s.host.exits.insert(pgid, "exit code 1".into());
        s.host.running_groups.remove(&pgid);
    }

    #[test]
    fn a_run_of_a_minute_starts_the_backoff_over() {
        let t0 = Instant::now();
        let lines = RefCell::new(Vec::new());
        let log = |l: &str| lines.borrow_mut().push(l.to_string());
        let mut s = supervisor(&[1], FakeHost::default(), t0);
        s.step(t0, &log);
        end(&mut s, 100);
        s.step(t0 + ms(10), &log);
        s.step(t0 + ms(1010), &log);
        end(&mut s, 101);
        s.step(t0 + ms(1020), &log);
        s.step(t0 + ms(3020), &log);
        end(&mut s, 102);
        s.step(t0 + ms(3021) + STABLE_RUN, &log);
        let waits: Vec<_> = lines
            .borrow()
            .iter()
            .filter_map(|l| l.split("restarting in ").nth(1).map(String::from))
            .collect();
        assert_eq!(waits, ["1 s", "2 s", "1 s"]);
        assert!(s.host.signals.is_empty());
    }

    #[test]
    fn a_stop_escalates_to_the_groups_still_running_and_ends_when_none_is_left() {
        let t0 = Instant::now();
        let mut s = supervisor(&[1, 2], FakeHost::default(), t0);
        s.step(t0, &|_| {});
        assert!(!s.stop_step(Duration::ZERO));
        assert_eq!(s.host.signals, [(100, libc::SIGINT), (101, libc::SIGINT)]);
        // Vehicle 1 ends in time; vehicle 2's leader ends, a deaf member does not.
        s.host.exits.insert(100, "exit code 0".into());
        s.host.running_groups.remove(&100);
        s.host.exits.insert(101, "exit code 0".into());
        assert!(!s.stop_step(ms(300)));
        assert!(!s.stop_step(ms(400)));
        assert!(!s.stop_step(ms(700)));
        assert_eq!(&s.host.signals[2..], [(101, libc::SIGTERM), (101, libc::SIGKILL)]);
        s.host.running_groups.remove(&101);
        assert!(s.stop_step(ms(720)));
    }

    #[test]
    fn a_stop_begun_late_sends_every_overdue_signal_at_once() {
        let t0 = Instant::now();
        let mut s = supervisor(&[1], FakeHost::default(), t0);
        s.step(t0, &|_| {});
        assert!(!s.stop_step(ms(800)));
        assert_eq!(
            s.host.signals,
            [(100, libc::SIGINT), (100, libc::SIGTERM), (100, libc::SIGKILL)]
        );
    }
}
