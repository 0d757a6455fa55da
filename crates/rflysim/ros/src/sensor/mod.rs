//! One RflySim sensor → its ROS 2 topics: UDP datagrams (`udp`) or a
//! shared-memory region (`shm`) → a frame → its messages (`frame`, pure) →
//! published here, counting every drop.

pub mod cloud;
pub mod frame;
mod shm;
mod udp;

use std::sync::Arc;
use std::time::Duration;

use r2r::nav_msgs::msg::Odometry;
use r2r::std_msgs::msg::Float32;
use r2r::tf2_msgs::msg::TFMessage;
use r2r::{Node, Publisher, PublisherUntyped};
use tokio::sync::watch;

use rflysim_proto::config::SensorConfig;
use rflysim_proto::error::DecodeError;
use rflysim_proto::sensor::{ImageFormat, Transport};
use ros_common::camera::{CameraError, CameraPublisher, CameraTopics};
use ros_common::cdr::POINT_CLOUD2_TYPE;
use ros_common::demand::{subscribed, subscribed_untyped};
use ros_common::stats::{RateLimitedLog, StreamStats};
use ros_common::time::{ClockPublisher, StreamClock, TimeBase};

use self::frame::{FrameKind, FrameMapper, Messages};
use crate::names;
use crate::settings::{SensorSettings, Settings, TfSource};

/// The publishers of one sensor.
enum Outputs {
    Camera(CameraPublisher),
    Cloud {
        /// Takes the serialized `PointCloud2` (see [`ros_common::cdr`]).
        cloud: PublisherUntyped,
        /// The last cloud serialized apart from its frame, reused for the next.
        cloud_serialized: Vec<u8>,
        odom_local: Publisher<Odometry>,
        odom_global: Publisher<Odometry>,
        tf: Option<Publisher<TFMessage>>,
    },
    Distance(Publisher<Float32>),
}

impl Outputs {
    /// The publishers for what `mapper` makes of a frame.
    fn new(node: &mut Node, mapper: &FrameMapper, settings: &Settings) -> Result<Self, String> {
        let cfg = mapper.cfg();
        let topic = mapper.topic();
        let qos = &settings.output.qos;
        let err = |e: r2r::Error| format!("sensor {}: {e}", cfg.seq_id);
        Ok(match mapper.frame_kind() {
            FrameKind::Camera(encoding) => {
                let topics = CameraTopics::beside(&topic, mapper.image_format() == ImageFormat::Jpeg);
                let topics = if settings.sensor.camera_info_under_image {
                    topics.with_info_also(format!("{topic}/camera_info"))
                } else {
                    topics
                };
                let max_pixels = mapper.max_jpeg_pixels(encoding);
                Outputs::Camera(
                    CameraPublisher::new(node, &topics, qos, max_pixels, settings.sensor.always_decode)
                        .map_err(|e| format!("sensor {}: {e}", cfg.seq_id))?,
                )
            }
            FrameKind::Cloud { .. } => Outputs::Cloud {
                cloud: node
                    .create_publisher_untyped(&topic, POINT_CLOUD2_TYPE, qos.clone())
                    .map_err(err)?,
                cloud_serialized: Vec::new(),
                odom_local: node
                    .create_publisher(&names::odom_topic(cfg.target_copter, false), qos.clone())
                    .map_err(err)?,
                odom_global: node
                    .create_publisher(&names::odom_topic(cfg.target_copter, true), qos.clone())
                    .map_err(err)?,
                tf: if settings.output.tf_source == TfSource::Lidar {
                    Some(crate::tf::odometry_tf_publisher(node).map_err(err)?)
                } else {
                    None
                },
            },
            FrameKind::Distance => Outputs::Distance(node.create_publisher(&topic, qos.clone()).map_err(err)?),
        })
    }

