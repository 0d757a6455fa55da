//! AeroSim's rendered cameras: bincode `CompressedImage` records on the
//! renderer's topic (JPEG or PNG; one larger than `max_message_bytes` is
//! refused unread), published as received on `image_raw/compressed`, with
//! `camera_info`, and decoded to `image_raw` only while somebody subscribes
//! to it. Runs on its own thread (a decode takes milliseconds), handed the
//! records of each fetch through a one-place mailbox: only the newest image
//! is published, and a subscriber that falls behind gets the latest frame,
//! not a queue.

use aerosim_link::Fetched;
use aerosim_proto::image::{classify, decode_image, ImageFormat, PayloadKind};
use image_codec::Encoding;
use r2r::Node;
use ros_common::camera::{CameraPublisher, CameraTopics};
use ros_common::msgs::header;
use ros_common::stats::StreamStats;
use ros_common::time::to_ros_time;

use crate::telemetry::Stream;

/// Whether a camera topic's record is an image (the renderer answers requests on the same topic in JSON).
pub fn is_image(record: &Fetched) -> bool {
    classify(&record.value) != PayloadKind::Json
}

/// Counts the images among `records` as superseded: a newer one was
/// published instead.
pub fn superseded(stats: &StreamStats, records: &[Fetched]) {
    for _ in records.iter().filter(|r| is_image(r)) {
        stats.drop_frame("superseded");
    }
}

/// The largest image decoded, in pixels (4K).
pub const MAX_PIXELS: usize = 3840 * 2160;

#[allow(missing_debug_implementations)] // the camera publisher is not Debug
pub struct Camera {
    stream: Stream,
    publisher: CameraPublisher,
    frame_id: String,
    fov_deg: f64,
}

impl Camera {
    pub fn new(
        node: &mut Node,
        name: &str,
        stream: Stream,
        frame_id: String,
        qos: &r2r::QosProfile,
        fov_deg: f64,
        always_decode: bool,
    ) -> Result<Self, String> {
        let topics = CameraTopics::beside(&format!("{name}/image_raw"), true);
        Ok(Self {
            stream,
            publisher: CameraPublisher::new(node, &topics, qos, MAX_PIXELS, always_decode)?,
            frame_id,
            fov_deg,
        })
    }

    /// The newest image of a batch (the renderer's JSON responses on the
    /// same topic are passed over); the older ones are counted as superseded.
    pub fn on_records(&mut self, records: Vec<Fetched>) {
        let Some(newest) = records.iter().rposition(is_image) else {
            return;
        };
        superseded(&self.stream.stats, &records[..newest]);
        self.publish(&records[newest]);
    }

    fn publish(&mut self, record: &Fetched) {
        self.stream
            .stats
            .bytes_in
            .fetch_add(record.value.len() as u64, std::sync::atomic::Ordering::Relaxed);
        let limit = self.stream.max_record_bytes();
        if record.value.len() > limit {
            let detail = format!(
                "offset {}: {} bytes, max_message_bytes is {limit}",
                record.offset,
                record.value.len()
            );
            return self.stream.refuse("too_large", detail);
        }
        let (metadata, image) = match decode_image(&record.value, MAX_PIXELS * 4) {
            Ok(x) => x,
            Err(e) => return self.stream.refuse(e.reason(), format!("offset {}: {e}", record.offset)),
        };
        // The renderer leaves its images' simulation time unset.
        let platform = metadata.timestamp_platform.to_seconds();
        let Some(stamp) = self.stream.stamp(metadata.timestamp_sim.to_seconds(), record, platform) else {
            return;
        };
        let h = header(to_ros_time(stamp.seconds), &self.frame_id);
        let sent = match image.format {
            ImageFormat::Jpeg => self
                .publisher
                .publish_jpeg(&image.data, Encoding::Bgr8, self.fov_deg, h),
            ImageFormat::Png => {
                self.publisher
                    .publish_png(&image.data, Encoding::Bgr8, self.fov_deg, h, MAX_PIXELS * 3)
            }
        };
        match sent {
            Ok(()) => self
                .stream
                .published(record.value.len(), metadata.timestamp_platform.to_seconds()),
            Err(e) => self.stream.refuse(e.reason(), format!("offset {}: {e}", record.offset)),
        }
    }
}
