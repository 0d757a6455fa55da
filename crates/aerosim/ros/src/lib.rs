//! The `aerosim_bridge` node: AeroSim on ROS 2. AeroSim's components talk
//! over Kafka (JSON envelopes; bincode camera images); this node reads each
//! actor's vehicle state and flight display, the renderer's cameras and the
//! clock, publishes them as typed topics, and sends ROS commands back as
//! AeroSim's flight-control and autopilot commands. The wire is
//! `aerosim_proto`'s, the broker side `aerosim_link`'s, the ROS plumbing
//! `ros_common`'s; this crate maps one onto the other.

pub mod camera;
pub mod commands;
pub mod convert;
pub mod settings;
pub mod telemetry;

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aerosim_link::{Closer, Fetched, Link};
use aerosim_proto::topics::{Stream as Topic, Topics};
use ros_common::bridge::BridgeProcess;
use ros_common::diagnostics::{Simulator, StatusId};
use ros_common::latest::Latest;
use ros_common::stats::StreamStats;
use ros_common::tf::{optical_rotation, Mount};
use ros_common::time::TimeBase;

use crate::camera::{superseded, Camera};
use crate::commands::{CommandInputs, CommandSettings, KafkaCommands};
use crate::convert::ActorFrames;
use crate::settings::Settings;
use crate::telemetry::{read_until_stopped, DisplayOutputs, LastStates, Reading, Shared, Stream, VehicleOutputs};

pub const NODE_NAME: &str = "aerosim_bridge";
/// Relative topics land here unless the launch or `__ns` says otherwise.
pub const DEFAULT_NAMESPACE: &str = "aerosim";
/// Room for the envelope around the largest record a fetch may bring.
const FETCH_SLACK: usize = 64 << 10;

pub fn main() -> ExitCode {
    ros_common::lifecycle::exit_code(NODE_NAME, run())
}

/// What every start-up step reads from.
struct Plan {
    s: Settings,
    topics: Topics,
    link: Link,
    qos: r2r::QosProfile,
    shared: Shared,
}

impl Plan {
    fn reader(&self, topic: &str) -> aerosim_link::Reader {
        reader(&self.s, &self.link, topic)
    }
}

/// The Kafka link of settings `s`, as the bridge opens it.
pub fn link(s: &Settings, client_id: &str) -> Link {
    Link::new(&s.bootstrap_servers, client_id, s.max_record_bytes + FETCH_SLACK)
}

/// The reader of `topic` on `link`, as the bridge opens it with settings `s`.
pub fn reader(s: &Settings, link: &Link, topic: &str) -> aerosim_link::Reader {
    let fetch_bytes = i32::try_from(s.max_record_bytes + FETCH_SLACK).unwrap_or(i32::MAX);
    link.reader(topic, s.start_from, s.fetch_wait, fetch_bytes)
}

