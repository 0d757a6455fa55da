//! The one command rule of every bridge that sends commands to a vehicle.
//!
//! - A command is issued at its header stamp; a zero stamp (and `cmd_vel`,
//!   which has none) means "now". A stamp more than [`FUTURE_TOLERANCE`]
//!   ahead of the bridge's clock is refused (`future`), one older than
//!   `cmd_timeout` too (`stale`).
//! - Latest only: of the commands waiting for a vehicle only the newest is
//!   offered to the transport, and only while it is younger than
//!   `cmd_timeout`; an older one is dropped (`stale`), never sent late.
//! - `cmd_timeout` after the issue of the command in force with no newer one,
//!   the vehicle's neutral command is offered until the transport takes it.
//! - At the stop, every vehicle's neutral is offered until taken, for at
//!   most [`SHUTDOWN_BUDGET`], then the transport gets what is left of it to
//!   let it leave.
//! - A command that sets nothing (every field "keep") is sent but does not
//!   re-arm the watchdog: it keeps nothing in force.
//!
//! The rule is here once; a bridge supplies its [`CommandTransport`] (the
//! socket, the encoding, the neutral command) and feeds [`CommandInbox`].

use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::stats::{CommandStatus, RateLimitedLog, StreamStats};

/// A stamp this far ahead of the bridge's clock is still taken as "now"
/// (clocks of two hosts, a sim-time stamp a step ahead of `/clock`).
pub const FUTURE_TOLERANCE: Duration = Duration::from_millis(250);
/// How long the stop may spend getting the neutral commands out.
pub const SHUTDOWN_BUDGET: Duration = Duration::from_millis(500);
/// How soon an offer the transport refused is made again.
pub const RETRY: Duration = Duration::from_millis(10);
/// The longest the sender sleeps before it looks at the stop signal.
const MAX_WAIT: Duration = Duration::from_millis(50);
/// Commands waiting between the subscriptions and the sender.
const INBOX: usize = 64;

/// `cmd_timeout`'s default, seconds.
pub const DEFAULT_TIMEOUT_S: f64 = 0.5;

/// Why a command did not leave the bridge (the counters' reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Stamped more than [`FUTURE_TOLERANCE`] ahead.
    Future,
    /// Older than `cmd_timeout`: at receipt, or before the transport took it.
    Stale,
    /// The sender is behind by more than the inbox holds.
    QueueFull,
}

impl Refusal {
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::Future => "future",
            Refusal::Stale => "stale",
            Refusal::QueueFull => "queue_full",
        }
    }
}

/// When a command was issued, by the stamp rule above.
///
/// `stamp_s` is its header stamp in seconds on the bridge's clock (0: none),
/// `now_s` that clock at receipt (wall time, or sim time with
/// `use_sim_time`), `received` the monotonic receipt time.
pub fn issued_at(stamp_s: f64, now_s: f64, received: Instant, timeout: Duration) -> Result<Instant, Refusal> {
    if stamp_s == 0.0 {
        return Ok(received);
    }
    let age = now_s - stamp_s;
    if age.is_nan() || -age > FUTURE_TOLERANCE.as_secs_f64() {
        return Err(Refusal::Future);
    }
    if age > timeout.as_secs_f64() {
        return Err(Refusal::Stale);
    }
    let age = Duration::from_secs_f64(age.max(0.0));
    Ok(received.checked_sub(age).unwrap_or(received))
}

/// A command on its way to the sender.
#[derive(Debug, Clone)]
pub struct Order<C> {
    pub vehicle: usize,
    pub command: C,
    pub issued: Instant,
    /// False for a command that sets nothing: it does not re-arm the watchdog.
    pub arms: bool,
}

/// What a transport did with an offered command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// It is on its way (in the socket's queue, or sent).
    Taken,
    /// Not now (no peer, queue full, a send error): offered again later.
    Busy(&'static str),
}

/// A bridge's way to its vehicles.
pub trait CommandTransport: Send {
    type Command: Clone + Send + std::fmt::Debug + 'static;
    /// What leaves `vehicle` holding still.
    fn neutral(&self, vehicle: usize) -> Self::Command;
    fn offer(&mut self, vehicle: usize, command: &Self::Command) -> Offer;
    /// After the last offer: `within` to let what was taken leave.
    fn flush(&mut self, _within: Duration) {}
}

