//! Commands: `cmd` (`rflysim_bridge/AttitudeThrust`) and `cmd_vel`
//! (`geometry_msgs/Twist`) in, one JSON command object out per message —
//! to the simulator's UDP port, or as a `std_msgs/String`. A command
//! outside the seed's ranges is rejected with a log line and nothing is sent.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::StreamExt;
use gps_denied_proto::{Command, CommandError, TwistGains};
use r2r::geometry_msgs::msg::Twist;
use r2r::rflysim_bridge::msg::AttitudeThrust;
use r2r::{Node, Publisher, QosProfile};
use ros_common::lifecycle::StopSignal;
use ros_common::stats::{RateLimitedLog, StreamStats};
use tokio::net::UdpSocket;

use crate::convert::{attitude_command, twist_command};

/// Where commands go.
pub enum CommandSink {
    Udp { socket: Arc<UdpSocket>, to: SocketAddr },
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

impl CommandSink {
    async fn send(&mut self, command: &Command) -> Result<(), String> {
        let json = command.encode();
        match self {
            CommandSink::Udp { socket, to } => socket.send_to(&json, *to).await.map(|_| ()).map_err(|e| e.to_string()),
            CommandSink::Ros(p) => {
                let data = String::from_utf8(json).expect("the encoder writes UTF-8");
                p.publish(&r2r::std_msgs::msg::String { data })
                    .map_err(|e| e.to_string())
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

pub struct CommandBridge {
    cmd: BoxStream<'static, AttitudeThrust>,
    cmd_vel: BoxStream<'static, Twist>,
    sink: CommandSink,
    gains: TwistGains,
    pub stats: Arc<StreamStats>,
    logger: String,
    log: RateLimitedLog,
}

impl std::fmt::Debug for CommandBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandBridge").field("sink", &self.sink).finish()
    }
}

impl CommandBridge {
    pub fn new(node: &mut Node, sink: CommandSink, gains: TwistGains) -> Result<Self, String> {
        let qos = QosProfile::default().keep_last(10).reliable();
        Ok(Self {
            cmd: node
                .subscribe::<AttitudeThrust>("cmd", qos.clone())
                .map_err(|e| format!("cmd: {e}"))?
                .boxed(),
            cmd_vel: node
                .subscribe::<Twist>("cmd_vel", qos)
                .map_err(|e| format!("cmd_vel: {e}"))?
                .boxed(),
            sink,
            gains,
            stats: Arc::new(StreamStats::default()),
            logger: node.logger().to_string(),
            log: RateLimitedLog::new(Duration::from_secs(1)),
        })
    }

    pub async fn run(mut self, mut stop: StopSignal) {
        loop {
            let (what, command) = tokio::select! {
                _ = stop.changed() => return,
                Some(m) = self.cmd.next() => ("cmd", attitude_command(&m)),
                Some(t) = self.cmd_vel.next() => ("cmd_vel", twist_command(&t, &self.gains).map(|(c, _)| c)),
                else => return,
            };
            match command {
                Ok(c) => match self.sink.send(&c).await {
                    Ok(()) => self.stats.published(0),
                    Err(e) => {
                        self.stats.drop_frame("send_failed");
                        if let Some(held) = self.log.allow() {
                            r2r::log_warn!(&self.logger, "{what}: cannot send: {e} ({held} more held back)");
                        }
                    }
                },
                Err(e) => {
                    self.stats.drop_frame(reason(&e));
                    if let Some(held) = self.log.allow() {
                        r2r::log_warn!(
                            &self.logger,
                            "{what} rejected, nothing sent: {e} ({held} more held back)"
                        );
                    }
                }
            }
        }
    }
}