    /// Publishes `messages`; gives back the frame's buffer when they were
    /// published from it, for the transport to receive a later frame into.
    fn publish(&mut self, messages: Messages) -> Result<Option<Vec<u8>>, FrameError> {
        match (self, messages) {
            (Outputs::Camera(camera), Messages::Image { image, fov_deg, header }) => {
                camera.publish_decoded(image, fov_deg, header)?
            }
            (
                Outputs::Camera(camera),
                Messages::Jpeg {
                    jpeg,
                    encoding,
                    fov_deg,
                    header,
                },
            ) => {
                camera.publish_jpeg(&jpeg, encoding, fov_deg, header)?;
                return Ok(Some(jpeg));
            }
            (
                Outputs::Camera(camera),
                Messages::SerializedImage {
                    message,
                    width,
                    height,
                    fov_deg,
                    header,
                },
            ) => {
                camera.publish_serialized_image(&message, width, height, fov_deg, header)?;
                return Ok(Some(message));
            }
            (
                Outputs::Cloud {
                    cloud,
                    cloud_serialized,
                    odom_local,
                    odom_global,
                    tf,
                },
                Messages::Cloud(mut c),
            ) => {
                // Each of the three only when somebody receives it (`ros_common::demand`):
                // a SLAM node that takes the cloud alone costs one message per frame.
                if subscribed_untyped(cloud) {
                    cloud.publish_raw(&c.take_serialized(cloud_serialized).map_err(FrameError::TooLarge)?)?;
                }
                let odom = if c.global { odom_global } else { odom_local };
                if subscribed(odom) {
                    odom.publish(&c.odometry)?;
                }
                if let (Some(tf), Some(transforms)) = (tf, &c.tf) {
                    if subscribed(tf) {
                        tf.publish(transforms)?;
                    }
                }
            }
            (Outputs::Distance(p), Messages::Distance(d)) => p.publish(&d)?,
            _ => return Err(FrameError::NoOutput),
        }
        Ok(None)
    }
}

/// Why a frame was not published.
#[derive(Debug)]
enum FrameError {
    Decode(DecodeError),
    Camera(CameraError),
    Publish(r2r::Error),
    /// A cloud of more bytes than a ROS message can hold.
    TooLarge(usize),
    /// Messages of another kind than the sensor's publishers (a programming error).
    NoOutput,
}

impl From<DecodeError> for FrameError {
    fn from(e: DecodeError) -> Self {
        FrameError::Decode(e)
    }
}

impl From<CameraError> for FrameError {
    fn from(e: CameraError) -> Self {
        FrameError::Camera(e)
    }
}

impl From<r2r::Error> for FrameError {
    fn from(e: r2r::Error) -> Self {
        FrameError::Publish(e)
    }
}

impl FrameError {
    fn reason(&self) -> &'static str {
        match self {
            FrameError::Decode(e) => e.reason(),
            FrameError::Camera(e) => e.reason(),
            FrameError::Publish(_) => "publish_failed",
            FrameError::TooLarge(_) => "too_large",
            FrameError::NoOutput => "no_output",
        }
    }
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::Decode(e) => e.fmt(f),
            FrameError::Camera(e) => e.fmt(f),
            FrameError::Publish(e) => write!(f, "publish: {e}"),
            FrameError::TooLarge(n) => write!(f, "{n} bytes do not fit a ROS message"),
            FrameError::NoOutput => write!(f, "no publisher for this kind of message"),
        }
    }
}

/// Turns one sensor's frames into messages and publishes them.
pub struct SensorPipeline {
    mapper: FrameMapper,
    outputs: Outputs,
    time: Arc<TimeBase>,
    pub stats: Arc<StreamStats>,
    settings: SensorSettings,
    /// Who may send the sensor's datagrams.
    senders: ros_common::net::SenderFilter,
    logger: String,
    warn_limit: RateLimitedLog,
    clock: Option<Arc<ClockPublisher>>,
    /// This sensor's stamps: never back between restarts.
    stream_clock: StreamClock,
}

impl std::fmt::Debug for SensorPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SensorPipeline")
            .field("seq_id", &self.cfg().seq_id)
            .field("type_id", &self.cfg().type_id)
            .finish()
    }
}

