//! The sender: one thread per bridge that offers each vehicle its latest
//! command, sends the neutral one when commands stop, and at the stop.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{CommandInbox, CommandTransport, CommandWaker, Delivery, Inbound, Offer, Order, Refusal, Report};
use super::{INBOX, MAX_WAIT, RETRY, SHUTDOWN_BUDGET, WOKEN_MAX_WAIT};
use crate::stats::{CommandStatus, RateLimitedLog, StreamStats};

/// A send that began and has not ended.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    neutral: bool,
    /// A command's send is under way ahead of this one (at the stop, with a
    /// transport that keeps sends in order): its outcome comes first.
    behind_command: bool,
}

/// One vehicle's side of the sender.
#[derive(Debug)]
struct Slot<C> {
    /// The newest command not yet offered to (or taken by) the transport.
    pending: Option<Order<C>>,
    /// Issue time of the command in force (`None`: the neutral, or nothing yet).
    armed: Option<Instant>,
    /// The neutral is owed: offered until the transport delivers it.
    neutral_due: bool,
    in_flight: Option<InFlight>,
    neutrals_sent: u64,
}

/// The sender: owns the transport and applies the rule. Pure in time (the
/// caller passes `now`), so that the rule is tested without sleeping.
#[derive(Debug)]
pub struct CommandSender<T: CommandTransport> {
    transport: T,
    orders: Receiver<Inbound<T::Command>>,
    /// Its own inbox, for [`Self::waker`].
    to_self: SyncSender<Inbound<T::Command>>,
    woken_at_stop: bool,
    slots: Vec<Slot<T::Command>>,
    timeout: Duration,
    report: Report,
    /// Neutral commands still owed when the sender stopped.
    owed_at_stop: Arc<AtomicUsize>,
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
    let report = Report {
        stats,
        log: Arc::new(Mutex::new(RateLimitedLog::new(Duration::from_secs(5)))),
        logger: logger.to_string(),
        names: Arc::new(names),
    };
    let sender = CommandSender {
        transport,
        orders,
        to_self: to_sender.clone(),
        woken_at_stop: false,
        slots: report
            .names
            .iter()
            .map(|_| Slot {
                pending: None,
                armed: None,
                neutral_due: false,
                in_flight: None,
                neutrals_sent: 0,
            })
            .collect(),
        timeout,
        report: report.clone(),
        owed_at_stop: Arc::default(),
    };
    let input = CommandInbox {
        to_sender,
        timeout,
        report,
    };
    (input, sender)
}

impl<T: CommandTransport> CommandSender<T> {
    /// Takes an order: it replaces one of the same vehicle still waiting
    /// (or, where the transport folds commands together, absorbs it).
    pub fn take(&mut self, order: Order<T::Command>) {
        let Some(slot) = self.slots.get_mut(order.vehicle) else {
            return;
        };
        slot.pending = Some(match slot.pending.take() {
            Some(older) => Order {
                command: self.transport.combine(older.command, order.command),
                arms: order.arms || older.arms,
                ..order
            },
            None => order,
        });
    }

    /// A handle that ends the sender's wait at once (for the stop): with
    /// one, an idle sender looks at the stop signal less often.
    pub fn waker(&mut self) -> CommandWaker {
        self.woken_at_stop = true;
        CommandWaker {
            wake: Box::new({
                let to = self.to_self.clone();
                move || {
                    // Full: the sender has orders to take, and wakes anyway.
                    let _ = to.try_send(Inbound::Wake);
                }
            }),
        }
    }

    /// How many neutral commands were still owed when the sender stopped
    /// (readable after its thread ended).
    pub fn owed_at_stop(&self) -> Arc<AtomicUsize> {
        self.owed_at_stop.clone()
    }

    fn stats(&self, v: usize) -> Option<&Arc<StreamStats>> {
        self.report.stats.get(v)
    }

