//! The gimbals' requests on the shared command path: a neutral (both rates
//! 0) counts as delivered once RflySim3D's echo shows it, and is sent again
//! until then.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use rflysim_proto::gimbal::{GimbalBitTable, GimbalEcho};
use rflysim_proto::request::RequestForm;

use crate::gimbal::{GimbalChange, GimbalCommandState};
use ros_common::command::{CommandTransport, Delivery, Offer, SHUTDOWN_BUDGET};
use ros_common::sim_host::SimEndpoint;
use ros_common::stats::{event_line, RateLimitedLog, StreamStats};

/// How long a neutral waits for an echo showing both rates 0 before it is
/// sent again: two periods of RflySim3D's 10 Hz echo.
pub const CONFIRM_WAIT: Duration = Duration::from_millis(200);
/// How long the watchdog's neutral is sent again while unconfirmed: the
/// stop's budget (the stop itself is bounded by the command path).
pub const NEUTRAL_BUDGET: Duration = SHUTDOWN_BUDGET;
/// A gimbal with no echo for this long cannot confirm its neutral.
pub const ECHO_HEARD_WITHIN: Duration = Duration::from_secs(1);
/// Counted once per neutral that ended unconfirmed.
pub(crate) const UNCONFIRMED: &str = "neutral_unconfirmed";
/// Counted per neutral datagram no echo confirmed in [`CONFIRM_WAIT`] (then sent again).
pub(crate) const NOT_ECHOED: &str = "neutral_not_echoed";

/// What the command path carries for a gimbal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GimbalCommand {
    /// A controller's command.
    Change(GimbalChange),
    /// The neutral: both rates 0, confirmed by the echo.
    StopRates,
}

/// The newest echo of each gimbal (by SeqID), as the status port hands them
/// in: what confirms a neutral.
#[derive(Debug, Default)]
pub struct EchoBook(Mutex<HashMap<u16, HeardEcho>>);

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeardEcho {
    pub at: Instant,
    /// Pitch and yaw rates, rad/s.
    pub rates: [f32; 2],
    pub stopped: bool,
}

impl EchoBook {
    pub fn heard(&self, seq: u16, echo: &GimbalEcho) {
        let heard = HeardEcho {
            at: Instant::now(),
            rates: echo.rates,
            stopped: echo.rates_stopped(),
        };
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(seq, heard);
    }

    fn last(&self, seq: u16) -> Option<HeardEcho> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).get(&seq).copied()
    }
}

/// A neutral that left and is not confirmed yet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NeutralSent {
    first: Instant,
    last: Instant,
    datagrams: u32,
    /// Its outcome is still to be told to the command path.
    in_flight: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NeutralVerdict {
    /// An echo that came after the last datagram shows both rates 0.
    Confirmed,
    Waiting,
    SendAgain,
    /// Unconfirmed for [`NEUTRAL_BUDGET`] (at the watchdog; the stop's budget is the command path's).
    GiveUp,
}

pub(crate) fn judge(sent: &NeutralSent, echo: Option<HeardEcho>, now: Instant, stopping: bool) -> NeutralVerdict {
    let answer = echo.filter(|e| e.at > sent.last);
    if answer.is_some_and(|e| e.stopped) {
        NeutralVerdict::Confirmed
    } else if now < sent.last + CONFIRM_WAIT {
        NeutralVerdict::Waiting
    } else if !stopping && now >= sent.first + NEUTRAL_BUDGET {
        NeutralVerdict::GiveUp
    } else {
        NeutralVerdict::SendAgain
    }
}

/// One gimbal, as the sender sees it.
#[derive(Debug)]
pub(crate) struct GimbalLink {
    pub(crate) seq: u16,
    pub(crate) state: Arc<Mutex<GimbalCommandState>>,
    pub(crate) stats: Arc<StreamStats>,
    pub(crate) neutral: Option<NeutralSent>,
}

/// The gimbals' requests, as the command path sends them.
#[derive(Debug)]
pub struct GimbalRequests {
    pub(crate) sock: Arc<std::net::UdpSocket>,
    pub(crate) to: SimEndpoint,
    pub(crate) bits: GimbalBitTable,
    pub(crate) checksum: u16,
    pub(crate) gimbals: Vec<GimbalLink>,
    pub(crate) echoes: Arc<EchoBook>,
    /// Set at the stop: the stop's budget is the command path's.
    pub(crate) stop: watch::Receiver<bool>,
    /// Told when the stop's neutrals are settled: the status port reads until then.
    pub(crate) settled: watch::Sender<bool>,
    /// Where the echoes come from, for the log.
    pub(crate) status_port: String,
    pub(crate) logger: String,
    pub(crate) log: RateLimitedLog,
}

impl GimbalRequests {
    fn name(&self, gimbal: usize) -> String {
        format!("gimbal of sensor {}", self.gimbals[gimbal].seq)
    }