impl SensorPipeline {
    /// Creates the publishers of `cfg` on `node`, or says why the sensor is
    /// not bridged (an unknown kind or transport, detection boxes).
    pub fn new(node: &mut Node, cfg: SensorConfig, time: Arc<TimeBase>, settings: &Settings) -> Result<Self, String> {
        let cfg_seq = cfg.seq_id;
        let mapper = FrameMapper::new(
            cfg,
            settings.sensor.max_frame_bytes,
            settings.output.covariances,
            settings.output.tf_source == TfSource::Lidar,
        )?;
        Ok(Self {
            outputs: Outputs::new(node, &mapper, settings)?,
            mapper,
            time,
            stats: Arc::new(StreamStats::default()),
            settings: settings.sensor.clone(),
            senders: settings.link.senders.clone(),
            stream_clock: StreamClock::new(format!("sensor {}", cfg_seq), node.logger()),
            logger: node.logger().to_string(),
            warn_limit: RateLimitedLog::new(Duration::from_secs(5)),
            clock: None,
        })
    }

    /// With `use_sim_time`: each frame's sim time also advances `/clock`.
    pub fn with_clock(mut self, clock: Option<Arc<ClockPublisher>>) -> Self {
        self.clock = clock;
        self
    }

    pub fn cfg(&self) -> &SensorConfig {
        self.mapper.cfg()
    }

    pub fn topic(&self) -> String {
        self.mapper.topic()
    }

    fn warn_drop(&mut self, reason: &'static str, detail: &str) {
        self.stats.drop_frame(reason);
        let seq_id = self.cfg().seq_id;
        let stream = format_args!("sensor{seq_id}");
        self.warn_limit
            .warn_dropped(&self.logger, stream, "frame", format_args!("{reason}: {detail}"));
    }

    /// `handle_frame`, for a frame whose decode takes milliseconds (a JPEG
    /// or PNG camera) on a thread of its own: the runtime's two workers stay
    /// free for the IMU and the other streams. Cheap frames stay where they are.
    fn handle_frame_off_worker(&mut self, sim_time: f64, payload: Vec<u8>, headroom: usize) -> Option<Vec<u8>> {
        if self.mapper.is_heavy() {
            tokio::task::block_in_place(|| self.handle_frame(sim_time, payload, headroom))
        } else {
            self.handle_frame(sim_time, payload, headroom)
        }
    }

    /// Stamps, converts and publishes one frame sampled at sim time
    /// `sim_time`; `payload`'s first `headroom` bytes are free. Gives the
    /// frame's buffer back when the messages left it whole, to receive a
    /// later frame into (fresh memory costs a page fault per 4 KiB written).
    pub fn handle_frame(&mut self, sim_time: f64, payload: Vec<u8>, headroom: usize) -> Option<Vec<u8>> {
        let len = payload.len().saturating_sub(headroom);
        let taken = match self.stream_clock.stamp(&self.time, sim_time) {
            Ok(t) => t,
            Err(e) => {
                self.warn_drop(e.reason(), &e.to_string());
                return Some(payload);
            }
        };
        let stamp_s = taken.seconds;
        let stamp = ros_common::time::to_ros_time(stamp_s);
        let published = self
            .mapper
            .messages(stamp, payload, headroom)
            .map_err(FrameError::from)
            .and_then(|m| self.outputs.publish(m));
        match published {
            Ok(spent) => {
                self.stats.published(len);
                if !self.time.uses_sim_time() {
                    self.stats
                        .set_latency_ms((ros_common::time::wall_now() - stamp_s) * 1e3);
                }
                if let Some(clock) = &self.clock {
                    self.stats.count_publish(clock.advance(&taken), "clock_publish_failed");
                }
                spent
            }
            Err(e) => {
                self.warn_drop(e.reason(), &e.to_string());
                None
            }
        }
    }

    /// Runs the pipeline on the transport its config names, until `shutdown` turns true.
    pub async fn run(self, shutdown: watch::Receiver<bool>) {
        if self.mapper.transport() == Transport::SharedMemory {
            shm::run(self, shutdown).await
        } else {
            udp::run(self, shutdown).await
        }
    }
}