fn run() -> Result<(), String> {
    let mut bridge = BridgeProcess::start(NODE_NAME, DEFAULT_NAMESPACE)?;
    let s = Settings::from_node(&bridge.node)?;
    let handle = bridge.handle();
    let _in_runtime = handle.enter();
    let (time, clock) = bridge.time_base(s.use_sim_time, s.stamp_source)?;
    bridge.watch_time_base(broker_wide("time base"), time.clone());
    let plan = Plan {
        topics: Topics::new(&s.topic_prefix),
        link: link(&s, NODE_NAME),
        qos: ros_common::qos::sensor_publisher(s.qos_depth),
        shared: Shared {
            time: time.clone(),
            clock,
            logger: bridge.logger.clone(),
            max_record_bytes: s.max_record_bytes,
        },
        s,
    };
    let last_states: LastStates = Arc::new(Mutex::new(vec![None; plan.s.actors.len()]));
    let mut readings = Vec::new();
    let mounts = actors(&mut bridge, &plan, &last_states, &mut readings)?;
    if plan.s.use_sim_time {
        let ticks = Stream::new("clock".into(), &plan.shared).moving_the_clock();
        let r = plan.reader(&plan.topics.clock());
        readings.push(watched(
            &mut bridge,
            r,
            ticks,
            broker_wide("clock"),
            telemetry::clock_ticks,
        ));
    }
    cameras(&mut bridge, &plan, &mounts[0], &mut readings)?;
    // The topics reader blocks on its socket for each fetch: a thread of its
    // own, whose sockets are shut down at the stop.
    let (logger, mut stop) = (bridge.logger.clone(), bridge.stop_signal());
    let closer = Closer::default();
    let at_stop = closer.clone();
    // Closed at the stop by a thread of its own, not a task: the runtime's
    // tasks may be dropped at the stop before they run.
    bridge.thread("kafka_reader_stop", move || {
        let _ = futures::executor::block_on(stop.changed());
        at_stop.close();
    })?;
    let (stop, fetch_wait_max) = (bridge.stop_signal(), plan.s.fetch_wait_max);
    bridge.thread("kafka_reader", move || {
        read_until_stopped(readings, fetch_wait_max, closer, logger, stop)
    })?;
    commands(&mut bridge, &plan, last_states, time)?;
    if plan.s.publish_tf {
        camera_mounts(&mut bridge, plan.s.use_sim_time, mounts)?;
    }
    let s = &plan.s;
    r2r::log_info!(
        &bridge.logger,
        "AeroSim on Kafka at {} ({} from the {:?} offset): actors {}; cameras from {}; commands with failsafe {:?} after {:?}",
        plan.link.bootstrap(),
        plan.topics.prefix(),
        s.start_from,
        s.actors.join(", "),
        s.cameras.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>().join(", "),
        s.failsafe,
        s.cmd_timeout
    );
    bridge.run(s.diagnostics_period)
}

/// Each actor's vehicle state (odometry, TF, IMU, GNSS) and flight display;
/// its frames.
fn actors(
    bridge: &mut BridgeProcess,
    plan: &Plan,
    last_states: &LastStates,
    readings: &mut Vec<Reading>,
) -> Result<Vec<ActorFrames>, String> {
    let s = &plan.s;
    let mut mounts = Vec::new();
    for (i, actor) in s.actors.iter().enumerate() {
        let frames = ActorFrames::new(&s.world_frame, &s.frame_prefix, actor);
        let outputs = VehicleOutputs::new(
            &mut bridge.node,
            actor,
            frames.clone(),
            &plan.qos,
            s.publish_tf,
            s.covariances,
            s.origin,
        )?;
        let state = Stream::new(format!("{actor} vehicle_state"), &plan.shared);
        let r = plan.reader(&plan.topics.actor(actor, Topic::VehicleState));
        let each = |state| telemetry::vehicle_states(state, outputs, last_states.clone(), i);
        readings.push(watched(bridge, r, state, of_actor(actor, "vehicle_state"), each));
        let outputs = DisplayOutputs {
            display: publisher(&mut bridge.node, format!("{actor}/flight_display"), &plan.qos)?,
            marker: publisher(&mut bridge.node, format!("{actor}/flight_display/marker"), &plan.qos)?,
            base_link: frames.base_link.clone(),
        };
        let display = Stream::new(format!("{actor} flight_display"), &plan.shared);
        let r = plan.reader(&plan.topics.actor(actor, Topic::PrimaryFlightDisplayData));
        let each = |display| telemetry::flight_displays(display, outputs);
        readings.push(watched(bridge, r, display, of_actor(actor, "flight_display"), each));
        mounts.push(frames);
    }
    Ok(mounts)
}

/// The renderer's images, each camera on a thread of its own (a decode takes
/// milliseconds) that the read loop hands the newest records; the cameras
/// are mounted on the first actor.
fn cameras(
    bridge: &mut BridgeProcess,
    plan: &Plan,
    mount: &ActorFrames,
    readings: &mut Vec<Reading>,
) -> Result<(), String> {
    for (topic, name) in &plan.s.cameras {
        let stream = Stream::new(format!("{RENDERER} {name}"), &plan.shared);
        let stats = stream.stats.clone();
        bridge.watch(
            StatusId::of(NODE_NAME, Simulator::AeroSim, RENDERER, name),
            stats.clone(),
        );
        let mut camera = Camera::new(
            &mut bridge.node,
            name,
            stream,
            mount.camera_optical.clone(),
            &plan.qos,
            plan.s.camera_fov_deg,
            plan.s.decode_images_always,
        )?;
        let newest: Arc<Latest<Vec<Fetched>>> = Arc::default();
        let (taken, stop) = (newest.clone(), bridge.stop_signal());
        bridge.thread(&format!("camera {name}"), move || {
            while !*stop.borrow() {
                if let Some(batch) = taken.take(Duration::from_millis(100)) {
                    camera.on_records(batch);
                }
            }
        })?;
        let counted = stats.clone();
        readings.push(Reading {
            reader: plan.reader(topic),
            stats,
            each: Box::new(move |batch| {
                if let Some(missed) = newest.put(batch) {
                    superseded(&counted, &missed);
                }
            }),
        });
    }
    Ok(())
}

