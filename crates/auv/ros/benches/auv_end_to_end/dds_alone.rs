//! "DDS alone": no simulator and no ZeroMQ, this executable publishing what
//! the bridge publishes for the subscribed streams (each AUV's two
//! compressed images at 30 Hz, its pose at 100 Hz) from messages built
//! before the run, with the bridge's QoS. Each image carries the emulator's
//! sequence-number comment (written into a copy, as the emulator does) and
//! each pose the time it is published at, as the bridge stamps on arrival,
//! so that the benchmark matches them as it matches the bridge's; the send
//! log is in the emulator's format. The floor no republisher can beat.

use std::path::Path;

use auv_proto::image::with_comment;
use auv_sim::dynamics::World;
use auv_sim::render::Renderer;
use r2r::geometry_msgs::msg::PoseStamped;
use r2r::sensor_msgs::msg::CompressedImage;

use super::{AUV_IDS, IMAGE_HZ, TELEMETRY_HZ};

fn stamp(t: f64) -> r2r::builtin_interfaces::msg::Time {
    let (sec, nanosec) = bench_support::ros_time(t);
    r2r::builtin_interfaces::msg::Time { sec, nanosec }
}

pub fn run(namespace: &str, log: &Path) {
    let ctx = r2r::Context::create().unwrap();
    let mut node = r2r::Node::create(ctx, "auv_bench_dds_alone", namespace).unwrap();
    let qos = ros_common::qos::sensor_publisher(ros_common::qos::DEFAULT_SENSOR_DEPTH);
    let world = World::new(&AUV_IDS);
    let mut renderer = Renderer::new(1280, 720, 80).unwrap();
    let names: Vec<String> = AUV_IDS
        .iter()
        .flat_map(|id| [format!("images:{id}"), format!("telemetry:{id}")])
        .collect();
    let mut streams = Vec::new();
    for (i, auv) in world.auvs.iter().enumerate() {
        let id = auv.id;
        let frames = [
            ("front", renderer.front(auv).unwrap()),
            ("bottom", renderer.bottom(auv).unwrap()),
        ];
        let cameras: Vec<_> = frames
            .into_iter()
            .map(|(camera, jpeg)| {
                let publisher = node
                    .create_publisher::<CompressedImage>(&format!("auv{id}/{camera}/image_raw/compressed"), qos.clone())
                    .unwrap();
                let mut message = CompressedImage {
                    format: "jpeg".into(),
                    ..Default::default()
                };
                message.header.frame_id = format!("auv/auv{id}/{camera}_camera_optical");
                (camera, jpeg, publisher, message)
            })
            .collect();
        let mut cameras = cameras;
        streams.push(bench_support::PacedStream {
            name: &names[2 * i],
            hz: IMAGE_HZ,
            publish: Box::new(move |t| {
                let seq = ((t - 1.0) * IMAGE_HZ).round() as u64 + 1;
                cameras.iter_mut().all(|(camera, jpeg, publisher, message)| {
                    message.header.stamp = stamp(bench_support::wall());
                    message.data = with_comment(jpeg, format!("auv_sim auv={id} seq={seq} camera={camera}").as_bytes());
                    publisher.publish(message).is_ok()
                })
            }),
        });
        let pose_publisher = node
            .create_publisher::<PoseStamped>(&format!("auv{id}/pose"), qos.clone())
            .unwrap();
        let mut pose = PoseStamped::default();
        pose.header.frame_id = "auv/map".into();
        streams.push(bench_support::PacedStream {
            name: &names[2 * i + 1],
            hz: TELEMETRY_HZ,
            publish: Box::new(move |_| {
                pose.header.stamp = stamp(bench_support::wall());
                pose_publisher.publish(&pose).is_ok()
            }),
        });
    }
    let stop = ros_common::lifecycle::stop_flag_at_signal();
    let sent = bench_support::publish_paced(&mut streams, || stop.load(std::sync::atomic::Ordering::Relaxed));
    // In auv_sim's format: "<images|telemetry> <auv> <seq> <wall>".
    let lines: Vec<String> = sent
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (stream, auv) = f.next()?.split_once(':')?;
            let t: f64 = f.next()?.parse().ok()?;
            let hz = if stream == "images" { IMAGE_HZ } else { TELEMETRY_HZ };
            let seq = ((t - 1.0) * hz).round() as u64 + 1;
            Some(format!("{stream} {auv} {seq} {}", f.next()?))
        })
        .collect();
    std::fs::write(log, lines.join("\n") + "\n").unwrap();
}
