//! Both cameras of every AUV: one thread receives the image messages and
//! publishes each AUV's newest where it received it (JPEG as received and
//! camera info), both cameras with the stamp of their message's arrival.
//! While somebody subscribes to a raw image (a decode takes milliseconds),
//! the newest message goes instead to a thread of the AUV's own, which
//! publishes all of it: a decode slower than the camera costs old messages
//! (`superseded`), never the receiving thread's pace.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, TryLockError};
use std::time::Duration;

use auv_proto::image::{Camera, ImageLimits, ImageMessage};
use image_codec::Encoding;
use r2r::builtin_interfaces::msg::Time;
use ros_common::camera::CameraPublisher;
use ros_common::latest::Latest;
use ros_common::lifecycle::StopSignal;
use ros_common::msgs::header;
use ros_common::stats::{RateLimitedLog, StreamStats};
use ros_common::time::{wall_now, ArrivalStamps};

use crate::link::{self, first_byte, stopping, Part};
use crate::zmtp::Subscriber;

/// What the receiver hands to an AUV's publisher: the message, its arrival
/// stamp, its place in the order of arrival and its arrival on the wall clock.
pub type Arrived = (ImageMessage<Part>, Time, u64, f64);

/// One AUV's image stream.
#[derive(Debug, Default)]
pub struct AuvImages {
    /// The newest message for the AUV's decoding thread.
    pub newest: Latest<Arrived>,
    pub stats: Arc<StreamStats>,
}

/// One AUV's cameras, published by the receiving thread or the AUV's own.
pub struct AuvCameras {
    pub id: u8,
    pub images: Arc<AuvImages>,
    pub cameras: Mutex<Cameras>,
    pub fov_deg: f64,
    /// The optical frame id of each camera, in `Camera::ALL`'s order.
    pub optical_frames: [String; 2],
}

/// The publishers of an AUV's two cameras, and the place of the last
/// message they published: an older one (left with the decoding thread when
/// the raw topics lost their subscriber) is not published after it.
#[derive(Debug)]
pub struct Cameras {
    pub publishers: [CameraPublisher; 2],
    pub last: Option<u64>,
}

impl std::fmt::Debug for AuvCameras {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuvCameras")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Room kept in front of a received JPEG for its `CompressedImage`'s other
/// fields (some 70 bytes with this bridge's frame ids).
const JPEG_HEADROOM: usize = 256;

/// The image SUB of `ids` as the bridge reads it: a message of two JPEGs of
/// up to `max_jpeg_bytes` each, every JPEG read into a buffer of its own
/// with room in front for the rest of its `CompressedImage`.
pub fn subscriber(host: &str, port: u16, ids: &[u8], max_jpeg_bytes: usize, reconnect: Duration) -> Subscriber {
    link::subscriber(host, port, ids, 2 * max_jpeg_bytes + 64, JPEG_HEADROOM, reconnect)
}

/// Receives image messages until the stop; bad input is counted on the
/// stream of the AUV whose id the message starts with (the SUB socket only
/// lets the bridge's AUVs through).
pub fn receive(
    mut socket: Subscriber,
    auvs: HashMap<u8, Arc<AuvCameras>>,
    limits: ImageLimits,
    stamps: ArrivalStamps,
    logger: String,
    stop: StopSignal,
) {
    let mut warn = RateLimitedLog::new(Duration::from_secs(5));
    let mut newest: HashMap<u8, Arrived> = HashMap::with_capacity(auvs.len());
    let mut arrivals = 0u64;
    while !stopping(&stop) {
        socket.receive_all(|parts| {
            let Some(auv) = first_byte(&parts).and_then(|id| auvs.get(&id)) else {
                return;
            };
            let stats = &auv.images.stats;
            let bytes: usize = parts.iter().map(Part::len).sum();
            stats
                .bytes_in
                .fetch_add(bytes as u64, std::sync::atomic::Ordering::Relaxed);
            match ImageMessage::parse(parts, &limits) {
                Ok(m) => {
                    arrivals += 1;
                    let (stamp, wall) = stamps.arrival();
                    if newest.insert(auv.id, (m, stamp, arrivals, wall)).is_some() {
                        stats.drop_frame("superseded");
                    }
                }
                Err(e) => {
                    stats.drop_frame(e.kind());
                    warn.warn_dropped(&logger, format_args!("auv{} images", auv.id), "message", &e);
                }
            }
        });
        for (id, arrived) in newest.drain() {
            let auv = &auvs[&id];
            let mut cameras = match auv.cameras.try_lock() {
                Ok(c) if !c.publishers.iter().any(CameraPublisher::decodes) => c,
                // A decode is wanted, or under way on the AUV's thread: the message goes there.
                Ok(_) | Err(TryLockError::WouldBlock) => {
                    if auv.images.newest.put(arrived).is_some() {
                        auv.images.stats.drop_frame("superseded");
                    }
                    continue;
                }
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
            };
            let spent = publish(auv, &mut cameras, arrived, &mut warn, &logger);
            drop(cameras);
            for buf in spent {
                socket.recycle(buf);
            }
        }
    }
}

/// Publishes the newest image message of an AUV as it arrives, decoding
/// it for the raw topics (see [`receive`]).
pub fn publish_decoded(auv: Arc<AuvCameras>, logger: String, stop: StopSignal) {
    let mut warn = RateLimitedLog::new(Duration::from_secs(5));
    while !stopping(&stop) {
        let Some(arrived) = auv.images.newest.take(Duration::from_millis(100)) else {
            continue;
        };
        let mut cameras = auv.cameras.lock().unwrap_or_else(|e| e.into_inner());
        publish(&auv, &mut cameras, arrived, &mut warn, &logger);
    }
}

/// Both cameras of one message; the JPEGs' buffers back, for the next.
fn publish(
    auv: &AuvCameras,
    cameras: &mut Cameras,
    (message, stamp, arrival, arrived_wall): Arrived,
    warn: &mut RateLimitedLog,
    logger: &str,
) -> Vec<Vec<u8>> {
    let id = auv.id;
    let stats = &auv.images.stats;
    if cameras.last.is_some_and(|last| arrival < last) {
        stats.drop_frame("superseded");
        return Vec::new();
    }
    cameras.last = Some(arrival);
    let ImageMessage { front, bottom, .. } = message;
    let mut ok = true;
    let mut spent = Vec::with_capacity(2);
    for (((camera, jpeg), publisher), frame_id) in Camera::ALL
        .into_iter()
        .zip([front, bottom])
        .zip(cameras.publishers.iter_mut())
        .zip(&auv.optical_frames)
    {
        let h = header(stamp.clone(), frame_id);
        let (buf, at) = jpeg.into_buffer();
        let published = publisher.publish_jpeg_with_room(buf, at, Encoding::Bgr8, auv.fov_deg, h);
        spent.push(published.buffer);
        if let Err(e) = published.result {
            ok = false;
            stats.drop_frame(e.reason());
            let what = format_args!("{} camera image", camera.name());
            warn.warn_dropped(logger, format_args!("auv{id} images"), what, &e);
        }
    }
    if ok {
        // Bytes were counted on arrival (what the simulator sent, bad input included).
        stats.published(0);
        stats.set_latency_ms((wall_now() - arrived_wall) * 1e3);
    }
    spent
}