/// The command path: ROS commands in, AeroSim records out, the failsafe.
fn commands(
    bridge: &mut BridgeProcess,
    plan: &Plan,
    last_states: LastStates,
    time: Arc<TimeBase>,
) -> Result<(), String> {
    let s = &plan.s;
    let stats: Vec<Arc<StreamStats>> = s.actors.iter().map(|_| Arc::default()).collect();
    for (actor, stats) in s.actors.iter().zip(&stats) {
        bridge.watch(of_actor(actor, "commands"), stats.clone());
    }
    let topics: Vec<(String, String)> = s
        .actors
        .iter()
        .map(|a| {
            (
                plan.topics.actor(a, Topic::FlightControlCommand),
                plan.topics.actor(a, Topic::AutopilotCommand),
            )
        })
        .collect();
    let settings = CommandSettings {
        failsafe: s.failsafe,
        ack_timeout: s.ack_timeout,
        state_max_age: s.cmd_timeout,
    };
    let transport = KafkaCommands::new(
        &s.bootstrap_servers,
        &topics,
        last_states,
        settings,
        time.clone(),
        &bridge.logger,
    )?;
    let (inbox, sender) =
        ros_common::command::command_path(transport, s.cmd_timeout, s.actors.clone(), stats, &bridge.logger);
    let inputs = CommandInputs::new(&mut bridge.node, &s.actors, inbox, s.gains, time)?;
    bridge.handle().spawn(inputs.run(bridge.stop_signal()));
    bridge.command_sender(sender)
}

/// `aerosim/<actor>/base_link → aerosim/<actor>/camera_optical` on `/tf_static`.
fn camera_mounts(bridge: &mut BridgeProcess, use_sim_time: bool, mounts: Vec<ActorFrames>) -> Result<(), String> {
    let mounts: Vec<Mount> = mounts
        .iter()
        .map(|f| Mount::new(&f.base_link, &f.camera_optical, [0.0; 3], optical_rotation()))
        .collect();
    bridge.static_tf(use_sim_time, &mounts)
}

fn publisher<T: r2r::WrappedTypesupport>(
    node: &mut r2r::Node,
    topic: String,
    qos: &r2r::QosProfile,
) -> Result<r2r::Publisher<T>, String> {
    node.create_publisher(&topic, qos.clone())
        .map_err(|e| format!("{topic}: {e}"))
}

/// The device of the renderer's cameras in `/diagnostics` and the logs.
const RENDERER: &str = "renderer";

/// Actor `actor`'s `stream` in `/diagnostics`: `aerosim_bridge: <actor> <stream>`, `aerosim/<actor>`.
fn of_actor(actor: &str, stream: &str) -> StatusId {
    StatusId::of(NODE_NAME, Simulator::AeroSim, actor, stream)
}

/// A stream of the whole broker (its clock, the time base): `aerosim/broker`.
fn broker_wide(stream: &str) -> StatusId {
    StatusId::bridge_wide(NODE_NAME, Simulator::AeroSim, "broker", stream)
}

/// Watches `stream` in `/diagnostics` as `id`; its records go to what
/// `handler` makes of the stream.
fn watched<F: FnMut(Vec<Fetched>) + Send + 'static>(
    bridge: &mut BridgeProcess,
    reader: aerosim_link::Reader,
    stream: Stream,
    id: StatusId,
    handler: impl FnOnce(Stream) -> F,
) -> Reading {
    let stats = stream.stats.clone();
    bridge.watch(id, stats.clone());
    Reading {
        reader,
        stats,
        each: Box::new(handler(stream)),
    }
}
