//! Commands: per actor `flight_control_command`, `autopilot_command`
//! (messages of this package) and `cmd_vel` in; AeroSim envelopes out on the
//! actor's Kafka topics, through the shared command path
//! (`ros_common::command`: stamp rule, latest only, nothing older than
//! `cmd_timeout` leaves). A command is taken when the broker acknowledged
//! it. AeroSim latches the last command, so the neutral is the failsafe:
//! flight-control commands stop and one autopilot command holds the
//! altitude, heading and airspeed of the last vehicle state.

use std::sync::Arc;
use std::time::Duration;

use aerosim_link::{now_ms, Link, Writer};
use aerosim_proto::envelope::{encode_envelope, TimeStamp};
use aerosim_proto::types::{AutopilotCommand, FlightControlCommand};
use futures::stream::{BoxStream, SelectAll};
use futures::StreamExt;
use r2r::geometry_msgs::msg::Twist;
use r2r::Node;
use ros_common::command::{CommandInbox, CommandTransport, Offer};
use ros_common::lifecycle::StopSignal;
use ros_common::time::{from_ros_time, TimeBase};
use tokio::runtime::Runtime;

use crate::convert::{self, CommandError};
use crate::settings::{Failsafe, TwistGains};
use crate::telemetry::LastStates;

/// How long one offer may wait for the broker's acknowledgement.
const ACK_TIMEOUT: Duration = Duration::from_millis(250);
/// Commands are small; a flight plan is text of a few kilobytes.
const MAX_COMMAND_BYTES: usize = 1 << 20;

#[derive(Debug, Clone)]
pub enum AircraftCommand {
    FlightControl(FlightControlCommand),
    Autopilot(AutopilotCommand),
    /// The failsafe: an autopilot command from the last vehicle state.
    Hold,
    /// `failsafe: none`: nothing to send.
    Nothing,
}

struct ActorTopics {
    flight_control: Writer,
    autopilot: Writer,
}

/// The Kafka side of the command path. It has a runtime and a broker
/// connection of its own: the neutral at the stop is sent after the
/// bridge's runtime has shut down, and telemetry never delays a command.
pub struct KafkaCommands {
    runtime: Runtime,
    actors: Vec<ActorTopics>,
    last_states: LastStates,
    failsafe: Failsafe,
    time: Arc<TimeBase>,
}

impl std::fmt::Debug for KafkaCommands {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaCommands")
            .field("failsafe", &self.failsafe)
            .finish_non_exhaustive()
    }
}

impl KafkaCommands {
    /// `topics[i]`: actor `i`'s flight-control and autopilot topics.
    pub fn new(
        bootstrap_servers: &str,
        topics: &[(String, String)],
        last_states: LastStates,
        failsafe: Failsafe,
        time: Arc<TimeBase>,
    ) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("kafka_commands")
            .enable_all()
            .build()
            .map_err(|e| format!("the command runtime: {e}"))?;
        let link = Link::new(bootstrap_servers, "aerosim_bridge_commands", MAX_COMMAND_BYTES);
        Ok(Self {
            runtime,
            actors: topics
                .iter()
                .map(|(fc, ap)| ActorTopics {
                    flight_control: link.writer(fc),
                    autopilot: link.writer(ap),
                })
                .collect(),
            last_states,
            failsafe,
            time,
        })
    }

    fn send(&self, writer: &Writer, payload: Vec<u8>) -> Offer {
        let sent = self
            .runtime
            .block_on(async { tokio::time::timeout(ACK_TIMEOUT, writer.send(payload, now_ms())).await });
        match sent {
            Ok(Ok(_)) => Offer::Taken,
            Ok(Err(e)) => Offer::Busy(e.reason),
            Err(_) => Offer::Busy("no_acknowledgement"),
        }
    }

    fn envelope<T: aerosim_proto::AeroSimType + serde::Serialize>(&self, topic: &str, data: &T) -> Vec<u8> {
        let sim = match self.time.uses_sim_time() {
            true => self
                .time
                .now_seconds()
                .map_or(TimeStamp::UNSET, TimeStamp::from_seconds),
            false => TimeStamp::UNSET,
        };
        encode_envelope(topic, data, sim, TimeStamp::from_seconds(ros_common::time::wall_now()))
    }
}

impl CommandTransport for KafkaCommands {
    type Command = AircraftCommand;

    fn neutral(&self, _: usize) -> AircraftCommand {
        match self.failsafe {
            Failsafe::Hold => AircraftCommand::Hold,
            Failsafe::None => AircraftCommand::Nothing,
        }
    }

