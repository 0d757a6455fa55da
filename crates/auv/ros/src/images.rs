//! Both cameras of every AUV: one thread receives image messages and keeps
//! the newest per AUV; one thread per AUV publishes it (JPEG as received,
//! camera info, and the raw image while somebody subscribes), both cameras
//! with the stamp of their message's arrival.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use auv_proto::image::{Camera, ImageLimits, ImageMessage};
use image_codec::Encoding;
use r2r::builtin_interfaces::msg::Time;
use ros_common::camera::CameraPublisher;
use ros_common::lifecycle::StopSignal;
use ros_common::msgs::header;
use ros_common::stats::{RateLimitedLog, StreamStats};
use ros_common::time::{from_ros_time, to_ros_time, wall_now};

use crate::link::{first_byte, receive_all, stopping, Part};
use crate::names;
use ros_common::latest::Latest;

/// What the receiver hands to an AUV's publisher.
pub type Arrived = (ImageMessage<Part>, Time);

/// One AUV's image stream.
#[derive(Debug, Default)]
pub struct AuvImages {
    pub newest: Latest<Arrived>,
    pub stats: Arc<StreamStats>,
}

/// Bad input is counted on the stream of the AUV whose id the message starts
/// with (the SUB socket only lets the bridge's AUVs through).
pub fn receive(
    socket: zmq::Socket,
    auvs: HashMap<u8, Arc<AuvImages>>,
    limits: ImageLimits,
    logger: String,
    stop: StopSignal,
) {
    let mut warn = RateLimitedLog::new(Duration::from_secs(5));
    while !stopping(&stop) {
        receive_all(&socket, |parts| {
            let Some(auv) = first_byte(&parts).and_then(|id| auvs.get(&id)) else {
                return;
            };
            let bytes: usize = parts.iter().map(Part::len).sum();
            auv.stats
                .bytes_in
                .fetch_add(bytes as u64, std::sync::atomic::Ordering::Relaxed);
            match ImageMessage::parse(parts, &limits) {
                Ok(m) => {
                    if auv.newest.put((m, to_ros_time(wall_now()))).is_some() {
                        auv.stats.drop_frame("superseded");
                    }
                }
                Err(e) => {
                    auv.stats.drop_frame(e.kind());
                    if let Some(held) = warn.allow() {
                        r2r::log_warn!(&logger, "image message dropped: {e} ({held} more not shown)");
                    }
                }
            }
        });
    }
}

/// Publishes the newest image message of AUV `id` as it arrives.
pub fn publish(
    id: u8,
    auv: Arc<AuvImages>,
    mut cameras: [CameraPublisher; 2],
    fov_deg: f64,
    logger: String,
    stop: StopSignal,
) {
    let mut warn = RateLimitedLog::new(Duration::from_secs(5));
    while !stopping(&stop) {
        let Some((message, stamp)) = auv.newest.take(Duration::from_millis(100)) else {
            continue;
        };
        let ImageMessage { front, bottom, .. } = message;
        let mut ok = true;
        for ((camera, jpeg), publisher) in Camera::ALL.into_iter().zip([front, bottom]).zip(cameras.iter_mut()) {
            let h = header(stamp.clone(), &names::optical_frame(id, camera));
            if let Err(e) = publisher.publish_jpeg(jpeg.as_ref(), Encoding::Bgr8, fov_deg, h) {
                ok = false;
                auv.stats.drop_frame(e.reason());
                if let Some(held) = warn.allow() {
                    r2r::log_warn!(&logger, "auv{id} {} camera: {e} ({held} more not shown)", camera.name());
                }
            }
        }
        if ok {
            // Bytes were counted on arrival (what the simulator sent, bad input included).
            auv.stats.published(0);
            auv.stats.set_latency_ms((wall_now() - from_ros_time(&stamp)) * 1e3);
        }
    }
}
