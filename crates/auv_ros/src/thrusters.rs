//! Commands to the simulator: `auv<N>/thrusters` and `auv<N>/cmd_vel` are
//! converted on the runtime and handed to one sender thread, which owns the
//! PUSH socket and the [`Watchdog`]: stale or late commands are dropped, one
//! all-zero command follows `cmd_timeout` of silence, and all-zero goes to
//! every AUV at shutdown.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use auv_proto::mixing::MixGains;
use auv_proto::thruster::ThrusterCommand;
use futures::{Stream, StreamExt};
use r2r::builtin_interfaces::msg::Time;
use ros_common::lifecycle::StopSignal;
use ros_common::stats::{RateLimitedLog, StreamStats};
use ros_common::time::{from_ros_time, wall_now};

use crate::convert::{thruster_command, twist_command};
use crate::link::stopping;
use crate::watchdog::Watchdog;

/// A converted command on its way to the sender.
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    pub command: ThrusterCommand,
    /// How old its header stamp was on arrival (`None`: unstamped, as `cmd_vel`).
    pub stamp_age: Option<Duration>,
    pub received: Instant,
}

/// How long the sender waits at most before looking at the stop signal;
/// it wakes earlier only when a command arrives or a watchdog stop falls due
/// (no fixed tick: an idle bridge does not wake 100 times a second).
const MAX_WAIT: Duration = crate::link::POLL;
/// Commands waiting for the sender; more are dropped (and counted).
pub const QUEUE: usize = 64;

fn stamp_age(stamp: &Time) -> Option<Duration> {
    if stamp.sec == 0 && stamp.nanosec == 0 {
        return None;
    }
    Some(Duration::from_secs_f64((wall_now() - from_ros_time(stamp)).max(0.0)))
}

/// What a subscription task shares: the way to the sender, and where to count and log.
#[derive(Debug, Clone)]
pub struct CommandInput {
    pub id: u8,
    pub to_sender: SyncSender<Pending>,
    pub stats: Arc<StreamStats>,
    pub logger: String,
    pub warn: Arc<Mutex<RateLimitedLog>>,
}

impl CommandInput {
    fn refuse(&self, reason: &'static str, detail: &str) {
        self.stats.drop_frame(reason);
        if let Some(held) = self.warn.lock().unwrap_or_else(|e| e.into_inner()).allow() {
            r2r::log_warn!(
                &self.logger,
                "auv{} thruster command refused, nothing sent: {detail} ({held} more not shown)",
                self.id
            );
        }
    }

    fn forward(&self, converted: Result<ThrusterCommand, auv_proto::WireError>, stamp_age: Option<Duration>) {
        match converted {
            Ok(command) => {
                let pending = Pending {
                    command,
                    stamp_age,
                    received: Instant::now(),
                };
                if let Err(TrySendError::Full(_)) = self.to_sender.try_send(pending) {
                    self.refuse("queue_full", "the sender is behind");
                }
            }
            Err(e) => self.refuse(e.kind(), &e.to_string()),
        }
    }
}

/// Forwards `auv<N>/thrusters` messages until stopped.
pub async fn thrusters_loop(
    mut stream: impl Stream<Item = r2r::rflysim_bridge::msg::ThrusterCommand> + Unpin,
    input: CommandInput,
    mut stop: StopSignal,
) {
    loop {
        let m = tokio::select! {
            m = stream.next() => match m { Some(m) => m, None => break },
            _ = stop.changed() => break,
        };
        input.forward(thruster_command(input.id, &m), stamp_age(&m.header.stamp));
    }
}

/// Forwards `auv<N>/cmd_vel`, mixed, until stopped.
pub async fn cmd_vel_loop(
    mut stream: impl Stream<Item = r2r::geometry_msgs::msg::Twist> + Unpin,
    input: CommandInput,
    gains: MixGains,
    mut stop: StopSignal,
) {
    loop {
        let t = tokio::select! {
            m = stream.next() => match m { Some(m) => m, None => break },
            _ = stop.changed() => break,
        };
        input.forward(twist_command(input.id, &t, &gains), None);
    }
}

/// Sends one command now, or counts why it could not go.
fn send(socket: &zmq::Socket, c: &ThrusterCommand, stats: &HashMap<u8, Arc<StreamStats>>) {
    let Some(s) = stats.get(&c.auv_id()) else { return };
    match socket.send(&c.encode()[..], zmq::DONTWAIT) {
        Ok(()) => s.published(auv_proto::THRUSTER_MESSAGE_LEN),
        // With ZMQ_IMMEDIATE: no simulator connected (or it stopped reading).
        Err(zmq::Error::EAGAIN) => s.drop_frame("no_simulator"),
        Err(_) => s.drop_frame("send_failed"),
    }
}

/// The sender thread's body.
pub fn sender(
    socket: zmq::Socket,
    from_inputs: Receiver<Pending>,
    mut watchdog: Watchdog,
    stats: HashMap<u8, Arc<StreamStats>>,
    stop: StopSignal,
) {
    while !stopping(&stop) {
        let now = Instant::now();
        let wait = watchdog
            .next_due()
            .map_or(MAX_WAIT, |due| due.saturating_duration_since(now).min(MAX_WAIT));
        match from_inputs.recv_timeout(wait) {
            Ok(p) => match watchdog.admit(&p.command, p.stamp_age, p.received, Instant::now()) {
                Ok(()) => send(&socket, &p.command, &stats),
                Err(refusal) => {
                    if let Some(s) = stats.get(&p.command.auv_id()) {
                        s.drop_frame(refusal.reason());
                    }
                }
            },
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(wait),
        }
        for stop_command in watchdog.expired(Instant::now()) {
            send(&socket, &stop_command, &stats);
        }
    }
    for stop_command in watchdog.all_stop() {
        send(&socket, &stop_command, &stats);
    }
}
