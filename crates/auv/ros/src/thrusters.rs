//! Commands to the simulator: `auv<N>/thrusters` and `auv<N>/cmd_vel` are
//! converted on the runtime and handed to the shared command path
//! (`ros_common::command`: stamp rule, latest only, watchdog, neutral at
//! the stop); this module is its transport, one PUSH socket per AUV.

use std::time::Duration;

use auv_proto::mixing::MixGains;
use auv_proto::thruster::ThrusterCommand;
use futures::{Stream, StreamExt};
use ros_common::command::{CommandInbox, CommandTransport, Offer};
use ros_common::lifecycle::StopSignal;
use ros_common::time::from_ros_time;

use crate::convert::{thruster_command, twist_command};

/// The AUVs' PUSH sockets, in the order of the command path's vehicles.
pub struct Thrusters {
    pushers: Vec<(u8, zmq::Socket)>,
}

impl std::fmt::Debug for Thrusters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<u8> = self.pushers.iter().map(|(id, _)| *id).collect();
        f.debug_struct("Thrusters").field("auv_ids", &ids).finish()
    }
}

impl Thrusters {
    pub fn new(pushers: Vec<(u8, zmq::Socket)>) -> Self {
        Self { pushers }
    }
}

impl CommandTransport for Thrusters {
    type Command = ThrusterCommand;

    fn neutral(&self, vehicle: usize) -> ThrusterCommand {
        ThrusterCommand::stop(self.pushers[vehicle].0)
    }

    fn offer(&mut self, vehicle: usize, command: &ThrusterCommand) -> Offer {
        match self.pushers[vehicle].1.send(&command.encode()[..], zmq::DONTWAIT) {
            Ok(()) => Offer::Taken,
            // ZMQ_IMMEDIATE: no simulator connected; or the one-message queue is full.
            Err(zmq::Error::EAGAIN) => Offer::Busy("no_simulator"),
            Err(_) => Offer::Busy("send_failed"),
        }
    }

    /// Closing a socket waits up to its linger for what it holds to leave.
    fn flush(&mut self, within: Duration) {
        let ms = within.as_millis().min(i32::MAX as u128) as i32;
        for (_, socket) in &self.pushers {
            let _ = socket.set_linger(ms);
        }
    }
}

/// A command that sets no thruster re-arms nothing.
fn arms(c: &ThrusterCommand) -> bool {
    c.levels().iter().any(Option::is_some)
}

/// Hands one converted command to the command path, or counts why not.
fn forward(
    inbox: &CommandInbox<ThrusterCommand>,
    vehicle: usize,
    converted: Result<ThrusterCommand, auv_proto::WireError>,
    stamp_s: f64,
    now_s: Option<f64>,
) {
    match converted {
        Ok(c) => inbox.submit(vehicle, c, stamp_s, now_s, arms(&c)),
        Err(e) => inbox.refuse(vehicle, e.kind(), &e.to_string()),
    }
}

/// Forwards `auv<N>/thrusters` messages until stopped.
pub async fn thrusters_loop(
    mut stream: impl Stream<Item = r2r::rflysim_bridge::msg::ThrusterCommand> + Unpin,
    inbox: CommandInbox<ThrusterCommand>,
    (vehicle, id): (usize, u8),
    stamps: ros_common::time::ArrivalStamps,
    mut stop: StopSignal,
) {
    loop {
        let m = tokio::select! {
            m = stream.next() => match m { Some(m) => m, None => break },
            _ = stop.changed() => break,
        };
        forward(
            &inbox,
            vehicle,
            thruster_command(id, &m),
            from_ros_time(&m.header.stamp),
            stamps.now_s(),
        );
    }
}

/// Forwards `auv<N>/cmd_vel`, mixed, until stopped: fresh at receipt.
pub async fn cmd_vel_loop(
    mut stream: impl Stream<Item = r2r::geometry_msgs::msg::Twist> + Unpin,
    inbox: CommandInbox<ThrusterCommand>,
    (vehicle, id): (usize, u8),
    gains: MixGains,
    mut stop: StopSignal,
) {
    loop {
        let t = tokio::select! {
            m = stream.next() => match m { Some(m) => m, None => break },
            _ = stop.changed() => break,
        };
        // Unstamped: fresh at receipt, whatever the clock.
        forward(&inbox, vehicle, twist_command(id, &t, &gains), 0.0, None);
    }
}
