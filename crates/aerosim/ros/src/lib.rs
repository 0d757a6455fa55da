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

use aerosim_link::Link;
use aerosim_proto::topics::{Stream as Topic, Topics};
use r2r::tf2_msgs::msg::TFMessage;
use ros_common::bridge::BridgeProcess;
use ros_common::stats::StreamStats;
use ros_common::time::{ClockPublisher, TimeBase};

use crate::camera::Camera;
use crate::commands::{CommandInputs, KafkaCommands};
use crate::convert::ActorFrames;
use crate::settings::Settings;
use crate::telemetry::{read_until_stopped, Shared, Stream, VehicleOutputs};

pub const NODE_NAME: &str = "aerosim_bridge";
/// Relative topics land here unless the launch or `__ns` says otherwise.
pub const DEFAULT_NAMESPACE: &str = "aerosim";
/// Room for the envelope around the largest record a fetch may bring.
const FETCH_SLACK: usize = 64 << 10;

pub fn main() -> ExitCode {
    ros_common::lifecycle::exit_code(NODE_NAME, run())
}

fn run() -> Result<(), String> {
    let mut bridge = BridgeProcess::start(NODE_NAME, DEFAULT_NAMESPACE)?;
    let logger = bridge.logger.clone();
    let s = Settings::from_node(&bridge.node)?;
    let handle = bridge.handle();
    let _in_runtime = handle.enter();
    let link = Link::new(&s.bootstrap_servers, NODE_NAME, s.max_record_bytes + FETCH_SLACK);
    let fetch_bytes = i32::try_from(s.max_record_bytes + FETCH_SLACK).unwrap_or(i32::MAX);
    let topics = Topics::new(&s.topic_prefix);
    let reader = |topic: &str| link.reader(topic, s.start_from, s.fetch_wait, fetch_bytes);
    let qos = ros_common::qos::sensor_publisher(s.qos_depth);
    let time = Arc::new(TimeBase::with_source(s.use_sim_time, s.stamp_source));
    let clock = match s.use_sim_time {
        true => Some(Arc::new(
            ClockPublisher::new(&mut bridge.node).map_err(|e| e.to_string())?,
        )),
        false => None,
    };
    let shared = Shared {
        time: time.clone(),
        clock,
        logger: logger.clone(),
        max_record_bytes: s.max_record_bytes,
    };
    let last_states = Arc::new(Mutex::new(vec![None; s.actors.len()]));
    let mut mounts = Vec::new();

    for (i, actor) in s.actors.iter().enumerate() {
        let frames = ActorFrames::new(&s.world_frame, &s.frame_prefix, actor);
        let state = Stream::new(format!("{actor}: vehicle_state"), &shared);
        let outputs = VehicleOutputs::new(
            &mut bridge.node,
            actor,
            frames.clone(),
            &qos,
            s.publish_tf,
            s.covariances,
            s.origin,
        )?;
        let r = reader(&topics.actor(actor, Topic::VehicleState));
        let each = |state| telemetry::vehicle_states(state, outputs, last_states.clone(), i);
        watch_and_read(&mut bridge, r, state, actor, each);
        let display = Stream::new(format!("{actor}: flight_display"), &shared);
        let publisher = bridge
            .node
            .create_publisher(&format!("{actor}/flight_display"), qos.clone())
            .map_err(|e| format!("{actor}/flight_display: {e}"))?;
        let r = reader(&topics.actor(actor, Topic::PrimaryFlightDisplayData));
        let base_link = frames.base_link.clone();
        let each = |display| telemetry::flight_displays(display, publisher, base_link);
        watch_and_read(&mut bridge, r, display, actor, each);
        mounts.push(frames);
    }
    if s.use_sim_time {
        let ticks = Stream::new("clock".into(), &shared);
        watch_and_read(
            &mut bridge,
            reader(&topics.clock()),
            ticks,
            "aerosim",
            telemetry::clock_ticks,
        );
    }
    // Rendered images: the first actor carries the cameras.
    for (topic, name) in &s.cameras {
        let stream = Stream::new(name.clone(), &shared);
        let stats = stream.stats.clone();
        bridge.watch(format!("{NODE_NAME}: {name}"), "aerosim_renderer".into(), stats.clone());
        let mut camera = Camera::new(
            &mut bridge.node,
            name,
            stream,
            mounts[0].camera_optical.clone(),
            &qos,
            s.camera_fov_deg,
            s.decode_images_always,
        )?;
        let images = reader(topic);
        let stop = bridge.stop_signal();
        let runtime = handle.clone();
        let log = logger.clone();
        bridge.thread(&format!("camera {name}"), move || {
            runtime.block_on(read_until_stopped(images, stats, log, stop, |batch| {
                camera.on_records(batch)
            }));
        })?;
    }

    let command_stats: Vec<Arc<StreamStats>> = s.actors.iter().map(|_| Arc::default()).collect();
    for (actor, stats) in s.actors.iter().zip(&command_stats) {
        bridge.watch(format!("{NODE_NAME}: {actor}: commands"), actor.clone(), stats.clone());
    }
    let command_topics: Vec<(String, String)> = s
        .actors
        .iter()
        .map(|a| {
            (
                topics.actor(a, Topic::FlightControlCommand),
                topics.actor(a, Topic::AutopilotCommand),
            )
        })
        .collect();
    let transport = KafkaCommands::new(
        &s.bootstrap_servers,
        &command_topics,
        last_states,
        s.failsafe,
        time.clone(),
    )?;
    let (inbox, sender) =
        ros_common::command::command_path(transport, s.cmd_timeout, s.actors.clone(), command_stats, &logger);
    let inputs = CommandInputs::new(&mut bridge.node, &s.actors, inbox, s.gains, time)?;
    handle.spawn(inputs.run(bridge.stop_signal()));
    bridge.command_sender(sender)?;

    if s.publish_tf {
        bridge.static_tf(s.use_sim_time, |stamp| TFMessage {
            transforms: mounts
                .iter()
                .map(|f| {
                    ros_common::tf::transform(
                        stamp.clone(),
                        &f.base_link,
                        &f.camera_optical,
                        [0.0; 3],
                        ros_common::tf::optical_rotation(),
                    )
                })
                .collect(),
        })?;
    }
    r2r::log_info!(
        &logger,
        "AeroSim on Kafka at {} ({} from the {:?} offset): actors {}; cameras from {}; commands with failsafe {:?} after {:?}",
        link.bootstrap(),
        topics.prefix(),
        s.start_from,
        s.actors.join(", "),
        s.cameras.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>().join(", "),
        s.failsafe,
        s.cmd_timeout
    );
    bridge.run(s.diagnostics_period)
}

/// Watches `stream` in `/diagnostics` and reads `reader` into what `handler`
/// makes of the stream, until the stop.
fn watch_and_read<F: FnMut(Vec<aerosim_link::Fetched>) + Send + 'static>(
    bridge: &mut BridgeProcess,
    reader: aerosim_link::Reader,
    stream: Stream,
    hardware_id: &str,
    handler: impl FnOnce(Stream) -> F,
) {
    let stats = stream.stats.clone();
    bridge.watch(
        format!("{NODE_NAME}: {}", stream.name),
        hardware_id.to_string(),
        stats.clone(),
    );
    let each = handler(stream);
    bridge.handle().spawn(read_until_stopped(
        reader,
        stats,
        bridge.logger.clone(),
        bridge.stop_signal(),
        each,
    ));
}