    fn offer(&mut self, actor: usize, command: &AircraftCommand) -> Offer {
        let Some(topics) = self.actors.get(actor) else {
            return Offer::Taken;
        };
        match command {
            AircraftCommand::FlightControl(c) => {
                let payload = self.envelope(topics.flight_control.topic(), c);
                self.send(&topics.flight_control, payload)
            }
            AircraftCommand::Autopilot(c) => {
                let payload = self.envelope(topics.autopilot.topic(), c);
                self.send(&topics.autopilot, payload)
            }
            AircraftCommand::Hold => {
                let state = self.last_states.lock().unwrap_or_else(|p| p.into_inner())[actor];
                match state {
                    Some(s) => {
                        let payload = self.envelope(topics.autopilot.topic(), &convert::hold(&s));
                        self.send(&topics.autopilot, payload)
                    }
                    // Nothing to hold yet: offered again until a state comes.
                    None => Offer::Busy("no_vehicle_state"),
                }
            }
            AircraftCommand::Nothing => Offer::Taken,
        }
    }
}

enum Incoming {
    FlightControl(usize, r2r::rflysim_bridge::msg::FlightControlCommand),
    Autopilot(usize, r2r::rflysim_bridge::msg::AutopilotCommand),
    Twist(usize, Twist),
}

/// Every actor's command subscriptions, feeding the command path.
#[allow(missing_debug_implementations)] // holds subscription streams, which are not Debug
pub struct CommandInputs {
    incoming: SelectAll<BoxStream<'static, Incoming>>,
    inbox: CommandInbox<AircraftCommand>,
    gains: TwistGains,
    time: Arc<TimeBase>,
}

impl CommandInputs {
    pub fn new(
        node: &mut Node,
        actors: &[String],
        inbox: CommandInbox<AircraftCommand>,
        gains: TwistGains,
        time: Arc<TimeBase>,
    ) -> Result<Self, String> {
        let qos = ros_common::qos::commands();
        let mut incoming = SelectAll::new();
        for (i, actor) in actors.iter().enumerate() {
            let topic = |t: &str| format!("{actor}/{t}");
            let e = |t: &str, err: r2r::Error| format!("{actor}/{t}: {err}");
            incoming.push(
                node.subscribe::<r2r::rflysim_bridge::msg::FlightControlCommand>(
                    &topic("flight_control_command"),
                    qos.clone(),
                )
                .map_err(|x| e("flight_control_command", x))?
                .map(move |m| Incoming::FlightControl(i, m))
                .boxed(),
            );
            incoming.push(
                node.subscribe::<r2r::rflysim_bridge::msg::AutopilotCommand>(&topic("autopilot_command"), qos.clone())
                    .map_err(|x| e("autopilot_command", x))?
                    .map(move |m| Incoming::Autopilot(i, m))
                    .boxed(),
            );
            incoming.push(
                node.subscribe::<Twist>(&topic("cmd_vel"), qos.clone())
                    .map_err(|x| e("cmd_vel", x))?
                    .map(move |m| Incoming::Twist(i, m))
                    .boxed(),
            );
        }
        Ok(Self {
            incoming,
            inbox,
            gains,
            time,
        })
    }

    pub async fn run(mut self, mut stop: StopSignal) {
        loop {
            let incoming = tokio::select! {
                _ = stop.changed() => return,
                Some(m) = self.incoming.next() => m,
                else => return,
            };
            let (actor, command, stamp): (usize, Result<AircraftCommand, CommandError>, f64) = match incoming {
                Incoming::FlightControl(a, m) => (
                    a,
                    convert::flight_control(&m).map(AircraftCommand::FlightControl),
                    from_ros_time(&m.header.stamp),
                ),
                Incoming::Autopilot(a, m) => (
                    a,
                    convert::autopilot(&m).map(AircraftCommand::Autopilot),
                    from_ros_time(&m.header.stamp),
                ),
                // cmd_vel has no stamp: fresh at receipt.
                Incoming::Twist(a, t) => (
                    a,
                    convert::twist_to_flight_control(&t, &self.gains).map(AircraftCommand::FlightControl),
                    0.0,
                ),
            };
            match command {
                Ok(c) => {
                    let now = self.time.now_seconds().unwrap_or(stamp);
                    self.inbox.submit(actor, c, stamp, now, true);
                }
                Err(e) => self.inbox.refuse(actor, e.reason(), &e.to_string()),
            }
        }
    }
}
