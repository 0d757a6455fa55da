//! "Receive floor": the bridge's receive path publishing nothing. The
//! bridge's SUB readers (`auv_ros::images::subscriber`,
//! `auv_ros::telemetry::subscriber`), one thread per socket as in the
//! bridge, each message parsed as the bridge parses it (`auv_proto`: the
//! images into the buffers their `CompressedImage` would be built in,
//! handed back to the reader after; the telemetry into its fields), fed by
//! `auv_sim` at the benchmark's rates. What the bridge spends over DDS
//! alone is at least this: DDS alone publishes pre-built messages and
//! receives nothing.

use std::hint::black_box;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use auv_proto::image::{ImageLimits, ImageMessage};
use auv_proto::telemetry::Telemetry;
use auv_ros::zmtp::Subscriber;
use bench_support::StoppedOnDrop;

use super::{Ports, AUV_IDS};

const ROLE: &str = "--receive-floor";
/// The bridge's default `reconnect_interval_s`.
const RECONNECT: Duration = Duration::from_millis(100);

/// This benchmark's executable as the receive floor, on the simulator's image and telemetry ports.
pub fn start(ports: Ports) -> StoppedOnDrop {
    StoppedOnDrop(
        Command::new(std::env::current_exe().expect("the benchmark's own path"))
            .args([ROLE, &ports.image.to_string(), &ports.telemetry.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("this benchmark as the receive floor"),
    )
}

/// The image and telemetry ports when this process is the receive floor.
pub fn arguments() -> Option<(u16, u16)> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == ROLE)?;
    Some((args.get(i + 1)?.parse().ok()?, args.get(i + 2)?.parse().ok()?))
}

pub fn run(image_port: u16, telemetry_port: u16) {
    let stop = ros_common::lifecycle::stop_flag_at_signal();
    let limits = ImageLimits {
        max_jpeg_bytes: auv_proto::DEFAULT_MAX_JPEG_BYTES,
    };
    let images = auv_ros::images::subscriber("127.0.0.1", image_port, &AUV_IDS, limits.max_jpeg_bytes, RECONNECT);
    let telemetry = auv_ros::telemetry::subscriber("127.0.0.1", telemetry_port, &AUV_IDS, RECONNECT);
    let image_stop = stop.clone();
    let image_thread = std::thread::spawn(move || receive_images(images, limits, &image_stop));
    receive_telemetry(telemetry, &stop);
    let _ = image_thread.join();
}

fn receive_images(mut socket: Subscriber, limits: ImageLimits, stop: &Arc<AtomicBool>) {
    let mut spent = Vec::with_capacity(2 * AUV_IDS.len());
    while !stop.load(Ordering::Relaxed) {
        socket.receive_all(|parts| {
            if let Ok(ImageMessage { front, bottom, .. }) = ImageMessage::parse(parts, &limits) {
                spent.extend([front, bottom].map(|jpeg| black_box(jpeg.into_buffer()).0));
            }
        });
        for buf in spent.drain(..) {
            socket.recycle(buf);
        }
    }
}

fn receive_telemetry(mut socket: Subscriber, stop: &Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        socket.receive_all(|parts| {
            let _ = black_box(Telemetry::parse(&parts));
        });
    }
}
