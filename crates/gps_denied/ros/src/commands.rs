//! Commands: `cmd` (`rflysim_bridge/AttitudeThrust`) and `cmd_vel`
//! (`geometry_msgs/Twist`) in, one JSON command object out per message, to
//! the simulator's UDP port or as a `std_msgs/String`, through the shared
//! command path (`ros_common::command`: stamp rule, latest only, the
//! neutral `{"thrust":0,"pitch":0,"roll":0,"yaw":0}` after `cmd_timeout_s` of
//! silence and at the stop). A command outside the simulator's ranges is
//! refused with a log line and nothing is sent.

use std::net::UdpSocket;
use std::sync::Arc;

use futures::stream::BoxStream;
use futures::StreamExt;
use gps_denied_proto::{Command, CommandError, TwistGains};
use r2r::geometry_msgs::msg::Twist;
use r2r::rflysim_bridge::msg::AttitudeThrust;
use r2r::{Node, Publisher, QosProfile};
use ros_common::command::{CommandInbox, CommandTransport, Offer};
use ros_common::lifecycle::StopSignal;
use ros_common::sim_host::SimEndpoint;
use ros_common::time::{from_ros_time, TimeBase};

use crate::convert::{attitude_command, twist_command};

/// The one vehicle of this bridge, in the command path's terms.
const DRONE: usize = 0;

/// Where commands go.
pub enum CommandSink {
    /// A clone of the telemetry socket (commands leave from the port the
    /// simulator sends to), non-blocking.
    Udp {
        socket: UdpSocket,
        to: SimEndpoint,
    },
    Ros(Publisher<r2r::std_msgs::msg::String>),
}

impl std::fmt::Debug for CommandSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandSink::Udp { to, .. } => write!(f, "CommandSink::Udp({to})"),
            CommandSink::Ros(_) => f.write_str("CommandSink::Ros"),
        }
    }
}

impl CommandTransport for CommandSink {
    type Command = Command;

    fn neutral(&self, _: usize) -> Command {
        Command::NEUTRAL
    }

    fn offer(&mut self, _: usize, command: &Command) -> Offer {
        let json = command.encode();
        match self {
            CommandSink::Udp { socket, to } => match socket.send_to(&json, to.addr()) {
                Ok(_) => Offer::Taken,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Offer::Busy("send_buffer_full"),
                // An ICMP "port unreachable" of an earlier datagram, and the like.
                Err(_) => Offer::Busy("send_failed"),
            },
            CommandSink::Ros(p) => {
                let data = String::from_utf8(json).expect("the encoder writes UTF-8");
                match p.publish(&r2r::std_msgs::msg::String { data }) {
                    Ok(()) => Offer::Taken,
                    Err(_) => Offer::Busy("publish_failed"),
                }
            }
        }
    }
}

fn reason(e: &CommandError) -> &'static str {
    match e {
        CommandError::NotFinite { .. } => "not_finite",
        CommandError::OutOfRange { .. } => "out_of_range",
        CommandError::Malformed(_) => "malformed",
    }
}

/// The two command subscriptions, feeding the command path.
#[allow(missing_debug_implementations)] // holds subscription streams, which are not Debug
pub struct CommandInputs {
    cmd: BoxStream<'static, AttitudeThrust>,
    cmd_vel: BoxStream<'static, Twist>,
    inbox: CommandInbox<Command>,
    gains: TwistGains,
    time: Arc<TimeBase>,
}

impl CommandInputs {
    pub fn new(
        node: &mut Node,
        inbox: CommandInbox<Command>,
        gains: TwistGains,
        time: Arc<TimeBase>,
    ) -> Result<Self, String> {
        let qos = QosProfile::default().keep_last(10).reliable();
        Ok(Self {
            cmd: node
                .subscribe::<AttitudeThrust>("drone/cmd", qos.clone())
                .map_err(|e| format!("drone/cmd: {e}"))?
                .boxed(),
            cmd_vel: node
                .subscribe::<Twist>("drone/cmd_vel", qos)
                .map_err(|e| format!("drone/cmd_vel: {e}"))?
                .boxed(),
            inbox,
            gains,
            time,
        })
    }

    pub async fn run(mut self, mut stop: StopSignal) {
        loop {
            let (command, stamp) = tokio::select! {
                _ = stop.changed() => return,
                Some(m) = self.cmd.next() => (attitude_command(&m), from_ros_time(&m.header.stamp)),
                // cmd_vel has no stamp: fresh at receipt.
                Some(t) = self.cmd_vel.next() => (twist_command(&t, &self.gains).map(|(c, _)| c), 0.0),
                else => return,
            };
            match command {
                Ok(c) => self.inbox.submit(DRONE, c, stamp, self.time.now_seconds(), true),
                Err(e) => self.inbox.refuse(DRONE, reason(&e), &e.to_string()),
            }
        }
    }
}
