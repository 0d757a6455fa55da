//! Commands: per actor `flight_control_command`, `autopilot_command`
//! (messages of this package) and `cmd_vel` in; AeroSim envelopes out on the
//! actor's Kafka topics, through the shared command path
//! (`ros_common::command`: stamp rule, latest only, nothing older than
//! `cmd_timeout_s` leaves). Each send runs on its own task and counts once the
//! broker acknowledged it within `ack_timeout_s`; actors never wait on each
//! other, and a send that began is never sent again. Each topic's records go
//! over one connection, in the order their sends began, so the failsafe at
//! the stop goes at once, behind a command still waiting for its answer.
//! AeroSim latches the last command, so the neutral is the failsafe: a
//! flight-control command with centred sticks (once any flight-control
//! command went out) and one autopilot command holding the altitude,
//! heading and airspeed of a fresh vehicle state (or, without one, the
//! attitude it has).

use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

use aerosim_link::{now_ms, DetachedRuntime, Link, LinkError, Writer};
use aerosim_proto::envelope::{encode_envelope, TimeStamp};
use aerosim_proto::types::{AutopilotCommand, FlightControlCommand};
use futures::stream::{BoxStream, SelectAll};
use futures::StreamExt;
use r2r::geometry_msgs::msg::Twist;
use r2r::Node;
use ros_common::command::{CommandInbox, CommandTransport, Delivery, Offer};
use ros_common::lifecycle::StopSignal;
use ros_common::time::{from_ros_time, TimeBase};
use tokio::sync::oneshot;

use crate::convert::{self, CommandError, TwistGains};
use crate::settings::Failsafe;
use crate::telemetry::LastStates;

/// Commands are small; a flight plan is text of a few kilobytes.
const MAX_COMMAND_BYTES: usize = 1 << 20;
/// How often the command connection is checked, and made again when gone.
const KEEP_WARM: Duration = Duration::from_millis(500);

#[derive(Debug, Clone)]
pub enum AircraftCommand {
    FlightControl(FlightControlCommand),
    Autopilot(AutopilotCommand),
    /// The failsafe (see the module's doc).
    Hold,
    /// `failsafe: none`: nothing to send.
    Nothing,
}

/// One actor's command topics, and its last flight-control command.
struct ActorLink {
    flight_control: Arc<Writer>,
    autopilot: Arc<Writer>,
    /// The last flight-control command that went out. AeroSim's flight
    /// controller keeps it whatever comes on the autopilot's topic (in its
    /// flight-control configurations nothing reads that topic), so every
    /// hold centres it.
    stick: Option<FlightControlCommand>,
    /// Resolves once this actor's last send has reported its outcome: the
    /// next reports after it, so that outcomes come in the order the sends began.
    reported: Option<oneshot::Receiver<()>>,
}

/// How an actor's send ended.
type Outcome = (usize, Delivery);

/// What the failsafe and the command records are built from.
#[derive(Debug, Clone)]
pub struct CommandSettings {
    pub failsafe: Failsafe,
    /// The longest the broker may take to acknowledge a command.
    pub ack_timeout: Duration,
    /// A vehicle state older than this is not held (the controller's own timeout).
    pub state_max_age: Duration,
}

/// The Kafka side of the command path. It has a runtime and a broker
/// connection of its own: the neutral at the stop is sent after the
/// bridge's runtime has shut down, and telemetry never delays a command.
/// Its runtime is left behind at the stop, not waited for: a broker's host
/// name being looked up must not delay the exit.
pub struct KafkaCommands {
    runtime: DetachedRuntime,
    actors: Vec<ActorLink>,
    last_states: LastStates,
    settings: CommandSettings,
    time: Arc<TimeBase>,
    /// Each send's outcome, by actor: the sending tasks hold the sender.
    ended: (Sender<Outcome>, Receiver<Outcome>),
    logger: String,
}

impl std::fmt::Debug for KafkaCommands {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaCommands")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl KafkaCommands {
    /// `topics[i]`: actor `i`'s flight-control and autopilot topics. The
    /// connection is made at once and kept (made again after a broker
    /// restart), so that the first command, or the hold at the stop, does
    /// not wait for it.
    pub fn new(
        bootstrap_servers: &str,
        topics: &[(String, String)],
        last_states: LastStates,
        settings: CommandSettings,
        time: Arc<TimeBase>,
        logger: &str,
    ) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("kafka_commands")
            .enable_all()
            .build()
            .map_err(|e| format!("the command runtime: {e}"))?;
        let runtime = DetachedRuntime::new(runtime);
        let link = Link::new(bootstrap_servers, "aerosim_bridge_commands", MAX_COMMAND_BYTES);
        let writer = |topic: &str| Arc::new(link.writer(topic).acknowledged_within(settings.ack_timeout));
        let actors: Vec<ActorLink> = topics
            .iter()
            .map(|(fc, ap)| ActorLink {
                flight_control: writer(fc),
                autopilot: writer(ap),
                stick: None,
                reported: None,
            })
            .collect();
        let writers: Vec<Arc<Writer>> = actors
            .iter()
            .flat_map(|a| [a.flight_control.clone(), a.autopilot.clone()])
            .collect();
        runtime.spawn(keep_warm(writers, logger.to_string()));
        Ok(Self {
            runtime,
            actors,
            last_states,
            settings,
            time,
            ended: std::sync::mpsc::channel(),
            logger: logger.to_string(),
        })
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

