//! The one command rule of every bridge that sends commands to a vehicle.
//!
//! - A command is issued at its header stamp; a zero stamp (and `cmd_vel`,
//!   which has none) means "now". A stamp more than [`FUTURE_TOLERANCE`]
//!   ahead of the bridge's clock is refused (`future`), one older than
//!   `cmd_timeout_s` too (`stale`), and any stamp while the bridge's clock is
//!   not known yet (`use_sim_time` before the first sample: `clock_unknown`).
//! - Latest only: of the commands waiting for a vehicle only the newest is
//!   offered to the transport (a transport may fold the older into it:
//!   [`CommandTransport::combine`]), and only while it is younger than
//!   `cmd_timeout_s`; an older one is dropped (`stale`), never sent late.
//! - A send that began is never repeated nor overtaken: while one is under
//!   way for a vehicle (a transport that answers [`Offer::Sending`]), the
//!   next command for it waits; a send that fails is counted and logged.
//! - `cmd_timeout_s` after the issue of the command in force (in force from the
//!   moment its send began) with no newer one, the vehicle's neutral command
//!   is offered until the transport delivers it.
//! - At the stop, every vehicle with a command in force (or a neutral owed)
//!   gets its neutral, offered until delivered, for at most
//!   [`SHUTDOWN_BUDGET`]; a neutral still owed then is logged as an error
//!   and counted. Vehicles nobody commanded get nothing. Where the transport
//!   keeps a vehicle's sends in order ([`CommandTransport::sends_in_order`]),
//!   the neutral goes at once, behind a command still under way.
//! - A command that sets nothing (every field "keep") is sent but does not
//!   re-arm the watchdog: it keeps nothing in force.
//!
//! The rule is here once; a bridge supplies its [`CommandTransport`] (the
//! socket, the encoding, the neutral command) and feeds [`CommandInbox`].

use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::stats::{RateLimitedLog, StreamStats};

/// A stamp this far ahead of the bridge's clock is still taken as "now"
/// (clocks of two hosts, a sim-time stamp a step ahead of `/clock`).
pub const FUTURE_TOLERANCE: Duration = Duration::from_millis(250);
/// How long the stop may spend getting the neutral commands out.
pub const SHUTDOWN_BUDGET: Duration = Duration::from_millis(500);
/// How soon an offer the transport refused is made again, and how often a
/// send under way is looked at.
pub const RETRY: Duration = Duration::from_millis(10);
/// The longest the sender sleeps before it looks at the stop signal.
const MAX_WAIT: Duration = Duration::from_millis(50);
/// The same for a sender that its [`CommandWaker`] wakes at the stop: only
/// a lost wake-up would make the stop wait this long. (Woken every 50 ms,
/// an idle sender cost a 25-Hz bridge a twentieth of its CPU.)
const WOKEN_MAX_WAIT: Duration = Duration::from_millis(250);
/// Commands waiting between the subscriptions and the sender.
const INBOX: usize = 64;

/// `cmd_timeout_s`'s default, seconds.
pub const DEFAULT_TIMEOUT_S: f64 = crate::params::shared::CMD_TIMEOUT.default;

/// Why a command did not leave the bridge (the counters' reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Stamped more than [`FUTURE_TOLERANCE`] ahead.
    Future,
    /// Older than `cmd_timeout_s`: at receipt, or before the transport took it.
    Stale,
    /// Stamped while the bridge's clock is not known yet.
    ClockUnknown,
    /// The sender is behind by more than the inbox holds.
    QueueFull,
}

impl Refusal {
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::Future => "future",
            Refusal::Stale => "stale",
            Refusal::ClockUnknown => "clock_unknown",
            Refusal::QueueFull => "queue_full",
        }
    }
}