    /// What follows a neutral that left: a wait for its echo, or, when the
    /// gimbal's echo is not coming, delivered as far as UDP goes (said and counted).
    fn neutral_left(&mut self, gimbal: usize) -> Offer {
        let now = Instant::now();
        let link = &mut self.gimbals[gimbal];
        let echo_flows = self
            .echoes
            .last(link.seq)
            .is_some_and(|e| now.saturating_duration_since(e.at) <= ECHO_HEARD_WITHIN);
        if !echo_flows && link.neutral.is_none() {
            link.stats.drop_frame(UNCONFIRMED);
            let event = format_args!(
                "no echo of it on {} for {ECHO_HEARD_WITHIN:?} (RflySim3D's status output off, or sent to a \
                 multicast group not joined): its neutral (both rates 0) cannot be confirmed; sent once, \
                 unconfirmed",
                self.status_port
            );
            self.log.warn_event(&self.logger, self.name(gimbal), event);
            return Offer::Taken;
        }
        let sent = link.neutral.get_or_insert(NeutralSent {
            first: now,
            last: now,
            datagrams: 0,
            in_flight: true,
        });
        sent.last = now;
        sent.datagrams += 1;
        sent.in_flight = true;
        Offer::Sending
    }

    /// Counts and logs a neutral that ended unconfirmed.
    fn unconfirmed(&mut self, gimbal: usize, sent: NeutralSent, at_stop: bool) {
        let link = &self.gimbals[gimbal];
        link.stats.drop_frame(UNCONFIRMED);
        let seen = match self.echoes.last(link.seq) {
            Some(e) if e.at > sent.first => format!(
                "its last echo shows pitch and yaw rates {:.3} and {:.3} rad/s",
                e.rates[0], e.rates[1]
            ),
            _ => "no echo of it came since".to_string(),
        };
        let what = format_args!(
            "the neutral (both rates 0) was not confirmed: {} datagram(s) in {:.2} s, {seen}; the gimbal may keep \
             turning",
            sent.datagrams,
            sent.last.saturating_duration_since(sent.first).as_secs_f64() + CONFIRM_WAIT.as_secs_f64(),
        );
        let name = self.name(gimbal);
        if at_stop {
            r2r::log_error!(&self.logger, "{}", event_line(name, what, 0));
        } else {
            self.log.warn_event(&self.logger, name, what);
        }
    }
}

impl CommandTransport for GimbalRequests {
    type Command = GimbalCommand;

    fn neutral(&self, _: usize) -> GimbalCommand {
        GimbalCommand::StopRates
    }

    /// The request is made from the gimbal's state as the requests sent so
    /// far left it; the state it leaves is kept once the socket took it.
    fn offer(&mut self, gimbal: usize, command: &GimbalCommand) -> Offer {
        let change = match command {
            GimbalCommand::Change(c) => *c,
            GimbalCommand::StopRates => GimbalChange::stop_rates(&self.bits),
        };
        let link = &mut self.gimbals[gimbal];
        {
            let mut state = link.state.lock().unwrap_or_else(|e| e.into_inner());
            let (req, next) = state.request(&change);
            match self
                .sock
                .send_to(&req.encode(RequestForm::Gimbal148, self.checksum), self.to.addr())
            {
                Ok(_) => *state = next,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Offer::Busy("send_buffer_full"),
                Err(_) => return Offer::Busy("send_failed"),
            }
        }
        match command {
            GimbalCommand::Change(_) => {
                // A controller's command supersedes a neutral awaiting its echo.
                link.neutral = None;
                Offer::Taken
            }
            GimbalCommand::StopRates => self.neutral_left(gimbal),
        }
    }

    fn outcomes(&mut self, each: &mut dyn FnMut(usize, Delivery)) {
        let now = Instant::now();
        let stopping = *self.stop.borrow();
        for gimbal in 0..self.gimbals.len() {
            let link = &mut self.gimbals[gimbal];
            let Some(sent) = link.neutral.filter(|n| n.in_flight) else {
                continue;
            };
            match judge(&sent, self.echoes.last(link.seq), now, stopping) {
                NeutralVerdict::Waiting => {}
                NeutralVerdict::Confirmed => {
                    link.neutral = None;
                    if sent.datagrams > 1 {
                        r2r::log_info!(
                            &self.logger,
                            "{}: the neutral (both rates 0) was confirmed by the echo after {} datagrams",
                            self.name(gimbal),
                            sent.datagrams
                        );
                    }
                    each(gimbal, Delivery::Delivered);
                }
                NeutralVerdict::SendAgain => {
                    link.neutral = Some(NeutralSent {
                        in_flight: false,
                        ..sent
                    });
                    each(gimbal, Delivery::Failed(NOT_ECHOED));
                }
                NeutralVerdict::GiveUp => {
                    link.neutral = None;
                    self.unconfirmed(gimbal, sent, false);
                    // Sent for the whole budget: not owed any more.
                    each(gimbal, Delivery::Delivered);
                }
            }
        }
    }

    /// A zoom right after a rate command keeps the rate command.
    fn combine(&self, older: GimbalCommand, newer: GimbalCommand) -> GimbalCommand {
        match (older, newer) {
            (GimbalCommand::Change(older), GimbalCommand::Change(newer)) => {
                GimbalCommand::Change(older.then(newer, &self.bits))
            }
            (_, newer) => newer,
        }
    }

    /// The end of the stop: a neutral still unconfirmed is said and counted.
    fn flush(&mut self, _within: Duration) {
        let now = Instant::now();
        for gimbal in 0..self.gimbals.len() {
            let link = &mut self.gimbals[gimbal];
            let Some(sent) = link.neutral.take() else {
                continue;
            };
            if judge(&sent, self.echoes.last(link.seq), now, true) != NeutralVerdict::Confirmed {
                self.unconfirmed(gimbal, sent, true);
            }
        }
        let _ = self.settled.send(true);
    }
}

#[cfg(test)]
#[path = "gimbal_requests_tests.rs"]
mod tests;