    /// The autopilot's hold for `actor`: from its last state while that is
    /// fresh and gives setpoints in range, else an attitude hold.
    fn hold_for(&self, actor: usize) -> AutopilotCommand {
        let state = self.last_states.lock().unwrap_or_else(|p| p.into_inner())[actor];
        let why_not = match state {
            Some((s, at)) if at.elapsed() <= self.settings.state_max_age => match convert::hold(&s) {
                Ok(h) => return h,
                Err(e) => format!("its last vehicle state gives {e}"),
            },
            Some((_, at)) => format!("its last vehicle state is {:.1} s old", at.elapsed().as_secs_f64()),
            None => "no vehicle state has come".to_string(),
        };
        r2r::log_warn!(
            &self.logger,
            "{}: the hold keeps the attitude the aircraft has, not its altitude, heading and airspeed: {why_not}",
            self.actors[actor].autopilot.topic()
        );
        convert::attitude_hold()
    }

    /// Sends `records` together on a task of their own, each written at
    /// once behind the records still under way on its topic; the outcome
    /// comes through `ended` after the outcomes of the actor's earlier sends:
    /// delivered when the broker acknowledged every record within
    /// `ack_timeout_s` (the writers' one timeout: a record not acknowledged
    /// keeps its connection, and what follows it is appended after it).
    fn send(&mut self, actor: usize, records: Vec<(Arc<Writer>, Vec<u8>)>) -> Offer {
        let done = self.ended.0.clone();
        let (reported, next) = oneshot::channel();
        let earlier = self.actors[actor].reported.replace(next);
        self.runtime.spawn(async move {
            let sends = records.into_iter().map(|(writer, payload)| async move {
                match writer.send(payload, now_ms()).await {
                    Ok(_) => Ok(()),
                    Err(LinkError { reason: "timeout", .. }) => Err("no_acknowledgement"),
                    Err(LinkError { reason, .. }) => Err(reason),
                }
            });
            let outcome = match futures::future::join_all(sends).await.into_iter().find_map(Result::err) {
                None => Delivery::Delivered,
                Some(reason) => Delivery::Failed(reason),
            };
            if let Some(earlier) = earlier {
                let _ = earlier.await;
            }
            let _ = done.send((actor, outcome));
            let _ = reported.send(());
        });
        Offer::Sending
    }
}

/// Connects every writer at once, and again whenever one lost its
/// connection; says so when the broker cannot be reached.
async fn keep_warm(writers: Vec<Arc<Writer>>, logger: String) {
    let mut was_cold = false;
    loop {
        let mut cold = None;
        for w in &writers {
            if let Err(e) = w.warm().await {
                cold = Some((w.topic().to_string(), e));
            }
        }
        match (&cold, was_cold) {
            (Some((topic, e)), false) => {
                r2r::log_warn!(
                    &logger,
                    "commands: no connection to the broker for {topic} ({e}); trying again"
                )
            }
            (None, true) => r2r::log_info!(&logger, "commands: connected to the broker"),
            _ => {}
        }
        was_cold = cold.is_some();
        tokio::time::sleep(KEEP_WARM).await;
    }
}

impl CommandTransport for KafkaCommands {
    type Command = AircraftCommand;

    fn neutral(&self, _: usize) -> AircraftCommand {
        match self.settings.failsafe {
            Failsafe::Hold => AircraftCommand::Hold,
            Failsafe::None => AircraftCommand::Nothing,
        }
    }

    fn offer(&mut self, actor: usize, command: &AircraftCommand) -> Offer {
        let Some(link) = self.actors.get(actor) else {
            return Offer::Taken;
        };
        let (fc, ap) = (link.flight_control.clone(), link.autopilot.clone());
        let records = match command {
            AircraftCommand::FlightControl(c) => {
                self.actors[actor].stick = Some(c.clone());
                vec![(fc.clone(), self.envelope(fc.topic(), c))]
            }
            AircraftCommand::Autopilot(c) => vec![(ap.clone(), self.envelope(ap.topic(), c))],
            AircraftCommand::Hold => {
                let mut records = vec![(ap.clone(), self.envelope(ap.topic(), &self.hold_for(actor)))];
                if let Some(stick) = &link.stick {
                    records.push((fc.clone(), self.envelope(fc.topic(), &convert::centred(stick))));
                }
                records
            }
            AircraftCommand::Nothing => return Offer::Taken,
        };
        self.send(actor, records)
    }

    fn outcomes(&mut self, each: &mut dyn FnMut(usize, Delivery)) {
        while let Ok((actor, delivery)) = self.ended.1.try_recv() {
            each(actor, delivery);
        }
    }

    fn sends_in_order(&self) -> bool {
        true
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
                Ok(c) => self.inbox.submit(actor, c, stamp, self.time.now_seconds(), true),
                Err(e) => self.inbox.refuse(actor, e.reason(), &e.to_string()),
            }
        }
    }
}