/// When a command was issued, by the stamp rule above.
///
/// `stamp_s` is its header stamp in seconds on the bridge's clock (0: none),
/// `now_s` that clock at receipt (wall time, or sim time with
/// `use_sim_time`; `None` while not known), `received` the monotonic receipt time.
pub fn issued_at(stamp_s: f64, now_s: Option<f64>, received: Instant, timeout: Duration) -> Result<Instant, Refusal> {
    if stamp_s == 0.0 {
        return Ok(received);
    }
    let Some(now_s) = now_s else {
        return Err(Refusal::ClockUnknown);
    };
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
    /// Delivered (in the socket's queue, or sent).
    Taken,
    /// Its send began; the outcome comes later ([`CommandTransport::outcomes`]).
    Sending,
    /// Not now (no peer, queue full, a send error): offered again later.
    Busy(&'static str),
}

/// How a send that began ([`Offer::Sending`]) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    Delivered,
    /// Not known to have arrived (not acknowledged in time, refused): why.
    Failed(&'static str),
}

/// A bridge's way to its vehicles.
pub trait CommandTransport: Send {
    type Command: Clone + Send + std::fmt::Debug + 'static;
    /// What leaves `vehicle` holding still.
    fn neutral(&self, vehicle: usize) -> Self::Command;
    fn offer(&mut self, vehicle: usize, command: &Self::Command) -> Offer;
    /// The outcomes of the sends that answered [`Offer::Sending`], as they end.
    fn outcomes(&mut self, _each: &mut dyn FnMut(usize, Delivery)) {}
    /// Of two commands waiting for one vehicle, what is offered: the newer
    /// (latest only), unless the transport can fold the older into it.
    fn combine(&self, _older: Self::Command, newer: Self::Command) -> Self::Command {
        newer
    }
    /// After the last offer: `within` to let what was taken leave.
    fn flush(&mut self, _within: Duration) {}
    /// True when a vehicle's sends arrive in the order they began (one
    /// ordered connection) and their outcomes come in that order: the stop
    /// then offers the neutral at once, behind a command still under way,
    /// instead of spending its budget waiting for that command's outcome.
    fn sends_in_order(&self) -> bool {
        false
    }
}

/// What reaches the sender's thread.
#[derive(Debug)]
enum Inbound<C> {
    Order(Order<C>),
    /// Look at the stop signal now.
    Wake,
}

/// Where the subscription tasks hand their commands, one per bridge.
#[derive(Debug)]
pub struct CommandInbox<C> {
    to_sender: SyncSender<Inbound<C>>,
    timeout: Duration,
    report: Report,
}

impl<C> Clone for CommandInbox<C> {
    fn clone(&self) -> Self {
        Self {
            to_sender: self.to_sender.clone(),
            timeout: self.timeout,
            report: self.report.clone(),
        }
    }
}

/// Counts and logs (limited in rate) what happens to a vehicle's commands.
#[derive(Debug, Clone)]
struct Report {
    stats: Vec<Arc<StreamStats>>,
    log: Arc<Mutex<RateLimitedLog>>,
    logger: String,
    /// How vehicle `i` is named in a log line.
    names: Arc<Vec<String>>,
}

impl Report {
    fn name(&self, vehicle: usize) -> &str {
        self.names.get(vehicle).map_or("?", String::as_str)
    }

    fn count(&self, vehicle: usize, reason: &'static str) {
        if let Some(s) = self.stats.get(vehicle) {
            s.drop_frame(reason);
        }
    }

    /// Counts under `reason` and logs `what` (limited in rate).
    fn warn(&self, vehicle: usize, reason: &'static str, what: std::fmt::Arguments) {
        self.count(vehicle, reason);
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.warn_event(&self.logger, self.name(vehicle), what);
    }

    /// Counts under `reason` a command not sent and logs why (limited in rate).
    fn dropped(&self, vehicle: usize, reason: &'static str, detail: &str) {
        self.count(vehicle, reason);
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let why = format_args!("{reason}: {detail}; nothing sent");
        log.warn_dropped(&self.logger, self.name(vehicle), "command", why);
    }
}

impl<C: Send + 'static> CommandInbox<C> {
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A command for `vehicle`, stamped `stamp_s` (0: unstamped), received
    /// now while the bridge's clock reads `now_s` (`None`: not known yet).
    pub fn submit(&self, vehicle: usize, command: C, stamp_s: f64, now_s: Option<f64>, arms: bool) {
        let received = Instant::now();
        let issued = match issued_at(stamp_s, now_s, received, self.timeout) {
            Ok(t) => t,
            Err(r) => {
                let detail = match now_s {
                    Some(now) => format!("stamp {stamp_s:.3} s against a clock at {now:.3} s"),
                    None => format!("stamp {stamp_s:.3} s before the bridge's clock is known (no /clock sample yet)"),
                };
                return self.refuse(vehicle, r.reason(), &detail);
            }
        };
        let order = Order {
            vehicle,
            command,
            issued,
            arms,
        };
        if let Err(TrySendError::Full(_)) = self.to_sender.try_send(Inbound::Order(order)) {
            self.refuse(vehicle, Refusal::QueueFull.reason(), "the sender is behind");
        }
    }

    /// Counts and logs (limited in rate) a command that is not sent.
    pub fn refuse(&self, vehicle: usize, reason: &'static str, detail: &str) {
        self.report.dropped(vehicle, reason, detail);
    }
}

/// Ends a [`CommandSender`]'s wait (see [`CommandSender::waker`]).
pub struct CommandWaker {
    wake: Box<dyn Fn() + Send>,
}

impl std::fmt::Debug for CommandWaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CommandWaker")
    }
}

impl CommandWaker {
    pub fn wake(&self) {
        (self.wake)();
    }
}

// The sender applies the rule on its own thread; the rule and the inbox stay here.
mod sender;

pub use sender::{command_path, CommandSender};

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn the_stamp_rule() {
        let t = Instant::now() + Duration::from_secs(10);
        let timeout = MS(500);
        let now = Some(100.0);
        assert_eq!(issued_at(0.0, now, t, timeout), Ok(t), "zero: now");
        assert_eq!(issued_at(99.8, now, t, timeout), Ok(t - MS(200)));
        assert_eq!(issued_at(100.2, now, t, timeout), Ok(t), "within the tolerance: now");
        assert_eq!(issued_at(100.3, now, t, timeout), Err(Refusal::Future));
        assert_eq!(issued_at(99.4, now, t, timeout), Err(Refusal::Stale));
        assert_eq!(issued_at(f64::NAN, now, t, timeout), Err(Refusal::Future));
        assert_eq!(issued_at(f64::INFINITY, now, t, timeout), Err(Refusal::Future));
        assert_eq!(issued_at(f64::NEG_INFINITY, now, t, timeout), Err(Refusal::Stale));
        // Under use_sim_time before any sample: a stamp cannot be judged.
        assert_eq!(issued_at(5.0, None, t, timeout), Err(Refusal::ClockUnknown));
        assert_eq!(issued_at(0.0, None, t, timeout), Ok(t), "unstamped: now");
    }
}