/// Where the subscription tasks hand their commands, one per bridge.
#[derive(Debug)]
pub struct CommandInbox<C> {
    to_sender: SyncSender<Order<C>>,
    timeout: Duration,
    stats: Vec<Arc<StreamStats>>,
    log: Arc<Mutex<RateLimitedLog>>,
    logger: String,
    /// How vehicle `i` is named in a log line.
    names: Arc<Vec<String>>,
}

impl<C> Clone for CommandInbox<C> {
    fn clone(&self) -> Self {
        Self {
            to_sender: self.to_sender.clone(),
            timeout: self.timeout,
            stats: self.stats.clone(),
            log: self.log.clone(),
            logger: self.logger.clone(),
            names: self.names.clone(),
        }
    }
}

impl<C: Send + 'static> CommandInbox<C> {
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A command for `vehicle`, stamped `stamp_s` (0: unstamped), received
    /// now while the bridge's clock reads `now_s`.
    pub fn submit(&self, vehicle: usize, command: C, stamp_s: f64, now_s: f64, arms: bool) {
        let received = Instant::now();
        let issued = match issued_at(stamp_s, now_s, received, self.timeout) {
            Ok(t) => t,
            Err(r) => {
                let detail = format!("stamp {stamp_s:.3} s against a clock at {now_s:.3} s");
                return self.refuse(vehicle, r.reason(), &detail);
            }
        };
        let order = Order {
            vehicle,
            command,
            issued,
            arms,
        };
        if let Err(TrySendError::Full(_)) = self.to_sender.try_send(order) {
            self.refuse(vehicle, Refusal::QueueFull.reason(), "the sender is behind");
        }
    }

    /// Counts and logs (limited in rate) a command that is not sent.
    pub fn refuse(&self, vehicle: usize, reason: &'static str, detail: &str) {
        if let Some(s) = self.stats.get(vehicle) {
            s.drop_frame(reason);
        }
        if let Some(held) = self.log.lock().unwrap_or_else(|e| e.into_inner()).allow() {
            let name = self.names.get(vehicle).map_or("?", String::as_str);
            r2r::log_warn!(
                &self.logger,
                "{name}: command refused, nothing sent ({reason}): {detail} ({held} more not shown)"
            );
        }
    }
}

/// One vehicle's side of the sender.
#[derive(Debug)]
struct Slot<C> {
    /// The newest command not yet taken by the transport.
    pending: Option<Order<C>>,
    /// Issue time of the command in force (`None`: the neutral, or nothing yet).
    armed: Option<Instant>,
    /// The neutral is owed: offered until the transport takes it.
    neutral_due: bool,
    neutrals_sent: u64,
}

/// The sender: owns the transport and applies the rule. Pure in time (the
/// caller passes `now`), so that the rule is tested without sleeping.
#[derive(Debug)]
pub struct CommandSender<T: CommandTransport> {
    transport: T,
    orders: Receiver<Order<T::Command>>,
    slots: Vec<Slot<T::Command>>,
    timeout: Duration,
    stats: Vec<Arc<StreamStats>>,
}

/// A bridge's command path: the inbox for its subscriptions, the sender for
/// its thread. `names[i]` and `stats[i]` belong to vehicle `i`.
pub fn command_path<T: CommandTransport>(
    transport: T,
    timeout: Duration,
    names: Vec<String>,
    stats: Vec<Arc<StreamStats>>,
    logger: &str,
) -> (CommandInbox<T::Command>, CommandSender<T>) {
    let (to_sender, orders) = std::sync::mpsc::sync_channel(INBOX);
    for s in &stats {
        s.set_command_status(CommandStatus::default());
    }
    let sender = CommandSender {
        transport,
        orders,
        slots: names
            .iter()
            .map(|_| Slot {
                pending: None,
                armed: None,
                neutral_due: false,
                neutrals_sent: 0,
            })
            .collect(),
        timeout,
        stats: stats.clone(),
    };
    let input = CommandInbox {
        to_sender,
        timeout,
        stats,
        log: Arc::new(Mutex::new(RateLimitedLog::new(Duration::from_secs(5)))),
        logger: logger.to_string(),
        names: Arc::new(names),
    };
    (input, sender)
}