    fn status(&self, v: usize, now: Instant) {
        let slot = &self.slots[v];
        if let Some(s) = self.stats(v) {
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

    /// A neutral the transport delivered.
    fn neutral_delivered(&mut self, v: usize, now: Instant) {
        let slot = &mut self.slots[v];
        slot.neutral_due = false;
        slot.neutrals_sent += 1;
        if let Some(s) = self.stats(v) {
            s.published(0);
        }
        self.status(v, now);
    }

    /// Offers the neutral owed to `v`, unless a send to it is under way (at
    /// the stop, a command's send does not hold back a transport that keeps
    /// sends in order).
    fn offer_neutral(&mut self, v: usize, now: Instant, at_stop: bool) {
        let behind_command = match self.slots[v].in_flight {
            None => false,
            Some(f) if at_stop && !f.neutral && !f.behind_command && self.transport.sends_in_order() => true,
            Some(_) => return,
        };
        let neutral = self.transport.neutral(v);
        match self.transport.offer(v, &neutral) {
            Offer::Taken => self.neutral_delivered(v, now),
            Offer::Sending => {
                self.slots[v].in_flight = Some(InFlight {
                    neutral: true,
                    behind_command,
                })
            }
            Offer::Busy(_) => {}
        }
    }

    /// The sends that ended since the last look.
    fn collect_outcomes(&mut self, now: Instant) {
        let mut ended = Vec::new();
        self.transport.outcomes(&mut |v, d| ended.push((v, d)));
        for (v, delivery) in ended {
            let Some(slot) = self.slots.get_mut(v) else {
                continue;
            };
            let Some(flight) = slot.in_flight.take() else {
                continue;
            };
            let neutral = if flight.behind_command {
                // The command's, ahead of the neutral's: that one is still under way.
                slot.in_flight = Some(InFlight {
                    behind_command: false,
                    ..flight
                });
                false
            } else {
                flight.neutral
            };
            match (delivery, neutral) {
                (Delivery::Delivered, true) => self.neutral_delivered(v, now),
                (Delivery::Delivered, false) => {
                    if let Some(s) = self.stats(v) {
                        s.published(0);
                    }
                }
                // Still owed: offered again at the next step.
                (Delivery::Failed(reason), true) => self.report.warn(
                    v,
                    reason,
                    format_args!("the neutral command was not delivered ({reason}); sending it again"),
                ),
                (Delivery::Failed(reason), false) => self.report.warn(
                    v,
                    reason,
                    format_args!("a command was not delivered ({reason}); the watchdog's neutral follows it"),
                ),
            }
        }
    }

    /// Does what is due at `now`; returns when it should be called again
    /// (`None`: only when a command comes).
    pub fn step(&mut self, now: Instant) -> Option<Instant> {
        self.collect_outcomes(now);
        let mut next: Option<Instant> = None;
        let mut wake = |t: Instant| next = Some(next.map_or(t, |n| n.min(t)));
        for v in 0..self.slots.len() {
            if let Some(order) = self.slots[v].pending.take() {
                if now.saturating_duration_since(order.issued) > self.timeout {
                    self.report.count(v, Refusal::Stale.reason());
                } else if self.slots[v].in_flight.is_some() {
                    // After the send under way, if still fresh then.
                    wake((now + RETRY).min(order.issued + self.timeout));
                    self.slots[v].pending = Some(order);
                } else {
                    match self.transport.offer(v, &order.command) {
                        Offer::Busy(_) => {
                            wake((now + RETRY).min(order.issued + self.timeout));
                            self.slots[v].pending = Some(order);
                        }
                        offer => {
                            if offer == Offer::Taken {
                                if let Some(s) = self.stats(v) {
                                    s.published(0);
                                }
                            } else {
                                self.slots[v].in_flight = Some(InFlight {
                                    neutral: false,
                                    behind_command: false,
                                });
                            }
                            // In force from the moment its send began: a
                            // slow acknowledgement does not delay the watchdog.
                            if order.arms {
                                let slot = &mut self.slots[v];
                                slot.armed = Some(order.issued);
                                slot.neutral_due = false;
                            }
                            self.status(v, now);
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
            if self.slots[v].neutral_due {
                self.offer_neutral(v, now, false);
                if self.slots[v].neutral_due {
                    self.status(v, now);
                    wake(now + RETRY);
                }
            }
            if self.slots[v].in_flight.is_some() {
                wake(now + RETRY);
            }
        }
        next
    }

    /// The stop: the neutral to every vehicle with a command in force or a
    /// neutral owed, offered until delivered or `budget` is spent. Returns
    /// how many are still owed (each logged as an error).
    pub fn shutdown(&mut self, budget: Duration) -> usize {
        let start = Instant::now();
        for slot in &mut self.slots {
            slot.pending = None;
            let in_force = slot.armed.is_some() || slot.in_flight.is_some_and(|f| !f.neutral);
            slot.neutral_due |= in_force;
            slot.armed = None;
        }
        loop {
            let now = Instant::now();
            self.collect_outcomes(now);
            for v in 0..self.slots.len() {
                if self.slots[v].neutral_due {
                    self.offer_neutral(v, now, true);
                }
            }
            if self.slots.iter().all(|s| !s.neutral_due) || now.duration_since(start) >= budget {
                break;
            }
            std::thread::sleep(RETRY);
        }
        let mut owed = 0;
        for v in 0..self.slots.len() {
            self.status(v, Instant::now());
            if self.slots[v].neutral_due {
                owed += 1;
                self.report.count(v, "neutral_lost_at_stop");
                r2r::log_error!(
                    &self.report.logger,
                    "{}: no neutral command was delivered within {budget:?} of the stop; the vehicle may \
                     keep its last command",
                    self.report.name(v)
                );
            }
        }
        self.transport.flush(budget.saturating_sub(start.elapsed()));
        self.owed_at_stop.store(owed, Ordering::Relaxed);
        owed
    }

    /// The sender thread's body: until `stopped()`, then [`Self::shutdown`].
    pub fn run(mut self, stopped: impl Fn() -> bool) {
        let mut due: Option<Instant> = None;
        let max_wait = if self.woken_at_stop { WOKEN_MAX_WAIT } else { MAX_WAIT };
        while !stopped() {
            let now = Instant::now();
            let wait = due.map_or(max_wait, |d| d.saturating_duration_since(now).min(max_wait));
            match self.orders.recv_timeout(wait) {
                Ok(inbound) => {
                    let mut next = Some(inbound);
                    // Latest only: whatever else waits replaces what came first.
                    while let Some(inbound) = next {
                        if let Inbound::Order(order) = inbound {
                            self.take(order);
                        }
                        next = self.orders.try_recv().ok();
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
    fn shutdown_neutralises_what_is_in_force_and_gives_up_within_its_budget() {
        let (_, mut s, _) = path(3);
        let t0 = Instant::now();
        s.take(order(0, 5, t0));
        s.step(t0);
        s.take(order(1, 6, t0));
        assert_eq!(s.shutdown(MS(100)), 0);
        assert_eq!(
            s.transport.taken(),
            vec![(0, 5), (0, 0)],
            "vehicle 0's command in force is neutralised; vehicle 1's pending one does not leave, \
             and neither vehicle 1 nor the uncommanded vehicle 2 gets anything"
        );
        let (_, mut s, stats) = path(1);
        s.take(order(0, 5, Instant::now()));
        s.step(Instant::now());
        s.transport.busy = true;
        let began = Instant::now();
        assert_eq!(s.shutdown(MS(100)), 1, "one neutral owed at the stop");
        assert!(began.elapsed() < MS(300));
        assert!(stats[0].command_status().unwrap().neutral_owed);
        assert_eq!(stats[0].drops()["neutral_lost_at_stop"], 1);
        assert_eq!(s.owed_at_stop().load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_neutral_already_delivered_is_not_sent_again_at_the_stop() {
        let (_, mut s, _) = path(1);
        let t0 = Instant::now();
        s.take(order(0, 5, t0));
        s.step(t0);
        s.step(t0 + MS(500));
        assert_eq!(s.shutdown(MS(100)), 0);
        assert_eq!(s.transport.taken(), vec![(0, 5), (0, 0)]);
    }

    /// A transport whose sends end later (a Kafka produce): outcomes are
    /// handed in by the test.
    #[derive(Debug, Default)]
    struct Slow {
        began: Vec<(usize, i32)>,
        ended: Vec<(usize, Delivery)>,
    }

    impl CommandTransport for Slow {
        type Command = i32;
        fn neutral(&self, _: usize) -> i32 {
            0
        }
        fn offer(&mut self, vehicle: usize, c: &i32) -> Offer {
            self.began.push((vehicle, *c));
            Offer::Sending
        }
        fn outcomes(&mut self, each: &mut dyn FnMut(usize, Delivery)) {
            for (v, d) in self.ended.drain(..) {
                each(v, d);
            }
        }
    }

    fn slow_path(n: usize) -> (CommandSender<Slow>, Vec<Arc<StreamStats>>) {
        let stats: Vec<Arc<StreamStats>> = (0..n).map(|_| Arc::default()).collect();
        let names = (0..n).map(|i| format!("v{i}")).collect();
        let (_, sender) = command_path(Slow::default(), MS(500), names, stats.clone(), "test");
        (sender, stats)
    }

    #[test]
    fn a_slow_send_arms_the_watchdog_is_sent_once_and_holds_back_the_next() {
        let (mut s, stats) = slow_path(2);
        let t0 = Instant::now();
        s.take(order(0, 1, t0));
        s.step(t0);
        s.take(order(0, 2, t0 + MS(100)));
        s.take(order(1, 7, t0 + MS(100)));
        s.step(t0 + MS(100));
        assert_eq!(
            s.transport.began,
            vec![(0, 1), (1, 7)],
            "vehicle 0's next waits for its send under way; vehicle 1 does not wait on vehicle 0"
        );
        assert!(
            stats[0].command_status().unwrap().in_force_since.is_some(),
            "in force once its send began"
        );
        // No acknowledgement for 400 ms: nothing is sent twice, the newer command waits.
        s.step(t0 + MS(400));
        assert_eq!(s.transport.began.len(), 2);
        s.transport.ended.push((0, Delivery::Failed("no_acknowledgement")));
        s.step(t0 + MS(410));
        assert_eq!(
            s.transport.began.last(),
            Some(&(0, 2)),
            "then the newer one, still fresh"
        );
        assert_eq!(stats[0].drops()["no_acknowledgement"], 1, "the failure is counted");
        s.transport.ended.push((0, Delivery::Delivered));
        s.transport.ended.push((1, Delivery::Delivered));
        s.step(t0 + MS(420));
        // The watchdog from command 2's issue: a neutral, kept owed until delivered.
        let to_0 = |s: &CommandSender<Slow>| s.transport.began.iter().filter(|(v, _)| *v == 0).count();
        let before = to_0(&s);
        s.step(t0 + MS(600));
        assert_eq!(
            (to_0(&s), s.transport.began.iter().rev().find(|(v, _)| *v == 0)),
            (before + 1, Some(&(0, 0)))
        );
        s.transport.ended.push((0, Delivery::Failed("broker_unreachable")));
        s.step(t0 + MS(610));
        assert_eq!(to_0(&s), before + 2, "the neutral, offered again");
        assert!(stats[0].command_status().unwrap().neutral_owed);
        s.transport.ended.push((0, Delivery::Delivered));
        s.step(t0 + MS(620));
        let status = stats[0].command_status().unwrap();
        assert!(!status.neutral_owed && status.neutral_sent == 1);
    }

    #[test]
    fn the_stop_waits_for_a_send_under_way_then_neutralises() {
        let (mut s, _) = slow_path(1);
        let t0 = Instant::now();
        s.take(order(0, 3, t0));
        s.step(t0);
        s.transport.ended.push((0, Delivery::Delivered));
        // The neutral's own outcome never comes: owed at the end of the budget.
        assert_eq!(s.shutdown(MS(60)), 1);
        assert_eq!(s.transport.began, vec![(0, 3), (0, 0)]);
    }

    /// A transport whose sends each end `latency` after they began, in the
    /// order they began (a Kafka connection answering in order).
    #[derive(Debug)]
    struct Ordered {
        latency: Duration,
        in_order: bool,
        began: Vec<(i32, Instant)>,
        reported: usize,
    }

    impl CommandTransport for Ordered {
        type Command = i32;
        fn neutral(&self, _: usize) -> i32 {
            0
        }
        fn offer(&mut self, _: usize, c: &i32) -> Offer {
            self.began.push((*c, Instant::now()));
            Offer::Sending
        }
        fn outcomes(&mut self, each: &mut dyn FnMut(usize, Delivery)) {
            while self
                .began
                .get(self.reported)
                .is_some_and(|(_, at)| at.elapsed() >= self.latency)
            {
                self.reported += 1;
                each(0, Delivery::Delivered);
            }
        }
        fn sends_in_order(&self) -> bool {
            self.in_order
        }
    }

    #[test]
    fn at_the_stop_the_neutral_goes_behind_a_command_under_way_where_sends_keep_their_order() {
        // Acknowledgements take 200 ms; the stop has 300 ms.
        for in_order in [true, false] {
            let transport = Ordered {
                latency: MS(200),
                in_order,
                began: Vec::new(),
                reported: 0,
            };
            let (_, mut s) = command_path(transport, MS(500), vec!["v0".into()], vec![Arc::default()], "test");
            s.take(order(0, 3, Instant::now()));
            s.step(Instant::now());
            let stop = Instant::now();
            let owed = s.shutdown(MS(300));
            let neutral_began = s.transport.began[1].1.duration_since(stop);
            if in_order {
                assert_eq!(owed, 0, "delivered behind the command");
                assert!(neutral_began < MS(50), "offered at once: {neutral_began:?}");
            } else {
                assert_eq!(owed, 1, "offered only after the command's outcome, too late");
                assert!(neutral_began >= MS(200), "{neutral_began:?}");
            }
            assert_eq!(s.transport.began.iter().map(|b| b.0).collect::<Vec<_>>(), [3, 0]);
        }
    }

    /// A transport that folds a waiting command into the next (the gimbal's
    /// requests: a zoom after a rate command keeps the rate command).
    #[derive(Debug, Default)]
    struct Folding(Recorder);

    impl CommandTransport for Folding {
        type Command = i32;
        fn neutral(&self, v: usize) -> i32 {
            self.0.neutral(v)
        }
        fn offer(&mut self, vehicle: usize, c: &i32) -> Offer {
            self.0.offer(vehicle, c)
        }
        fn combine(&self, older: i32, newer: i32) -> i32 {
            older * 100 + newer
        }
    }

    #[test]
    fn a_transport_may_fold_waiting_commands_together() {
        let (_, mut s) = command_path(
            Folding::default(),
            MS(500),
            vec!["v0".into()],
            vec![Arc::default()],
            "test",
        );
        let t0 = Instant::now();
        s.take(order(0, 1, t0));
        s.take(Order {
            arms: false,
            ..order(0, 2, t0)
        });
        s.step(t0);
        assert_eq!(s.transport.0.taken(), vec![(0, 102)]);
        assert_eq!(
            s.step(t0 + MS(1)),
            Some(t0 + MS(500)),
            "the folded command arms as its parts did"
        );
    }

    #[test]
    fn the_inbox_refuses_future_and_stale_stamps_and_counts_them() {
        let stats: Vec<Arc<StreamStats>> = vec![Arc::default()];
        let (inbox, sender) = command_path(Recorder::default(), MS(500), vec!["v0".into()], stats.clone(), "test");
        let rx = &sender.orders;
        inbox.submit(0, 1, 1000.0, Some(999.0), true);
        inbox.submit(0, 2, 990.0, Some(999.0), true);
        inbox.submit(0, 3, 0.0, Some(999.0), true);
        inbox.submit(0, 4, 5.0, None, true);
        inbox.refuse(0, "out_of_range", "left = 1.5");
        let d = stats[0].drops();
        assert_eq!(
            (d["future"], d["stale"], d["out_of_range"], d["clock_unknown"]),
            (1, 1, 1, 1)
        );
        match rx.try_recv() {
            Ok(Inbound::Order(o)) => assert_eq!(o.command, 3),
            other => panic!("{other:?}"),
        }
        assert!(rx.try_recv().is_err());
    }

    /// Idle, a sender that is woken at the stop looks at the stop signal a
    /// few times a second, not twenty; woken, it stops at once.
    #[test]
    fn an_idle_sender_with_a_waker_sleeps_long_and_stops_at_its_wake() {
        let (_inbox, mut sender) = command_path(
            Recorder::default(),
            MS(500),
            vec!["v0".into()],
            vec![Arc::default()],
            "test",
        );
        let waker = sender.waker();
        let (looks, stop) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(std::sync::atomic::AtomicBool::new(false)),
        );
        let (l, flag) = (looks.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            sender.run(move || {
                l.fetch_add(1, Ordering::Relaxed);
                flag.load(Ordering::Relaxed)
            })
        });
        std::thread::sleep(MS(600));
        let idle_looks = looks.load(Ordering::Relaxed);
        assert!(idle_looks <= 4, "{idle_looks} looks at the stop signal in 600 ms");
        stop.store(true, Ordering::Relaxed);
        let began = Instant::now();
        waker.wake();
        thread.join().unwrap();
        assert!(began.elapsed() < MS(100), "{:?}", began.elapsed());
    }

    #[test]
    fn the_thread_sends_the_command_then_the_neutral_at_the_stop() {
        let recorder = Recorder::default();
        let taken = recorder.taken.clone();
        let (inbox, sender) = command_path(recorder, MS(500), vec!["v0".into()], vec![Arc::default()], "test");
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || sender.run(move || flag.load(Ordering::Relaxed)));
        inbox.submit(0, 4, 0.0, Some(0.0), true);
        std::thread::sleep(MS(50));
        assert_eq!(*taken.lock().unwrap(), vec![(0, 4)]);
        stop.store(true, Ordering::Relaxed);
        let began = Instant::now();
        thread.join().unwrap();
        assert!(began.elapsed() < MS(500));
        assert_eq!(*taken.lock().unwrap(), vec![(0, 4), (0, 0)]);
    }
}
