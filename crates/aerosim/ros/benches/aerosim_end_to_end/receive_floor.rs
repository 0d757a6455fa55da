//! "Receive floor": the bridge's Kafka reading publishing nothing. The
//! bridge's settings read from the same parameters, its link and readers
//! opened by the bridge's own functions, every topic read together with
//! the same fetch waits on a thread as in the bridge, and each record
//! decoded as the bridge decodes it (the vehicle state, the flight display
//! and the clock into their types, the newest image of a batch out of its
//! envelope). What the bridge spends over DDS alone is at least this: DDS
//! alone publishes pre-built messages and reads no broker.

use std::hint::black_box;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;

use aerosim_link::{Closer, Fetched, TopicsReader};
use aerosim_proto::envelope::decode_envelope;
use aerosim_proto::image::decode_image;
use aerosim_proto::topics::{Stream, Topics};
use aerosim_proto::types::{JsonData, PrimaryFlightDisplayData, VehicleState};
use aerosim_ros::settings::Settings;
use bench_support::StoppedOnDrop;

const ROLE: &str = "--receive-floor";

/// This benchmark's executable as the receive floor, given the bridge's parameters.
pub fn start(bridge_parameters: &[String]) -> StoppedOnDrop {
    StoppedOnDrop(
        Command::new(std::env::current_exe().expect("the benchmark's own path"))
            .arg(ROLE)
            .arg("--ros-args")
            .args(bridge_parameters.iter().flat_map(|p| ["-p", p.as_str()]))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("this benchmark as the receive floor"),
    )
}

/// Whether this process is the receive floor.
pub fn is_the_role() -> bool {
    std::env::args().any(|a| a == ROLE)
}

/// What a record of each topic is decoded as.
#[derive(Clone, Copy)]
enum Kind {
    State,
    Display,
    Clock,
    Camera,
}

pub fn run() {
    let ctx = r2r::Context::create().expect("a ROS context");
    let node = r2r::Node::create(ctx, "aerosim_receive_floor", "").expect("a node");
    let s = Settings::from_node(&node).expect("the bridge's parameters");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let _in_runtime = runtime.enter();
    let link = aerosim_ros::link(&s, "aerosim_receive_floor");
    let topics = Topics::new(&s.topic_prefix);
    let mut read: Vec<(String, Kind)> = Vec::new();
    for actor in &s.actors {
        read.push((topics.actor(actor, Stream::VehicleState), Kind::State));
        read.push((topics.actor(actor, Stream::PrimaryFlightDisplayData), Kind::Display));
    }
    if s.use_sim_time {
        read.push((topics.clock(), Kind::Clock));
    }
    read.extend(s.cameras.iter().map(|(topic, _)| (topic.clone(), Kind::Camera)));
    let readers = read
        .iter()
        .map(|(topic, _)| aerosim_ros::reader(&s, &link, topic))
        .collect();
    let mut reader = TopicsReader::new(readers, Closer::default())
        .expect("the topics reader")
        .idle_fetch_wait_up_to(s.fetch_wait_max);
    let stop = ros_common::lifecycle::stop_flag_at_signal();
    while !stop.load(Ordering::Relaxed) {
        for (i, result) in reader.read_round() {
            if let Ok(records) = result {
                decode(read[i].1, &records, s.max_record_bytes);
            }
        }
    }
}

fn decode(kind: Kind, records: &[Fetched], max_record_bytes: usize) {
    match kind {
        Kind::State => records.iter().for_each(|r| {
            black_box(decode_envelope::<VehicleState>(&r.value, max_record_bytes).ok());
        }),
        Kind::Display => records.iter().for_each(|r| {
            black_box(decode_envelope::<PrimaryFlightDisplayData>(&r.value, max_record_bytes).ok());
        }),
        Kind::Clock => records.iter().for_each(|r| {
            black_box(decode_envelope::<JsonData>(&r.value, max_record_bytes).ok());
        }),
        Kind::Camera => {
            if let Some(newest) = records.iter().rposition(aerosim_ros::camera::is_image) {
                black_box(decode_image(&records[newest].value, aerosim_ros::camera::MAX_PIXELS * 4).ok());
            }
        }
    }
}