impl<T: CommandTransport> CommandSender<T> {
    /// Takes an order: it replaces one of the same vehicle still waiting.
    pub fn take(&mut self, order: Order<T::Command>) {
        if let Some(slot) = self.slots.get_mut(order.vehicle) {
            slot.pending = Some(order);
        }
    }

    fn status(&self, v: usize, now: Instant) {
        let slot = &self.slots[v];
        if let Some(s) = self.stats.get(v) {
            let wall = crate::time::wall_now();
            s.set_command_status(CommandStatus {
                in_force_since: slot
                    .armed
                    .map(|t| wall - now.saturating_duration_since(t).as_secs_f64()),
                neutral_in_force: slot.armed.is_none() && slot.neutrals_sent > 0 && !slot.neutral_due,
                neutral_sent: slot.neutrals_sent,
                neutral_owed: slot.neutral_due,
            });
        }
    }

    fn offer_neutral(&mut self, v: usize, now: Instant) -> bool {
        let neutral = self.transport.neutral(v);
        match self.transport.offer(v, &neutral) {
            Offer::Taken => {
                let slot = &mut self.slots[v];
                slot.neutral_due = false;
                slot.neutrals_sent += 1;
                if let Some(s) = self.stats.get(v) {
                    s.published(0);
                }
                self.status(v, now);
                true
            }
            Offer::Busy(_) => false,
        }
    }

    /// Does what is due at `now`; returns when it should be called again
    /// (`None`: only when a command comes).
    pub fn step(&mut self, now: Instant) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut wake = |t: Instant| next = Some(next.map_or(t, |n| n.min(t)));
        for v in 0..self.slots.len() {
            if let Some(order) = self.slots[v].pending.take() {
                if now.saturating_duration_since(order.issued) > self.timeout {
                    if let Some(s) = self.stats.get(v) {
                        s.drop_frame(Refusal::Stale.reason());
                    }
                } else {
                    match self.transport.offer(v, &order.command) {
                        Offer::Taken => {
                            if let Some(s) = self.stats.get(v) {
                                s.published(0);
                            }
                            if order.arms {
                                let slot = &mut self.slots[v];
                                slot.armed = Some(order.issued);
                                slot.neutral_due = false;
                            }
                            self.status(v, now);
                        }
                        Offer::Busy(_) => {
                            wake((now + RETRY).min(order.issued + self.timeout));
                            self.slots[v].pending = Some(order);
                        }
                    }
                }
            }
            let slot = &mut self.slots[v];
            if let Some(armed) = slot.armed {
                if now >= armed + self.timeout {
                    slot.armed = None;
                    slot.neutral_due = true;
                } else {
                    wake(armed + self.timeout);
                }
            }
            if self.slots[v].neutral_due && !self.offer_neutral(v, now) {
                self.status(v, now);
                wake(now + RETRY);
            }
        }
        next
    }

    /// The stop: every vehicle's neutral, offered until taken or `budget` is spent.
    pub fn shutdown(&mut self, budget: Duration) {
        let start = Instant::now();
        for slot in &mut self.slots {
            slot.pending = None;
            slot.armed = None;
            slot.neutral_due = true;
        }
        loop {
            let now = Instant::now();
            for v in 0..self.slots.len() {
                if self.slots[v].neutral_due {
                    self.offer_neutral(v, now);
                }
            }
            if self.slots.iter().all(|s| !s.neutral_due) || now.duration_since(start) >= budget {
                break;
            }
            std::thread::sleep(RETRY);
        }
        for v in 0..self.slots.len() {
            self.status(v, Instant::now());
        }
        self.transport.flush(budget.saturating_sub(start.elapsed()));
    }

    /// The sender thread's body: until `stopped()`, then [`Self::shutdown`].
    pub fn run(mut self, stopped: impl Fn() -> bool) {
        let mut due: Option<Instant> = None;
        while !stopped() {
            let now = Instant::now();
            let wait = due.map_or(MAX_WAIT, |d| d.saturating_duration_since(now).min(MAX_WAIT));
            match self.orders.recv_timeout(wait) {
                Ok(order) => {
                    self.take(order);
                    // Latest only: whatever else waits replaces what came first.
                    while let Ok(order) = self.orders.try_recv() {
                        self.take(order);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => std::thread::sleep(wait),
            }
            due = self.step(Instant::now());
        }
        self.shutdown(SHUTDOWN_BUDGET);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transport that records what it took and refuses while `busy`.
    #[derive(Debug, Default)]
    struct Recorder {
        taken: Arc<Mutex<Vec<(usize, i32)>>>,
        busy: bool,
    }

    impl Recorder {
        fn taken(&self) -> Vec<(usize, i32)> {
            self.taken.lock().unwrap().clone()
        }
    }

    impl CommandTransport for Recorder {
        type Command = i32;
        fn neutral(&self, _: usize) -> i32 {
            0
        }
        fn offer(&mut self, vehicle: usize, c: &i32) -> Offer {
            if self.busy {
                return Offer::Busy("no_peer");
            }
            self.taken.lock().unwrap().push((vehicle, *c));
            Offer::Taken
        }
    }

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn path(n: usize) -> (CommandInbox<i32>, CommandSender<Recorder>, Vec<Arc<StreamStats>>) {
        let stats: Vec<Arc<StreamStats>> = (0..n).map(|_| Arc::default()).collect();
        let names = (0..n).map(|i| format!("v{i}")).collect();
        let (inbox, sender) = command_path(Recorder::default(), MS(500), names, stats.clone(), "test");
        (inbox, sender, stats)
    }

    fn order(vehicle: usize, command: i32, issued: Instant) -> Order<i32> {
        Order {
            vehicle,
            command,
            issued,
            arms: true,
        }
    }

    #[test]
    fn the_stamp_rule() {
        let t = Instant::now() + Duration::from_secs(10);
        let timeout = MS(500);
        assert_eq!(issued_at(0.0, 100.0, t, timeout), Ok(t), "zero: now");
        assert_eq!(issued_at(99.8, 100.0, t, timeout), Ok(t - MS(200)));
        assert_eq!(issued_at(100.2, 100.0, t, timeout), Ok(t), "within the tolerance: now");
        assert_eq!(issued_at(100.3, 100.0, t, timeout), Err(Refusal::Future));
        assert_eq!(issued_at(99.4, 100.0, t, timeout), Err(Refusal::Stale));
        assert_eq!(issued_at(f64::NAN, 100.0, t, timeout), Err(Refusal::Future));
        assert_eq!(issued_at(f64::INFINITY, 100.0, t, timeout), Err(Refusal::Future));
        assert_eq!(issued_at(f64::NEG_INFINITY, 100.0, t, timeout), Err(Refusal::Stale));
    }

    #[test]
    fn silence_leads_to_one_neutral_at_the_timeout() {
        let (_, mut s, stats) = path(2);
        let t0 = Instant::now();
        assert_eq!(s.step(t0), None, "nothing commanded: nothing due");
        s.take(order(1, 40, t0));
        assert_eq!(s.step(t0), Some(t0 + MS(500)));
        assert_eq!(s.transport.taken(), vec![(1, 40)]);
        assert_eq!(s.step(t0 + MS(499)), Some(t0 + MS(500)));
        assert_eq!(s.step(t0 + MS(500)), None);
        assert_eq!(s.transport.taken(), vec![(1, 40), (1, 0)]);
        assert_eq!(s.step(t0 + MS(5000)), None, "one neutral, not one per step");
        assert_eq!(s.transport.taken().len(), 2);
        let status = stats[1].command_status().unwrap();
        assert_eq!((status.neutral_sent, status.in_force_since), (1, None));
        assert!(status.neutral_in_force);
    }

    #[test]
    fn the_neutral_is_offered_until_taken() {
        let (_, mut s, stats) = path(1);
        let t0 = Instant::now();
        s.take(order(0, 7, t0));
        s.step(t0);
        s.transport.busy = true;
        assert_eq!(s.step(t0 + MS(500)), Some(t0 + MS(510)));
        assert_eq!(s.step(t0 + MS(3000)), Some(t0 + MS(3010)), "still owed");
        assert!(stats[0].command_status().unwrap().neutral_owed);
        s.transport.busy = false;
        assert_eq!(s.step(t0 + MS(3011)), None);
        assert_eq!(s.transport.taken(), vec![(0, 7), (0, 0)]);
    }

    #[test]
    fn no_command_leaves_older_than_the_timeout() {
        let (_, mut s, stats) = path(1);
        let t0 = Instant::now();
        s.transport.busy = true;
        s.take(order(0, 9, t0));
        assert_eq!(s.step(t0), Some(t0 + RETRY));
        assert_eq!(s.step(t0 + MS(400)), Some(t0 + MS(410)));
        s.transport.busy = false;
        assert_eq!(s.step(t0 + MS(501)), None, "stale by then: dropped, nothing armed");
        assert!(s.transport.taken().is_empty());
        assert_eq!(stats[0].drops()["stale"], 1);
    }

    #[test]
    fn latest_only_and_a_command_that_sets_nothing_does_not_re_arm() {
        let (_, mut s, _) = path(1);
        let t0 = Instant::now();
        s.take(order(0, 1, t0));
        s.take(order(0, 2, t0 + MS(1)));
        s.step(t0 + MS(2));
        assert_eq!(s.transport.taken(), vec![(0, 2)], "only the newest of those waiting");
        s.take(Order {
            arms: false,
            ..order(0, 3, t0 + MS(400))
        });
        s.step(t0 + MS(400));
        s.step(t0 + MS(501));
        assert_eq!(
            s.transport.taken(),
            vec![(0, 2), (0, 3), (0, 0)],
            "the keep-all did not extend it"
        );
    }

    #[test]
    fn shutdown_sends_every_neutral_and_gives_up_within_its_budget() {
        let (_, mut s, _) = path(2);
        s.take(order(0, 5, Instant::now()));
        s.shutdown(MS(100));
        assert_eq!(
            s.transport.taken(),
            vec![(0, 0), (1, 0)],
            "the pending command does not leave"
        );
        let (_, mut s, stats) = path(1);
        s.transport.busy = true;
        let began = Instant::now();
        s.shutdown(MS(100));
        assert!(began.elapsed() < MS(300));
        assert!(stats[0].command_status().unwrap().neutral_owed);
    }

    #[test]
    fn the_inbox_refuses_future_and_stale_stamps_and_counts_them() {
        let stats: Vec<Arc<StreamStats>> = vec![Arc::default()];
        let (inbox, sender) = command_path(Recorder::default(), MS(500), vec!["v0".into()], stats.clone(), "test");
        let rx = &sender.orders;
        inbox.submit(0, 1, 1000.0, 999.0, true);
        inbox.submit(0, 2, 990.0, 999.0, true);
        inbox.submit(0, 3, 0.0, 999.0, true);
        inbox.refuse(0, "out_of_range", "left = 1.5");
        let d = stats[0].drops();
        assert_eq!((d["future"], d["stale"], d["out_of_range"]), (1, 1, 1));
        assert_eq!(rx.try_recv().unwrap().command, 3);
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn the_thread_sends_the_command_then_the_neutral_at_the_stop() {
        let recorder = Recorder::default();
        let taken = recorder.taken.clone();
        let (inbox, sender) = command_path(recorder, MS(500), vec!["v0".into()], vec![Arc::default()], "test");
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || sender.run(move || flag.load(std::sync::atomic::Ordering::Relaxed)));
        inbox.submit(0, 4, 0.0, 0.0, true);
        std::thread::sleep(MS(50));
        assert_eq!(*taken.lock().unwrap(), vec![(0, 4)]);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let began = Instant::now();
        thread.join().unwrap();
        assert!(began.elapsed() < MS(500));
        assert_eq!(*taken.lock().unwrap(), vec![(0, 4), (0, 0)]);
    }
}
